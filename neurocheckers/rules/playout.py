"""Batched uniform-random playouts: many games from the start in one jitted ``lax.while_loop``.

``random_playouts(rules, key, batch_size)`` plays ``batch_size`` games side by side (a vmapped
``step``), one ply per loop iteration, until every game is over or ``max_plies`` is reached, and
returns per-game :class:`PlayoutStats`.

Random numbers: one key per ply, one cheap hash per game. Ply ``t`` has the seed
``s_t = ply_seed(key, t)`` (the two words of ``jax.random.fold_in(key, t)`` xor-ed: one Threefry
block for the whole batch), and game ``i`` (its index in the batch) draws the 32 bits
``game_bits(s_t, i) = mix32(s_t ^ (i * 0x9E3779B9))`` (MurmurHash3's finaliser, a bijection, so
the games of a ply never share bits). It picks legal action number ``((bits >> 8) * n) >> 24`` of
its ``n`` legal actions in increasing action order (:func:`action_from_bits`). No per-game keys are
split, and a game's draws depend only on ``(key, i, t)``: the same key gives the same games on one
device or several. (Per-game Threefry bits cost about a quarter of the loop's time.)

Devices: when ``jax.local_device_count() > 1`` and the batch divides evenly, the batch is split
across the devices with ``jax.shard_map``; each device runs its own while loop over its games, with
no communication per ply. On CPU, get several host devices with
:func:`neurocheckers.devices.use_host_devices` before JAX starts.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax.sharding import Mesh, PartitionSpec

from neurocheckers.rules.bits import hash32, mix32, nth_legal_action
from neurocheckers.rules.engine import init_batch, piece_counts, step_unchecked
from neurocheckers.rules.presets import Rules, get_rules
from neurocheckers.rules.state import State

_AXIS = "games"


@struct.dataclass
class PlayoutStats:
    """Per-game outcome of a batch of playouts ([B] = batch).

    Fields:
      result: [B] int32, +1 Black won, -1 White won, 0 a draw (or a game cut off by ``max_plies``).
      length: [B] int32, plies played (each jump of a multi-jump is one ply).
      material: [B, 4] int32, final piece counts: Black men, Black kings, White men, White kings.
      terminated: [B] bool, whether the game ended by the rules (False only when cut off).
    """

    result: jax.Array
    length: jax.Array
    material: jax.Array
    terminated: jax.Array


def default_max_plies(rules: Rules) -> int:
    """A ply cap that no game under ``rules`` can reach without ending by the rules.

    ``rules.max_plies`` when set; otherwise, with a quiet limit L, at most L plies pass between two
    resets of the quiet counter, and there are at most R resets: ``2 * men`` captures, plus, when a
    man's move resets it, every man's forward moves (a man on row r makes at most
    ``board_size - 1 - r`` of them); so ``(R + 1) * L`` bounds a game (1,000 plies under
    ``american8-openspiel``, 13,520 under ``american8``). Without either limit: 10,000.
    """
    if rules.max_plies:
        return rules.max_plies
    if rules.max_plies_without_capture:
        resets = 2 * rules.men_per_side
        if rules.man_moves_reset_quiet_count:
            per_row = rules.board_size // 2
            resets += 2 * per_row * sum(rules.board_size - 1 - r for r in range(rules.men_rows))
        return (resets + 1) * rules.max_plies_without_capture
    return 10_000


def ply_seed(key: jax.Array, ply: jax.Array | int) -> jax.Array:
    """[] uint32: the seed of ply ``ply``, the two words of ``fold_in(key, ply)`` xor-ed (one
    Threefry block per ply, shared by the whole batch)."""
    data = jax.random.key_data(jax.random.fold_in(key, ply))
    return data[0] ^ data[1]


def game_bits(seed: jax.Array, games: jax.Array) -> jax.Array:
    """[G] uint32: the random bits of the games with global indices ``games`` ([G] uint32) at the
    ply whose :func:`ply_seed` is ``seed`` ([] or [G])."""
    return hash32(seed, games, mix32)


def action_from_bits(rules: Rules, bits: jax.Array, legal_bits: jax.Array) -> jax.Array:
    """[] int32: the legal action chosen by 32 random ``bits`` from ``legal_bits`` ([4] uint32).

    Picks the ``((bits >> 8) * n) >> 24``-th of the ``n`` legal actions in increasing action order
    (``direction * N + square``); 0 when there is none (a finished game).
    """
    total = jnp.sum(jax.lax.population_count(legal_bits))
    rank = ((bits >> np.uint32(8)) * total) >> np.uint32(24)
    return jnp.where(total > 0, nth_legal_action(rules, legal_bits, rank, gather=False), 0)


def _varying(axis: str | None, tree):
    """Inside shard_map, mark values computed alike on every device as differing per device (as
    the loop carry that starts from them does)."""
    if axis is None:
        return tree
    return jax.tree.map(lambda x: jax.lax.pcast(x, (axis,), to="varying"), tree)


def _start_states(rules: Rules, size: int, axis: str | None) -> State:
    """[size] copies of the start position."""
    return _varying(axis, init_batch(rules, size))


def _stats(states: State) -> PlayoutStats:
    return PlayoutStats(
        result=states.result,
        length=states.ply,
        material=jax.vmap(piece_counts)(states),
        terminated=states.terminated,
    )


def _play(rules: Rules, max_plies: int, axis: str | None, key: jax.Array, games: jax.Array) -> PlayoutStats:
    """Play the games with global indices ``games`` ([G] uint32) side by side to the end.

    Runs under jit (inside ``shard_map`` over the mesh axis ``axis`` when given). The chosen actions
    are part of the loop carry: computed at the end of one iteration and used by the next. This keeps
    XLA's CPU fusion from recomputing the action choice inside every fused output of ``step``: chosen
    in the same iteration, it was recomputed 14 times over on 8x8, and playouts were 2x (american6),
    4x (simple6) and 13x (american8) slower.
    """
    # Every action comes from legal_bits (action_from_bits), so the legality check can be skipped.
    batched_step = jax.vmap(functools.partial(step_unchecked, rules))
    choose = jax.vmap(functools.partial(action_from_bits, rules))
    states = _start_states(rules, games.shape[0], axis)

    def cond(carry: tuple[State, jax.Array, jax.Array]) -> jax.Array:
        states, _, ply = carry
        return (ply < max_plies) & ~jnp.all(states.terminated)

    def body(carry: tuple[State, jax.Array, jax.Array]) -> tuple[State, jax.Array, jax.Array]:
        states, actions, ply = carry
        states = batched_step(states, actions)
        actions = choose(game_bits(ply_seed(key, ply + 1), games), states.legal_bits)
        return states, actions, ply + 1

    actions = choose(game_bits(ply_seed(key, jnp.int32(0)), games), states.legal_bits)
    states, _, _ = jax.lax.while_loop(cond, body, (states, actions, jnp.int32(0)))
    return _stats(states)


@functools.cache
def _compiled(rules: Rules, batch_size: int, max_plies: int, num_devices: int):
    """A jitted ``key -> PlayoutStats`` for these settings (cached: one trace per setting)."""
    games = np.arange(batch_size, dtype=np.uint32)
    play = functools.partial(_play, rules, max_plies)
    if num_devices <= 1:
        return jax.jit(lambda key: play(None, key, jnp.asarray(games)))

    mesh = Mesh(np.array(jax.local_devices()[:num_devices]), (_AXIS,))
    sharded = jax.shard_map(
        functools.partial(play, _AXIS),
        mesh=mesh,
        in_specs=(PartitionSpec(), PartitionSpec(_AXIS)),
        out_specs=PartitionSpec(_AXIS),
    )
    games_sharded = jax.device_put(games, jax.sharding.NamedSharding(mesh, PartitionSpec(_AXIS)))
    fn = jax.jit(sharded)
    return lambda key: fn(key, games_sharded)


def playout_devices(batch_size: int, devices: int | None = None) -> int:
    """How many devices ``random_playouts`` splits a batch over: all local devices when there are
    several and they divide the batch evenly, else one (``devices`` caps the count)."""
    n = jax.local_device_count() if devices is None else min(int(devices), jax.local_device_count())
    return n if n > 1 and batch_size % n == 0 else 1


def random_playouts(
    rules: Rules | str,
    key: jax.Array,
    batch_size: int,
    max_plies: int | None = None,
    *,
    devices: int | None = None,
) -> PlayoutStats:
    """Play ``batch_size`` uniform-random games from the start; returns per-game ``PlayoutStats``.

    Args:
      rules: the variant (static), or a preset name.
      key: a JAX PRNG key (typed ``jax.random.key`` or raw ``PRNGKey``).
      batch_size: games B, played together (one vmapped ``step`` per ply).
      max_plies: safety cap on plies; default :func:`default_max_plies` (every game ends by then).
      devices: at most this many devices (default: all local devices). The batch is split across
        them when there are several and B divides evenly; results do not depend on the split.

    The loop stops as soon as every game has ended. One compilation per (rules, B, max_plies,
    device count); later calls with a new key reuse it.
    """
    rules = get_rules(rules)
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
    cap = default_max_plies(rules) if max_plies is None else int(max_plies)
    if cap < 0:
        raise ValueError(f"max_plies must be >= 0, got {max_plies!r}")
    return _compiled(rules, int(batch_size), cap, playout_devices(batch_size, devices))(key)
