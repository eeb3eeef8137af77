"""Negamax alpha-beta over whole-turn moves, compiled with numba: principal-variation search, an
always-on transposition table (Zobrist keys) kept between the moves of a game, killer and history
ordering, captures searched to quiet positions, and late-move reductions as a switch.

Depth counts whole turns (a multi-jump is one move). Scores are integers from the mover's view in
``UNIT`` per man: a man ``UNIT``, a king ``KING`` (``rules.outcome.KING_VALUE`` men), a won game
``WIN`` minus ``UNIT`` per action (each jump one, as the JAX alpha-beta counts its distance) from the
root, a draw 0. The driver (iterative deepening, aspiration windows, the deadline) is ``driver``.

State of one search lives in four arrays, so the recursive function takes few of them (packing is
what made numba's recursion fast): ``geo`` (``board.geometry``), ``tt`` ([2^bits, 2]: key, data),
``moves`` (``movegen``'s rows, ``CAPACITY`` per ply) and ``aux`` (counters, limits, killers, history
and the keys of the positions on the path, laid out by the ``A_*`` offsets below).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neurocheckers.compiled import endgame, network
from neurocheckers.compiled.bitops import lowest_index, monotonic_ns, popcount, prefetch
from neurocheckers.compiled.board import (
    G_CROWN,
    G_FORCED,
    G_MAN_RESETS,
    G_MAX_PLIES,
    G_QUIET_LIMIT,
    G_REPETITION,
    G_STUCK_LOSES,
    G_ZOBRIST,
    G_ZOBRIST_SIDE,
)
from neurocheckers.compiled.movegen import (
    CAPACITY,
    M_CAPTURED,
    M_FROM,
    M_ORDER,
    M_PATH,
    M_TO,
    MOBILITY_CAPTURE,
    MOBILITY_NONE,
    generate,
    make,
    mobility,
)
from neurocheckers.compiled.reductions import (
    KILLER_ORDER,
    N_TUNED,
    T_IIR_DEPTH,
    late_move_reduction,
)
from neurocheckers.rules.outcome import KING_VALUE

UNIT = 10_000
"""Score units per man."""
KING = int(round(KING_VALUE * UNIT))
WIN = 1000 * UNIT
"""A won game at the root (``search.alphabeta.WIN_SCORE`` men)."""
WIN_BOUND = 500 * UNIT
"""Scores beyond this are won or lost games."""
INFINITE = 2 * WIN
NOT_TERMINAL = 4 * WIN
MAX_PLY = 128
"""Plies of the search path (nominal depth plus capture extensions)."""
MAX_HISTORY = 512
"""Keys of earlier positions of the game kept for repetition."""

OPT_TABLE, OPT_PVS, OPT_KILLERS, OPT_HISTORY, OPT_QUIESCENCE = 1, 2, 4, 8, 16
OPT_IIR, OPT_COUNTER = 256, 512  # OPT_LMR, OPT_LMR_DEEP, OPT_LMR_LOG (32, 64, 128): ``reductions``

A_NODES, A_STOP, A_DEADLINE, A_NODE_LIMIT, A_OPTIONS, A_HISTORY_LEN, A_SELDEPTH = 0, 1, 2, 3, 4, 5, 6
A_ENDGAME_PIECES = 7
"""The most pieces of the endgame database's positions (0: none)."""
A_BEST_FROM, A_BEST_TO, A_BEST_CAPTURED, A_BEST_PATH, A_BEST_SCORE, A_BEST_SET = 8, 9, 10, 11, 12, 13
A_KILLERS = 16
A_HISTORY = A_KILLERS + 2 * MAX_PLY
A_PATH = A_HISTORY + 2 * 32 * 32
A_PREVIOUS = A_PATH + MAX_HISTORY + MAX_PLY + 1
"""The move (``src | dst << 6``) that led to each ply of the path."""
A_COUNTER = A_PREVIOUS + MAX_PLY + 1
"""Counter-moves: the quiet reply that last cut off after each (colour, source, destination)."""
A_NET = A_COUNTER + 2 * 32 * 32
"""The leaf network's layout (``network.N_*``; kind 0: material leaves)."""
EVAL_CACHE_BITS = 14
"""Network leaf scores kept by key: 2**14 entries (key, score)."""
A_EVAL_CACHE = A_NET + network.N_SIZE
A_ACC_VALID = 14
"""The deepest ply of the path whose network accumulators are up to date (they are brought up to
date only where a leaf is evaluated: most nodes never are)."""
A_ACC_MOVES = A_EVAL_CACHE + 2 * (1 << EVAL_CACHE_BITS)
"""Per ply of the path, the move that led to it for the accumulators: ``src | dst << 6 | color << 12``,
the captured bitboard, and the mover's and the opponent's kings before it."""
A_TUNED = A_ACC_MOVES + 4 * (MAX_PLY + 1)
"""The search's numeric parameters (``driver.SearchOptions``' tunable fields): ``reductions.T_*``."""
AUX_SIZE = A_TUNED + N_TUNED

EXACT, LOWER, UPPER = 0, 1, 2
TT_MOVE_ORDER = 1 << 50
CAPTURE_ORDER = 1 << 40
COUNTER_ORDER = KILLER_ORDER - 1
CHECK_EVERY = 1023
"""The clock and the node limit are read when ``nodes & CHECK_EVERY == 0``."""

SIGNATURE = (
    "int64(int64[::1], int64[:, ::1], int64[:, ::1], int64[::1], float32[::1], int32[::1], int64, int64,"
    " int64, int64, int64, int64, int64, int64, int64, int64, int64, int64, int64, int64)"
)


@njit(cache=True, _nrt=False, inline="always")
def evaluate(om, ok, pm, pk):
    """Material from the mover's view."""
    return UNIT * (popcount(om) - popcount(pm)) + KING * (popcount(ok) - popcount(pk))


@njit(cache=True, _nrt=False, inline="always")
def _defer_update(aux, ok, pk, color, src, dst, cap, ply):
    """Record the move from ``ply`` to ``ply + 1`` for the accumulators of ``ply + 1``, which are
    computed only when a leaf below needs them (``_accumulators_to``)."""
    j = A_ACC_MOVES + 4 * (ply + 1)
    aux[j], aux[j + 1], aux[j + 2], aux[j + 3] = src | (dst << 6) | (color << 12), cap, ok, pk
    aux[A_ACC_VALID] = min(aux[A_ACC_VALID], ply)


@njit(cache=True, _nrt=False, inline="always")
def _accumulators_to(geo, net, aux, ply):
    """Bring the accumulators of the path up to date down to ``ply`` from the recorded moves."""
    while aux[A_ACC_VALID] < ply:
        q = aux[A_ACC_VALID]
        j = A_ACC_MOVES + 4 * (q + 1)
        move = aux[j]
        network.update(geo, net, aux[A_NET:], aux[j + 2], aux[j + 3], move >> 12, move & 63, (move >> 6) & 63,
                       aux[j + 1], q)  # fmt: skip
        aux[A_ACC_VALID] = q + 1


@njit(cache=True, _nrt=False, inline="always")
def leaf_score(geo, net, aux, om, ok, pm, pk, color, ply, key):
    """A quiet leaf's score: material, or the network's ``2 v - 1`` men (``network``), kept in a
    cache by the position's key (leaves recur across iterations and re-searches)."""
    if aux[A_NET + network.N_KIND] == network.KIND_MATERIAL:
        return evaluate(om, ok, pm, pk)
    i = A_EVAL_CACHE + 2 * (key & ((1 << EVAL_CACHE_BITS) - 1))
    if aux[i] == key and key != 0:
        return aux[i + 1]
    _accumulators_to(geo, net, aux, ply)
    score = network.leaf_score(geo, net, aux[A_NET:], om, ok, pm, pk, color, ply, UNIT)
    aux[i], aux[i + 1] = key, score
    return score


@njit(cache=True, _nrt=False, inline="always")
def terminal_score(geo, has_move, own, gply, quiet, dist):
    """The score of a finished game (the JAX engine's ``_conclude`` order), else NOT_TERMINAL."""
    limit = geo[G_QUIET_LIMIT]
    quiet_draw = limit > 0 and quiet >= limit
    loses = not has_move and (geo[G_STUCK_LOSES] != 0 or own == 0) and not quiet_draw
    if loses:
        return -(WIN - UNIT * dist)
    if quiet_draw or not has_move or (geo[G_MAX_PLIES] > 0 and gply >= geo[G_MAX_PLIES]):
        return 0
    return NOT_TERMINAL


@njit(cache=True, _nrt=False, inline="always")
def child_key(geo, key, om, ok, pk, color, source, dest, captured):
    """The Zobrist key after a move (``om, ok, pk`` before it)."""
    was_king = (ok >> source) & 1
    is_king = was_king | (1 if (np.int64(1) << dest) & geo[G_CROWN + color] else 0)
    key ^= geo[G_ZOBRIST + 32 * (2 * color + was_king) + source]
    key ^= geo[G_ZOBRIST + 32 * (2 * color + is_king) + dest]
    key ^= geo[G_ZOBRIST_SIDE]
    while captured:
        b = lowest_index(captured)
        captured &= captured - 1
        key ^= geo[G_ZOBRIST + 32 * (2 * (1 - color) + ((pk >> b) & 1)) + b]
    return key


@njit(cache=True, _nrt=False)
def position_key(geo, om, ok, pm, pk, color):
    """The Zobrist key of a position (relative bitboards, ``color`` to move)."""
    key = geo[G_ZOBRIST_SIDE] if color == 1 else np.int64(0)
    boards = (om, ok, pm, pk)
    for k in range(4):
        kind = 2 * (color if k < 2 else 1 - color) + (k % 2)
        b = boards[k]
        while b:
            s = lowest_index(b)
            b &= b - 1
            key ^= geo[G_ZOBRIST + 32 * kind + s]
    return key


@njit(cache=True, _nrt=False, inline="always")
def _to_table(score, dist):
    """A score as stored: won and lost games counted from the node, not the root."""
    if score > WIN_BOUND:
        return score + UNIT * dist
    if score < -WIN_BOUND:
        return score - UNIT * dist
    return score


@njit(cache=True, _nrt=False, inline="always")
def _from_table(score, dist):
    if score > WIN_BOUND:
        return score - UNIT * dist
    if score < -WIN_BOUND:
        return score + UNIT * dist
    return score


@njit(cache=True, _nrt=False, inline="always")
def _slot(tt, key):
    """The row of ``key`` in its bucket of two (-1 when absent)."""
    i = key & (tt.shape[0] - 2)
    if tt[i, 0] == key:
        return i
    if tt[i + 1, 0] == key:
        return i + 1
    return np.int64(-1)


@njit(cache=True, _nrt=False, inline="always")
def _store(tt, key, depth, score, flag, move, dist):
    """Store a result: in its own row if the key is there, else in the bucket's first row when at
    least as deep as what that row holds (depth-preferred), else in its second (always replaced)."""
    i = _slot(tt, key)
    if i < 0:
        i = key & (tt.shape[0] - 2)
        if (tt[i, 1] >> 32) & 0xFF > depth:
            i += 1
    tt[i, 0] = key
    tt[i, 1] = (_to_table(score, dist) + (1 << 31)) | (depth << 32) | (flag << 40) | ((move + 1) << 42)


@njit(cache=True, _nrt=False, inline="always")
def _repeated(aux, key, ply, rev):
    """Whether the position on the path at ``ply`` (key ``key``) occurred before with the same mover
    since the last irreversible move (``rev`` plies ago)."""
    p = aux[A_HISTORY_LEN] + ply
    j = p - 2
    while j >= 0 and j >= p - rev:
        if aux[A_PATH + j] == key:
            return True
        j -= 2
    return False


@njit(cache=True, _nrt=False, inline="always")
def _order_moves(aux, moves, base, n, color, ply, tt_move, options):
    """Ordering scores: the table's move, captures (the longest first), killers, the counter-move,
    then history."""
    k0, k1 = aux[A_KILLERS + 2 * ply], aux[A_KILLERS + 2 * ply + 1]
    counter = np.int64(-1)
    if options & OPT_COUNTER and ply > 0:
        counter = aux[_counter_slot(aux, color, ply)]
    for i in range(base, base + n):
        cap = moves[i, M_CAPTURED]
        src, dst = moves[i, M_FROM], moves[i, M_TO]
        if i - base == tt_move:
            order = TT_MOVE_ORDER
        elif cap:
            order = CAPTURE_ORDER + popcount(cap)
        else:
            ident = src | (dst << 6)
            if options & OPT_KILLERS and ident == k0:
                order = KILLER_ORDER + 1
            elif options & OPT_KILLERS and ident == k1:
                order = KILLER_ORDER
            elif ident == counter:
                order = COUNTER_ORDER
            elif options & OPT_HISTORY:
                order = aux[A_HISTORY + 1024 * color + 32 * src + dst]
            else:
                order = 0
        moves[i, M_ORDER] = order


@njit(cache=True, _nrt=False, inline="always")
def _prefetch_children(geo, tt, moves, base, n, key, ok, pk, color):
    """Bring the table rows of every child into the cache while the first ones are searched."""
    for i in range(base, base + n):
        c_key = child_key(geo, key, 0, ok, pk, color, moves[i, M_FROM], moves[i, M_TO], moves[i, M_CAPTURED])
        prefetch(tt, c_key & (tt.shape[0] - 2))


@njit(cache=True, _nrt=False, inline="always")
def _pick(moves, base, n):
    """The unsearched move with the highest ordering score (searched moves hold -1)."""
    best, best_i = np.int64(-2), np.int64(-1)
    for i in range(base, base + n):
        if moves[i, M_ORDER] > best:
            best, best_i = moves[i, M_ORDER], i
    return best_i


@njit(cache=True, _nrt=False, inline="always")
def _counter_slot(aux, color, ply):
    """Where the counter-move to the move that led to ``ply`` is kept."""
    previous = aux[A_PREVIOUS + ply]
    return A_COUNTER + 1024 * color + 32 * (previous & 63) + (previous >> 6)


@njit(cache=True, _nrt=False, inline="always")
def _good_quiet_move(aux, moves, i, color, ply, depth):
    """A quiet move that cut off: a killer at this ply, and credit in the history table."""
    ident = moves[i, M_FROM] | (moves[i, M_TO] << 6)
    if aux[A_KILLERS + 2 * ply] != ident:
        aux[A_KILLERS + 2 * ply + 1] = aux[A_KILLERS + 2 * ply]
        aux[A_KILLERS + 2 * ply] = ident
    h = A_HISTORY + 1024 * color + 32 * moves[i, M_FROM] + moves[i, M_TO]
    aux[h] = min(aux[h] + depth * depth, COUNTER_ORDER - 1)
    if aux[A_OPTIONS] & OPT_COUNTER and ply > 0:
        aux[_counter_slot(aux, color, ply)] = ident


@njit(cache=True, _nrt=False, inline="always")
def _record_root(aux, moves, i, score):
    aux[A_BEST_FROM], aux[A_BEST_TO] = moves[i, M_FROM], moves[i, M_TO]
    aux[A_BEST_CAPTURED], aux[A_BEST_PATH] = moves[i, M_CAPTURED], moves[i, M_PATH]
    aux[A_BEST_SCORE], aux[A_BEST_SET] = score, 1


@njit(cache=True, _nrt=False, inline="always")
def _tick(aux):
    """Count a node; raise the stop flag past the deadline or the node limit. True to stop."""
    aux[A_NODES] += 1
    if aux[A_NODES] & CHECK_EVERY == 0 and (
        aux[A_NODES] >= aux[A_NODE_LIMIT] or monotonic_ns() >= aux[A_DEADLINE]
    ):
        aux[A_STOP] = 1
    return aux[A_STOP] != 0


@njit(cache=True, _nrt=False, inline="always")
def _probe(tt, key, depth, alpha, beta, dist):
    """``(cut, score, move)``: whether the table settles the node, its score, and its best move (-1)."""
    i = _slot(tt, key)
    if i < 0:
        return False, np.int64(0), np.int64(-1)
    data = tt[i, 1]
    move = ((data >> 42) & 0xFF) - 1
    if (data >> 32) & 0xFF < depth:
        return False, np.int64(0), move
    score = _from_table((data & 0xFFFFFFFF) - (1 << 31), dist)
    flag = (data >> 40) & 3
    cut = flag == EXACT or (flag == LOWER and score >= beta) or (flag == UPPER and score <= alpha)
    return cut, score, move


@njit(cache=True, _nrt=False, inline="always")
def _endgame_score(geo, edb, om, ok, pm, pk, color, dist, quiet):
    """The endgame database's score of a position (``compiled.endgame``), else NOT_TERMINAL."""
    if geo[G_QUIET_LIMIT] > 0 and quiet >= geo[G_QUIET_LIMIT]:
        return np.int64(0)
    entry = endgame.probe(edb, om, ok, pm, pk, color)
    if entry < 0:
        return NOT_TERMINAL
    value, moves_left = entry & 3, entry >> 2
    if value == endgame.WIN:
        return WIN - UNIT * (dist + moves_left)
    if value == endgame.LOSS:
        return -(WIN - UNIT * (dist + moves_left))
    return np.int64(0)


@njit(cache=True, _nrt=False, inline="always")
def _settled(geo, aux, net, edb, om, ok, pm, pk, color, key, horizon, ply, dist, gply, quiet, rev):
    """The score of a node settled before its moves are searched (the search stopped, a repetition,
    a position of the endgame database, a finished game or a quiet leaf at the horizon), else
    NOT_TERMINAL. Counts the node."""
    if _tick(aux):
        return 0
    aux[A_PATH + aux[A_HISTORY_LEN] + ply] = key
    aux[A_SELDEPTH] = max(aux[A_SELDEPTH], ply)
    if ply > 0 and geo[G_REPETITION] and _repeated(aux, key, ply, rev):
        return 0
    if ply > 0 and popcount(om | ok | pm | pk) <= aux[A_ENDGAME_PIECES]:
        known = _endgame_score(geo, edb, om, ok, pm, pk, color, dist, quiet)
        if known != NOT_TERMINAL:
            return known
    if horizon:  # a leaf, unless a capture is to be searched on (quiescence)
        mob = mobility(geo, om, ok, pm, pk, color)
        term = terminal_score(geo, mob != MOBILITY_NONE, om | ok, gply, quiet, dist)
        if term != NOT_TERMINAL:
            return term
        if mob != MOBILITY_CAPTURE or not aux[A_OPTIONS] & OPT_QUIESCENCE or ply >= MAX_PLY - 1:
            return leaf_score(geo, net, aux, om, ok, pm, pk, color, ply, key)
    return NOT_TERMINAL


@njit(cache=True, _nrt=False, inline="always")
def _child(geo, om, ok, pm, pk, color, key, src, dst, cap, dist, gply, quiet, rev):
    """The child after a move: its bitboards, key, distance, game ply and counters."""
    c_om, c_ok, c_pm, c_pk = make(geo, om, ok, pm, pk, color, src, dst, cap)
    c_key = child_key(geo, key, om, ok, pk, color, src, dst, cap)
    man = (om >> src) & 1
    actions = max(1, popcount(cap))
    c_quiet = 0 if cap or (man and geo[G_MAN_RESETS]) else quiet + 1
    c_rev = 0 if cap or man else rev + 1
    return c_om, c_ok, c_pm, c_pk, c_key, dist + actions, gply + actions, c_quiet, c_rev


@njit(SIGNATURE, cache=True, _nrt=False)
def negamax(
    geo, tt, moves, aux, net, edb, om, ok, pm, pk, color, key, depth, alpha, beta, ply, dist, gply, quiet, rev
):
    """The score of the position from the mover's view (fail-soft; see the module docstring)."""
    horizon = depth <= 0 or ply >= MAX_PLY - 1
    settled = _settled(geo, aux, net, edb, om, ok, pm, pk, color, key, horizon, ply, dist, gply, quiet, rev)
    if settled != NOT_TERMINAL:
        return settled
    options = aux[A_OPTIONS]
    best, best_i, tt_move, alpha0 = np.int64(-INFINITE), np.int64(-1), np.int64(-1), alpha
    use_table = options & OPT_TABLE and not horizon
    if use_table:  # before generating moves: a finished game is never stored, but a quiet draw may be
        if geo[G_QUIET_LIMIT] > 0 and quiet >= geo[G_QUIET_LIMIT]:
            return 0
        cut, stored, tt_move = _probe(tt, key, depth, alpha, beta, dist)
        if cut and ply > 0:
            return stored
        if tt_move < 0 and options & OPT_IIR and depth >= aux[A_TUNED + T_IIR_DEPTH] and ply > 0:
            depth -= 1  # internal iterative reduction: a node the table knows nothing of goes shallower
    base = ply * CAPACITY
    n = generate(geo, om, ok, pm, pk, color, moves, base)
    if not horizon:
        term = terminal_score(geo, n > 0, om | ok, gply, quiet, dist)
        if term != NOT_TERMINAL:
            return term
    elif not geo[G_FORCED]:  # captures are optional: the mover may stand pat
        best = leaf_score(geo, net, aux, om, ok, pm, pk, color, ply, key)
        if best >= beta:
            return best
        alpha = max(alpha, best)
    _order_moves(aux, moves, base, n, color, ply, tt_move, options)
    if options & OPT_TABLE and depth > 1:  # ask for the children's table rows early: the probe misses
        _prefetch_children(geo, tt, moves, base, n, key, ok, pk, color)
    for k in range(n):
        i = _pick(moves, base, n)
        order, moves[i, M_ORDER] = moves[i, M_ORDER], -1
        src, dst, cap = moves[i, M_FROM], moves[i, M_TO], moves[i, M_CAPTURED]
        if horizon and cap == 0:
            break  # captures come first; only they are searched on past the horizon
        c_om, c_ok, c_pm, c_pk, c_key, c_dist, c_gply, c_quiet, c_rev = _child(
            geo, om, ok, pm, pk, color, key, src, dst, cap, dist, gply, quiet, rev
        )
        if aux[A_NET + network.N_KIND] != network.KIND_MATERIAL:
            _defer_update(aux, ok, pk, color, src, dst, cap, ply)
        c_color, c_ply, d1 = 1 - color, ply + 1, depth - 1
        aux[A_PREVIOUS + c_ply] = src | (dst << 6)
        leaf = NOT_TERMINAL
        if d1 <= 0:  # settle a quiet leaf here: a call with this many arguments costs more than it
            leaf = _settled(geo, aux, net, edb, c_om, c_ok, c_pm, c_pk, c_color, c_key, True, c_ply, c_dist,
                            c_gply, c_quiet, c_rev)  # fmt: skip
            if leaf == NOT_TERMINAL:  # a capture to search on: the call below counts the node again
                aux[A_NODES] -= 1
        if leaf != NOT_TERMINAL:
            score = -leaf
        elif k == 0 or horizon or not options & OPT_PVS:
            score = -negamax(geo, tt, moves, aux, net, edb, c_om, c_ok, c_pm, c_pk, c_color, c_key, d1, -beta,
                             -alpha, c_ply, c_dist, c_gply, c_quiet, c_rev)  # fmt: skip
        else:  # a null window first (one move shallower for a late quiet move), then the full one
            r = late_move_reduction(aux, A_TUNED, options, depth, k, order)
            score = -negamax(geo, tt, moves, aux, net, edb, c_om, c_ok, c_pm, c_pk, c_color, c_key, d1 - r,
                             -alpha - 1, -alpha, c_ply, c_dist, c_gply, c_quiet, c_rev)  # fmt: skip
            if score > alpha and (r or score < beta):
                score = -negamax(geo, tt, moves, aux, net, edb, c_om, c_ok, c_pm, c_pk, c_color, c_key, d1,
                                 -beta, -alpha, c_ply, c_dist, c_gply, c_quiet, c_rev)  # fmt: skip
        if aux[A_STOP]:
            return 0
        if score > best:
            best, best_i = score, i
            if ply == 0:
                _record_root(aux, moves, i, score)
            alpha = max(alpha, score)
            if alpha >= beta:
                if cap == 0:
                    _good_quiet_move(aux, moves, i, color, ply, depth)
                break
    if use_table:
        flag = UPPER if best <= alpha0 else (LOWER if best >= beta else EXACT)
        _store(tt, key, depth, best, flag, best_i - base, dist)
    return best
