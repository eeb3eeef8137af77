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


def _varying(axis: str | None, tree):
    """Inside shard_map, mark values computed alike on every device as differing per device (as
    the loop carry that starts from them does)."""
    if axis is None:
        return tree
    return jax.tree.map(lambda x: jax.lax.pcast(x, (axis,), to="varying"), tree)


def _start_states(rules: Rules, size: int, axis: str | None) -> State:
    """[size] copies of the start position (without ``legal_action_mask``)."""
    start = init(rules).replace(legal_action_mask=None)
    return _varying(axis, jax.tree.map(lambda x: jnp.broadcast_to(x, (size, *x.shape)), start))


def _stepper(rules: Rules, size: int):
    """A vmapped ``step`` over states stored without ``legal_action_mask`` (``None``).

    Playouts choose from ``legal_bits``; a [B, A] mask in a loop carry that XLA cannot prove dead
    (as in the nested loops of ``_play_window``) would be rebuilt and copied at every ply.
    """
    batched_step = jax.vmap(functools.partial(step, rules))
    blank = jnp.zeros((size, rules.num_actions), dtype=jnp.bool_)

    def fn(states: State, actions: jax.Array) -> State:
        states = batched_step(states.replace(legal_action_mask=blank), actions)
        return states.replace(legal_action_mask=None)

    return fn


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
    XLA's CPU fusion from recomputing the action choice inside every fused output of ``step`` (it
    did, 14 times over, and that made American 8x8 playouts about 6x slower).
    """
    batched_step = _stepper(rules, games.shape[0])
    choose = jax.vmap(functools.partial(action_from_bits, rules))
    states = _start_states(rules, games.shape[0], axis)

    def cond(carry: tuple[State, jax.Array, jax.Array]) -> jax.Array:
        states, _, ply = carry
        return (ply < max_plies) & ~jnp.all(states.terminated)

    def body(carry: tuple[State, jax.Array, jax.Array]) -> tuple[State, jax.Array, jax.Array]:
        states, actions, ply = carry
        states = batched_step(states, actions)
        actions = choose(game_bits(key, ply + 1, games), states.legal_bits)
        return states, actions, ply + 1

    actions = choose(game_bits(key, jnp.int32(0), games), states.legal_bits)
    states, _, _ = jax.lax.while_loop(cond, body, (states, actions, jnp.int32(0)))
    return _stats(states)


def _play_window(
    rules: Rules, max_plies: int, window: int, axis: str | None, key: jax.Array, games: jax.Array
) -> PlayoutStats:
    """Like ``_play``, but only ``window`` games are in flight at a time.

    An inner loop plays the window until a quarter of its slots hold finished games (or a game hits
    ``max_plies``); the outer loop then records those games and refills their slots with unstarted
    ones. The long tail of a few long games so runs on a small batch, and the bookkeeping runs once
    per refill, not once per ply. Each game still draws ``game_bits(key, t, i)`` at its own ply
    ``t``, so results equal ``_play``'s.
    """
    size = games.shape[0]
    refill_at = max(1, window // 4)
    batched_step = _stepper(rules, window)
    choose = jax.vmap(functools.partial(action_from_bits, rules))
    start = init(rules).replace(legal_action_mask=None)
    # fold_in(key, t) for every ply t: a slot's ply key is a gather, not a second Threefry block.
    ply_keys = jax.vmap(lambda t: jax.random.fold_in(key, t))(jnp.arange(max_plies + 1, dtype=jnp.uint32))

    def choose_for(states: State, slot_game: jax.Array) -> jax.Array:
        ids = games[jnp.minimum(slot_game, size - 1)]
        keys = ply_keys[jnp.minimum(states.ply, max_plies)]
        data = jax.vmap(lambda k, i: jax.random.key_data(jax.random.fold_in(k, i)))(keys, ids)
        return choose(data[..., 0] ^ data[..., 1], states.legal_bits)

    def live(states: State, slot_game: jax.Array) -> jax.Array:
        # Empty slots (slot_game == size) hold a terminated state.
        del slot_game
        return ~states.terminated & (states.ply < max_plies)

    def inner_cond(carry):
        states, slot_game, _, next_game = carry
        going = live(states, slot_game)
        at_cap = jnp.any(~states.terminated & (states.ply >= max_plies))
        wait = (jnp.sum((~going).astype(jnp.int32)) < refill_at) | (next_game >= size)
        return jnp.any(going) & wait & ~at_cap

    def inner_body(carry):
        states, slot_game, actions, next_game = carry
        states = batched_step(states, actions)
        return states, slot_game, choose_for(states, slot_game), next_game

    def outer_cond(carry):
        states, slot_game, _, _ = carry
        return jnp.any(live(states, slot_game))

    def outer_body(carry):
        states, slot_game, next_game, out = carry
        states, *_ = jax.lax.while_loop(
            inner_cond, inner_body, (states, slot_game, choose_for(states, slot_game), next_game)
        )
        done = (slot_game < size) & ~live(states, slot_game)
        # Record the games that just finished (index == size: dropped).
        where = jnp.where(done, slot_game, size)
        out = jax.tree.map(lambda o, v: o.at[where].set(v, mode="drop"), out, _stats(states))
        # Refill their slots with the next unstarted games, in slot order; empty the rest.
        new_game = next_game + jnp.cumsum(done.astype(jnp.int32)) - 1
        refill = done & (new_game < size)
        slot_game = jnp.where(done, jnp.where(refill, new_game, size), slot_game)
        next_game = next_game + jnp.sum(done.astype(jnp.int32))

        def reset(x: jax.Array, x0: jax.Array) -> jax.Array:
            return jnp.where(refill.reshape(-1, *([1] * x0.ndim)), x0, x)

        states = jax.tree.map(reset, states, start)
        states = states.replace(terminated=states.terminated | (slot_game >= size))
        return states, slot_game, next_game, out

    states = _start_states(rules, window, axis)
    slot_game = jnp.arange(window, dtype=jnp.int32)
    out = jax.tree.map(lambda x: jnp.zeros((size, *x.shape[1:]), x.dtype), _stats(states))
    carry = (states, *_varying(axis, (slot_game, jnp.int32(window), out)))
    return jax.lax.while_loop(outer_cond, outer_body, carry)[-1]


@functools.cache
def _compiled(rules: Rules, batch_size: int, max_plies: int, num_devices: int, window: int):
    """A jitted ``key -> PlayoutStats`` for these settings (cached: one trace per setting)."""
    games = np.arange(batch_size, dtype=np.uint32)
    per_device = batch_size // num_devices
    if window >= per_device or max_plies == 0:
        play = functools.partial(_play, rules, max_plies)
    else:
        play = functools.partial(_play_window, rules, max_plies, window)
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


def default_window(rules: Rules, games_per_device: int) -> int:
    """Games in flight per device when not given: all of them up to 1024, else a quarter (at least
    1024), so that the tail of long games runs on a smaller batch."""
    if games_per_device <= 1024:
        return games_per_device
    return max(1024, games_per_device // 4)


def random_playouts(
    rules: Rules,
    key: jax.Array,
    batch_size: int,
    max_plies: int | None = None,
    *,
    devices: int | None = None,
    window: int | None = None,
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
    num_devices = playout_devices(batch_size, devices)
    per_device = batch_size // num_devices
    window = default_window(rules, per_device) if window is None else min(int(window), per_device)
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window!r}")
    return _compiled(rules, int(batch_size), cap, num_devices, window)(key)
