"""Batched self-play games with every position recorded, for the learners: ``selfplay_games`` games at
once, each from the start position plus ``opening_plies`` uniformly random plies, the moves chosen by
the configured search over the current network with exploration (``common.choose_actions``). Game
``i`` draws its randomness from the epoch key and its number alone, so the games do not depend on how
the batch is split across host devices."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from neurocheckers.learners.common import (
    OPENING_SALT,
    LearnerSettings,
    MemberNetworks,
    SelfPlayBatch,
    TracedDepth,
    choose_actions,
    learner_rules,
    random_plies,
    record_length,
    recorded_positions,
    searches_full_width,
)
from neurocheckers.match.arena import play_plies
from neurocheckers.networks.evaluator import encode
from neurocheckers.rules.engine import init_batch
from neurocheckers.rules.state import State
from neurocheckers.search.baselines import material_value_fn
from neurocheckers.sharding import over_leading_shards

SELFPLAY_STAGES = 4
"""Batch sizes a self-play shard of n games goes through: n, then n / 2, n / 4, n / 8 (while even and
at least ``SMALLEST_STAGE``), each stage starting once its predecessor's unfinished games fit in it; the
finished games are left out, so the long games at the end do not pay for the whole batch (8x8 games
of up to 300 plies: 65 on average, the longest of 1,024 near 190; depth-1 self-play 1.2-1.3x faster,
compiling in 20 s instead of 6)."""
SMALLEST_STAGE = 16


@struct.dataclass
class _Records:
    """What a self-play shard records of its n games (``SelfPlayBatch``'s fields of the same names)."""

    positions: jax.Array
    colors: jax.Array
    turn_start: jax.Array
    actions: jax.Array
    length: jax.Array


def _take(states: State, rows: jax.Array) -> State:
    return jax.tree.map(lambda x: x[rows], states)


def _put(whole: State, rows: jax.Array, part: State) -> State:
    return jax.tree.map(lambda w, p: w.at[rows].set(p), whole, part)


def selfplay_stages(settings: LearnerSettings, n: int) -> list[int]:
    """The batch sizes that a self-play shard of ``n`` games goes through (``SELFPLAY_STAGES``)."""
    sizes = [n]
    if searches_full_width(settings) and settings.depth > 1:
        # Its cost follows the unfinished games' trees already: 8x8 depth 3 was 1.05x faster in
        # stages, for 30 s more compiling.
        return sizes
    while len(sizes) < SELFPLAY_STAGES and sizes[-1] % 2 == 0 and sizes[-1] // 2 >= SMALLEST_STAGE:
        sizes.append(sizes[-1] // 2)
    return sizes


def _play_stage(
    settings: LearnerSettings,
    params: Any,
    rate: jax.Array,
    game_keys: jax.Array,
    slots: jax.Array,
    carry: tuple[State, jax.Array, _Records],
    next_size: int,
    depth: TracedDepth | None,
) -> tuple[State, jax.Array, _Records]:
    """Searched plies of the games ``slots`` ([m] of the shard's n; ``carry``: their states [m], the
    ply, the shard's records) until every game is over or cut at the length cap, or (``next_size``
    > 0) until the unfinished ones fit in ``next_size``: an arena game of the network against
    itself (``arena.play_plies``), its alpha-beta at the traced ``depth`` when given."""
    rules = learner_rules(settings)
    keys = game_keys[slots]
    n = game_keys.shape[0]
    if isinstance(params, MemberNetworks):  # each game's member's network, rate and depth
        params, rate = params.take(slots), rate[slots]
        depth = None if depth is None else depth.replace(depth=depth.depth[slots])

    def choose(states: State, ply: jax.Array) -> jax.Array:
        ply_keys = jax.vmap(jax.random.fold_in, in_axes=(0, None))(keys, ply)
        return choose_actions(settings, params, states, ply_keys, rate, depth)

    def record(records: _Records, states: State, chosen: jax.Array, ply: jax.Array, live: jax.Array):
        rows = jnp.where(live, slots, n)  # a finished game's rows stay as they are
        recorded = recorded_positions(settings, params, states, chosen, depth)
        return records.replace(
            positions=records.positions.at[rows, ply].set(
                jax.vmap(encode, (None, 0))(rules, recorded), mode="drop"
            ),
            colors=records.colors.at[rows, ply].set(recorded.color.astype(jnp.int32), mode="drop"),
            turn_start=records.turn_start.at[rows, ply].set(recorded.continuing == 0, mode="drop"),
            actions=records.actions.at[rows, ply].set(chosen, mode="drop"),
            length=records.length.at[slots].add(live.astype(jnp.int32)),
        )

    states, ply, records = carry
    return play_plies(
        rules, states, choose, record_length(settings), record, records, stop_at=next_size, first_ply=ply
    )


def _selfplay_shard(
    settings: LearnerSettings,
    params: Any,
    game_ids: jax.Array,
    key: jax.Array,
    rate: jax.Array,
    depth: TracedDepth | None = None,
) -> SelfPlayBatch:
    """The games ``game_ids`` ([n]) of a self-play batch: openings, then the searched plies (at the
    traced ``depth`` when given), in batches that shrink as games end (``SELFPLAY_STAGES``)."""
    game_keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, game_ids)
    return _play_games(settings, params, game_keys, rate, depth)


def _play_games(
    settings: LearnerSettings, params: Any, game_keys: jax.Array, rate: jax.Array, depth: TracedDepth | None
) -> SelfPlayBatch:
    """``_selfplay_shard``'s games, each from its key (``game_keys``: [n]); ``params`` may be
    ``MemberNetworks`` (``rate`` and ``depth.depth`` then [n], each game's member's)."""
    rules = learner_rules(settings)
    length_cap = record_length(settings)
    n = game_keys.shape[0]
    opening_keys = jax.vmap(jax.random.fold_in, in_axes=(0, None))(game_keys, OPENING_SALT)
    states = random_plies(rules, init_batch(rules, (n,)), opening_keys, settings.opening_plies)
    records = _Records(
        positions=jnp.zeros((n, length_cap + 1, 2 * rules.num_squares), jnp.float32),
        colors=jnp.zeros((n, length_cap + 1), jnp.int32),
        turn_start=jnp.zeros((n, length_cap + 1), bool),
        actions=jnp.full((n, length_cap), -1, jnp.int32),
        length=jnp.zeros(n, jnp.int32),
    )
    sizes = selfplay_stages(settings, n)
    slots, final, ply = jnp.arange(n, dtype=jnp.int32), states, jnp.int32(0)
    for next_size in [*sizes[1:], 0]:
        carry = (states, ply, records)
        states, ply, records = _play_stage(settings, params, rate, game_keys, slots, carry, next_size, depth)
        final = _put(final, slots, states)
        if next_size:  # the unfinished games first (they all fit), in their order
            kept = jnp.argsort(states.terminated.astype(jnp.int32), stable=True)[:next_size]
            slots, states = slots[kept], _take(states, kept)
    games, length = jnp.arange(n), records.length
    positions = records.positions.at[games, length].set(jax.vmap(encode, (None, 0))(rules, final))
    colors = records.colors.at[games, length].set(final.color.astype(jnp.int32))
    turn_start = records.turn_start.at[games, length].set(final.continuing == 0)
    result = jnp.where(final.terminated, final.result, 0).astype(jnp.int32)
    final_value = jax.vmap(material_value_fn(rules), in_axes=(None, 0, None))(None, final, None)
    final_value = jnp.where(final.terminated, final_value, 0.5)
    return SelfPlayBatch(
        positions, colors, turn_start, records.actions, length, final.terminated, result, final_value
    )


def selfplay(
    settings: LearnerSettings,
    params: Any,
    key: jax.Array,
    rate: jax.Array,
    games: tuple[int, int] | None = None,
    depth: TracedDepth | None = None,
) -> SelfPlayBatch:
    """``settings.selfplay_games`` self-play games of the network ``params`` (``SelfPlayBatch``),
    exploring at ``rate``; split across the host devices when there are several and they divide the
    games (the same games either way). ``games`` = (first, count) plays only the games numbered
    first .. first + count - 1 of that batch (the same games as in the whole batch; ``first`` may be
    traced, ``count`` is static). With ``depth`` the alpha-beta searches at that traced depth instead
    of ``settings.depth`` (the batch is staged as ``settings.depth``'s, so at that depth the games
    are exactly those without ``depth``)."""
    first, n = (0, settings.selfplay_games) if games is None else games
    play = functools.partial(_selfplay_shard, settings)
    ids = jnp.asarray(first, jnp.int32) + jnp.arange(n, dtype=jnp.int32)  # ``first`` may be traced
    if depth is None:
        play = over_game_shards(play, n, (True, False, True, True))
        return play(params, ids, key, jnp.asarray(rate, jnp.float32))
    play = over_game_shards(play, n, (True, False, True, True, True))
    return play(params, ids, key, jnp.asarray(rate, jnp.float32), depth)


def members_selfplay(
    settings: LearnerSettings,
    params: Any,
    keys: jax.Array,
    rates: jax.Array,
    depth: TracedDepth | None = None,
) -> SelfPlayBatch:
    """``selfplay(settings, params[i], keys[i], rates[i], depth[i])`` of M networks (``params``: each
    leaf [M, ...]; ``keys``, ``rates``, ``depth.depth``: [M]), the ``SelfPlayBatch``'s fields [M, n,
    ...]: the same games, played as one batch of M x ``selfplay_games`` in member order, each member's
    leaves scored by its network in dense chunks of its own (``MemberNetworks``; a full-width search
    only), which runs as fast as one network's batch, where M networks' searches vmapped ran 2-2.5x
    slower (PBT's members; ``docs/learners.md``)."""
    m, n = keys.shape[0], settings.selfplay_games
    ids = jnp.arange(n, dtype=jnp.int32)
    game_keys = jax.vmap(lambda k: jax.vmap(jax.random.fold_in, in_axes=(None, 0))(k, ids))(keys)
    member = jnp.repeat(jnp.arange(m, dtype=jnp.int32), n)
    game_rates = jnp.asarray(rates, jnp.float32)[member]

    has_depth = depth is not None

    def play(params, member, game_keys, game_rates, game_depths, present):
        traced = TracedDepth(game_depths, present) if has_depth else None
        return _play_games(settings, MemberNetworks(params, member, m), game_keys, game_rates, traced)

    game_depths = depth.depth[member] if has_depth else member
    present = depth.present if has_depth else jnp.zeros(1, bool)
    game_keys = game_keys.reshape(m * n, *game_keys.shape[2:])
    sharded = over_game_shards(play, m * n, (True, False, False, False, False, True))
    batch = sharded(params, member, game_keys, game_rates, game_depths, present)
    return jax.tree.map(lambda x: x.reshape(m, n, *x.shape[1:]), batch)


def concatenate_batches(batches: list[SelfPlayBatch]) -> SelfPlayBatch:
    """One ``SelfPlayBatch`` of the games of ``batches`` (pieces of one batch, in game order)."""
    return jax.tree.map(lambda *parts: jnp.concatenate(parts), *batches)


def over_game_shards(play: Callable, num_games: int, replicated: tuple[bool, ...]) -> Callable:
    """``play`` with one shard of the games per host device (``arena.over_leading_shards``)."""
    return over_leading_shards(play, num_games, replicated)
