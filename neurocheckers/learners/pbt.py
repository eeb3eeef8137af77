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

The search (its depth or simulations) and the network's shape are static settings, compiled into the
program: every member has the config's; only the three hyperparameters above evolve.

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

from neurocheckers.arena import a_is_black_in_game, paired_opening_starts, play_games
from neurocheckers.endgame.device import DeviceDB
from neurocheckers.learners.common import LearnerState, learner_rules, learner_spec, record_length
from neurocheckers.learners.self_play import selfplay
from neurocheckers.learners.td_lambda import TDSettings, learn
from neurocheckers.learners.td_lambda import init as td_init
from neurocheckers.population import member_or_boss_policy
from neurocheckers.rules.openings import load_openings, opening_states
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import State
from neurocheckers.search.play_settings import population_search
from neurocheckers.sections import PBTSectionSettings
from neurocheckers.sharding import over_leading_shards


@dataclasses.dataclass(frozen=True)
class PBTSettings(PBTSectionSettings, TDSettings):
    """PBT's settings: the TD learner's (the members' starting hyperparameters among them) and the
    ``pbt`` section's."""

    @property
    def records_leaves(self) -> bool:
        return self.member_learner == "td_leaf"


@struct.dataclass
class Hyperparameters:
    """The hyperparameters each member trains with, [M] each (traced, so they can evolve).

    Fields:
      learning_rate: Adam's step size.
      lambda_: TD(lambda)'s lambda, in [0, 1].
      exploration_rate: epsilon (in [0, 1]), or the softmax temperature.
    """

    learning_rate: jax.Array
    lambda_: jax.Array
    exploration_rate: jax.Array


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
    log-uniformly between 1 - perturbation and 1 + perturbation (so the population starts apart)."""
    m, p = settings.members, settings.perturbation
    low, high = jnp.log(1.0 - p), jnp.log(1.0 + p)
    factors = jnp.exp(jax.random.uniform(key, (3, m), minval=low, maxval=high)).at[:, 0].set(1.0)
    base = (settings.learning_rate, settings.lambda_, settings.exploration_rate)
    values = [jnp.float32(b) * f for b, f in zip(base, factors, strict=True)]
    return clipped(settings, Hyperparameters(*values))


@functools.partial(jax.jit, static_argnums=0)
def init(settings: PBTSettings, key: jax.Array) -> PBTState:
    """``members`` fresh TD learners (each its own network and hyperparameters) at epoch 0."""
    member_key, hyper_key = jax.random.split(key)
    members = jax.vmap(lambda k: td_init(settings, k))(jax.random.split(member_key, settings.members))
    m = settings.members
    return PBTState(
        params=jax.tree.map(lambda x: x[0], members.params),
        members=members,
        hypers=initial_hypers(settings, hyper_key),
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
) -> tuple[LearnerState, dict]:
    """One member's TD epoch (``td_lambda.epoch`` with the member's hyperparameters)."""
    play_key, _ = jax.random.split(key)
    batch = selfplay(settings, member.params, play_key, hyper.exploration_rate)
    return learn(member_settings(settings, hyper), member, key, batch, exact)


@functools.cache
def committed_openings(rules: Rules) -> State:
    """The committed openings of ``rules`` ([K] host arrays), which the tournaments draw from."""
    with jax.ensure_compile_time_eval():  # host arrays, though the first call may come while tracing
        return jax.device_get(opening_states(rules, load_openings(rules)))


def tournament(settings: PBTSettings, params: Any, key: jax.Array) -> jax.Array:
    """[M, M] points per game of member i against member j (the diagonal 1/2): a round-robin where
    every pair plays the same ``tournament_openings`` openings (drawn from the committed set with
    ``key``) with both colours, at the learners' search without exploration."""
    m, games = settings.members, 2 * settings.tournament_openings
    first, second = (jnp.asarray(x, jnp.int32) for x in jnp.triu_indices(m, 1))
    pairs = first.shape[0]
    openings = committed_openings(learner_rules(settings))
    count = jax.tree.leaves(openings)[0].shape[0]
    order = jax.random.permutation(jax.random.fold_in(key, 0), count)
    chosen = order[jnp.arange(settings.tournament_openings) % count]
    drawn = jax.tree.map(lambda x: jnp.asarray(x)[chosen], openings)
    policy = member_or_boss_policy(
        learner_rules(settings), learner_spec(settings), population_search(settings)
    )

    def play(a_params, b_params, pair_ids, key, drawn):
        shape = (pair_ids.shape[0], games)
        numbers = jnp.broadcast_to(jnp.arange(games, dtype=jnp.int32), shape)
        game_ids = pair_ids[:, None] * games + numbers

        def pair_games(a, b, states, a_to_move, keys):
            return jax.vmap(policy, in_axes=((None, None, 0), 0, 0))((a, b, a_to_move), states, keys)

        def choose(states: State, a_to_move: jax.Array, keys: jax.Array) -> jax.Array:
            return jax.vmap(pair_games)(a_params, b_params, states, a_to_move, keys)

        starts = paired_opening_starts(drawn, numbers)
        max_plies = record_length(settings)
        records = play_games(
            learner_rules(settings),
            choose,
            a_is_black_in_game(numbers),
            game_ids,
            key,
            max_plies,
            0,
            False,
            starts=starts,
        )
        return records.score

    play = over_leading_shards(play, pairs, (False, False, False, True, True))
    a_params = jax.tree.map(lambda x: x[first], params)
    b_params = jax.tree.map(lambda x: x[second], params)
    pair_ids = jnp.arange(pairs, dtype=jnp.int32)
    score = jnp.mean(play(a_params, b_params, pair_ids, key, drawn), axis=1)
    points = jnp.full((m, m), 0.5).at[first, second].set(score)
    return points.at[second, first].set(1.0 - score)


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
    hypers = take(state.hypers)
    hypers = Hyperparameters(
        learning_rate=hypers.learning_rate * factors[0],
        lambda_=hypers.lambda_ * factors[1],
        exploration_rate=hypers.exploration_rate * factors[2],
    )
    return state.replace(members=members, hypers=clipped(settings, hypers)), sources


def exploit_step(settings: PBTSettings, state: PBTState, key: jax.Array) -> PBTState:
    """The tournament among the members, then ``exploit_and_explore``; the winner becomes ``best``."""
    play_key, rank_key, copy_key = jax.random.split(key, 3)
    points = tournament(settings, state.members.params, play_key)
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
    for name, values in (
        ("learning_rate", h.learning_rate),
        ("lambda", h.lambda_),
        ("exploration", h.exploration_rate),
    ):
        metrics[f"pbt_{name}_min"] = jnp.min(values)
        metrics[f"pbt_{name}_max"] = jnp.max(values)
    nan = jnp.float32(jnp.nan)
    metrics["pbt_best_score"] = jnp.where(due, state.scores[best], nan)
    metrics["pbt_worst_score"] = jnp.where(due, jnp.min(state.scores), nan)
    metrics["pbt_sources"] = jnp.where(due, state.sources, -1)
    return metrics


@functools.partial(jax.jit, static_argnums=0)
def epoch(
    settings: PBTSettings, state: PBTState, key: jax.Array, exact: DeviceDB | None = None
) -> tuple[PBTState, dict]:
    """One epoch: every member's TD epoch (vmapped, each with its hyperparameters; exact targets
    where the endgame database ``exact`` holds a position), then, every ``exploit_interval``
    epochs, the tournament and the exploit/explore step. Metrics: ``pbt_metrics``."""
    train_key, exploit_key = jax.random.split(key)
    keys = jax.random.split(train_key, settings.members)
    train = jax.vmap(member_epoch, in_axes=(None, 0, 0, 0, None))
    members, trained = train(settings, state.members, state.hypers, keys, exact)
    state = state.replace(members=members, epoch=state.epoch + 1)
    due = state.epoch % settings.exploit_interval == 0
    state = jax.lax.cond(due, lambda s: exploit_step(settings, s, exploit_key), lambda s: s, state)
    state = state.replace(params=jax.tree.map(lambda x: x[state.best], state.members.params))
    return state, pbt_metrics(settings, state, trained, due)
