"""Depth-first proof-number search (df-pn, Nagai 2002) over whole-turn moves, compiled with numba,
with its proof extracted as a strategy graph that ``solve.checker`` verifies on its own.

A question is a goal for one side, the attacker: ``GOAL_WIN`` (it wins) or ``GOAL_NOT_LOSE`` (it
wins or draws). At an OR node the attacker is to move, at an AND node the defender. A node's proof
number ``pn`` is 0 once the goal is proven there, its disproof number ``dn`` 0 once it is refuted.
Proof numbers are summed as weak proof numbers (Ueda et al. 2008: the largest child's plus one for
each other open child), which counts a shared subtree (a transposition) once where sums count it
every time, and child thresholds carry Pawlewicz's 1 + epsilon trick.

The game is valued by play alone, as Chinook's proof of 8x8 was: a position repeated on the line of
play (same pieces, same side to move) is a draw; the move-count rule is left out, as the endgame
database leaves it out. Leaves: a side without a move loses (American rules), a position with few
enough pieces takes the database's value (``compiled.endgame.probe``), a repetition is a draw.

Positions are keyed by a base-5 number of their mover's view (the board turned when White is to
move, as the database stores it): digit ``s`` is square ``s``'s content, 0 empty, 1 the mover's man,
2 its king, 3 the opponent's man, 4 its king. Eighteen squares fit in 42 bits; the table's key adds
the goal and the node's kind in two more bits.

The extracted proof is one record a proven OR node: ``(node, after)``, the keys of the position and
of the position after the proving move. The defender's replies are every legal move; the checker
enumerates them itself.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neurocheckers.compiled import endgame
from neurocheckers.compiled.bitops import lowest_index, popcount
from neurocheckers.compiled.board import G_N, G_REPETITION, G_STUCK_LOSES
from neurocheckers.compiled.movegen import (
    CAPACITY,
    M_CAPTURED,
    M_FROM,
    M_ORDER,
    M_TO,
    MOBILITY_NONE,
    generate,
    make,
    mobility,
)

GOAL_WIN, GOAL_NOT_LOSE = 0, 1
INF = np.int64(1 << 30)
"""A disproven node's proof number (a proven node's disproof number)."""
OPEN_CAP = INF - 1
"""The most an open node's numbers reach."""
EPSILON_NUM, EPSILON_DEN = 5, 4
"""The 1 + epsilon trick's factor: a child's threshold is the second-best number times 5/4."""
MAX_PATH = 4096
"""Plies of the search's line (longer lines raise an error)."""
MAX_SQUARES = 27
"""Base-5 keys fit in 63 bits up to 27 squares (6x6 has 18; 8x8, 32, is out of reach of a proof)."""
POW5 = np.array([5**s for s in range(MAX_SQUARES)], dtype=np.int64)
BUCKET = 4
"""Table entries a key may sit in (the least-work one is replaced)."""

# aux layout
(
    X_NODES,
    X_GOAL,
    X_RECORDS,
    X_STOPPED,
    X_LEAF_HITS,
    X_TABLE_HITS,
    X_LOOKUPS,
    X_DEEPEST,
    X_NODE_LIMIT,
    X_FAIL,
    X_FAIL_PLY,
    X_CHILD_DEP,
    X_RETURN_DEP,
    X_KEEP_LINE_RESULTS,
    X_UNDO_TOP,
    X_PLY_CAP,
) = range(16)
X_PATH = 16
"""[MAX_PATH] the base-5 key of each position on the line."""
X_IRREVERSIBLE = X_PATH + MAX_PATH
"""[MAX_PATH] the ply of the latest irreversible move (a capture or a man's step) at or before each."""
AUX_SIZE = X_IRREVERSIBLE + MAX_PATH

# table columns
T_KEY, T_NUMBERS, T_WORK = 0, 1, 2


def new_table(bits: int) -> np.ndarray:
    """An empty transposition table of ``2**bits`` entries (key, pn << 32 | dn, work): 24 bytes each."""
    table = np.zeros((1 << bits, 3), np.int64)
    table[:, T_KEY] = -1
    return table


def new_aux(goal: int, node_limit: int = 0, keep_line_results: bool = False) -> np.ndarray:
    """The search's counters and line for a question of ``goal``; it stops after ``node_limit``
    nodes (0: none), the answer then open. With ``keep_line_results`` a value that rests on a
    repetition above its node is kept in the table too, as if it held on every line: far faster where
    kings wander, but an answer may then be wrong, so it stands only once its proof is written out
    (``proof_extract``, which walks every line again) and checked."""
    aux = np.zeros(AUX_SIZE, np.int64)
    aux[X_GOAL], aux[X_NODE_LIMIT], aux[X_KEEP_LINE_RESULTS] = goal, node_limit, keep_line_results
    return aux


C_DEPENDS, C_HELD = 5, 6
"""Move-row columns of the proof search beside ``movegen``'s: the ply of the line a child's value
depends on (``FREE``: none above it), and 1 where ``M_ORDER`` holds a value this node's search found
for the child but could not keep in the table (it depends on the line)."""
FREE = np.int64(1 << 40)
"""A value that depends on no position of the line above its own."""


def move_buffer() -> np.ndarray:
    """Move rows for every ply of the line."""
    return np.zeros((MAX_PATH * CAPACITY, 7), np.int64)


@njit(cache=True, _nrt=False)
def position_key(geo, om, ok, pm, pk, color):
    """The base-5 key of a position's mover view (relative bitboards, ``color`` to move)."""
    n = geo[G_N]
    if color == 1:
        om, ok = endgame.rotated(om, n), endgame.rotated(ok, n)
        pm, pk = endgame.rotated(pm, n), endgame.rotated(pk, n)
    key = np.int64(0)
    for bits, digit in ((om, 1), (ok, 2), (pm, 3), (pk, 4)):
        while bits:
            key += digit * POW5[lowest_index(bits)]
            bits &= bits - 1
    return key


@njit(cache=True, _nrt=False, inline="always")
def table_row(table, tagged):
    """The row holding ``tagged``, else -1."""
    size = table.shape[0]
    start = ((tagged * np.int64(-7046029254386353131)) >> 20) & (size - 1) & ~(BUCKET - 1)
    for i in range(start, start + BUCKET):
        if table[i, T_KEY] == tagged:
            return i
    return np.int64(-1)


@njit(cache=True, _nrt=False)
def store(table, tagged, pn, dn, work):
    """Keep a node's numbers: in its own row, an empty one, or the bucket's least-work row."""
    size = table.shape[0]
    start = ((tagged * np.int64(-7046029254386353131)) >> 20) & (size - 1) & ~(BUCKET - 1)
    victim, least = start, np.int64(1) << 62
    for i in range(start, start + BUCKET):
        if table[i, T_KEY] == tagged or table[i, T_KEY] == -1:
            victim = i
            break
        if table[i, T_WORK] < least:
            victim, least = i, table[i, T_WORK]
    table[victim, T_KEY] = tagged
    table[victim, T_NUMBERS] = (pn << 32) | dn
    table[victim, T_WORK] = work


@njit(cache=True, _nrt=False, inline="always")
def leaf_value_numbers(attacker_value, goal):
    """(pn, dn) of a leaf whose value for the attacker is ``attacker_value`` (LOSS, DRAW or WIN)."""
    if attacker_value == endgame.WIN or (goal == GOAL_NOT_LOSE and attacker_value != endgame.LOSS):
        return np.int64(0), INF
    return INF, np.int64(0)


@njit(cache=True, _nrt=False)
def line_key(geo, aux, om, ok, pm, pk, color, ply):
    """A position's key on the line: its base-5 key, and under a ply cap (``aux[X_PLY_CAP]``, the
    plies left at the root) the plies left, which are then part of the position."""
    key = position_key(geo, om, ok, pm, pk, color)
    if aux[X_PLY_CAP]:
        key = key * 64 + aux[X_PLY_CAP] - ply
    return key


@njit(cache=True, _nrt=False, inline="always")
def plies_left(aux, ply):
    """The plies left at ``ply`` under the ply cap, -1 without one."""
    return aux[X_PLY_CAP] - ply if aux[X_PLY_CAP] else np.int64(-1)


@njit(cache=True, _nrt=False)
def leaf_numbers(geo, edb, om, ok, pm, pk, color, goal, is_or, left):
    """(pn, dn) of a position settled without search, else (-1, -1): a mover without pieces loses,
    one without a move loses (or draws, where the rules say a stuck side draws), a position in the
    database takes its value, and one with no plies left (``left`` 0) is drawn."""
    if (om | ok) == 0:
        return leaf_value_numbers(endgame.LOSS if is_or else endgame.WIN, goal)
    if left == 0:
        return leaf_value_numbers(endgame.DRAW, goal)
    pieces = popcount(om) + popcount(ok) + popcount(pm) + popcount(pk)
    if pieces <= edb[endgame.E_PIECES]:
        entry = endgame.probe(edb, om, ok, pm, pk, color)
        if entry >= 0:
            value = entry & 3
            return leaf_value_numbers(value if is_or else 2 - value, goal)
    if mobility(geo, om, ok, pm, pk, color) == MOBILITY_NONE:
        if geo[G_STUCK_LOSES]:
            return leaf_value_numbers(endgame.LOSS if is_or else endgame.WIN, goal)
        return leaf_value_numbers(endgame.DRAW, goal)
    return np.int64(-1), np.int64(-1)


@njit(cache=True, _nrt=False)
def repeats(aux, key, ply):
    """The ply at which the position of ``key`` at ``ply`` stood on the line before, with the same
    side to move, since the last irreversible move; -1 when it did not."""
    first = aux[X_IRREVERSIBLE + ply]
    j = ply - 2
    while j >= first:
        if aux[X_PATH + j] == key:
            return j
        j -= 2
    return np.int64(-1)


@njit(cache=True, _nrt=False, inline="always")
def tagged_key(key, goal, is_or):
    return (key << 2) | (goal << 1) | is_or


@njit(cache=True, _nrt=False)
def child_numbers(geo, edb, table, aux, om, ok, pm, pk, color, is_or, ply, irreversible):
    """(pn, dn) of the position at ``ply`` (its key put on the line): a repetition, the table's, a
    leaf's (then kept in the table), or 1, 1 for a position never seen."""
    goal = aux[X_GOAL]
    key = line_key(geo, aux, om, ok, pm, pk, color, ply)
    aux[X_PATH + ply] = key
    aux[X_IRREVERSIBLE + ply] = ply if irreversible else aux[X_IRREVERSIBLE + ply - 1]
    aux[X_CHILD_DEP] = FREE
    if not irreversible and geo[G_REPETITION]:
        earlier = repeats(aux, key, ply)
        if earlier >= 0:  # a draw here, on this line only
            aux[X_CHILD_DEP] = earlier
            return leaf_value_numbers(endgame.DRAW, goal)
    tagged = tagged_key(key, goal, is_or)
    aux[X_LOOKUPS] += 1
    row = table_row(table, tagged)
    if row >= 0:
        aux[X_TABLE_HITS] += 1
        numbers = table[row, T_NUMBERS]
        return numbers >> 32, numbers & 0xFFFFFFFF
    pn, dn = leaf_numbers(geo, edb, om, ok, pm, pk, color, goal, is_or, plies_left(aux, ply))
    if pn >= 0:
        aux[X_LEAF_HITS] += 1
        store(table, tagged, pn, dn, np.int64(0))
        return pn, dn
    return np.int64(1), np.int64(1)


@njit(cache=True, _nrt=False, inline="always")
def is_irreversible(geo, om, ok, source, captured):
    """A capture or a man's move: no earlier position can come back after it."""
    return captured != 0 or (om >> source) & 1 != 0


@njit(cache=True, _nrt=False, inline="always")
def _capped(x):
    return min(x, OPEN_CAP)


@njit(cache=True, _nrt=False)
def _summary(moves, base, n, is_or):
    """(pn, dn, best row, its pn, its dn, second best number) of a node from its children's numbers
    (packed in ``M_ORDER``): min over the mover's choices, weak sums over the other side's."""
    best, best_pn, best_dn, second = np.int64(-1), INF + 1, INF + 1, INF + 1
    low, high, open_count = INF + 1, np.int64(0), np.int64(0)
    for i in range(base, base + n):
        cpn, cdn = moves[i, M_ORDER] >> 32, moves[i, M_ORDER] & 0xFFFFFFFF
        chosen, other = (cpn, cdn) if is_or else (cdn, cpn)
        if chosen < low:
            second = low
            low, best, best_pn, best_dn = chosen, i, cpn, cdn
        elif chosen < second:
            second = chosen
        if chosen > 0 and other > 0:
            open_count += 1
        high = max(high, other)
    summed = INF if low == 0 or high >= INF else _capped(high + max(open_count - 1, 0))
    if is_or:
        return low, summed, best, best_pn, best_dn, second
    return summed, low, best, best_pn, best_dn, second


@njit(cache=True, _nrt=False)
def _children(geo, edb, table, moves, aux, om, ok, pm, pk, color, is_or, ply, base, n):
    """Bring every child's numbers (``M_ORDER``) and dependence (``C_DEPENDS``) up to date, except
    those this node's search holds itself (``C_HELD``)."""
    for i in range(base, base + n):
        if moves[i, C_HELD]:
            continue
        src, captured = moves[i, M_FROM], moves[i, M_CAPTURED]
        a, b, c, d = make(geo, om, ok, pm, pk, color, src, moves[i, M_TO], captured)
        cpn, cdn = child_numbers(geo, edb, table, aux, a, b, c, d, 1 - color, 1 - is_or, ply + 1,
                                 is_irreversible(geo, om, ok, src, captured))  # fmt: skip
        moves[i, M_ORDER] = (cpn << 32) | cdn
        moves[i, C_DEPENDS] = aux[X_CHILD_DEP]


@njit(cache=True, _nrt=False)
def _dependence(moves, base, n, is_or, pn, dn):
    """The highest ply of the line that a solved node's value rests on: the proof's or refutation's
    children's, picking for a single-child proof (the mover's) the child that rests least."""
    single = (pn == 0) == bool(is_or)  # the mover picks one child that keeps the result
    dep = np.int64(-1) if single else FREE
    for i in range(base, base + n):
        cpn, cdn = moves[i, M_ORDER] >> 32, moves[i, M_ORDER] & 0xFFFFFFFF
        solved_child = cpn == 0 if pn == 0 else cdn == 0
        if single and solved_child:
            dep = max(dep, moves[i, C_DEPENDS])
        elif not single:
            dep = min(dep, moves[i, C_DEPENDS])
    return dep


@njit("int64(int64[::1], int32[::1], int64[:, ::1], int64[:, ::1], int64[::1], int64, int64, int64, int64,"
      " int64, int64, int64, int64, int64)", cache=True, _nrt=False)  # fmt: skip
def mid(geo, edb, table, moves, aux, om, ok, pm, pk, color, is_or, ply, th_pn, th_dn):
    """Search the node at ``ply`` (its key already on the line) until its proof number reaches
    ``th_pn`` or its disproof number ``th_dn``; return its packed numbers, with the ply of the line its
    value rests on in ``aux[X_RETURN_DEP]`` (``FREE``: none above it). It is kept in the table unless
    it is solved and rests on the line above it (the graph-history problem: a repetition with a
    position above it is a draw on this line only)."""
    if ply + 1 >= MAX_PATH:
        raise ValueError("the proof search's line grew past MAX_PATH plies")
    goal = aux[X_GOAL]
    start_nodes = aux[X_NODES]
    aux[X_NODES] += 1
    aux[X_DEEPEST] = max(aux[X_DEEPEST], ply)
    base = ply * CAPACITY
    n = generate(geo, om, ok, pm, pk, color, moves, base)
    moves[base : base + n, C_HELD] = 0
    key = aux[X_PATH + ply]
    while True:
        _children(geo, edb, table, moves, aux, om, ok, pm, pk, color, is_or, ply, base, n)
        pn, dn, best, best_pn, best_dn, second = _summary(moves, base, n, is_or)
        if pn >= th_pn or dn >= th_dn or pn == 0 or dn == 0 or aux[X_STOPPED]:
            break
        if aux[X_NODE_LIMIT] and aux[X_NODES] >= aux[X_NODE_LIMIT]:
            aux[X_STOPPED] = 1
            break
        grown = max(second + 1, second * EPSILON_NUM // EPSILON_DEN)
        if is_or:
            child_pn, child_dn = min(th_pn, grown), _capped(th_dn - dn + best_dn)
        else:
            child_pn, child_dn = _capped(th_pn - pn + best_pn), min(th_dn, grown)
        src, captured = moves[best, M_FROM], moves[best, M_CAPTURED]
        a, b, c, d = make(geo, om, ok, pm, pk, color, src, moves[best, M_TO], captured)
        child_numbers(geo, edb, table, aux, a, b, c, d, 1 - color, 1 - is_or, ply + 1,
                      is_irreversible(geo, om, ok, src, captured))  # fmt: skip
        numbers = mid(
            geo, edb, table, moves, aux, a, b, c, d, 1 - color, 1 - is_or, ply + 1, child_pn, child_dn
        )
        if aux[X_RETURN_DEP] <= ply:  # solved on this line only: held here, not in the table
            moves[best, M_ORDER], moves[best, C_DEPENDS], moves[best, C_HELD] = numbers, aux[X_RETURN_DEP], 1
    dep = FREE
    if pn == 0 or dn == 0:
        dep = _dependence(moves, base, n, is_or, pn, dn)
    aux[X_RETURN_DEP] = dep if dep < ply and not aux[X_KEEP_LINE_RESULTS] else FREE
    if aux[X_RETURN_DEP] == FREE:
        store(table, tagged_key(key, goal, is_or), pn, dn, aux[X_NODES] - start_nodes)
    return (pn << 32) | dn


@njit(cache=True, _nrt=False)
def solve_node(geo, edb, table, moves, aux, om, ok, pm, pk, color, is_or, ply):
    """Search the node at ``ply`` (its key on the line) until it is proven or refuted: its packed
    numbers, or the leaf's when it is one."""
    goal = aux[X_GOAL]
    aux[X_RETURN_DEP] = FREE
    if ply > 0 and repeats(aux, aux[X_PATH + ply], ply) >= 0:
        aux[X_RETURN_DEP] = repeats(aux, aux[X_PATH + ply], ply)
        pn, dn = leaf_value_numbers(endgame.DRAW, goal)
        return (pn << 32) | dn
    pn, dn = leaf_numbers(geo, edb, om, ok, pm, pk, color, goal, is_or, plies_left(aux, ply))
    if pn >= 0:
        return (pn << 32) | dn
    return mid(geo, edb, table, moves, aux, om, ok, pm, pk, color, is_or, ply, INF, INF)


def solve(geo, edb, table, moves, aux, position, is_or: bool) -> bool | None:
    """Whether the question of ``aux`` (its goal) holds at ``position`` (relative bitboards and the
    mover, a ``Position.relative() + (color,)``), the attacker moving there when ``is_or``; None when
    the node limit stopped the search first."""
    om, ok, pm, pk, color = (np.int64(x) for x in position)
    aux[X_PATH] = line_key(geo, aux, om, ok, pm, pk, color, np.int64(0))
    aux[X_IRREVERSIBLE] = 0
    numbers = int(
        solve_node(geo, edb, table, moves, aux, om, ok, pm, pk, color, np.int64(is_or), np.int64(0))
    )
    pn, dn = numbers >> 32, numbers & 0xFFFFFFFF
    return True if pn == 0 else False if dn == 0 else None
