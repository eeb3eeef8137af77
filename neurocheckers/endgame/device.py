"""An endgame database as arrays that jitted code reads: exact leaf values for the searches.

``DeviceDB`` holds every slice's values and distances end to end with the tables of the index
(``index``), so that a position's entry is found with a few bit operations and gathers inside
``jit``/``vmap``. It travels as a pytree argument (a player's params), never as a closed-over
constant, so the arrays are not folded into the compiled program.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
from flax import struct

from neurocheckers.endgame.database import LOSS, OUTSIDE, WIN, EndgameDB
from neurocheckers.endgame.flat import flat_db
from neurocheckers.endgame.index import MAX_SQUARES
from neurocheckers.rules.state import BLACK, State

EXACT_MARGIN = 1e-3
"""A database win is worth a win chance of ``1 - EXACT_MARGIN * (distance + 1) / 256`` (a loss the
mirror image): above what a network says of a position it does not know, and a quicker win first."""


@struct.dataclass
class DeviceDB:
    """``flat.FlatDB``'s arrays on the device (its docstring gives every field's shape); num_squares,
    max_pieces and masks are static."""

    values: jax.Array
    distances: jax.Array
    slice_start: jax.Array
    men_offsets: jax.Array
    men_start: jax.Array
    binom: jax.Array
    num_squares: int = struct.field(pytree_node=False)
    max_pieces: int = struct.field(pytree_node=False)
    masks: tuple[int, int, int] = struct.field(pytree_node=False)


def device_db(db: EndgameDB) -> DeviceDB:
    """Every slice of ``db`` loaded into one ``DeviceDB`` (checksums checked on loading)."""
    flat = flat_db(db)
    return DeviceDB(
        values=jnp.asarray(flat.values),
        distances=jnp.asarray(flat.distances),
        slice_start=jnp.asarray(flat.slice_start),
        men_offsets=jnp.asarray(flat.men_offsets),
        men_start=jnp.asarray(flat.men_start),
        binom=jnp.asarray(flat.binom),
        num_squares=flat.num_squares,
        max_pieces=flat.max_pieces,
        masks=flat.masks,
    )


def _colex(binom: jax.Array, bits: jax.Array, universe: jax.Array, most: int) -> jax.Array:
    rank = jnp.int32(0)
    for i in range(1, most + 1):
        low = bits & (jnp.uint32(0) - bits)
        place = jax.lax.population_count(universe & (low - jnp.uint32(1))).astype(jnp.int32)
        rank = rank + jnp.where(bits != 0, binom[jnp.minimum(place, MAX_SQUARES), i], 0)
        bits = bits ^ low
    return rank


def _reversed(x: jax.Array, num_squares: int) -> jax.Array:
    for shift, mask in ((1, 0x55555555), (2, 0x33333333), (4, 0x0F0F0F0F), (8, 0x00FF00FF)):
        m = jnp.uint32(mask)
        x = ((x >> shift) & m) | ((x & m) << shift)
    x = (x >> 16) | (x << 16)
    return x >> (32 - num_squares)


def lookup(ddb: DeviceDB, state: State) -> tuple[jax.Array, jax.Array]:
    """([] int32 value for the side to move, or ``OUTSIDE``; [] int32 distance) of one position at
    a turn boundary (a state in the middle of a multi-jump is ``OUTSIDE``)."""
    black = state.color == BLACK
    own = (
        jnp.where(black, state.black_men, state.white_men),
        jnp.where(black, state.black_kings, state.white_kings),
    )
    other = (
        jnp.where(black, state.white_men, state.black_men),
        jnp.where(black, state.white_kings, state.black_kings),
    )
    boards = jnp.stack([jnp.where(black, x, _reversed(x, ddb.num_squares)) for x in (*own, *other)])
    return lookup_mover(ddb, boards, state.continuing == 0)


def lookup_mover(ddb: DeviceDB, boards: jax.Array, turn_start: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``lookup`` of one position given from the side to move's view: ``boards`` [4] uint32 (mover
    men, mover kings, opponent men, opponent kings; the board turned for White, as ``index``'s
    slices hold it) and [] bool ``turn_start`` (False in the middle of a multi-jump: ``OUTSIDE``)."""
    counts = [jax.lax.population_count(boards[i]).astype(jnp.int32) for i in range(4)]
    a, b, c, d = (jnp.minimum(x, ddb.max_pieces) for x in counts)
    total = counts[0] + counts[1] + counts[2] + counts[3]
    start = ddb.slice_start[a, b, c, d]
    held = (total <= ddb.max_pieces) & (start >= 0) & turn_start
    every, mover_squares, opp_squares = (jnp.uint32(m) for m in ddb.masks)
    mm, mk, om, ok = (boards[i] for i in range(4))
    p = ddb.max_pieces
    men = ddb.men_offsets[ddb.men_start[a, c] + _colex(ddb.binom, mm, mover_squares, p)]
    men = men + _colex(ddb.binom, om, opp_squares & ~mm, p)
    free = every & ~mm & ~om
    first = ddb.binom[ddb.num_squares - a - c, b]
    second = ddb.binom[ddb.num_squares - a - c - b, d]
    kings = _colex(ddb.binom, mk, free, p) * second + _colex(ddb.binom, ok, free & ~mk, p)
    index = jnp.where(held, start + men * first * second + kings, 0)
    value = jnp.where(held, ddb.values[index].astype(jnp.int32), OUTSIDE)
    return value, jnp.where(held, ddb.distances[index], 0)


def boards_of_planes(men: jax.Array, kings: jax.Array) -> jax.Array:
    """[..., 4] uint32 (mover men, mover kings, opponent men, opponent kings) of a position encoded
    as [..., N] planes of +1 (the mover's piece) and -1 (the opponent's), from the mover's view with
    the board turned for White (``evaluator.encode``'s layout): the boards ``lookup_mover`` takes."""
    bit = jnp.left_shift(jnp.uint32(1), jnp.arange(men.shape[-1], dtype=jnp.uint32))

    def bits(on: jax.Array) -> jax.Array:
        return jnp.sum(jnp.where(on, bit, jnp.uint32(0)), axis=-1, dtype=jnp.uint32)

    return jnp.stack([bits(men > 0.5), bits(kings > 0.5), bits(men < -0.5), bits(kings < -0.5)], axis=-1)


def exact_value(value: jax.Array, distance: jax.Array) -> jax.Array:
    """The win chance a database value stands for (see ``EXACT_MARGIN``)."""
    margin = EXACT_MARGIN * (jnp.minimum(distance, 255).astype(jnp.float32) + 1.0) / 256.0
    return jnp.where(value == WIN, 1.0 - margin, jnp.where(value == LOSS, margin, 0.5))


@functools.cache
def with_endgame(value_fn: Callable) -> Callable:
    """``value_fn`` (``(params, state, key) -> win chance``) that answers from the database where it
    holds the position: its params become ``{"net": params, "endgame": DeviceDB}``."""

    def evaluate(params, state: State, key: jax.Array) -> jax.Array:
        net = value_fn(params["net"], state, key)
        value, distance = lookup(params["endgame"], state)
        return jnp.where(value == OUTSIDE, net, exact_value(value, distance))

    return evaluate


__all__ = [
    "DeviceDB",
    "boards_of_planes",
    "device_db",
    "exact_value",
    "lookup",
    "lookup_mover",
    "with_endgame",
]
