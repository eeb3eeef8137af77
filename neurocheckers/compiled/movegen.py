"""Bitboard move generation in numba: whole-turn moves (a multi-jump is one move), copy-make, perft.

Positions are passed relative to the side to move as int64 bitboards ``(om, ok, pm, pk)``: own men,
own kings, the opponent's men and kings, with ``color`` the mover (0 Black, whose men move in
directions 0 and 1, 1 White: 2 and 3). A move is a row of ``moves`` (int64 [rows, MOVE_FIELDS]):
source square, destination square, the bitboard of captured pieces, and the path (2 bits a
direction, the first lowest; one direction for a step). As in the JAX engine, a captured piece leaves
the board at once (it cannot be jumped twice) and a man that reaches its crowning row ends its move.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neurocheckers.compiled.bitops import lowest_index, popcount
from neurocheckers.compiled.board import G_CROWN, G_FORCED, G_FULL, G_LANDING, G_MULTI, G_NEIGHBOR, G_SHIFT

MOVE_FIELDS = 5
"""Columns of a move row: source, destination, captured, path, and an ordering score."""
M_FROM, M_TO, M_CAPTURED, M_PATH, M_ORDER = 0, 1, 2, 3, 4
CAPACITY = 256
"""Move rows reserved per ply (whole-turn moves of one position; distinct capture paths count apart)."""

MOBILITY_NONE, MOBILITY_STEPS, MOBILITY_CAPTURE = 0, 1, 2
TREE_SIGNATURE = "int64(int64[::1], int64, int64, int64, int64, int64, int64, int64[:, ::1], int64)"
"""``perft`` and ``longest_move``: one explicit signature each (recursive and cached)."""


@njit(cache=True, _nrt=False, inline="always")
def shift_to(geo, d, x):
    """The squares adjacent in direction ``d`` to the squares of ``x``."""
    base = G_SHIFT + 4 * d
    out = np.int64(0)
    for k in range(2):
        moved = x & geo[base + 2 * k]
        s = geo[base + 2 * k + 1]
        out |= (moved << s) if s >= 0 else (moved >> -s)
    return out


@njit(cache=True, _nrt=False, inline="always")
def movers(color, d, men, kings):
    """The pieces that may move in direction ``d``: kings, and men going forward."""
    forward = (d < 2) == (color == 0)
    return kings | men if forward else kings


@njit(cache=True, _nrt=False)
def mobility(geo, om, ok, pm, pk, color):
    """MOBILITY_CAPTURE when the mover has a capture, MOBILITY_STEPS when only steps, else NONE."""
    empty = ~(om | ok | pm | pk) & geo[G_FULL]
    opp = pm | pk
    steps = np.int64(0)
    for d in range(4):
        back = 3 - d
        empty_ahead = shift_to(geo, back, empty)
        mv = movers(color, d, om, ok)
        if mv & shift_to(geo, back, opp & empty_ahead):
            return MOBILITY_CAPTURE
        steps |= mv & empty_ahead
    return MOBILITY_STEPS if steps else MOBILITY_NONE


@njit(cache=True, _nrt=False, inline="always")
def _record(moves, n, source, dest, captured, path):
    if n >= moves.shape[0]:
        raise ValueError("move buffer overflow: more whole-turn moves than the compiled search holds")
    moves[n, M_FROM] = source
    moves[n, M_TO] = dest
    moves[n, M_CAPTURED] = captured
    moves[n, M_PATH] = path
    return n + 1


@njit(cache=True, _nrt=False, inline="always")
def _can_jump(geo, square, king, color, opp, empty):
    """Whether the piece on ``square`` has a jump (over ``opp`` onto ``empty``)."""
    for d in range(4):
        if king == 0 and ((d < 2) != (color == 0)):
            continue
        land = geo[G_LANDING + 32 * d + square]
        if land >= 0 and (opp >> geo[G_NEIGHBOR + 32 * d + square]) & 1 and (empty >> land) & 1:
            return True
    return False


@njit(cache=True, _nrt=False, inline="always")
def _jumps(geo, square, king, color, opp, empty, captured, path, jumps, source, moves, n):
    """Record every capture path of the piece now on ``square`` (``jumps`` jumps made so far); inlined
    where the first jumps are generated, so only a capture that goes on makes a (recursive) call."""
    found = False
    if jumps == 0 or geo[G_MULTI]:
        for d in range(4):
            if king == 0 and ((d < 2) != (color == 0)):
                continue
            over = geo[G_NEIGHBOR + 32 * d + square]
            land = geo[G_LANDING + 32 * d + square]
            if land < 0 or not (opp >> over) & 1 or not (empty >> land) & 1:
                continue
            found = True
            over_bit = np.int64(1) << over
            land_bit = np.int64(1) << land
            new_path = path | (np.int64(d) << (2 * jumps))
            crowned = king == 0 and (land_bit & geo[G_CROWN + color]) != 0
            if crowned or not geo[G_MULTI]:
                n = _record(moves, n, source, land, captured | over_bit, new_path)
            else:
                new_empty = (empty | over_bit | (np.int64(1) << square)) & ~land_bit
                if _can_jump(geo, land, king, color, opp & ~over_bit, new_empty):
                    n = _jumps_from(geo, land, king, color, opp & ~over_bit, new_empty, captured | over_bit,
                                    new_path, jumps + 1, source, moves, n)  # fmt: skip
                else:  # the capture ends here (most do): recorded without a call
                    n = _record(moves, n, source, land, captured | over_bit, new_path)
    if not found and jumps > 0:
        n = _record(moves, n, source, square, captured, path)
    return n


@njit(
    "int64(int64[::1], int64, int64, int64, int64, int64, int64, int64, int64, int64, int64[:, ::1], int64)",
    cache=True,
    _nrt=False,
)
def _jumps_from(geo, square, king, color, opp, empty, captured, path, jumps, source, moves, n):
    """``_jumps`` as a function of one signature, for the recursion."""
    return _jumps(geo, square, king, color, opp, empty, captured, path, jumps, source, moves, n)


@njit(cache=True, _nrt=False)
def generate(geo, om, ok, pm, pk, color, moves, base):
    """Write the whole-turn moves of the mover at rows ``base..`` of ``moves``; return their count."""
    empty = ~(om | ok | pm | pk) & geo[G_FULL]
    opp = pm | pk
    n = base
    sources = np.int64(0)
    for d in range(4):
        back = 3 - d
        sources |= movers(color, d, om, ok) & shift_to(geo, back, opp & shift_to(geo, back, empty))
    while sources:
        s = lowest_index(sources)
        sources &= sources - 1
        king = np.int64(1) if (ok >> s) & 1 else np.int64(0)
        zero = np.int64(0)
        n = _jumps(geo, s, king, np.int64(color), opp, empty, zero, zero, zero, s, moves, n)
    if n > base and geo[G_FORCED]:
        return n - base
    for d in range(4):
        steps = movers(color, d, om, ok) & shift_to(geo, 3 - d, empty)
        while steps:
            s = lowest_index(steps)
            steps &= steps - 1
            n = _record(moves, n, s, geo[G_NEIGHBOR + 32 * d + s], np.int64(0), np.int64(d))
    return n - base


@njit(cache=True, _nrt=False, inline="always")
def make(geo, om, ok, pm, pk, color, source, dest, captured):
    """The position after a move, relative to the next mover: ``(om, ok, pm, pk)`` with sides swapped."""
    from_bit = np.int64(1) << source
    to_bit = np.int64(1) << dest
    if ok & from_bit:
        ok = (ok & ~from_bit) | to_bit
    else:
        om &= ~from_bit
        if to_bit & geo[G_CROWN + color]:
            ok |= to_bit
        else:
            om |= to_bit
    return pm & ~captured, pk & ~captured, om, ok


@njit(TREE_SIGNATURE, cache=True, _nrt=False)
def perft(geo, om, ok, pm, pk, color, depth, moves, base):
    """Leaves of the whole-turn move tree of ``depth`` from the position (draw limits ignored)."""
    n = generate(geo, om, ok, pm, pk, color, moves, base)
    if depth <= 1:
        return n
    total = np.int64(0)
    for i in range(base, base + n):
        a, b, c, e = make(geo, om, ok, pm, pk, color, moves[i, M_FROM], moves[i, M_TO], moves[i, M_CAPTURED])
        total += perft(geo, a, b, c, e, 1 - color, depth - 1, moves, base + n)
    return total


@njit(TREE_SIGNATURE, cache=True, _nrt=False)
def longest_move(geo, om, ok, pm, pk, color, depth, moves, base):
    """The most jumps of any move within ``depth`` whole turns of the position (1 for a step)."""
    n = generate(geo, om, ok, pm, pk, color, moves, base)
    longest = np.int64(0)
    for i in range(base, base + n):
        longest = max(longest, max(np.int64(1), popcount(moves[i, M_CAPTURED])))
        if depth > 1:
            a, b, c, e = make(
                geo, om, ok, pm, pk, color, moves[i, M_FROM], moves[i, M_TO], moves[i, M_CAPTURED]
            )
            longest = max(longest, longest_move(geo, a, b, c, e, 1 - color, depth - 1, moves, base + n))
    return longest


def move_buffer(levels: int) -> np.ndarray:
    """A move buffer for ``levels`` plies (``CAPACITY`` rows each)."""
    return np.zeros((levels * CAPACITY, MOVE_FIELDS), np.int64)
