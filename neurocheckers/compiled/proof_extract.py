"""The proof of a question that ``proof`` answered yes: a strategy graph walked from the root, one
record a proven OR node (its key and the key after its proving move), for ``solve.checker``.

The walk searches again (``proof.solve_node``) wherever the table lost a node or kept one whose
value held on another line only (a repetition above it); a node that will not prove there makes the
walk fail, and its records are then no proof. In a ``GOAL_NOT_LOSE`` proof an open node met again
closes a cycle (an endless game: a draw), which the goal allows; in a ``GOAL_WIN`` proof it fails.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from neurocheckers.compiled.movegen import CAPACITY, M_CAPTURED, M_FROM, M_TO, generate, make
from neurocheckers.compiled.proof import (
    GOAL_NOT_LOSE,
    MAX_PATH,
    T_NUMBERS,
    T_WORK,
    X_FAIL,
    X_FAIL_PLY,
    X_GOAL,
    X_IRREVERSIBLE,
    X_PATH,
    X_RECORDS,
    X_UNDO_TOP,
    child_numbers,
    is_irreversible,
    leaf_numbers,
    line_key,
    plies_left,
    repeats,
    solve,
    solve_node,
    table_row,
    tagged_key,
)

V_OPEN, V_DONE = 1, 2
TRIED = 6
"""The move-row column (``proof.C_HELD``'s) that marks a move the walk has tried at its node."""


def new_visited(bits: int) -> np.ndarray:
    """An empty set of walked nodes (tagged key, state, the row marked before it): ``2**bits`` rows,
    linear probing; the third column chains the marks, newest first, so a failed subtree's are undone."""
    visited = np.zeros((1 << bits, 3), np.int64)
    visited[:, 0] = -1
    visited[:, 2] = -1
    return visited


@njit(cache=True, _nrt=False)
def _visit(visited, tagged):
    """The row of ``tagged`` in the set, added (state 0) when it was not there."""
    size = visited.shape[0]
    i = ((tagged * np.int64(-7046029254386353131)) >> 20) & (size - 1)
    for _ in range(size):
        if visited[i, 0] == tagged:
            return i
        if visited[i, 0] == -1:
            visited[i, 0] = tagged
            visited[i, 1] = 0
            return i
        i = (i + 1) & (size - 1)
    raise ValueError("the proof's set of nodes is full: give it more bits")


@njit(cache=True, _nrt=False)
def _undo(visited, aux, top):
    """Unmark every node marked since the mark ``top`` (the chain's head then)."""
    while aux[X_UNDO_TOP] != top:
        row = aux[X_UNDO_TOP]
        aux[X_UNDO_TOP] = visited[row, 2]
        visited[row, 1] = 0


@njit(cache=True, _nrt=False)
def _proven(geo, edb, table, moves, aux, om, ok, pm, pk, color, is_or, ply):
    """Whether the node at ``ply`` (key on the line) is proven: the table, a leaf, or searched anew."""
    row = table_row(table, tagged_key(aux[X_PATH + ply], aux[X_GOAL], is_or))
    if row >= 0 and (table[row, T_NUMBERS] >> 32) == 0:
        return True
    numbers = solve_node(geo, edb, table, moves, aux, om, ok, pm, pk, color, is_or, ply)
    return (numbers >> 32) == 0


@njit(cache=True, _nrt=False)
def _failed(aux, reason, ply):
    """Note where the walk failed (the first time): a reason code and the ply."""
    if aux[X_FAIL] == 0:
        aux[X_FAIL], aux[X_FAIL_PLY] = reason, ply
    return np.int64(0)


@njit(cache=True, _nrt=False)
def _next_move(geo, edb, table, aux, moves, om, ok, pm, pk, color, ply, base, n, search):
    """The OR node's next untried move to walk: without ``search``, of those the table, a leaf or a
    repetition proves, the one with the least work below it (a leaf's is 0); with it, the first
    untried one that a search on this line proves. -1 when there is none."""
    chosen, least = np.int64(-1), np.int64(1) << 62
    for i in range(base, base + n):
        if moves[i, TRIED]:
            continue
        src, captured = moves[i, M_FROM], moves[i, M_CAPTURED]
        a, b, c, d = make(geo, om, ok, pm, pk, color, src, moves[i, M_TO], captured)
        cpn, cdn = child_numbers(geo, edb, table, aux, a, b, c, d, 1 - color, 0, ply + 1,
                                 is_irreversible(geo, om, ok, src, captured))  # fmt: skip
        if search:
            if (
                cdn != 0
                and (solve_node(geo, edb, table, moves, aux, a, b, c, d, 1 - color, 0, ply + 1) >> 32) == 0
            ):
                return i
            moves[i, TRIED] = 1
            continue
        slot = table_row(table, tagged_key(aux[X_PATH + ply + 1], aux[X_GOAL], 0))
        work = table[slot, T_WORK] if slot >= 0 else np.int64(0)
        if cpn == 0 and work < least:
            chosen, least = i, work
    return chosen


@njit(cache=True, _nrt=False, inline="always")
def _enter(geo, om, ok, pm, pk, color, moves, aux, i, is_or, ply, table, edb):
    """Put the child of move row ``i`` on the line at ``ply + 1``; its relative bitboards."""
    src, captured = moves[i, M_FROM], moves[i, M_CAPTURED]
    a, b, c, d = make(geo, om, ok, pm, pk, color, src, moves[i, M_TO], captured)
    child_numbers(geo, edb, table, aux, a, b, c, d, 1 - color, 1 - is_or, ply + 1,
                  is_irreversible(geo, om, ok, src, captured))  # fmt: skip
    return a, b, c, d


@njit("int64(int64[::1], int32[::1], int64[:, ::1], int64[:, ::1], int64[::1], int64[:, ::1], int64[:, ::1],"
      " int64, int64, int64, int64, int64, int64, int64)", cache=True, _nrt=False)  # fmt: skip
def extract(geo, edb, table, moves, aux, visited, records, om, ok, pm, pk, color, is_or, ply):
    """Write the proof of the node at ``ply`` (key on the line) to ``records`` (a row an OR node: its
    key and the key after its proving move); 1 when done, 0 when it would not prove on this line (its
    rows and marks are then taken back, and the OR node above tries its next move)."""
    if ply + 1 >= MAX_PATH:
        raise ValueError("the proof's line grew past MAX_PATH plies")
    goal, key = aux[X_GOAL], aux[X_PATH + ply]
    if ply > 0 and repeats(aux, key, ply) >= 0:
        return np.int64(1) if goal == GOAL_NOT_LOSE else _failed(aux, 10, ply)
    pn, _ = leaf_numbers(geo, edb, om, ok, pm, pk, color, goal, is_or, plies_left(aux, ply))
    if pn >= 0:
        return np.int64(1) if pn == 0 else _failed(aux, 11, ply)
    row = _visit(visited, tagged_key(key, goal, is_or))
    if visited[row, 1] == V_DONE or (visited[row, 1] == V_OPEN and goal == GOAL_NOT_LOSE):
        return np.int64(1)  # an open node met again closes a cycle: an endless game, a draw
    if visited[row, 1] == V_OPEN:
        return _failed(aux, 1, ply)
    saved_records, saved_top = aux[X_RECORDS], aux[X_UNDO_TOP]
    visited[row, 1], visited[row, 2], aux[X_UNDO_TOP] = V_OPEN, saved_top, row
    base = ply * CAPACITY
    n = generate(geo, om, ok, pm, pk, color, moves, base)
    moves[base : base + n, TRIED] = 0
    done = not is_or
    for search in (False, True):
        while is_or and not done:
            i = _next_move(geo, edb, table, aux, moves, om, ok, pm, pk, color, ply, base, n, search)
            if i < 0:
                break
            moves[i, TRIED] = 1
            a, b, c, d = _enter(geo, om, ok, pm, pk, color, moves, aux, i, is_or, ply, table, edb)
            child_key = aux[X_PATH + ply + 1]
            attacker_next = np.int64(0)
            if extract(
                geo, edb, table, moves, aux, visited, records, a, b, c, d, 1 - color, attacker_next, ply + 1
            ):
                if aux[X_RECORDS] >= records.shape[0]:
                    raise ValueError("the proof's records are full: give it more rows")
                records[aux[X_RECORDS], 0], records[aux[X_RECORDS], 1] = key, child_key
                aux[X_RECORDS] += 1
                done = True
    for i in range(base, base + n if not is_or else base):
        a, b, c, d = _enter(geo, om, ok, pm, pk, color, moves, aux, i, is_or, ply, table, edb)
        attacker = np.int64(1)
        if not _proven(geo, edb, table, moves, aux, a, b, c, d, 1 - color, attacker, ply + 1) or not extract(
            geo, edb, table, moves, aux, visited, records, a, b, c, d, 1 - color, attacker, ply + 1
        ):
            done = False
            break
    if not done:
        _undo(visited, aux, saved_top)
        aux[X_RECORDS] = saved_records
        return _failed(aux, 3 if is_or else 4, ply)
    visited[row, 1] = V_DONE
    return np.int64(1)


def prove(geo, edb, table, moves, aux, visited, records, position, is_or: bool) -> bool:
    """Write the proof of the question of ``aux`` at ``position`` (see ``solve``) to ``records``
    (``aux[X_RECORDS]`` rows so far); False when the question does not hold or a node would not prove
    (the rows written are then no proof)."""
    if not solve(geo, edb, table, moves, aux, position, is_or):
        return False
    om, ok, pm, pk, color = (np.int64(x) for x in position)
    aux[X_UNDO_TOP] = -1
    aux[X_PATH] = line_key(geo, aux, om, ok, pm, pk, color, np.int64(0))
    aux[X_IRREVERSIBLE] = 0
    done = extract(
        geo, edb, table, moves, aux, visited, records, om, ok, pm, pk, color, np.int64(is_or), np.int64(0)
    )
    return bool(done)
