"""The second method of a solve: a plain negamax alpha-beta over the values loss / draw / win (-1, 0,
1 for the side to move), with no depth limit, no proof numbers and no proof: it shares the rules'
move generation and the endgame database with ``proof`` and nothing else (its own keys, table,
repetition handling and order).

Same game as ``proof``: a repeated position on the line is a draw, the move-count rule is left out,
a side without a move loses, a position the database holds takes its value. A result that rests on a
repetition with a position above it on the line is not kept in the table (it holds on that line only).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neurocheckers.compiled import endgame
from neurocheckers.compiled.bitops import popcount
from neurocheckers.compiled.board import G_ZOBRIST, G_ZOBRIST_SIDE
from neurocheckers.compiled.movegen import CAPACITY, M_CAPTURED, M_FROM, M_TO, generate, make

LINE = 512
"""Plies of the line (longer lines raise an error)."""
ANY = np.int64(1 << 40)
"""A result that rests on no position of the line above its own."""
# aux: counters, then the line's Zobrist keys and the ply of its latest irreversible move
Y_NODES, Y_HITS, Y_LOOKUPS, Y_RESTS, Y_NODE_LIMIT = 0, 1, 2, 3, 4
Y_KEYS = 8
Y_IRREVERSIBLE = Y_KEYS + LINE
AUX_SIZE = Y_IRREVERSIBLE + LINE
LOWER_BOUND, UPPER_BOUND = 1, 2


def new_table(bits: int) -> np.ndarray:
    """[2**bits, 2]: Zobrist key and packed (value + 1) | bound << 2."""
    table = np.zeros((1 << bits, 2), np.int64)
    table[:, 0] = -1
    return table


def new_aux() -> np.ndarray:
    return np.zeros(AUX_SIZE, np.int64)


def move_buffer() -> np.ndarray:
    return np.zeros((LINE * CAPACITY, 5), np.int64)


@njit(cache=True, _nrt=False)
def zobrist(geo, om, ok, pm, pk, color):
    """The position's Zobrist key, from Black's and White's pieces (not the mover's view)."""
    black_men, black_kings, white_men, white_kings = (om, ok, pm, pk) if color == 0 else (pm, pk, om, ok)
    key = geo[G_ZOBRIST_SIDE] if color == 1 else np.int64(0)
    for kind, bits in enumerate((black_men, black_kings, white_men, white_kings)):
        while bits:
            low = bits & -bits
            key ^= geo[G_ZOBRIST + 32 * kind + popcount(low - 1)]
            bits ^= low
    return key


@njit(cache=True, _nrt=False)
def _stored(table, key, value, bound):
    row = key & (table.shape[0] - 1)
    table[row, 0] = key
    table[row, 1] = (value + 1) | (bound << 2)


@njit("int64(int64[::1], int32[::1], int64[:, ::1], int64[:, ::1], int64[::1], int64, int64, int64, int64,"
      " int64, int64, int64, int64, int64, int64)", cache=True, _nrt=False)  # fmt: skip
def negamax(geo, edb, table, moves, aux, om, ok, pm, pk, color, alpha, beta, ply, depth, horizon):
    """The value for the mover within (``alpha``, ``beta``) (fail-soft), the position's key on the
    line at ``ply``, valuing a position ``depth`` plies down that is none of the above at ``horizon``
    (for its mover); ``aux[Y_RESTS]`` is the highest ply of the line it rests on (``ANY``: none; -1:
    the horizon)."""
    if ply + 1 >= LINE:
        raise ValueError("the exact search's line grew past LINE plies")
    aux[Y_NODES] += 1
    aux[Y_RESTS] = ANY
    if aux[Y_NODE_LIMIT] and aux[Y_NODES] > aux[Y_NODE_LIMIT]:  # out of nodes: an answer kept nowhere
        aux[Y_RESTS] = -1
        return horizon
    if popcount(om | ok | pm | pk) <= edb[endgame.E_PIECES]:
        entry = endgame.probe(edb, om, ok, pm, pk, color)
        if entry >= 0:
            return (entry & 3) - 1
    key = aux[Y_KEYS + ply]
    j = ply - 2
    while j >= aux[Y_IRREVERSIBLE + ply]:
        if aux[Y_KEYS + j] == key:
            aux[Y_RESTS] = j
            return np.int64(0)
        j -= 2
    if depth == 0:
        aux[Y_RESTS] = -1
        return horizon
    aux[Y_LOOKUPS] += 1
    row = key & (table.shape[0] - 1)
    if table[row, 0] == key:
        aux[Y_HITS] += 1
        value, bound = (table[row, 1] & 3) - 1, table[row, 1] >> 2
        if (
            bound == 0
            or (bound == LOWER_BOUND and value >= beta)
            or (bound == UPPER_BOUND and value <= alpha)
        ):
            return value
    base = ply * CAPACITY
    n = generate(geo, om, ok, pm, pk, color, moves, base)
    if n == 0:
        return np.int64(-1)
    best, rests, start_alpha = np.int64(-2), ANY, alpha
    for i in range(base, base + n):
        src, captured = moves[i, M_FROM], moves[i, M_CAPTURED]
        a, b, c, d = make(geo, om, ok, pm, pk, color, src, moves[i, M_TO], captured)
        aux[Y_KEYS + ply + 1] = zobrist(geo, a, b, c, d, 1 - color)
        reversible = captured == 0 and (ok >> src) & 1 != 0
        aux[Y_IRREVERSIBLE + ply + 1] = aux[Y_IRREVERSIBLE + ply] if reversible else ply + 1
        value = -negamax(
            geo, edb, table, moves, aux, a, b, c, d, 1 - color, -beta, -alpha, ply + 1, depth - 1, -horizon
        )
        rests = min(rests, aux[Y_RESTS])
        if value > best:
            best = value
        if best > alpha:
            alpha = best
        if alpha >= beta:
            break
    aux[Y_RESTS] = rests if rests < ply else ANY
    if aux[Y_RESTS] == ANY:
        bound = UPPER_BOUND if best <= start_alpha else LOWER_BOUND if best >= beta else 0
        _stored(table, key, best, bound)
    return best


def _bound_search(geo, edb, table, moves, aux, position, alpha, beta, depth, horizon) -> int:
    om, ok, pm, pk, color = (np.int64(x) for x in position)
    aux[Y_KEYS] = zobrist(geo, om, ok, pm, pk, color)
    aux[Y_IRREVERSIBLE] = 0
    return int(negamax(geo, edb, table, moves, aux, om, ok, pm, pk, color, np.int64(alpha), np.int64(beta),
                       np.int64(0), np.int64(depth), np.int64(horizon)))  # fmt: skip


def exact_value(
    geo, edb, table, moves, aux, position, max_depth: int = LINE - 2, node_limit: int = 0
) -> int | None:
    """The value (-1 loss, 0 draw, 1 win) for the side to move of ``position`` (relative bitboards
    and the mover, ``Position.relative() + (color,)``): for each threshold (draw, then win) a null
    window search, deepened until the horizon valued against the mover proves the threshold reached
    or the horizon valued for it proves it missed. ``aux[Y_NODES]`` counts every search's nodes; None
    once they pass ``node_limit`` (0: no limit) or the depth ``max_depth`` undecided. A draw that kings
    can stretch without a repetition beyond the database's reach is out of its reach: every line must
    end within the depth."""
    value = -1
    aux[Y_NODE_LIMIT] = node_limit
    for threshold in (0, 1):
        for depth in range(1, max_depth + 1):
            if (
                _bound_search(geo, edb, table, moves, aux, position, threshold - 1, threshold, depth, -1)
                >= threshold
            ):
                value = threshold
                break
            if (
                _bound_search(geo, edb, table, moves, aux, position, threshold - 1, threshold, depth, 1)
                < threshold
            ):
                return value
        else:
            return None
    return value
