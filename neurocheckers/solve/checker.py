"""The independent check of a solution: every move replayed with the JAX rules
(``endgame.moves.successors``, not the compiled search's move generator) and every leaf probed in
the endgame database's files (``EndgameDB.lookup``, not the compiled probe).

A table of goal G is accepted when each of its rows holds:
- the recorded move is legal in the node's position (the position after it is one of its successors);
- every reply of the opponent there leads to a good leaf or to another node of the table: a leaf is
  a position without a move (its mover loses) or one the database holds, good when its value gives
  the table's side G (a win for ``win``; a win or a draw for ``not_lose``);
- for ``win``, no line of play through the table comes back to a node (the graph is acyclic), so
  every game ends in a good leaf. In ``not_lose`` a cycle is a repetition: a draw, which it allows.
A claim is accepted when its position's value follows from the tables and the database in one move.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import numpy as np

from neurocheckers.endgame.database import DRAW, LOSS, OUTSIDE, WIN, EndgameDB
from neurocheckers.endgame.moves import successors
from neurocheckers.rules.presets import Rules, get_rules
from neurocheckers.solve import keys
from neurocheckers.solve.proof_file import Solution

GOOD_LEAF = {"win": (WIN,), "not_lose": (WIN, DRAW)}
"""A leaf's values, for its mover, that meet each table's goal."""


class ProofError(ValueError):
    """A solution that does not hold, naming the first bad position (one line)."""


@dataclasses.dataclass(frozen=True)
class CheckReport:
    """What a check looked at."""

    records: dict[str, int]
    """Rows of each table."""
    replies: dict[str, int]
    """Positions after a proving move (the opponent to move), per table."""
    leaves: dict[str, int]
    """Database positions and positions without a move reached, per table."""
    claims: tuple[str, ...]
    """``label: value`` of each claim."""
    seconds: float


def _moves(rules: Rules, keys_: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(parent row, successor key) of every whole-turn move of the positions of ``keys_``."""
    parents, after = successors(rules, keys.decode(keys_, rules.num_squares))
    return parents, keys.encode(after, rules.num_squares)


def _values(db: EndgameDB, keys_: np.ndarray) -> np.ndarray:
    """Database values for the mover of each key (``OUTSIDE`` where it does not hold one)."""
    return db.lookup(keys.decode(keys_, db.rules.num_squares))[0].astype(np.int64)


def _member(sorted_nodes: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    at = np.minimum(np.searchsorted(sorted_nodes, wanted), max(len(sorted_nodes) - 1, 0))
    return (sorted_nodes[at] == wanted) if len(sorted_nodes) else np.zeros(len(wanted), bool)


def _fail(name: str, what: str, key: int, rules: Rules) -> ProofError:
    board = keys.decode(np.array([key]), rules.num_squares)[0]
    return ProofError(f"{name} table: {what} at position {key} (mover-view bitboards {board.tolist()})")


def _check_moves_legal(name, rules, nodes, after) -> None:
    parents, children = _moves(rules, nodes)
    found = np.zeros(len(nodes), bool)
    found[parents[children == after[parents]]] = True
    if not found.all():
        raise _fail(name, "the recorded move is not legal", int(nodes[np.flatnonzero(~found)[0]]), rules)


def _check_replies(name, rules, db, nodes, after) -> tuple[int, int, np.ndarray, np.ndarray]:
    """Check the opponent's replies; return (replies, leaves, edge source row, edge target row)."""
    good = GOOD_LEAF[name]
    replies, back = np.unique(after, return_inverse=True)
    reply_values = _values(db, replies)  # for the opponent, who moves there
    in_db = reply_values != OUTSIDE
    bad = in_db & np.isin(2 - reply_values, good, invert=True)
    if bad.any():
        raise _fail(name, "a database position after the proving move does not keep the goal",
                    int(replies[np.flatnonzero(bad)[0]]), rules)  # fmt: skip
    open_rows = np.flatnonzero(~in_db)
    parents, children = _moves(rules, replies[open_rows])
    stuck = len(open_rows) - len(np.unique(parents))  # the opponent has no move: it loses
    child_values = _values(db, children)
    leaf = child_values != OUTSIDE
    losing = leaf & np.isin(child_values, good, invert=True)
    if losing.any():
        raise _fail(name, "a reply leads to a database position that loses the goal",
                    int(children[np.flatnonzero(losing)[0]]), rules)  # fmt: skip
    known = _member(nodes, children)
    missing = ~leaf & ~known
    if missing.any():
        raise _fail(name, "a reply leads to a position that is neither a leaf nor in the table",
                    int(children[np.flatnonzero(missing)[0]]), rules)  # fmt: skip
    # edges node -> node through a reply, for the cycle check: every row whose move leads to the reply
    reply_row = open_rows[parents[known & ~leaf]]
    target = np.searchsorted(nodes, children[known & ~leaf])
    order = np.argsort(back, kind="stable")
    starts = np.searchsorted(back[order], np.arange(len(replies) + 1))
    picked, counts = _ranges(starts, reply_row)
    sources, targets = order[picked], np.repeat(target, counts)
    leaves = int(in_db.sum() + stuck + leaf.sum())
    return len(replies), leaves, sources, targets


def _ranges(starts: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The indices ``starts[r]..starts[r + 1]`` of each row ``r`` of ``rows``, joined, and their counts."""
    counts = starts[rows + 1] - starts[rows]
    first = np.repeat(starts[rows] - np.cumsum(counts) + counts, counts)
    return first + np.arange(counts.sum()), counts


def check_acyclic(name, rules, nodes, sources, targets) -> None:
    """Peel nodes whose every successor node is peeled; a node left over lies on a cycle."""
    out_degree = np.bincount(sources, minlength=len(nodes))
    peeled = np.zeros(len(nodes), bool)
    order = np.argsort(targets, kind="stable")
    starts = np.searchsorted(targets[order], np.arange(len(nodes) + 1))
    ready = np.flatnonzero(out_degree == 0)
    while len(ready):
        peeled[ready] = True
        edges = order[_ranges(starts, ready)[0]]
        np.subtract.at(out_degree, sources[edges], 1)
        touched = np.unique(sources[edges])
        ready = touched[(out_degree[touched] == 0) & ~peeled[touched]]
    if not peeled.all():
        raise _fail(name, "a line of play returns to this position (a cycle in a win)",
                    int(nodes[np.flatnonzero(~peeled)[0]]), rules)  # fmt: skip


def _check_claims(solution: Solution, rules: Rules, db: EndgameDB) -> tuple[str, ...]:
    """Each claim's value from the tables and the database, one move deep."""
    win_nodes = np.sort(solution.tables["win"][0])
    safe_nodes = np.sort(solution.tables["not_lose"][0])
    claim_keys = np.array([c.key for c in solution.claims], np.int64)
    parents, children = _moves(rules, claim_keys)
    child_values = _values(db, children)
    child_wins = _member(win_nodes, children) | (child_values == WIN)
    child_safe = child_wins | _member(safe_nodes, children) | (child_values == DRAW)
    own_values = _values(db, claim_keys)
    lines = []
    for row, claim in enumerate(solution.claims):
        mine = parents == row
        if claim.value == WIN:
            holds = bool(_member(win_nodes, claim_keys[row : row + 1])[0]) or own_values[row] == WIN
        elif claim.value == DRAW:
            own_safe = bool(_member(safe_nodes, claim_keys[row : row + 1])[0]) or own_values[row] == DRAW
            holds = own_safe and mine.any() and bool(child_safe[mine].all())
        else:
            holds = bool(child_wins[mine].all()) or own_values[row] == LOSS
        if not holds:
            raise ProofError(
                f"claim {claim.label!r} ({claim.value_name} for the side to move) does not follow"
            )
        lines.append(f"{claim.label}: {claim.value_name}")
    return tuple(lines)


def check_solution(solution: Solution, db: EndgameDB, progress: Callable[[str], None] = print) -> CheckReport:
    """Check every table and claim of ``solution`` against ``db``; ``ProofError`` at the first fault."""
    began = time.perf_counter()
    rules = get_rules(solution.rules)
    if db.rules != rules:
        raise ProofError(f"the database is of {db.rules.name}, the solution of {solution.rules}")
    records, replies, leaves = {}, {}, {}
    for name in ("win", "not_lose"):
        nodes, after = solution.tables[name]
        order = np.argsort(nodes, kind="stable")
        nodes, after = nodes[order], after[order]
        if len(nodes) and (np.diff(nodes) == 0).any():
            raise ProofError(f"{name} table: a position has two rows")
        progress(f"{name}: {len(nodes):,} positions: replaying the recorded moves")
        _check_moves_legal(name, rules, nodes, after)
        progress(f"{name}: replaying every reply and probing the leaves")
        replies[name], leaves[name], sources, targets = _check_replies(name, rules, db, nodes, after)
        if name == "win":
            progress("win: checking that no line of play returns")
            check_acyclic(name, rules, nodes, sources, targets)
        records[name] = len(nodes)
    progress("claims: one move deep from the tables")
    claims = _check_claims(solution, rules, db)
    return CheckReport(records, replies, leaves, claims, time.perf_counter() - began)
