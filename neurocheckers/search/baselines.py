"""Knowledge-light baseline players and leaf evaluators, as pure JAX functions over one game.

Every policy has the signature ``policy(params, state, key) -> action`` ([] int32) once its static
settings (the ``Rules``, a depth, a value function) are bound by the factory that builds it, so it can
be ``jax.vmap``-ed over games and ``jax.jit``-ed. ``params`` is whatever the bound value function needs
(ignored by the knowledge-free players). A terminated state has no legal action (``legal_bits`` and
``legal_action_mask`` are empty, a draw by a ply limit included), and on one every policy returns
action 0, like ``random_action``; ``step`` returns a terminated state unchanged whatever the action.

Every value function has the signature ``value_fn(params, state, key) -> v`` ([] float32): the chance
that the side to move in ``state`` (``state.color``) wins, a draw counting one half. On a terminated
state both value functions here return the exact outcome for ``state.color`` read from
``state.result`` (1 win, 1/2 draw, 0 loss). In this engine a finished game is lost by the side to move
(or drawn), so a natural terminal state rates 0 or 1/2; the 1 case only arises for a hand-made state.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

from neurocheckers.rules.engine import legal_action_slots, material_balance, random_action, step
from neurocheckers.rules.outcome import KING_VALUE, points_for
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State
from neurocheckers.search.alphabeta import (
    NETWORK_ROOT_MARGIN,
    ROOT_MARGIN,
    WIN_SCORE,
    Heuristic,
    SearchStack,
    alphabeta_search,
    alphabeta_stack,
    color_sign,
    value_heuristic,
)
from neurocheckers.search.types import Policy, ValueFn

__all__ = [
    "NETWORK_ROOT_MARGIN",
    "WIN_SCORE",
    "AlphaBetaConfig",
    "Heuristic",
    "SearchStack",
    "alphabeta_policy",
    "alphabeta_search",
    "alphabeta_stack",
    "greedy_policy",
    "material_value_fn",
    "outcome_for",
    "pick_best",
    "random_policy",
    "rollout_value_fn",
    "value_heuristic",
]


def outcome_for(state: State, color: jax.Array) -> jax.Array:
    """[] float32: the result of ``state`` for ``color`` as 1 win / 1/2 draw or unfinished / 0 loss."""
    return points_for(state.result, color == BLACK)


def pick_best(key: jax.Array, values: jax.Array, valid: jax.Array) -> jax.Array:
    """Index of the largest valid value, ties broken uniformly at random (0 when none is valid)."""
    values = jnp.where(valid, values, -jnp.inf)
    is_best = valid & (values >= jnp.max(values))
    # A uniform draw per candidate: the argmax over the tied best ones is a uniform pick among them.
    noise = jax.random.uniform(key, values.shape)
    return jnp.argmax(jnp.where(is_best, noise, -1.0)).astype(jnp.int32)


# ---------------------------------------------------------------------------
# Random and greedy players
# ---------------------------------------------------------------------------


def random_policy(rules: Rules) -> Policy:
    """A player choosing uniformly among the legal moves (``params`` ignored)."""

    def policy(params: Any, state: State, key: jax.Array) -> jax.Array:
        del params
        return random_action(rules, key, state)

    return policy


def greedy_policy(rules: Rules, value_fn: ValueFn) -> Policy:
    """A 1-ply player: plays the legal move whose resulting position ``value_fn`` rates best for the mover.

    A child that ends the game gets its exact outcome for the mover (1 / 1/2 / 0). Otherwise
    ``v = value_fn(params, child, key)`` is the chance that the side to move in the child wins, which
    is the mover itself after a jump that must be continued (value ``v``) and the opponent otherwise
    (value ``1 - v``). Ties are broken at random. All ``K = rules.max_legal_moves`` slots are rated
    (padding included, then masked) so the work has a fixed shape.
    """

    def policy(params: Any, state: State, key: jax.Array) -> jax.Array:
        slots = legal_action_slots(rules, state)  # [K]
        valid = slots >= 0
        children = jax.vmap(lambda a: step(rules, state, a))(jnp.maximum(slots, 0))
        value_key, tie_key = jax.random.split(key)
        v = jax.vmap(value_fn, in_axes=(None, 0, 0))(
            params, children, jax.random.split(value_key, slots.shape[0])
        )
        same_mover = children.color == state.color
        heuristic = jnp.where(same_mover, v, 1.0 - v)
        exact = outcome_for(children, state.color)
        values = jnp.where(children.terminated, exact, heuristic)
        best = pick_best(tie_key, values, valid)
        return jnp.where(jnp.any(valid), slots[best], 0).astype(jnp.int32)

    return policy


# ---------------------------------------------------------------------------
# Alpha-beta
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class AlphaBetaConfig:
    """Static settings of an alpha-beta player (hashable: a static jit argument), the counterpart of
    ``MCTSConfig`` where a caller picks the search (e.g. ``population.play_population``)."""

    depth: int = 2
    """Plies searched (one action, a jump of a multi-jump included, is one ply); Blondie24 used 4."""

    def __post_init__(self) -> None:
        if not isinstance(self.depth, int) or isinstance(self.depth, bool) or self.depth < 1:
            raise ValueError(f"depth must be an int >= 1, got {self.depth!r}")


def alphabeta_policy(rules: Rules, depth: int, value_fn: ValueFn | None = None) -> Policy:
    """A depth-``depth`` alpha-beta player with a material evaluation (``params`` ignored), or with
    ``value_fn(params, leaf, key)`` at the unfinished leaves when given (``value_heuristic``).

    Scores from the mover's view: men 1, kings 1.5; a win ``WIN_SCORE`` minus its distance in plies
    (faster wins first, slower losses first), a draw 0. One level of depth is one action, so a
    multi-jump uses several levels. Among equally good root moves one is picked at random.
    """

    def policy(params: Any, state: State, key: jax.Array) -> jax.Array:
        heuristic, margin = None, ROOT_MARGIN
        if value_fn is not None:
            heuristic, margin = value_heuristic(value_fn, params, key), NETWORK_ROOT_MARGIN
        scores, legal = alphabeta_search(rules, state, depth, heuristic, margin)
        return jnp.where(jnp.any(legal), pick_best(key, scores, legal), 0).astype(jnp.int32)

    return policy


# ---------------------------------------------------------------------------
# Value functions
# ---------------------------------------------------------------------------


def rollout_value_fn(rules: Rules, max_plies: int = 300) -> ValueFn:
    """A knowledge-free value function: one uniformly random game played out from ``state``.

    Returns the outcome for the side to move in ``state`` (1 win, 1/2 draw, 0 loss); a rollout still
    unfinished after ``max_plies`` actions counts as a draw. A terminated ``state`` returns its exact
    outcome at once. ``params`` is ignored (the "mcts-rollout" leaf evaluator).
    """

    def value_fn(params: Any, state: State, key: jax.Array) -> jax.Array:
        del params

        def cond(carry: tuple[State, jax.Array, jax.Array]) -> jax.Array:
            s, _, n = carry
            return ~s.terminated & (n < max_plies)

        def body(carry: tuple[State, jax.Array, jax.Array]) -> tuple[State, jax.Array, jax.Array]:
            s, k, n = carry
            k, sub = jax.random.split(k)
            return step(rules, s, random_action(rules, sub, s)), k, n + 1

        final, _, _ = jax.lax.while_loop(cond, body, (state, key, jnp.int32(0)))
        # An unfinished game has result 0, which outcome_for reads as a draw.
        return outcome_for(final, state.color)

    return value_fn


def material_value_fn(rules: Rules, scale: float = 0.5, king_value: float = KING_VALUE) -> ValueFn:
    """A handcrafted value function: ``sigmoid(scale * material)`` for the side to move.

    ``material`` is the mover's men + ``king_value`` x kings minus the opponent's. A terminated state
    returns its exact outcome. ``params`` and ``key`` are ignored; ``rules`` is taken for uniformity.
    """
    del rules

    def value_fn(params: Any, state: State, key: jax.Array) -> jax.Array:
        del params, key
        balance = color_sign(state.color) * material_balance(state, king_value)
        v = jax.nn.sigmoid(scale * balance)
        return jnp.where(state.terminated, outcome_for(state, state.color), v).astype(jnp.float32)

    return value_fn
