"""A transposition table for ``alphabeta_stack``: the scores of searched nodes, by position, so a node
reached again (by another move order, in a deeper iteration, or on a later move of the same game) is
scored from the table instead of searched again when the stored result is deep enough and decides
the window.

The table is a fixed-size hashed array (``2 ** bits`` entries, one per index, always replaced), kept
in the search's ``lax.while_loop`` carry and returned, so iterative deepening passes it from one
iteration and one move to the next. A position's hash mixes every field that its value depends on:
the four bitboards, the side to move, the piece that must go on jumping, the ply and the plies
without a capture (the draw rules read them), with MurmurHash3's 32-bit finaliser; one hash gives the
index, a second one (other seeds) is stored to check it.

Scores are Black's view, as in the search. A won or lost score counts plies from the root, so it is
stored relative to the node (as if the node were the root) and turned back at the level where it is
read. Each entry also records how deep its node was searched (the nominal depth left below it) and
whether its score is exact or a bound: a fail-high node's score is a lower bound, a fail-low one an
upper bound (fail-soft).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from neurocheckers.rules.state import State

DEFAULT_BITS = 18
"""``2 ** 18`` entries (4 MiB): more than the nodes of a 1-second search at 120-300k nodes/s."""
EXACT, LOWER, UPPER = 0, 1, 2
"""Kinds of stored score: exact, a lower bound (the node failed high), an upper bound (failed low)."""
WON = 500.0
"""Scores beyond +-``WON`` are won or lost games, counted in plies from the root."""


@struct.dataclass
class TranspositionTable:
    """Searched nodes by position hash, one uint32 row per entry (S = ``2 ** bits`` rows; one row is
    read and written per search iteration, so the loop does one gather and one update, not four).

    Fields:
      rows: [S, 4] uint32: the check hash of the entry's position; the nominal depth searched below
        it plus one (0: an empty entry); its Black's-view score as float32 bits (won and lost scores
        relative to the node); ``EXACT``, ``LOWER`` or ``UPPER``.
    """

    rows: jax.Array


def empty_table(bits: int = DEFAULT_BITS) -> TranspositionTable:
    """A table of ``2 ** bits`` empty entries."""
    return TranspositionTable(rows=jnp.zeros((2**bits, 4), jnp.uint32))


def _mix(h: jax.Array) -> jax.Array:
    """MurmurHash3's 32-bit finaliser (every input bit changes about half the output bits)."""
    h = h ^ (h >> 16)
    h = h * jnp.uint32(0x85EBCA6B)
    h = h ^ (h >> 13)
    h = h * jnp.uint32(0xC2B2AE35)
    return h ^ (h >> 16)


def position_key(state: State) -> jax.Array:
    """[2] uint32 hashes of one position (the entry's index, then its check): its pieces, side to
    move, continuing piece, ply and plies without a capture."""
    counters = (
        state.color.astype(jnp.uint32)
        | (state.plies_without_capture.astype(jnp.uint32) << 1)
        | (state.ply.astype(jnp.uint32) << 12)
    )
    h = jnp.uint32(0x9E3779B9)
    for field in (state.black_men, state.black_kings, state.white_men, state.white_kings, state.continuing):
        h = _mix(h ^ field.astype(jnp.uint32))
    first = _mix(h ^ counters)
    return jnp.stack([first, _mix(first ^ jnp.uint32(0x7F4A7C15))])


def _index(table: TranspositionTable, key: jax.Array) -> jax.Array:
    return (key[0] & jnp.uint32(table.rows.shape[0] - 1)).astype(jnp.int32)


def _from_root(score: jax.Array, level: jax.Array) -> jax.Array:
    """A node-relative score read at ``level`` plies from the root (won scores shrink with distance)."""
    shift = jnp.sign(score) * level.astype(jnp.float32)
    return jnp.where(jnp.abs(score) > WON, score - shift, score)


def _to_node(score: jax.Array, level: jax.Array) -> jax.Array:
    shift = jnp.sign(score) * level.astype(jnp.float32)
    return jnp.where(jnp.abs(score) > WON, score + shift, score)


def probe(
    table: TranspositionTable,
    key: jax.Array,
    level: jax.Array,
    remaining: jax.Array,
    alpha: jax.Array,
    beta: jax.Array,
) -> tuple[jax.Array, jax.Array]:
    """``(usable, score)``: whether the table settles the node of ``key`` (``position_key``) at
    ``level`` with at least ``remaining`` nominal depth to search in the window ``(alpha, beta)``,
    and its Black's-view score then: an exact score, a lower bound at or above ``beta``, or an upper
    bound at or below ``alpha``."""
    row = jax.lax.dynamic_index_in_dim(table.rows, _index(table, key), 0, keepdims=False)
    score = _from_root(jax.lax.bitcast_convert_type(row[2], jnp.float32), level)
    kind = row[3]
    deep = row[1].astype(jnp.int32) - 1 >= remaining
    found = (row[0] == key[1]) & (row[1] > 0) & deep & (remaining >= 1)
    decides = (kind == EXACT) | ((kind == LOWER) & (score >= beta)) | ((kind == UPPER) & (score <= alpha))
    return found & decides, score


def store(
    table: TranspositionTable,
    key: jax.Array,
    level: jax.Array,
    remaining: jax.Array,
    score: jax.Array,
    alpha: jax.Array,
    beta: jax.Array,
    write: jax.Array,
) -> TranspositionTable:
    """The table with the node of ``key`` (at ``level``, searched ``remaining`` deep in the window
    ``(alpha, beta)`` it was entered with, fail-soft ``score``) written over its entry, when ``write``
    and ``remaining`` >= 1."""
    index = _index(table, key)
    kind = jnp.where(score >= beta, LOWER, jnp.where(score <= alpha, UPPER, EXACT)).astype(jnp.uint32)
    bits = jax.lax.bitcast_convert_type(_to_node(score, level).astype(jnp.float32), jnp.uint32)
    new = jnp.stack([key[1], (remaining + 1).astype(jnp.uint32), bits, kind])
    old = jax.lax.dynamic_index_in_dim(table.rows, index, 0, keepdims=False)
    row = jnp.where(write & (remaining >= 1), new, old)
    return TranspositionTable(rows=jax.lax.dynamic_update_index_in_dim(table.rows, row, index, 0))
