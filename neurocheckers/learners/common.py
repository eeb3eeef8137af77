"""What the self-play learners share: their settings, their state, batched self-play games with every
position recorded, move choice with exploration, and supervised regression of the network.

Every learner trains one evaluator network (``evaluator.MLP``: the chance that the side to move wins)
by playing itself. A self-play epoch plays ``selfplay_games`` games at once, each from the start
position plus ``opening_plies`` uniformly random plies, the moves chosen by the configured search over
the current network (MCTS of ``simulations`` or alpha-beta of ``depth``) with exploration. Game ``i``
draws its randomness from the epoch key and its number alone, so the games do not depend on how the
batch is split across host devices.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct

from neurocheckers.match.arena import play_plies, where_games
from neurocheckers.networks.architectures import spec_of_settings
from neurocheckers.networks.evaluator import EvaluatorSpec, encode, init_params, value, value_fn
from neurocheckers.networks.fitting import adam_steps
from neurocheckers.rules.engine import init_batch, random_action, step
from neurocheckers.rules.presets import Rules, get_rules
from neurocheckers.rules.state import State
from neurocheckers.search.baselines import (
    NETWORK_ROOT_MARGIN,
    Heuristic,
    alphabeta_search,
    material_value_fn,
    pick_best,
    value_heuristic,
)
from neurocheckers.search.fullwidth import Grouped, fullwidth_search
from neurocheckers.search.mcts import MCTSConfig, search
from neurocheckers.sections import (
    LearningRateSettings,
    MinibatchSettings,
    PlaySettings,
    SelfPlaySettings,
)
from neurocheckers.sharding import any_lane, whole_on_every_device

OPENING_SALT = 0x7FFFFFFF
"""Folded into a game's key for its random opening plies (the searched plies fold in their number)."""


@dataclasses.dataclass(frozen=True)
class LearnerSettings(SelfPlaySettings, MinibatchSettings, LearningRateSettings, PlaySettings):
    """What every self-play learner needs (hashable: a static jit argument): the config's sections
    ``game``, ``network``, ``search``, its minibatch learning and ``td_lambda``'s self-play games.
    Each field is the experiment config key of the same name."""

    @property
    def records_leaves(self) -> bool:
        """Whether self-play records each move's principal leaf instead of the position moved from
        (TDLeaf(lambda)); the plain learners record the positions themselves."""
        return False


@struct.dataclass
class LearnerState:
    """Everything a learner run needs to continue.

    Fields:
      params: the network's parameters (``evaluator`` layout): the agent that is snapshotted and
        exported.
      opt_state: the optax optimiser's state.
      epoch: [] int32, epochs completed.
    """

    params: Any
    opt_state: Any
    epoch: jax.Array


@struct.dataclass
class SelfPlayBatch:
    """N self-play games after their openings, with L = ``record_length(settings)`` plies recorded.

    Fields:
      positions: [N, L + 1, 2S] float32 encoded positions (from the side to move): slot ``i`` is the
        position before the ``i``-th ply after the opening (with ``records_leaves``, the principal
        leaf of that ply's search where it is unfinished), slot ``length`` the final position (slots
        after it are zero).
      colors: [N, L + 1] int32, the side to move in each slot's position (``rules.state.BLACK`` or ``WHITE``;
        0 after slot ``length``).
      turn_start: [N, L + 1] bool, whether each slot's position begins a turn (False inside a
        multi-jump, and after slot ``length``).
      actions: [N, L] int32, the action played from each slot, -1 from the end of the game on.
      length: [N] int32, plies played after the opening.
      finished: [N] bool, whether the game ended by the rules (else it was cut after L plies).
      result: [N] int32, +1 Black won, -1 White won, 0 draw or cut.
      final_value: [N] float32, the exact result for the side to move in the final position (win 1,
        draw 1/2, loss 0); 1/2 for a cut game.
    """

    positions: jax.Array
    colors: jax.Array
    turn_start: jax.Array
    actions: jax.Array
    length: jax.Array
    finished: jax.Array
    result: jax.Array
    final_value: jax.Array


def learner_rules(settings: LearnerSettings) -> Rules:
    return get_rules(settings.rules)


def learner_spec(settings: LearnerSettings) -> EvaluatorSpec:
    """The network's shape."""
    return spec_of_settings(settings, learner_rules(settings).board_size)


def record_length(settings: LearnerSettings) -> int:
    """L: plies recorded per game, ``max_plies`` or the rules' own cap on a game's length if lower."""
    rules = learner_rules(settings)
    return min(settings.max_plies, rules.max_plies) if rules.max_plies else settings.max_plies


def optimizer(settings: LearnerSettings) -> optax.GradientTransformation:
    return optax.adam(settings.learning_rate)


def fresh_state(settings: LearnerSettings, params: Any) -> LearnerState:
    """``params`` with a fresh optimiser state, at epoch 0."""
    return LearnerState(params=params, opt_state=optimizer(settings).init(params), epoch=jnp.int32(0))


def init_network(settings: LearnerSettings, key: jax.Array) -> Any:
    """Fresh network parameters, regressed on the material value of ``bootstrap_positions`` random
    positions when that is on."""
    init_key, positions_key, fit_key = jax.random.split(key, 3)
    params = init_params(init_key, learner_spec(settings))
    if not settings.bootstrap_positions:
        return params
    obs, targets = material_positions(settings, positions_key, settings.bootstrap_positions)
    state = fresh_state(settings, params)
    fitted = regress(settings, state, obs, targets, jnp.ones_like(targets), fit_key, settings.bootstrap_steps)
    return fitted[0].params


# ---------------------------------------------------------------------------
# Move choice
# ---------------------------------------------------------------------------


def choose_action(
    settings: LearnerSettings, params: Any, state: State, key: jax.Array, rate: jax.Array
) -> jax.Array:
    """[] int32: the move of one game: the search's choice over ``params``, explored as
    ``settings.exploration`` says at ``rate`` (epsilon, or the softmax temperature)."""
    rules = learner_rules(settings)
    evaluate = value_fn(learner_spec(settings))
    explore_key, draw_key, search_key = jax.random.split(key, 3)
    if settings.search == "alphabeta":
        heuristic = value_heuristic(evaluate, params, search_key)
        scores, legal = alphabeta_search(rules, state, settings.depth, heuristic, NETWORK_ROOT_MARGIN)
        return _pick_searched(settings, state, key, scores, legal, rate)
    out = search(rules, MCTSConfig(num_simulations=settings.simulations), evaluate, params, state, search_key)
    if settings.exploration == "softmax":
        legal = out.legal_slots >= 0
        logits = jnp.where(legal, out.child_values / jnp.maximum(rate, 1e-6), -jnp.inf)
        slot = jax.random.categorical(draw_key, logits)
        return jnp.where(jnp.any(legal), out.legal_slots[slot], 0).astype(jnp.int32)
    explore = jax.random.uniform(explore_key) < rate
    return jnp.where(explore, random_action(rules, draw_key, state), out.action).astype(jnp.int32)


def _pick_searched(
    settings: LearnerSettings,
    state: State,
    key: jax.Array,
    scores: jax.Array,
    legal: jax.Array,
    rate: jax.Array,
) -> jax.Array:
    """[] int32: one game's move from an alpha-beta's root ``scores`` ([A], the mover's view) and
    ``legal`` ([A]): a draw from their softmax, or the best (``pick_best``) unless an epsilon move."""
    explore_key, draw_key, search_key = jax.random.split(key, 3)
    if settings.exploration == "softmax":
        logits = jnp.where(legal, scores / jnp.maximum(rate, 1e-6), -jnp.inf)
        drawn = jax.random.categorical(draw_key, logits)
        return jnp.where(jnp.any(legal), drawn, 0).astype(jnp.int32)
    best = jnp.where(jnp.any(legal), pick_best(search_key, scores, legal), 0)
    explore = jax.random.uniform(explore_key) < rate
    random_move = random_action(learner_rules(settings), draw_key, state)
    return jnp.where(explore, random_move, best).astype(jnp.int32)


def searches_full_width(settings: LearnerSettings) -> bool:
    """Whether ``choose_actions`` searches with ``fullwidth_search`` (the same moves as alpha-beta):
    alpha-beta at depth 1, or deeper with epsilon exploration (softmax reads every root score, and
    alpha-beta's are bounds below the best)."""
    return settings.search == "alphabeta" and (settings.depth == 1 or settings.exploration == "epsilon")


@struct.dataclass
class TracedDepth:
    """An alpha-beta depth chosen at run time among 1 .. ``max_depth`` (a PBT member's, which evolves).

    The searches themselves keep a static depth (``fullwidth_search`` builds its tree level by level
    in Python), so a traced depth runs the search of each depth in ``present`` behind a ``lax.cond``
    and keeps the one of ``depth`` (``at_each_depth``): the moves of depth ``d`` are exactly those of a
    static depth ``d``. Under ``vmap`` with ``present`` not mapped the ``cond`` stays a branch, so a
    batch of searchers pays for the depths in use, not for every depth up to ``max_depth``.

    Fields:
      depth: [] int32, the depth searched, in 1 .. ``max_depth`` (or [N], each game's, for a batch
        of several members' games: ``MemberNetworks``).
      present: [max_depth] bool, ``present[d - 1]``: some searcher of the program searches at depth
        ``d`` (the same for all of them: leave it unmapped under ``vmap``).
    """

    depth: jax.Array
    present: jax.Array

    @property
    def max_depth(self) -> int:
        return self.present.shape[-1]


@struct.dataclass
class MemberNetworks:
    """Several learners' networks over one batch of games (PBT's members, their games packed in one
    batch): game ``i`` is played by member ``member[i]``'s network. ``choose_actions`` and
    ``principal_leaves`` take it for ``params`` with a full-width search (``searches_full_width``),
    which scores each member's leaves with its own network (``fullwidth.Grouped``).

    Fields:
      params: the members' networks, each leaf with a leading [M] axis.
      member: [N] int32, each game's member; the unfinished games in member order.
      count: static, M.
    """

    params: Any
    member: jax.Array
    count: int = struct.field(pytree_node=False)

    def take(self, rows: jax.Array) -> MemberNetworks:
        """The networks of the games ``rows`` ([n] indices into the N games)."""
        return self.replace(member=self.member[rows])


def search_heuristic(settings: LearnerSettings, params: Any, key: jax.Array) -> Heuristic | Grouped:
    """The full-width search's leaf score over ``params``: one network's, or with ``MemberNetworks``
    each game's member's."""
    evaluate = value_fn(learner_spec(settings))
    if not isinstance(params, MemberNetworks):
        return value_heuristic(evaluate, params, key)
    member_params = params.params

    def heuristic_of(member: jax.Array) -> Heuristic:
        return value_heuristic(evaluate, jax.tree.map(lambda x: x[member], member_params), key)

    return Grouped(heuristic_of, params.member, params.count)


def at_each_depth(depth: TracedDepth, search: Callable[[int], Any], empty: Any) -> Any:
    """``search(depth.depth)`` for a traced depth: ``search(d)`` (``d`` static) for each depth ``d``
    in ``depth.present``, behind a ``lax.cond`` (``empty``, of the same shapes, for the others), the
    result of ``d = depth.depth`` kept."""
    result = empty
    for d in range(1, depth.max_depth + 1):
        found = jax.lax.cond(depth.present[d - 1], lambda d=d: search(d), lambda: empty)
        result = jax.tree.map(lambda new, old, d=d: jnp.where(depth.depth == d, new, old), found, result)
    return result


def choose_actions(
    settings: LearnerSettings,
    params: Any,
    states: State,
    keys: jax.Array,
    rate: jax.Array,
    depth: TracedDepth | None = None,
) -> jax.Array:
    """[N] int32: ``choose_action`` of N games (``states``, ``keys``: [N]), the same moves; with
    ``searches_full_width`` the alpha-beta is ``fullwidth_search`` over the whole batch, whose leaves
    are evaluated in large batches (8x8 self-play of 1,024 games: 2-3x faster at depth 1 and 7x at
    depth 3 than the vmapped ``alphabeta_search``; ``results/benchmarks/bench_learners_american8.txt``).
    With ``depth`` the alpha-beta's depth is that traced one instead of ``settings.depth``. With
    ``MemberNetworks`` for ``params`` (a full-width search only) each game is searched over its member's
    network, and ``rate`` (and ``depth.depth``) may be [N], each game's member's."""
    if depth is not None:

        def at_depth(d: int) -> jax.Array:
            return choose_actions(dataclasses.replace(settings, depth=d), params, states, keys, rate)

        return at_each_depth(depth, at_depth, jnp.zeros(keys.shape[0], jnp.int32))
    if not searches_full_width(settings):
        if isinstance(params, MemberNetworks):
            raise ValueError("several members' networks in one batch need a full-width search")
        choose = jax.vmap(functools.partial(choose_action, settings), in_axes=(None, 0, 0, None))
        return choose(params, states, keys, rate)
    scores, legal = full_width_scores(settings, params, states, keys[0])
    rules = learner_rules(settings)
    if settings.exploration == "softmax":
        pick = functools.partial(_pick_searched, settings)
        rate_axis = 0 if jnp.ndim(rate) else None  # [N] with MemberNetworks: each game's member's
        return jax.vmap(pick, in_axes=(0, 0, 0, 0, rate_axis))(states, keys, scores, legal, rate)
    splits = jax.vmap(lambda k: jax.random.split(k, 3))(keys)  # choose_action's three keys per game
    explore_keys, draw_keys, search_keys = splits[:, 0], splits[:, 1], splits[:, 2]
    best = _best_actions(search_keys, scores, legal)
    explore = jax.vmap(jax.random.uniform)(explore_keys) < rate
    random_moves = jax.vmap(random_action, in_axes=(None, 0, 0))(rules, draw_keys, states)
    return jnp.where(explore, random_moves, best).astype(jnp.int32)


def full_width_scores(
    settings: LearnerSettings, params: Any, states: State, key: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """([N, A] root scores from the mover's view, [N, A] legal): ``fullwidth_search`` of ``states``
    [N] at ``settings.depth``, its leaves scored by ``params`` (one network or ``MemberNetworks``)."""
    # The learners' network ignores the key of its value function (``evaluator.value_fn``).
    heuristic = search_heuristic(settings, params, key)
    rules = learner_rules(settings)
    return fullwidth_search(rules, states, settings.depth, heuristic, NETWORK_ROOT_MARGIN)


def best_moves(
    settings: LearnerSettings,
    params: Any,
    states: State,
    keys: jax.Array,
    depth: TracedDepth | None = None,
) -> jax.Array:
    """[N] int32: the best moves of N games (``states``, ``keys``: [N]) at the learners' alpha-beta
    depth (or the traced ``depth``) without exploration, ties broken by ``pick_best(keys[i], ...)``:
    the moves of ``baselines.alphabeta_policy`` with the network's leaves (its root scores are bounds
    below the best, so both pick among the same best moves), from one full-width search of the batch.
    ``params`` may be ``MemberNetworks`` (each game its member's network)."""
    if depth is not None:

        def at_depth(d: int) -> jax.Array:
            return best_moves(dataclasses.replace(settings, depth=d), params, states, keys)

        return at_each_depth(depth, at_depth, jnp.zeros(keys.shape[0], jnp.int32))
    scores, legal = full_width_scores(settings, params, states, keys[0])
    return _best_actions(keys, scores, legal)


def principal_leaves(
    settings: LearnerSettings,
    params: Any,
    states: State,
    actions: jax.Array,
    depth: TracedDepth | None = None,
) -> State:
    """[N] the leaves of the principal variations of depth-``settings.depth`` searches (or of the
    traced ``depth``) from ``states`` [N] that begin with ``actions`` [N]: the position after each
    action, then after the best reply of a search one ply shallower, and so on down to the horizon
    (TDLeaf(lambda)'s leaf: the position whose value the search's score of that move is). A game that
    ends on the way stops at its final position; a finished game stays as it is."""
    rules = learner_rules(settings)
    heuristic = search_heuristic(settings, params, jax.random.key(0))
    leaves = jax.vmap(step, in_axes=(None, 0, 0))(rules, states, actions)
    deepest = settings.depth if depth is None else depth.max_depth
    for remaining in range(deepest - 1, 0, -1):

        def stepped(leaves: State = leaves, remaining: int = remaining) -> State:
            scores, legal = fullwidth_search(rules, leaves, remaining, heuristic, NETWORK_ROOT_MARGIN)
            best = jnp.argmax(jnp.where(legal, scores, -jnp.inf), axis=1).astype(jnp.int32)
            return jax.vmap(step, in_axes=(None, 0, 0))(rules, leaves, best)

        if depth is None:
            leaves = stepped()
            continue
        # A traced depth d takes the steps remaining = d - 1 .. 1, as a static d does; a step no
        # searcher takes is skipped.
        taken = jax.lax.cond(jnp.any(depth.present[remaining:]), stepped, lambda leaves=leaves: leaves)
        mask = jnp.broadcast_to(remaining < depth.depth, actions.shape)
        leaves = where_games(mask, taken, leaves)
    return leaves


def recorded_positions(
    settings: LearnerSettings,
    params: Any,
    states: State,
    actions: jax.Array,
    depth: TracedDepth | None = None,
) -> State:
    """[N] what self-play records of the plies ``actions`` [N] played from ``states`` [N]: the
    positions themselves, or with ``records_leaves`` their principal leaves (``principal_leaves``, at
    the traced ``depth`` when given) where those are unfinished (a leaf that ends the game has no
    value for the network to learn: the position itself is kept)."""
    if not settings.records_leaves:
        return states
    leaves = principal_leaves(settings, params, states, actions, depth)
    keep = leaves.terminated | states.terminated
    return where_games(keep, states, leaves)


TIED_GAMES = 64
"""Games of a batch whose best moves tie that ``_best_actions`` breaks apart (more: all the batch)."""


def _best_actions(keys: jax.Array, scores: jax.Array, legal: jax.Array) -> jax.Array:
    """[N] int32: ``pick_best(keys[i], scores[i], legal[i])`` of N games (0 without a legal move),
    drawing ``pick_best``'s [A] random numbers only for the games whose best moves tie (about 2 of
    1,024 a ply in 8x8 self-play; the draws cost as much as a depth-1 search of the whole batch)."""
    values = jnp.where(legal, scores, -jnp.inf)
    is_best = legal & (values >= jnp.max(values, axis=1, keepdims=True))
    tied = jnp.sum(is_best, axis=1) > 1
    only = jnp.argmax(is_best, axis=1).astype(jnp.int32)  # the best move where it is alone (or 0)
    capacity = min(TIED_GAMES, tied.shape[0])
    (games,) = jnp.nonzero(tied, size=capacity, fill_value=tied.shape[0])

    def few() -> jax.Array:
        g = jnp.minimum(games, tied.shape[0] - 1)
        picks = jax.vmap(pick_best)(keys[g], scores[g], legal[g])
        return only.at[games].set(picks, mode="drop")

    def every() -> jax.Array:
        return jax.vmap(pick_best)(keys, scores, legal)

    # Both give the same moves, so lanes of a lockstep vmap take ``every`` together.
    return jax.lax.cond(any_lane(jnp.sum(tied) > capacity), every, few)


def random_plies(rules: Rules, states: State, keys: jax.Array, plies: jax.Array | int) -> State:
    """``states`` ([N]) after ``plies`` uniformly random plies each (an int, or [N] per game); a
    finished game stays put. ``keys``: [N] game keys."""
    plies = jnp.broadcast_to(jnp.asarray(plies, jnp.int32), keys.shape)

    def choose(states: State, ply: jax.Array) -> jax.Array:
        ply_keys = jax.vmap(jax.random.fold_in, in_axes=(0, None))(keys, ply)
        return jax.vmap(random_action, in_axes=(None, 0, 0))(rules, ply_keys, states)

    def moving(states: State, ply: jax.Array) -> jax.Array:
        return (ply < plies) & ~states.terminated

    return play_plies(rules, states, choose, moving=moving)[0]


# ---------------------------------------------------------------------------
# Regression
# ---------------------------------------------------------------------------


def material_positions(settings: LearnerSettings, key: jax.Array, count: int) -> tuple[jax.Array, jax.Array]:
    """(obs [count, 2S], targets [count]): positions after a uniformly random number of random plies
    (0 .. L - 1) from the start, and their material value for the side to move,
    ``sigmoid(0.5 x material)`` (the exact result on a finished game)."""
    rules = learner_rules(settings)
    plies_key, play_key = jax.random.split(key)
    plies = jax.random.randint(plies_key, (count,), 0, record_length(settings))
    states = random_plies(rules, init_batch(rules, (count,)), jax.random.split(play_key, count), plies)
    targets = jax.vmap(material_value_fn(rules), in_axes=(None, 0, None))(None, states, None)
    return jax.vmap(encode, in_axes=(None, 0))(rules, states), targets


def weighted_mse(spec: EvaluatorSpec, params: Any, obs: jax.Array, targets: jax.Array, weights: jax.Array):
    """[] the weighted mean squared error of the network's values on ``obs`` [..., 2S]."""
    errors = jnp.square(value(spec, params, obs) - targets)
    return jnp.sum(errors * weights) / jnp.maximum(jnp.sum(weights), 1.0)


def regress(
    settings: LearnerSettings,
    state: LearnerState,
    obs: jax.Array,
    targets: jax.Array,
    weights: jax.Array,
    key: jax.Array,
    steps: int,
) -> tuple[LearnerState, jax.Array]:
    """(state after ``steps`` Adam steps, [steps] minibatch losses): each step fits the network's
    values to ``targets`` on ``settings.batch_size`` of the M positions ``obs`` [M, 2S], drawn with
    replacement in proportion to ``weights`` [M] (0 leaves a position out). The epoch is unchanged."""
    spec = learner_spec(settings)
    opt = optimizer(settings)
    weights = whole_on_every_device(weights)  # split by games after a self-play on several devices
    total = jnp.sum(weights)
    chance = jnp.where(total > 0, weights / jnp.maximum(total, 1e-12), 1.0 / weights.shape[0])
    picks = jax.random.choice(key, weights.shape[0], (steps, settings.batch_size), p=chance)

    def loss_fn(params, picked):
        return weighted_mse(spec, params, obs[picked], targets[picked], jnp.ones(picked.shape))

    params, opt_state, losses = adam_steps(opt, loss_fn, state.params, state.opt_state, picks)
    return state.replace(params=params, opt_state=opt_state), losses
