"""Bit tricks on uint32 bitboards, shared by the engine, the playouts and the searches.

Bit ``i`` of a bitboard is square ``i + 1``; ``legal_bits`` ([4] uint32) holds, per direction, the
squares whose piece may move that way, and action ``direction * N + square`` is legal when bit
``square`` of ``legal_bits[direction]`` is set. Everything here is branch-free JAX (vmappable).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from neurocheckers.rules.presets import Rules
from neurocheckers.rules.tables import Tables

GOLDEN = np.uint32(0x9E3779B9)
"""2^32 / golden ratio: spreads consecutive counters before they are hashed."""


def neighbors(table: Tables, direction: int, bits: jax.Array) -> jax.Array:
    """The squares adjacent to ``bits`` in ``direction`` (every piece shifted one step that way)."""
    out = jnp.zeros_like(bits)
    for mask, shift in table.step_groups[direction]:
        moved = bits & np.uint32(mask)
        out = out | (moved << np.uint32(shift) if shift >= 0 else moved >> np.uint32(-shift))
    return out


def select_bit(bits: jax.Array, rank: jax.Array) -> jax.Array:
    """[] int32: the index of the ``rank``-th (0-based) set bit of the uint32 ``bits``, by binary
    search over popcounts. Meaningless when ``bits`` has ``rank`` or fewer set bits."""
    pos = jnp.uint32(0)
    rank = jnp.asarray(rank).astype(jnp.uint32)
    for width in (16, 8, 4, 2, 1):
        count = jax.lax.population_count((bits >> pos) & np.uint32((1 << width) - 1))
        go_up = rank >= count
        rank = jnp.where(go_up, rank - count, rank)
        pos = jnp.where(go_up, pos + np.uint32(width), pos)
    return pos.astype(jnp.int32)


def lowest_bit(bits: jax.Array) -> jax.Array:
    """[] int32: the index of the lowest set bit of a nonzero uint32 (32 for zero)."""
    return jax.lax.population_count((bits & (jnp.uint32(0) - bits)) - jnp.uint32(1)).astype(jnp.int32)


def count_legal(legal_bits: jax.Array) -> jax.Array:
    """[...] int32: how many actions ``legal_bits`` ([..., 4] uint32) allows."""
    return jnp.sum(jax.lax.population_count(legal_bits), axis=-1).astype(jnp.int32)


def nth_legal_action(rules: Rules, legal_bits: jax.Array, n: jax.Array, gather: bool = True) -> jax.Array:
    """[] int32: the ``n``-th (0-based) legal action in increasing order, from [4] ``legal_bits``.

    The order is ``legal_action_slots``'s (direction-major, since actions are ``direction * N +
    square``), without building the [4N] mask. Meaningless when ``n`` is not below the number of
    legal actions: callers guard that case.

    ``gather`` (static) picks one of two formulations of the same choice: find the direction with a
    cumulative sum and read its word by index, or (``False``) compare ``n`` with the running counts
    and select the word with ``where``. Which one XLA on CPU runs faster depends on what it fuses
    around it: the gather in the searches (MCTS 256 games x 16 simulations on american8: about 20%
    faster), the selects in the random playouts (about 20% faster there).
    """
    counts = jax.lax.population_count(legal_bits).astype(jnp.int32)
    n = jnp.asarray(n).astype(jnp.int32)
    if gather:
        ends = jnp.cumsum(counts)
        direction = jnp.minimum(jnp.sum(ends <= n), 3)
        rank = n - (ends[direction] - counts[direction])
        return direction * rules.num_squares + select_bit(legal_bits[direction], rank)
    s1 = counts[0] + counts[1]
    s2 = s1 + counts[2]
    past0, past1, past2 = n >= counts[0], n >= s1, n >= s2
    direction = past0.astype(jnp.int32) + past1.astype(jnp.int32) + past2.astype(jnp.int32)
    before = jnp.where(past2, s2, jnp.where(past1, s1, jnp.where(past0, counts[0], 0)))
    word = jnp.where(past0, legal_bits[1], legal_bits[0])
    word = jnp.where(past2, legal_bits[3], jnp.where(past1, legal_bits[2], word))
    return direction * rules.num_squares + select_bit(word, n - before)


def is_legal_action(rules: Rules, legal_bits: jax.Array, action: jax.Array) -> jax.Array:
    """[] bool: whether ``action`` (any int, in range or not) is allowed by [4] ``legal_bits``."""
    action = jnp.asarray(action).astype(jnp.int32)
    in_range = (action >= 0) & (action < rules.num_actions)
    direction, square = jnp.divmod(jnp.clip(action, 0, rules.num_actions - 1), rules.num_squares)
    word = jnp.where(
        direction >= 2,
        jnp.where(direction == 3, legal_bits[3], legal_bits[2]),
        jnp.where(direction == 1, legal_bits[1], legal_bits[0]),
    )
    return in_range & (((word >> square.astype(jnp.uint32)) & np.uint32(1)) != 0)


def legal_mask(legal_bits: jax.Array, num_squares: int) -> jax.Array:
    """[..., 4N] bool: ``legal_bits`` ([..., 4] uint32) as a mask over actions ``direction * N + square``."""
    shifts = jnp.arange(num_squares, dtype=jnp.uint32)
    bits = jnp.asarray(legal_bits)
    mask = ((bits[..., :, None] >> shifts) & np.uint32(1)) != 0
    return mask.reshape(bits.shape[:-1] + (4 * num_squares,))


def _xorshift_multiply(x: jax.Array, s1: int, m1: int, s2: int, m2: int, s3: int) -> jax.Array:
    """``x ^= x >> s1; x *= m1; x ^= x >> s2; x *= m2; x ^= x >> s3``: with odd multipliers, a
    bijection of uint32 (the shape of the usual integer-hash finalisers)."""
    x = x ^ (x >> np.uint32(s1))
    x = x * np.uint32(m1)
    x = x ^ (x >> np.uint32(s2))
    x = x * np.uint32(m2)
    return x ^ (x >> np.uint32(s3))


def mix32(x: jax.Array) -> jax.Array:
    """MurmurHash3's 32-bit finaliser (fmix32): a bijection of uint32 with full avalanche."""
    return _xorshift_multiply(x, 16, 0x85EBCA6B, 13, 0xC2B2AE35, 16)


def lowbias32(x: jax.Array) -> jax.Array:
    """Chris Wellons' lowbias32 finaliser: another uint32 bijection with full avalanche."""
    return _xorshift_multiply(x, 16, 0x7FEB352D, 15, 0x846CA68B, 16)


def hash32(seed: jax.Array, counter: jax.Array, finaliser=mix32) -> jax.Array:
    """A seeded uint32 hash of integer counters: ``finaliser(seed ^ (counter * GOLDEN))``.

    Cheap per-item random bits without a Threefry call per item. Distinct counters give distinct
    hashes for one seed (both steps are bijections). The playouts use ``mix32``; the MCTS tie-breaks
    use ``lowbias32`` (kept so that searches stay bit-for-bit what they were).
    """
    return finaliser(seed ^ (jnp.asarray(counter).astype(jnp.uint32) * GOLDEN))
