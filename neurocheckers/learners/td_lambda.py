"""TD(lambda) and TDLeaf(lambda) self-play learning of the evaluator network, as pure functions over
``LearnerState``.

One epoch (``epoch``): ``selfplay_games`` self-play games of the current network (``self_play.selfplay``),
the TD(lambda) target of every position the search moved from, then ``updates_per_epoch`` Adam steps
regressing the network's values on those targets (minibatches of ``batch_size`` positions).

Targets (``td_lambda_targets``) follow the recursion of the TD(lambda) study, going back from the end
of each game: the final position gets its exact result (a game cut by ``max_plies`` bootstraps from
the network's value there instead), and

    target(p_i) = lambda * target(p_{i+1}) + (1 - lambda) * v(p_{i+1}),

where every value is the chance that the side to move wins: when the side to move changes between
``p_i`` and ``p_{i+1}`` (it does not inside a multi-jump) both terms are taken as ``1 - x``. So
lambda = 0 is one-step TD (the next position's value), lambda = 1 the game's result (Monte Carlo).
The targets are computed once per epoch with the network that played the games (the offline
lambda-return). With an endgame database (``endgame_targets``; ``epoch``'s ``exact``), every
recorded position it holds takes its exact value (win, draw or loss, ``endgame.device.exact_value``;
wins and losses only without ``endgame_draws``) both as its target and as the value the positions
before it bootstrap from. With ``anchor_weight`` w > 0 (``epoch``'s ``anchor``: the start network's
parameters, a fine-tuning's ``initial_agent``) each target becomes ``(1 - w) target + w v_anchor``:
a joint objective that keeps what the start network knew (its deep-search targets) while TDLeaf
teaches the values a shallow search reads.

``init(settings, key)`` and ``epoch(settings, state, key)`` are pure and jitted with the settings
static (the evosax / PureJaxRL style).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Generator
from typing import Any

import jax
import jax.numpy as jnp

from neurocheckers.endgame.database import DRAW, OUTSIDE
from neurocheckers.endgame.device import DeviceDB, boards_of_planes, exact_value, lookup_mover
from neurocheckers.learners.common import (
    LearnerSettings,
    LearnerState,
    SelfPlayBatch,
    fresh_state,
    init_network,
    learner_spec,
    record_length,
    regress,
    weighted_mse,
)
from neurocheckers.learners.self_play import concatenate_batches, selfplay
from neurocheckers.networks import fitting
from neurocheckers.networks.evaluator import value
from neurocheckers.sections import LambdaSettings


@dataclasses.dataclass(frozen=True)
class TDSettings(LambdaSettings, LearnerSettings):
    """The settings of a TD(lambda) learner: the shared ``LearnerSettings`` and lambda."""


@dataclasses.dataclass(frozen=True)
class TDLeafSettings(TDSettings):
    """TDLeaf(lambda) (Baxter, Tridgell and Weaver 1998, KnightCap; the TD(lambda) seed study's
    method with search): TD(lambda) over the principal leaves of the self-play searches instead of
    the positions moved from. Each ply's leaf is the position whose value the alpha-beta's score of
    the move played is, so the network learns the values the search actually reads. Needs alpha-beta
    self-play of depth >= 2 (at depth 1 the leaf is the next position, and TDLeaf is TD(lambda))."""

    @property
    def records_leaves(self) -> bool:
        return True


def td_lambda_targets(values: jax.Array, flips: jax.Array, length: jax.Array, lambda_: float) -> jax.Array:
    """[N, L + 1] TD(lambda) targets of N self-play games' positions (``fitting.td_lambda_targets``
    in the layout of a ``SelfPlayBatch``).

    ``values`` [N, L + 1]: each position's value for its side to move, slot ``length`` holding the
    final position's value (its exact result, or the bootstrap of a cut game); ``flips`` [N, L]:
    whether the side to move changes from slot ``i`` to ``i + 1``; ``length`` [N]: plies played.
    Slots from ``length`` on get their own value, slots before it the recursion of the module
    docstring."""
    played = jnp.arange(values.shape[1])[None, :] < length[:, None]
    padded_flips = jnp.concatenate([flips, jnp.zeros_like(flips[:, :1])], axis=1)
    end = jnp.take_along_axis(values, length[:, None], axis=1)[:, 0]
    return jnp.where(played, fitting.td_lambda_targets(values, played, padded_flips, end, lambda_), values)


def exact_values(exact: DeviceDB, batch: SelfPlayBatch, draws: bool = True) -> tuple[jax.Array, jax.Array]:
    """([N, L + 1] exact win chances, [N, L + 1] bool: held by the database) of a batch's positions
    (the positions at a turn's start, up to each game's final one); without ``draws`` the positions
    it holds as drawn count as not held."""
    squares = exact.num_squares
    boards = boards_of_planes(batch.positions[..., :squares], batch.positions[..., squares:])
    lookup = jax.vmap(jax.vmap(lookup_mover, in_axes=(None, 0, 0)), in_axes=(None, 0, 0))
    # Slots after a game's end are no turn's start (``turn_start`` False), so they are never held.
    found, distance = lookup(exact, boards, batch.turn_start)
    held = (found != OUTSIDE) & (draws | (found != DRAW))
    return exact_value(found, distance), held


def training_data(
    settings: TDSettings, params, batch: SelfPlayBatch, exact: DeviceDB | None = None
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array, jax.Array]:
    """(obs [M, 2S], targets [M], weights [M], values [M], exact [M] bool) of a self-play batch,
    M = N x L: every position the search moved from (weight 1; the others 0), its TD(lambda)
    target, its value under ``params`` (the network that played) and whether the database
    ``exact`` gave its target."""
    spec = learner_spec(settings)
    n, slots = batch.colors.shape
    values = value(spec, params, batch.positions)  # [N, L + 1]
    games = jnp.arange(n)
    final = jnp.where(batch.finished, batch.final_value, values[games, batch.length])
    values = values.at[games, batch.length].set(final)
    bootstrap, known = values, jnp.zeros_like(batch.turn_start)
    if exact is not None:
        exact_chance, known = exact_values(exact, batch, settings.endgame_draws)
        bootstrap = jnp.where(known, exact_chance, values)
    flips = batch.colors[:, 1:] != batch.colors[:, :-1]
    targets = td_lambda_targets(bootstrap, flips, batch.length, settings.lambda_)
    targets = jnp.where(known, bootstrap, targets)
    weights = (jnp.arange(slots - 1) < batch.length[:, None]).astype(jnp.float32)
    length = record_length(settings)
    obs = batch.positions[:, :length].reshape(n * length, -1)
    flat = (targets[:, :length], weights, values[:, :length], known[:, :length])
    return obs, *(x.reshape(-1) for x in flat)


@functools.partial(jax.jit, static_argnums=0)
def init(settings: TDSettings, key: jax.Array) -> LearnerState:
    """A fresh network (bootstrapped on material when ``bootstrap_positions`` > 0) at epoch 0."""
    return fresh_state(settings, init_network(settings, key))


@functools.partial(jax.jit, static_argnums=0)
def start_from(settings: TDSettings, params: Any, key: jax.Array) -> LearnerState:
    """The network ``params`` (an agent's, shaped as the settings' network) with a fresh optimiser,
    at epoch 0: a fine-tuning's start. ``key`` is unused (``init``'s signature, a key after)."""
    del key
    return fresh_state(settings, params)


@functools.partial(jax.jit, static_argnums=0)
def epoch(
    settings: TDSettings,
    state: LearnerState,
    key: jax.Array,
    exact: DeviceDB | None = None,
    anchor: Any = None,
) -> tuple[LearnerState, dict]:
    """One epoch: self-play games, TD(lambda) targets (exact where the endgame database ``exact``
    holds a position), Adam updates. Metrics: ``td_error`` (mean |target - value| before the
    updates), ``loss`` (the mean squared TD error after them) and
    ``learner_loss_before``/``learner_loss_after`` (before and after), ``epsilon`` (the exploration
    rate), ``value_mean``, and the games' counts (``wins``/``losses``: games Black / White won)."""
    play_key, _ = jax.random.split(key)
    batch = selfplay(settings, state.params, play_key, jnp.float32(settings.exploration_rate))
    return learn(settings, state, key, batch, exact, anchor)


def learn(
    settings: TDSettings,
    state: LearnerState,
    key: jax.Array,
    batch: SelfPlayBatch,
    exact: DeviceDB | None = None,
    anchor: Any = None,
) -> tuple[LearnerState, dict]:
    """The rest of ``epoch`` (its key ``key``) once its self-play games ``batch`` are played."""
    _, fit_key = jax.random.split(key)
    rate = jnp.float32(settings.exploration_rate)
    obs, targets, weights, values, _ = training_data(settings, state.params, batch, exact)
    if anchor is not None and settings.anchor_weight > 0:
        pull = value(learner_spec(settings), anchor, obs)
        targets = (1.0 - settings.anchor_weight) * targets + settings.anchor_weight * pull
    count = jnp.maximum(jnp.sum(weights), 1.0)
    loss_before = jnp.sum(jnp.square(targets - values) * weights) / count
    new_state, _ = regress(settings, state, obs, targets, weights, fit_key, settings.updates_per_epoch)
    loss_after = weighted_mse(learner_spec(settings), new_state.params, obs, targets, weights)
    metrics = dict(
        loss=loss_after,
        learner_loss_before=loss_before,
        learner_loss_after=loss_after,
        td_error=jnp.sum(jnp.abs(targets - values) * weights) / count,
        epsilon=rate,
        value_mean=jnp.sum(values * weights) / count,
        games=jnp.int32(settings.selfplay_games),
        plies=jnp.sum(batch.length),
        wins=jnp.sum(batch.result == 1),
        draws=jnp.sum(batch.result == 0),
        losses=jnp.sum(batch.result == -1),
    )
    return new_state.replace(epoch=state.epoch + 1), metrics


PIECES = 16
"""How many pieces ``epoch_in_pieces`` plays an epoch's self-play games in (fewer when they do not
divide the games, and pieces of at least ``SMALLEST_PIECE`` games)."""
SMALLEST_PIECE = 16


def piece_games(settings: TDSettings) -> int:
    """The games of one piece of ``epoch_in_pieces``: the largest share selfplay_games / k (k <=
    ``PIECES``) of at least ``SMALLEST_PIECE`` games (the whole batch when none is)."""
    n = settings.selfplay_games
    for k in range(PIECES, 1, -1):
        if n % k == 0 and n // k >= SMALLEST_PIECE:
            return n // k
    return n


@functools.partial(jax.jit, static_argnums=(0, 4))
def _play_piece(settings: TDSettings, params, key: jax.Array, first: jax.Array, count: int) -> SelfPlayBatch:
    play_key, _ = jax.random.split(key)
    rate = jnp.float32(settings.exploration_rate)
    return selfplay(settings, params, play_key, rate, (first, count))


@functools.partial(jax.jit, static_argnums=0)
def _learn_pieces(
    settings: TDSettings, state: LearnerState, key: jax.Array, pieces: list, exact=None, anchor=None
):
    return learn(settings, state, key, concatenate_batches(pieces), exact, anchor)


def epoch_in_pieces(
    settings: TDSettings,
    state: LearnerState,
    key: jax.Array,
    exact: DeviceDB | None = None,
    anchor: Any = None,
) -> Generator[None, None, tuple[LearnerState, dict]]:
    """``epoch`` step by step, for a caller that may stop between steps: a generator that yields
    after each piece of the self-play games (``piece_games`` games, each one call) and returns
    ``epoch``'s (state, metrics). The games are the same as ``epoch``'s (each from the epoch key and
    its number alone), so the result does not depend on where a caller could have stopped."""
    count = piece_games(settings)
    pieces = []
    for first in range(0, settings.selfplay_games, count):
        pieces.append(
            jax.block_until_ready(_play_piece(settings, state.params, key, jnp.int32(first), count))
        )
        yield
    return _learn_pieces(settings, state, key, pieces, exact, anchor)
