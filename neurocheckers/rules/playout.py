"""Batched uniform-random playouts: many games from the start in one jitted ``lax.while_loop``.

``random_playouts(rules, key, batch_size)`` plays ``batch_size`` games at once (a vmapped
``step``), one ply per loop iteration, until every game is over or ``max_plies`` is reached.

Random numbers. Game ``i`` at ply ``t`` draws its action from the 32 random bits
``game_bits(key, t, i)``: the two words of ``fold_in(fold_in(key, t), i)`` xor-ed. One Threefry
block per game and ply, no per-game key splitting; for a whole batch these are exactly
``jax.random.bits(fold_in(key, t), (B,))`` (under JAX's default partitionable Threefry), and every
game's stream depends only on ``(key, i)``, so results are the same on one device or split over
several. The action is the ``rank``-th legal action (in increasing action order) with
``rank = ((bits >> 8) * num_legal) >> 24``.

Devices. When ``jax.local_device_count() > 1`` and the batch divides evenly, the batch is split
across the devices with ``jax.shard_map``: each device runs its own while loop over its games (no
communication per ply). On CPU, get several host devices with
:func:`neurocheckers.devices.use_host_devices` before JAX starts.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax.sharding import Mesh, PartitionSpec

from neurocheckers.rules.engine import init, piece_counts, step
from neurocheckers.rules.presets import Rules
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

    ``rules.max_plies`` when set; otherwise, with a capture-free limit L, at most L plies pass
    between captures and there are at most ``2 * men`` captures, so ``(2 * men + 1) * L`` bounds a
    game. Without either limit: 10,000.
    """
    if rules.max_plies:
        return rules.max_plies
    if rules.max_plies_without_capture:
        return (2 * rules.men_per_side + 1) * rules.max_plies_without_capture
    return 10_000


def game_bits(key: jax.Array, ply: jax.Array, games: jax.Array) -> jax.Array:
    """[G] uint32: the random bits of the games with global indices ``games`` ([G]) at ``ply``."""
    ply_key = jax.random.fold_in(key, ply)
    data = jax.vmap(lambda i: jax.random.key_data(jax.random.fold_in(ply_key, i)))(games)
    return data[..., 0] ^ data[..., 1]


def action_from_bits(rules: Rules, bits: jax.Array, legal_bits: jax.Array) -> jax.Array:
    """[] int32: the legal action chosen by 32 random ``bits`` from ``legal_bits`` ([4] uint32).

    Picks the ``((bits >> 8) * n) >> 24``-th of the ``n`` legal actions in increasing action order
    (``direction * N + square``); 0 when there is none.
    """
    counts = jax.lax.population_count(legal_bits)
    c0, c1, c2, c3 = counts[0], counts[1], counts[2], counts[3]
    s1 = c0 + c1
    s2 = s1 + c2
    total = s2 + c3
    rank = ((bits >> np.uint32(8)) * total) >> np.uint32(24)
    # Which direction holds the rank-th action, and the rank within that direction.
    d = (rank >= c0).astype(jnp.int32) + (rank >= s1).astype(jnp.int32) + (rank >= s2).astype(jnp.int32)
    before = jnp.where(rank >= s2, s2, jnp.where(rank >= s1, s1, jnp.where(rank >= c0, c0, 0)))
    word = jnp.where(d == 0, legal_bits[0], jnp.where(d == 1, legal_bits[1], legal_bits[2]))
    word = jnp.where(d == 3, legal_bits[3], word)
    square = _select_bit(word, rank - before)
    return jnp.where(total > 0, d * rules.num_squares + square, 0)


def _select_bit(bits: jax.Array, rank: jax.Array) -> jax.Array:
    """Index of the ``rank``-th (0-based) set bit of a uint32, by binary search over popcounts."""
    pos = jnp.uint32(0)
    for width in (16, 8, 4, 2, 1):
        count = jax.lax.population_count((bits >> pos) & np.uint32((1 << width) - 1))
        go_up = rank >= count
        rank = jnp.where(go_up, rank - count, rank)
        pos = jnp.where(go_up, pos + np.uint32(width), pos)
    return pos.astype(jnp.int32)


def _play(rules: Rules, max_plies: int, axis: str | None, key: jax.Array, games: jax.Array) -> PlayoutStats:
    """Play the games with global indices ``games`` ([G] uint32) to the end; runs under jit
    (inside ``shard_map`` over the mesh axis ``axis`` when given)."""
    size = games.shape[0]
    start = init(rules)
    states = jax.tree.map(lambda x: jnp.broadcast_to(x, (size, *x.shape)), start)
    if axis is not None:
        # The start position is the same on every device; the loop carry differs per device.
        states = jax.tree.map(lambda x: jax.lax.pcast(x, (axis,), to="varying"), states)
    batched_step = jax.vmap(functools.partial(step, rules))
    choose = jax.vmap(functools.partial(action_from_bits, rules))

    def cond(carry: tuple[State, jax.Array]) -> jax.Array:
        states, ply = carry
        return (ply < max_plies) & ~jnp.all(states.terminated)

    def body(carry: tuple[State, jax.Array]) -> tuple[State, jax.Array]:
        states, ply = carry
        actions = choose(game_bits(key, ply, games), states.legal_bits)
        return batched_step(states, actions), ply + 1

    states, _ = jax.lax.while_loop(cond, body, (states, jnp.int32(0)))
    return PlayoutStats(
        result=states.result,
        length=states.ply,
        material=jax.vmap(piece_counts)(states),
        terminated=states.terminated,
    )


@functools.cache
def _compiled(rules: Rules, batch_size: int, max_plies: int, num_devices: int):
    """A jitted ``key -> PlayoutStats`` for these settings (cached: one trace per setting)."""
    games = np.arange(batch_size, dtype=np.uint32)
    if num_devices <= 1:
        play = functools.partial(_play, rules, max_plies, None)
        return jax.jit(lambda key: play(key, jnp.asarray(games)))

    mesh = Mesh(np.array(jax.local_devices()[:num_devices]), (_AXIS,))
    sharded = jax.shard_map(
        functools.partial(_play, rules, max_plies, _AXIS),
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
    rules: Rules,
    key: jax.Array,
    batch_size: int,
    max_plies: int | None = None,
    *,
    devices: int | None = None,
) -> PlayoutStats:
    """Play ``batch_size`` uniform-random games from the start; returns per-game ``PlayoutStats``.

    Args:
      rules: the variant (static).
      key: a JAX PRNG key (typed ``jax.random.key`` or raw ``PRNGKey``).
      batch_size: games B, played together (one vmapped ``step`` per ply).
      max_plies: safety cap on plies; default :func:`default_max_plies` (every game ends by then).
      devices: at most this many devices (default: all local devices). The batch is split across
        them when there are several and B divides evenly; results do not depend on the split.

    The loop stops as soon as every game has ended. One compilation per (rules, B, max_plies,
    device count); later calls with a new key reuse it.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
    cap = default_max_plies(rules) if max_plies is None else int(max_plies)
    if cap < 0:
        raise ValueError(f"max_plies must be >= 0, got {max_plies!r}")
    return _compiled(rules, int(batch_size), cap, playout_devices(batch_size, devices))(key)
