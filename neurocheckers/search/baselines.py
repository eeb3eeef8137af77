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
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from neurocheckers.rules.bits import lowest_bit, neighbors
from neurocheckers.rules.engine import (
    legal_action_slots,
    material_balance,
    random_action,
    step,
    step_unchecked,
)
from neurocheckers.rules.outcome import KING_VALUE, points_for
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State
from neurocheckers.rules.tables import tables
from neurocheckers.search.types import Policy, ValueFn

WIN_SCORE = 1000.0
"""Alpha-beta score of a won game (minus its distance in plies from the root); far above any material."""
_ROOT_MARGIN = 0.25
"""Alpha-beta scores are multiples of 1/2 (men 1, kings 1.5, integer win scores), so a root window
lowered by 1/4 keeps every move tied with the best one exact, which the random tie-break needs."""


def _sign(color: jax.Array) -> jax.Array:
    """+1 for Black, -1 for White: turns Black's-view scores into the view of ``color``."""
    return jnp.where(color == BLACK, 1.0, -1.0).astype(jnp.float32)


def outcome_for(state: State, color: jax.Array) -> jax.Array:
    """[] float32: the result of ``state`` for ``color`` as 1 win / 1/2 draw or unfinished / 0 loss."""
    return points_for(state.result, color == BLACK)


def _pick_best(key: jax.Array, values: jax.Array, valid: jax.Array) -> jax.Array:
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
        best = _pick_best(tie_key, values, valid)
        return jnp.where(jnp.any(valid), slots[best], 0).astype(jnp.int32)

    return policy


# ---------------------------------------------------------------------------
# Alpha-beta
# ---------------------------------------------------------------------------


@struct.dataclass
class SearchStack:
    """The explicit depth-first stack of one alpha-beta search over a tree of depth D.

    Levels 0..D-1 hold the interior nodes on the current path (level 0 is the root); nodes at depth D
    and finished games are leaves, scored when generated and never pushed. Scores are from Black's
    view: Black's nodes maximise, White's minimise (a multi-jump continuation keeps the mover, so its
    child has the same role and nothing is negated).

    Moves are enumerated from the node's ``legal_bits`` as 8 rows of 32 bits, captures first (better
    pruning): slot ``v * 32 + i`` is the move of square ``i`` in direction ``v % 4``, in the first
    pass (``v < 4``) if it is a capture and in the second otherwise.

    Fields:
      states: State with [D] leading axes, the node at each level of the current path.
      cursor: [D] int32, the lowest slot (in 0..256) not yet searched at each level.
      alpha, beta: [D] float32, the search window at each level.
      best: [D] float32, the best child score found so far at each level (fail-soft).
      root_scores: [A] float32, the Black's-view score of each searched root action (exact for every
        action tied with the best; a bound on the worse side for the others; 0 when unsearched).
      level: [] int32, the level of the node being expanded.
      iterations: [] int32, loop iterations so far (children searched plus nodes finished).
      done: [] bool, whether the search has finished.
    """

    states: State
    cursor: jax.Array
    alpha: jax.Array
    beta: jax.Array
    best: jax.Array
    root_scores: jax.Array
    level: jax.Array
    iterations: jax.Array
    done: jax.Array


Heuristic = Callable[[State], jax.Array]
"""``state -> score`` ([] float32): Black's-view score of an unfinished leaf, far below ``WIN_SCORE``."""

NETWORK_ROOT_MARGIN = 1e-6
"""The root margin for network scores, which are continuous (in (-1, 1)): exact ties only."""


def _leaf_score(state: State, distance: jax.Array, heuristic: Heuristic) -> jax.Array:
    """Black's-view score of a leaf: +-(WIN_SCORE - distance) when the game is over (0 for a draw),
    ``heuristic(state)`` otherwise."""
    won = state.result.astype(jnp.float32) * (WIN_SCORE - distance.astype(jnp.float32))
    return jnp.where(state.terminated, won, heuristic(state))


def value_heuristic(value_fn: ValueFn, params: Any, key: jax.Array) -> Heuristic:
    """A leaf score from a value function: ``2 v - 1`` for the side to move (``v`` its chance of
    winning), turned to Black's view. Any strictly increasing function of the material balance gives
    the same moves as the material count."""

    def heuristic(state: State) -> jax.Array:
        v = value_fn(params, state, key)
        return _sign(state.color) * (2.0 * v - 1.0)

    return heuristic


def _ordered_moves(rules: Rules, state: State) -> jax.Array:
    """[8] uint32: the legal moves as rows of source bits, captures first (rows 0-3 by direction),
    then the other moves (rows 4-7)."""
    t = tables(rules.board_size)
    black = state.color == BLACK
    opponents = jnp.where(black, state.white_men | state.white_kings, state.black_men | state.black_kings)
    # The squares whose neighbour in direction d holds an opponent: opponents shifted back (3 - d).
    captures = jnp.stack([neighbors(t, 3 - d, opponents) for d in range(4)])
    return jnp.concatenate([state.legal_bits & captures, state.legal_bits & ~captures])


def _maximising(color: jax.Array) -> jax.Array:
    return color == BLACK


def _slot_to_action(rules: Rules, slot: jax.Array) -> jax.Array:
    """The action of move slot ``v * 32 + i`` (row ``v`` of ``_ordered_moves``, square ``i``)."""
    return (slot // 32) % 4 * rules.num_squares + slot % 32


def _initial_stack(rules: Rules, state: State, depth: int) -> SearchStack:
    """The stack before the search: the root at level 0 with a full window."""
    inf = jnp.float32(jnp.inf)
    return SearchStack(
        states=jax.tree.map(lambda x: jnp.broadcast_to(x, (depth, *x.shape)), state),
        cursor=jnp.zeros(depth, jnp.int32),
        alpha=jnp.full(depth, -inf),
        beta=jnp.full(depth, inf),
        best=jnp.full(depth, -inf).at[0].set(jnp.where(_maximising(state.color), -inf, inf)),
        root_scores=jnp.zeros(rules.num_actions, jnp.float32),
        level=jnp.int32(0),
        iterations=jnp.int32(0),
        done=~jnp.any(state.legal_bits != 0),  # a finished game has no legal move
    )


def _next_move(rules: Rules, st: SearchStack, node: State) -> tuple[jax.Array, jax.Array]:
    """``(slot, expand)``: the first move slot of ``node`` at or after its cursor, and whether it
    is to be searched (there is one, and the window is still open)."""
    lv = st.level
    rows = jnp.arange(8, dtype=jnp.int32)
    # The moves at or after the cursor: whole rows after its row, the bits from its bit on in it.
    cursor_row, cursor_bit = st.cursor[lv] // 32, (st.cursor[lv] % 32).astype(jnp.uint32)
    from_bit = jnp.where(rows == cursor_row, jnp.uint32(0xFFFFFFFF) << cursor_bit, jnp.uint32(0))
    keep = jnp.where(rows > cursor_row, jnp.uint32(0xFFFFFFFF), from_bit)
    remaining = _ordered_moves(rules, node) & keep
    row = jnp.argmax(remaining != 0).astype(jnp.int32)
    slot = row * 32 + lowest_bit(remaining[row])
    expand = jnp.any(remaining != 0) & (st.alpha[lv] < st.beta[lv])
    return slot, expand


def _report(
    st: SearchStack,
    target: jax.Array,
    score: jax.Array,
    report: jax.Array,
    root_action: jax.Array,
    root_margin: float,
) -> SearchStack:
    """Fold ``score`` into the best score and window of level ``target`` (when ``report``), and into
    ``root_scores[root_action]`` when that level is the root."""
    t = jnp.maximum(target, 0)
    t_max = _maximising(st.states.color[t])
    new_best = jnp.where(t_max, jnp.maximum(st.best[t], score), jnp.minimum(st.best[t], score))
    # At the root the window stays below the best score so moves tied with it are scored exactly.
    root_shift = jnp.where(t == 0, root_margin, 0.0)
    new_alpha = jnp.where(t_max, jnp.maximum(st.alpha[t], score - root_shift), st.alpha[t])
    new_beta = jnp.where(t_max, st.beta[t], jnp.minimum(st.beta[t], score + root_shift))
    return st.replace(
        best=st.best.at[t].set(jnp.where(report, new_best, st.best[t])),
        alpha=st.alpha.at[t].set(jnp.where(report, new_alpha, st.alpha[t])),
        beta=st.beta.at[t].set(jnp.where(report, new_beta, st.beta[t])),
        root_scores=st.root_scores.at[root_action].set(
            jnp.where(report & (target == 0), score, st.root_scores[root_action])
        ),
    )


def _push(st: SearchStack, child: State, push: jax.Array, depth: int) -> SearchStack:
    """Put ``child`` (when ``push``) on the level above the current one, with the current window."""
    lv = st.level
    inf = jnp.float32(jnp.inf)
    # At most depth - 1, since children at `depth` are leaves.
    c = jnp.minimum(lv + 1, depth - 1)
    states = jax.tree.map(
        lambda stacked, x: stacked.at[c].set(jnp.where(push, x, stacked[c])), st.states, child
    )
    best = jnp.where(_maximising(child.color), -inf, inf)
    return st.replace(
        states=states,
        cursor=st.cursor.at[c].set(jnp.where(push, 0, st.cursor[c])),
        alpha=st.alpha.at[c].set(jnp.where(push, st.alpha[lv], st.alpha[c])),
        beta=st.beta.at[c].set(jnp.where(push, st.beta[lv], st.beta[c])),
        best=st.best.at[c].set(jnp.where(push, best, st.best[c])),
    )


def _stack_step(
    rules: Rules, depth: int, heuristic: Heuristic, root_margin: float, st: SearchStack
) -> SearchStack:
    """One iteration: search the next child of the current node (score a leaf, push any other), or
    return from the node to its parent when it has no move left or its window closed."""
    lv = st.level
    node = jax.tree.map(lambda x: x[lv], st.states)
    slot, expand = _next_move(rules, st, node)
    action = _slot_to_action(rules, slot)
    # Expanded actions come from legal_bits; the child of an unexpanded one is dropped unused.
    child = step_unchecked(rules, node, action)
    child_depth = lv + 1
    is_leaf = child.terminated | (child_depth >= depth)
    push = expand & ~is_leaf
    # The score reported to a parent: a leaf child's score to this level, or this finished node's
    # best score to the level above. It belongs to the root action just expanded or last pushed.
    target = jnp.where(expand, lv, lv - 1)
    score = jnp.where(expand, _leaf_score(child, child_depth, heuristic), st.best[lv])
    report = (expand & is_leaf) | (~expand & (lv > 0))
    root_action = jnp.where(expand, action, _slot_to_action(rules, st.cursor[0] - 1))
    st = _report(st, target, score, report, root_action, root_margin)
    st = st.replace(cursor=st.cursor.at[lv].set(jnp.where(expand, slot + 1, st.cursor[lv])))
    st = _push(st, child, push, depth)
    return st.replace(
        level=jnp.where(push, child_depth, jnp.where(expand, lv, lv - 1)),
        iterations=st.iterations + 1,
        done=~expand & (lv == 0),
    )


def alphabeta_stack(
    rules: Rules,
    state: State,
    depth: int,
    heuristic: Heuristic | None = None,
    root_margin: float = _ROOT_MARGIN,
) -> SearchStack:
    """Run a depth-``depth`` alpha-beta search from ``state`` and return its final stack (for
    ``root_scores`` and the ``iterations`` statistic); ``alphabeta_search`` is the usual entry point.
    Unfinished leaves are scored by ``heuristic`` (default: the material balance, men 1, kings 1.5);
    ``root_margin`` lowers the root window so moves tied with the best are scored exactly (it must be
    below the smallest gap between two different scores).

    The depth-first recursion is unrolled into a ``lax.while_loop`` over an explicit stack, each
    iteration searching one child (scoring it if it is a leaf, pushing it otherwise) or returning from
    a finished node, so ``jax.vmap`` over positions works (the batched loop runs until every search is
    done, so a batch costs as many iterations as its largest search).
    """
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth!r}")
    heuristic = material_balance if heuristic is None else heuristic
    body = functools.partial(_stack_step, rules, depth, heuristic, root_margin)
    return jax.lax.while_loop(lambda st: ~st.done, body, _initial_stack(rules, state, depth))


def alphabeta_search(
    rules: Rules,
    state: State,
    depth: int,
    heuristic: Heuristic | None = None,
    root_margin: float = _ROOT_MARGIN,
) -> tuple[jax.Array, jax.Array]:
    """Depth-``depth`` alpha-beta from ``state``; one level of depth is one action (a jump of a
    multi-jump included). Leaves are scored as in ``alphabeta_policy``.

    Returns ``(root_scores, legal)``: [A] float32 scores of the root actions from the view of the side
    to move (exact for every action whose score equals the best; an upper bound below the best for
    the others) and the [A] bool mask of searched root actions (the legal actions, none when the root
    is terminated; scores elsewhere are meaningless).
    """
    final = alphabeta_stack(rules, state, depth, heuristic, root_margin)
    return _sign(state.color) * final.root_scores, state.legal_action_mask


@dataclasses.dataclass(frozen=True)
class AlphaBetaConfig:
    """Static settings of an alpha-beta player (hashable: a static jit argument), the counterpart of
    ``MCTSConfig`` where a caller picks the search (e.g. ``arena.play_population``)."""

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
        heuristic, margin = None, _ROOT_MARGIN
        if value_fn is not None:
            heuristic, margin = value_heuristic(value_fn, params, key), NETWORK_ROOT_MARGIN
        scores, legal = alphabeta_search(rules, state, depth, heuristic, margin)
        return jnp.where(jnp.any(legal), _pick_best(key, scores, legal), 0).astype(jnp.int32)

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
        balance = _sign(state.color) * material_balance(state, king_value)
        v = jax.nn.sigmoid(scale * balance)
        return jnp.where(state.terminated, outcome_for(state, state.color), v).astype(jnp.float32)

    return value_fn
