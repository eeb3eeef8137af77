"""Population-based training (Jaderberg et al. 2017) of TD(lambda) / TDLeaf(lambda) learners, as pure
functions over ``PBTState`` (the evosax / PureJaxRL style, settings static).

``members`` learners train side by side: one epoch is every member's TD epoch (``td_lambda``'s
self-play and Adam updates), vmapped over the members, each with its own learning rate, lambda and
exploration rate as traced values. Every ``exploit_interval`` epochs the members meet in a round-robin
tournament of paired openings (each pair plays ``tournament_openings`` committed openings with both
colours, at the learners' search, without exploration); the worst ``quantile`` of them then take the
weights, optimiser state and hyperparameters of members drawn at random among the best ``quantile``
(exploit), and multiply each copied hyperparameter by ``1 - perturbation`` or ``1 + perturbation``
(explore; lambda and the epsilon exploration rate clipped to [0, 1]).

With ``max_depth`` > 0 (alpha-beta members) the search depth is a fourth hyperparameter: every member
starts at the config's ``depth``, and a copy moves its source's depth by +1 or -1, clipped to
[``min_depth``, ``max_depth``]. The searches stay compiled at static depths: ``fullwidth_search``
(the self-play moves) builds its tree level by level in Python, so a traced depth there would mean a
rewrite that expands every tree to ``max_depth``. Instead each depth some member uses runs behind a
``lax.cond`` whose predicate (``present_depths``) is the same for every member, so it stays a branch
under the members' ``vmap``, and each member keeps its own depth's moves (``common.TracedDepth``).
Vmapped members pay for every depth in use (a shallow member runs the deeper searches too), as a
vmapped ``while_loop`` pays for its longest lane; a member's games are exactly those of a static
search of its depth. The tournament of alpha-beta members is one full-width search of all its games
a ply, sorted by mover, each mover's leaves scored by its network at its depth
(``pbt_tournament.packed_choose``; MCTS members' games stay vmapped). Simulations (MCTS) stay static.

With ``min_width`` > 0 an MLP's width is a hyperparameter too, in [``min_width``, ``width``]: the
network's shapes stay the config's (so the members stay one vmapped program and every file the run
writes is a ``width``-unit MLP), and each member keeps the units past its own width at zero, in and
out (``evaluator.masked_to_width``, applied after each epoch's updates, whose gradients there are zero
in any case). A copy's width is its source's times 1 - perturbation or 1 + perturbation, rounded and
clipped; a narrower copy drops its last units, a wider one's new units take fresh weights in and none
out, so it plays as its source until it trains (``evaluator.resized_to_width``). Masked members cost
what full-width ones do: the width is searched for strength, not speed.

The members' ``vmap`` is named (``sharding.MEMBERS_AXIS``), which keeps them in lockstep: the
self-play search's branches and the game loop take one predicate for every member
(``sharding.any_lane``), so they stay a branch and a loop instead of selects of every member's work
(an 8x8 epoch: 48 s -> 15.7 s on one core), and each member's games are unchanged. With a
full-width self-play search (alpha-beta with epsilon exploration: PBT's configs) the members do not
play under the ``vmap`` at all: ``self_play.members_selfplay`` plays every member's games as one
batch in member order, each member's leaves scored by its own network in chunks of its own
(``fullwidth.Grouped``), the same games as one network's batch costs; only ``learn`` is vmapped.

An epoch is ``train_members`` (the members' TD epochs, vmapped over any share of them: a member's
epoch reads its own rows alone) then ``after_training`` (the tournament, exploit/explore, metrics).
``epoch`` runs both in one compiled program; ``pbt_shares.epoch_in_shares`` trains the members a
share at a time (in this process or as Ray tasks) and plays the tournament and the exploit step here,
the same functions, so the same epoch (bit for bit in ``tests/test_pbt.py``).

The run loop sees a learner: ``PBTState.params`` is the network of the member that won the latest
tournament (member 0 before the first), which it snapshots, probes and exports. Each exploit is in
the epoch's metrics (``pbt_sources``: the member each one copied, -1 where it kept its own).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from neurocheckers.endgame.device import DeviceDB
from neurocheckers.learners.common import (
    LearnerState,
    SelfPlayBatch,
    TracedDepth,
    fresh_state,
    learner_spec,
    searches_full_width,
)
from neurocheckers.learners.pbt_settings import PBTSettings
from neurocheckers.learners.pbt_tournament import present_depths, tournament
from neurocheckers.learners.self_play import members_selfplay, selfplay
from neurocheckers.learners.td_lambda import init as td_init
from neurocheckers.learners.td_lambda import learn
from neurocheckers.networks.evaluator import init_params, masked_to_width, resized_to_width
from neurocheckers.sharding import MEMBERS_AXIS


@struct.dataclass
class Hyperparameters:
    """The hyperparameters each member trains with, [M] each (traced, so they can evolve).

    Fields:
      learning_rate: Adam's step size.
      lambda_: TD(lambda)'s lambda, in [0, 1].
      exploration_rate: epsilon (in [0, 1]), or the softmax temperature.
      depth: int32, the alpha-beta depth (the config's for all unless ``max_depth`` > 0).
      width: int32, the units of each hidden layer a member's MLP uses (``min_width`` > 0), else None.
    """

    learning_rate: jax.Array
    lambda_: jax.Array
    exploration_rate: jax.Array
    depth: jax.Array
    width: jax.Array | None = None


@struct.dataclass
class PBTState:
    """Everything a PBT run needs to continue.

    Fields:
      params: the best member's network (the latest tournament's winner; member 0 before the first):
        what the run snapshots, probes and exports.
      members: the members' ``LearnerState`` ([M] leading axis).
      hypers: the members' ``Hyperparameters``.
      best: [] int32, the best member's index.
      scores: [M] float32, each member's points per game in the latest tournament (0 before one).
      sources: [M] int32, the member each one copied at the latest exploit (-1: kept its own).
      epoch: [] int32, epochs completed.
    """

    params: Any
    members: LearnerState
    hypers: Hyperparameters
    best: jax.Array
    scores: jax.Array
    sources: jax.Array
    epoch: jax.Array


def exploit_count(settings: PBTSettings) -> int:
    """How many members a tournament replaces (and how many best ones they copy): the ``quantile``
    share of them, at least one."""
    return max(1, int(settings.members * settings.quantile))


def clipped(settings: PBTSettings, hypers: Hyperparameters) -> Hyperparameters:
    """``hypers`` in their ranges: lambda in [0, 1], epsilon in [0, 1] (a softmax temperature >= 0)."""
    top = 1.0 if settings.exploration == "epsilon" else jnp.inf
    return hypers.replace(
        lambda_=jnp.clip(hypers.lambda_, 0.0, 1.0),
        exploration_rate=jnp.clip(hypers.exploration_rate, 0.0, top),
    )


def initial_hypers(settings: PBTSettings, key: jax.Array) -> Hyperparameters:
    """Member 0 gets the config's values; each other member each value times a factor drawn
    log-uniformly between 1 - perturbation and 1 + perturbation (so the population starts apart).
    Every member starts at the config's depth; an evolving width is drawn like the others (its own
    key, so the others' draws are those of a run whose width is fixed), rounded and clipped."""
    m, p = settings.members, settings.perturbation
    low, high = jnp.log(1.0 - p), jnp.log(1.0 + p)
    factors = jnp.exp(jax.random.uniform(key, (3, m), minval=low, maxval=high)).at[:, 0].set(1.0)
    base = (settings.learning_rate, settings.lambda_, settings.exploration_rate)
    values = [jnp.float32(b) * f for b, f in zip(base, factors, strict=True)]
    width = None
    if settings.width_evolves:
        width_factors = jax.random.uniform(jax.random.fold_in(key, 1), (m,), minval=low, maxval=high)
        width = bounded_widths(settings, settings.width * jnp.exp(width_factors).at[0].set(1.0))
    depth = jnp.full(m, settings.depth, jnp.int32)
    return clipped(settings, Hyperparameters(*values, depth=depth, width=width))


def bounded_widths(settings: PBTSettings, widths: jax.Array) -> jax.Array:
    """[M] int32: ``widths`` rounded and clipped to [``min_width``, ``width``]."""
    return jnp.clip(jnp.round(widths), settings.min_width, settings.width).astype(jnp.int32)


def members_masked(settings: PBTSettings, params: Any, widths: jax.Array | None) -> Any:
    """The members' ``params`` ([M] leading axis) with the units past each one's width zeroed (as they
    are when the width does not evolve: ``widths`` None)."""
    if widths is None:
        return params
    return jax.vmap(functools.partial(masked_to_width, learner_spec(settings)))(params, widths)


@functools.partial(jax.jit, static_argnums=0)
def init(settings: PBTSettings, key: jax.Array) -> PBTState:
    """``members`` fresh TD learners (each its own network and hyperparameters) at epoch 0."""
    member_key, hyper_key = jax.random.split(key)
    members = jax.vmap(lambda k: td_init(settings, k))(jax.random.split(member_key, settings.members))
    return with_members(settings, members, hyper_key)


@functools.partial(jax.jit, static_argnums=0)
def start_from(settings: PBTSettings, params: Any, key: jax.Array) -> PBTState:
    """``init`` with every member starting from the network ``params`` (an agent's, shaped as the
    settings' network; each member masked to its own width when the width evolves), each with a fresh
    optimiser; the hyperparameters are drawn as ``init`` draws them."""
    _, hyper_key = jax.random.split(key)
    copies = jax.tree.map(lambda x: jnp.broadcast_to(x, (settings.members, *x.shape)), params)
    return with_members(settings, jax.vmap(lambda p: fresh_state(settings, p))(copies), hyper_key)


def with_members(settings: PBTSettings, members: LearnerState, hyper_key: jax.Array) -> PBTState:
    """A PBT state at epoch 0 of the ``members`` ([M] leading axis), their hyperparameters drawn
    (``initial_hypers``) and their networks masked to their widths."""
    hypers = initial_hypers(settings, hyper_key)
    members = members.replace(params=members_masked(settings, members.params, hypers.width))
    m = settings.members
    return PBTState(
        params=jax.tree.map(lambda x: x[0], members.params),
        members=members,
        hypers=hypers,
        best=jnp.int32(0),
        scores=jnp.zeros(m, jnp.float32),
        sources=jnp.full(m, -1, jnp.int32),
        epoch=jnp.int32(0),
    )


def member_settings(settings: PBTSettings, hyper: Hyperparameters) -> PBTSettings:
    """``settings`` with one member's traced hyperparameters in place of the config's: ``td_lambda``'s
    ``learn`` reads lambda, the learning rate and the exploration rate as numbers only (never as a
    static argument), so it trains with the member's own."""
    return dataclasses.replace(
        settings,
        learning_rate=hyper.learning_rate,
        lambda_=hyper.lambda_,
        exploration_rate=hyper.exploration_rate,
    )


def member_epoch(
    settings: PBTSettings,
    member: LearnerState,
    hyper: Hyperparameters,
    key: jax.Array,
    exact: DeviceDB | None,
    present: jax.Array | None,
) -> tuple[LearnerState, dict]:
    """One member's TD epoch (``td_lambda.epoch`` with the member's hyperparameters; its own depth
    when ``present``, the members' ``present_depths``, is given; its own width when it evolves)."""
    play_key, _ = jax.random.split(key)
    depth = None if present is None else TracedDepth(hyper.depth, present)
    batch = selfplay(settings, member.params, play_key, hyper.exploration_rate, depth=depth)
    return member_learn(settings, member, hyper, key, batch, exact)


def member_learn(
    settings: PBTSettings,
    member: LearnerState,
    hyper: Hyperparameters,
    key: jax.Array,
    batch: SelfPlayBatch,
    exact: DeviceDB | None,
) -> tuple[LearnerState, dict]:
    """The rest of ``member_epoch`` once its self-play games ``batch`` are played: ``td_lambda.learn``
    with the member's hyperparameters, then its width's mask when the width evolves."""
    member, metrics = learn(member_settings(settings, hyper), member, key, batch, exact)
    if hyper.width is not None:
        member = member.replace(params=masked_to_width(learner_spec(settings), member.params, hyper.width))
    return member, metrics


def ranking(scores: jax.Array, key: jax.Array) -> jax.Array:
    """[M] member indices, best first: by ``scores``, ties broken at random."""
    return jnp.lexsort((jax.random.uniform(key, scores.shape), -scores))


def exploit_and_explore(
    settings: PBTSettings, state: PBTState, order: jax.Array, key: jax.Array
) -> tuple[PBTState, jax.Array]:
    """(state, [M] sources): each of the worst ``exploit_count`` members of ``order`` (best first)
    copies the network, optimiser state and hyperparameters of one of the best as many, drawn at
    random, and multiplies each copied hyperparameter by 1 - perturbation or 1 + perturbation (then
    clipped); the others are unchanged (source -1)."""
    n, m, p = exploit_count(settings), settings.members, settings.perturbation
    pick_key, sign_key = jax.random.split(key)
    worst = order[m - n :]
    copied = order[jax.random.randint(pick_key, (n,), 0, n)]
    index = jnp.arange(m, dtype=jnp.int32).at[worst].set(copied.astype(jnp.int32))
    sources = jnp.full(m, -1, jnp.int32).at[worst].set(copied.astype(jnp.int32))
    take = functools.partial(jax.tree.map, lambda x: x[index])
    members = state.members.replace(
        params=take(state.members.params), opt_state=take(state.members.opt_state)
    )
    up = jax.random.bernoulli(sign_key, 0.5, (3, m))
    factors = jnp.where(sources >= 0, jnp.where(up, 1.0 + p, 1.0 - p), 1.0)
    copied = take(state.hypers)
    hypers = Hyperparameters(
        learning_rate=copied.learning_rate * factors[0],
        lambda_=copied.lambda_ * factors[1],
        exploration_rate=copied.exploration_rate * factors[2],
        depth=explored_depths(settings, copied.depth, sources, key),
        width=explored_widths(settings, copied.width, sources, key),
    )
    if settings.width_evolves:
        members = members.replace(params=resized(settings, members.params, copied.width, hypers.width, key))
    return state.replace(members=members, hypers=clipped(settings, hypers)), sources


def explored_depths(
    settings: PBTSettings, depths: jax.Array, sources: jax.Array, key: jax.Array
) -> jax.Array:
    """[M] int32: ``depths`` (already copied from the sources) with each copy's moved by +1 or -1,
    clipped to [``min_depth``, ``max_depth``], when the depth evolves; else ``depths``."""
    if not settings.depth_evolves:
        return depths
    # A key of its own: the other hyperparameters' draws are those of a run whose depth is fixed.
    up = jax.random.bernoulli(jax.random.fold_in(key, 1), 0.5, depths.shape)
    moved = jnp.clip(depths + jnp.where(up, 1, -1), settings.min_depth, settings.max_depth)
    return jnp.where(sources >= 0, moved, depths).astype(jnp.int32)


def explored_widths(
    settings: PBTSettings, widths: jax.Array | None, sources: jax.Array, key: jax.Array
) -> jax.Array | None:
    """[M] int32: ``widths`` (already copied from the sources) with each copy's multiplied by
    1 - perturbation or 1 + perturbation, rounded and clipped (``bounded_widths``); None when the
    width does not evolve."""
    if widths is None:
        return None
    up = jax.random.bernoulli(jax.random.fold_in(key, 2), 0.5, widths.shape)
    p = settings.perturbation
    moved = bounded_widths(settings, widths * jnp.where(up, 1.0 + p, 1.0 - p))
    return jnp.where(sources >= 0, moved, widths).astype(jnp.int32)


def resized(
    settings: PBTSettings, params: Any, widths: jax.Array, new_widths: jax.Array, key: jax.Array
) -> Any:
    """The members' ``params`` ([M], each masked to its ``widths``) resized to ``new_widths``
    (``evaluator.resized_to_width``: a grown unit's weights in drawn fresh with ``key``)."""
    spec = learner_spec(settings)
    fresh_keys = jax.random.split(jax.random.fold_in(key, 3), settings.members)
    fresh = jax.vmap(lambda k: init_params(k, spec))(fresh_keys)
    resize = functools.partial(resized_to_width, spec)
    return jax.vmap(resize)(params, fresh, widths, new_widths)


def exploit_step(settings: PBTSettings, state: PBTState, key: jax.Array) -> PBTState:
    """The tournament among the members, then ``exploit_and_explore``; the winner becomes ``best``."""
    play_key, rank_key, copy_key = jax.random.split(key, 3)
    points = tournament(settings, state.members.params, play_key, state.hypers.depth)
    m = settings.members
    scores = (jnp.sum(points, axis=1) - 0.5) / max(m - 1, 1)  # points per game, the diagonal left out
    order = ranking(scores, rank_key)
    state, sources = exploit_and_explore(settings, state, order, copy_key)
    return state.replace(best=order[0].astype(jnp.int32), scores=scores, sources=sources)


def pbt_metrics(settings: PBTSettings, state: PBTState, trained: dict, due: jax.Array) -> dict:
    """The epoch's metrics: the best member's TD metrics, every member's self-play games summed, the
    spread of the hyperparameters, and (on a tournament's epoch) its scores and copies."""
    best = state.best
    metrics = {name: trained[name][best] for name in ("loss", "learner_loss_before", "learner_loss_after")}
    metrics.update({name: trained[name][best] for name in ("td_error", "value_mean")})
    metrics.update({name: jnp.sum(trained[name]) for name in ("games", "plies", "wins", "draws", "losses")})
    h = state.hypers
    metrics.update(
        epsilon=h.exploration_rate[best],
        pbt_best=best,
        pbt_learning_rate=h.learning_rate[best],
        pbt_lambda=h.lambda_[best],
    )
    named = [("learning_rate", h.learning_rate), ("lambda", h.lambda_), ("exploration", h.exploration_rate)]
    if settings.search == "alphabeta":
        metrics["pbt_depth"] = h.depth[best]
        named.append(("depth", h.depth))
    if h.width is not None:
        metrics["pbt_width"] = h.width[best]
        named.append(("width", h.width))
    for name, values in named:
        metrics[f"pbt_{name}_min"] = jnp.min(values)
        metrics[f"pbt_{name}_max"] = jnp.max(values)
    nan = jnp.float32(jnp.nan)
    metrics["pbt_best_score"] = jnp.where(due, state.scores[best], nan)
    metrics["pbt_worst_score"] = jnp.where(due, jnp.min(state.scores), nan)
    metrics["pbt_sources"] = jnp.where(due, state.sources, -1)
    return metrics


def member_keys(settings: PBTSettings, key: jax.Array) -> tuple[jax.Array, jax.Array]:
    """([M] the members' training keys, the exploit step's key) of an epoch's ``key``."""
    train_key, exploit_key = jax.random.split(key)
    return jax.random.split(train_key, settings.members), exploit_key


def learn_from_all_games(
    settings: PBTSettings,
    members: LearnerState,
    hypers: Hyperparameters,
    keys: jax.Array,
    batches: SelfPlayBatch,
    exact: DeviceDB | None,
) -> tuple[LearnerState, dict]:
    """``member_learn`` of every member (vmapped) over all the members' games (``batches``: [M, n]
    laid end to end, M x n games each): each member's TD(lambda) targets of every game under its own
    network and hyperparameters, its ``updates_per_epoch`` minibatches drawn from all of them. The
    game counts of the metrics are each member's own games'."""
    shared = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), batches)
    learn_each = jax.vmap(member_learn, in_axes=(None, 0, 0, 0, None, None), axis_name=MEMBERS_AXIS)
    members, metrics = learn_each(settings, members, hypers, keys, shared, exact)
    own = dict(
        plies=jnp.sum(batches.length, axis=1),
        wins=jnp.sum(batches.result == 1, axis=1),
        draws=jnp.sum(batches.result == 0, axis=1),
        losses=jnp.sum(batches.result == -1, axis=1),
    )
    return members, {**metrics, **{name: value.astype(metrics[name].dtype) for name, value in own.items()}}


def train_members(
    settings: PBTSettings,
    members: LearnerState,
    hypers: Hyperparameters,
    keys: jax.Array,
    present: jax.Array | None,
    exact: DeviceDB | None = None,
) -> tuple[LearnerState, dict]:
    """The TD epochs of any share of the members (``members``, ``hypers``, ``keys``: [k] each, their
    rows of the whole population's), vmapped; ``present``: the whole population's
    ``present_depths`` (None: the depth is fixed). A member's epoch does not depend on the others
    (unless ``share_games``), so the population trains whole or in shares alike (``epoch``,
    ``epoch_in_shares``)."""
    if searches_full_width(settings):
        # Every member's games in one batch, each member's leaves scored by its own network in dense
        # chunks (``members_selfplay``): the same games as the vmapped ``member_epoch``, 2x faster.
        play_keys = jax.vmap(lambda k: jax.random.split(k)[0])(keys)  # ``member_epoch``'s
        depth = None if present is None else TracedDepth(hypers.depth, present)
        batches = members_selfplay(settings, members.params, play_keys, hypers.exploration_rate, depth)
        if settings.share_games:
            return learn_from_all_games(settings, members, hypers, keys, batches, exact)
        learn_each = jax.vmap(member_learn, in_axes=(None, 0, 0, 0, 0, None), axis_name=MEMBERS_AXIS)
        return learn_each(settings, members, hypers, keys, batches, exact)
    # ``present``: one for all; the axis name keeps the members' game loops in lockstep (``sharding``).
    train = jax.vmap(member_epoch, in_axes=(None, 0, 0, 0, None, None), axis_name=MEMBERS_AXIS)
    return train(settings, members, hypers, keys, exact, present)


def after_training(
    settings: PBTSettings, state: PBTState, members: LearnerState, trained: dict, exploit_key: jax.Array
) -> tuple[PBTState, dict]:
    """The rest of an epoch once every member trained (``members``, ``trained``: [M]): every
    ``exploit_interval`` epochs the tournament and the exploit/explore step; the metrics."""
    state = state.replace(members=members, epoch=state.epoch + 1)
    due = state.epoch % settings.exploit_interval == 0
    state = jax.lax.cond(due, lambda s: exploit_step(settings, s, exploit_key), lambda s: s, state)
    state = state.replace(params=jax.tree.map(lambda x: x[state.best], state.members.params))
    return state, pbt_metrics(settings, state, trained, due)


def epoch_present(settings: PBTSettings, state: PBTState) -> jax.Array | None:
    """The members' ``present_depths`` when the depth evolves, else None."""
    return present_depths(settings, state.hypers.depth) if settings.depth_evolves else None


@functools.partial(jax.jit, static_argnums=0)
def epoch(
    settings: PBTSettings, state: PBTState, key: jax.Array, exact: DeviceDB | None = None
) -> tuple[PBTState, dict]:
    """One epoch: every member's TD epoch (``train_members``, vmapped over all the members, each with
    its hyperparameters, its depth among them when it evolves; exact targets where the endgame
    database ``exact`` holds a position), then ``after_training``: every ``exploit_interval``
    epochs, the tournament and the exploit/explore step. Metrics: ``pbt_metrics``."""
    keys, exploit_key = member_keys(settings, key)
    present = epoch_present(settings, state)
    members, trained = train_members(settings, state.members, state.hypers, keys, present, exact)
    return after_training(settings, state, members, trained, exploit_key)
