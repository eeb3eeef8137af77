"""The endgame database read inside the compiled search: one int32 array holding the index's tables
(``endgame.index``: slices, colexicographic ranks of men and kings) and every held slice's entries,
and ``probe``, the numba port of ``endgame.device.lookup_mover``.

A position with few enough pieces whose slice the database holds gets its exact value in the search
(``search``): a win in ``d`` whole moves is worth ``WIN`` less one man per move to the game's end
counted from the root, a loss the opposite, a draw 0. The database ignores the draw rules' counters,
as published databases (and the JAX searches' ``with_endgame``) do.

Layout of the array (``E_*`` offsets): a header, ``slice_start`` ([P+1]^4, -1 where a slice is not
held), ``men_start`` ([P+1]^2), ``binom`` ([33, P+1]), ``men_offsets`` and the entries, one a
position (``value | distance << 2``: ``endgame.database``'s LOSS/DRAW/WIN and whole moves).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from numba import njit

from neurocheckers.compiled.bitops import popcount
from neurocheckers.endgame.database import DRAW, LOSS, WIN, EndgameDB, EndgameError
from neurocheckers.rules.presets import Rules

E_PIECES, E_SQUARES, E_EVERY, E_MOVER, E_OPP, E_SLICES, E_MEN_START, E_BINOM, E_OFFSETS, E_ENTRIES = range(10)
HEADER = 16
MAX_DISTANCE = (1 << 29) - 1
NONE = np.zeros(HEADER, np.int32)
"""No database: ``E_PIECES`` is 0."""
__all__ = ["DRAW", "LOSS", "NONE", "WIN", "SearchDB", "load", "pack", "probe"]


@dataclasses.dataclass(frozen=True)
class SearchDB:
    """An endgame database packed for the compiled search (shared, read-only, by every search)."""

    array: np.ndarray
    """int32: the header, the index's tables and the entries (see the module docstring)."""
    max_pieces: int
    name: str = ""
    """Its folder, for messages."""


def pack(flat) -> np.ndarray:
    """The int32 array of an ``endgame.flat.FlatDB``."""
    entries = flat.values.astype(np.int64) | (np.minimum(flat.distances, MAX_DISTANCE).astype(np.int64) << 2)
    parts = [flat.slice_start.ravel(), flat.men_start.ravel(), flat.binom.ravel(), flat.men_offsets, entries]
    header = np.zeros(HEADER, np.int64)
    header[E_PIECES], header[E_SQUARES] = flat.max_pieces, flat.num_squares
    header[E_EVERY : E_OPP + 1] = flat.masks
    at = HEADER
    for field, part in zip((E_SLICES, E_MEN_START, E_BINOM, E_OFFSETS, E_ENTRIES), parts, strict=True):
        header[field] = at
        at += len(part)
    if at >= 2**31:
        raise EndgameError(f"the database holds {at} entries: too many for the compiled search")
    # A mask of 32 squares wraps to a negative int32; ``probe`` reads masks back through 0xFFFFFFFF.
    return np.concatenate([header.astype(np.uint32).view(np.int32), *(p.astype(np.int32) for p in parts)])


def load(folder: str | Path, rules: Rules) -> SearchDB:
    """The database in ``folder`` for the search under ``rules``; ``EndgameError`` (one line) when
    there is none or it is of other rules."""
    from neurocheckers.endgame.flat import flat_db

    db = EndgameDB(folder, rules)
    if not db.slices:
        raise EndgameError(f"{folder} holds no solved slice yet")
    flat = flat_db(db)
    return SearchDB(pack(flat), flat.max_pieces, str(folder))


@njit(cache=True, _nrt=False, inline="always")
def _u32(x):
    return np.int64(x) & 0xFFFFFFFF


@njit(cache=True, _nrt=False, inline="always")
def rotated(x, num_squares):
    """A bitboard turned half a turn: square ``s`` (1-based) to ``N + 1 - s``."""
    for shift, mask in ((1, 0x55555555), (2, 0x33333333), (4, 0x0F0F0F0F), (8, 0x00FF00FF)):
        x = ((x >> shift) & mask) | ((x & mask) << shift)
    x = ((x >> 16) | (x << 16)) & 0xFFFFFFFF
    return x >> (32 - num_squares)


@njit(cache=True, _nrt=False, inline="always")
def _colex(edb, binom, width, bits, universe):
    """The colexicographic rank of the set ``bits`` among the same-size subsets of ``universe``."""
    rank, i = np.int64(0), 1
    while bits:
        low = bits & -bits
        rank += edb[binom + width * popcount(universe & (low - 1)) + i]
        bits ^= low
        i += 1
    return rank


@njit(cache=True, _nrt=False)
def probe(edb, om, ok, pm, pk, color):
    """The entry (``value | distance << 2``) of a position (relative bitboards, ``color`` to move),
    or -1 when the database does not hold its slice."""
    p = np.int64(edb[E_PIECES])
    a, b, c, d = popcount(om), popcount(ok), popcount(pm), popcount(pk)
    if p == 0 or a + b + c + d > p:
        return np.int64(-1)
    width = p + 1
    start = np.int64(edb[edb[E_SLICES] + ((a * width + b) * width + c) * width + d])
    if start < 0:
        return np.int64(-1)
    n = np.int64(edb[E_SQUARES])
    mm, mk, om2, ok2 = om, ok, pm, pk
    if color == 1:  # the database keeps positions with the mover playing Black's part
        mm, mk, om2, ok2 = rotated(om, n), rotated(ok, n), rotated(pm, n), rotated(pk, n)
    every, mover, opp = _u32(edb[E_EVERY]), _u32(edb[E_MOVER]), _u32(edb[E_OPP])
    binom = np.int64(edb[E_BINOM])
    men = np.int64(
        edb[edb[E_OFFSETS] + edb[edb[E_MEN_START] + a * width + c] + _colex(edb, binom, width, mm, mover)]
    )
    men += _colex(edb, binom, width, om2, opp & ~mm)
    free = every & ~mm & ~om2
    first = np.int64(edb[binom + width * (n - a - c) + b])
    second = np.int64(edb[binom + width * (n - a - c - b) + d])
    kings = _colex(edb, binom, width, mk, free) * second + _colex(edb, binom, width, ok2, free & ~mk)
    return np.int64(edb[edb[E_ENTRIES] + start + men * first * second + kings])
