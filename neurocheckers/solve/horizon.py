"""The value of a position when the game must end within a number of plies: the study's ``simple6``,
whose 60-ply cap makes the ply count part of the position, solved for growing caps to measure the
cost of the whole game (``scripts/simple6_projection.py``).

No endgame database serves here (a database ignores the cap), so every line ends by a capture of
the last piece, a side without a move (a draw in ``simple6``) or the cap (a draw).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from neurocheckers.compiled import endgame, proof
from neurocheckers.compiled.board import Position, SearchRules, geometry
from neurocheckers.endgame.database import DRAW, LOSS, WIN
from neurocheckers.rules.presets import Rules


@dataclasses.dataclass(frozen=True)
class CappedValue:
    """A position's value for its mover with ``plies`` left, and what it cost."""

    plies: int
    value: int | None
    """``WIN``, ``DRAW`` or ``LOSS`` for the side to move; None when the node limit came first."""
    nodes: int
    seconds: float


def capped_value(rules: Rules, position: Position, plies: int, table_bits: int = 22,
                 node_limit: int = 0) -> CappedValue:  # fmt: skip
    """The value of ``position`` for its mover when the game ends in a draw after ``plies`` more plies."""
    if not 1 <= plies <= 63:
        raise ValueError(f"plies must be in 1..63, got {plies}")
    geo = geometry(SearchRules(rules))
    table, moves = proof.new_table(table_bits), proof.move_buffer()
    state = (*position.relative(), position.color)
    nodes, began, value = 0, time.perf_counter(), None
    for goal, attacker_moves, outcome in ((proof.GOAL_WIN, True, WIN), (proof.GOAL_WIN, False, LOSS)):
        aux = proof.new_aux(goal, max(node_limit - nodes, 0) if node_limit else 0)
        aux[proof.X_PLY_CAP] = plies
        holds = proof.solve(geo, endgame.NONE, table, moves, aux, state, attacker_moves)
        nodes += int(aux[proof.X_NODES])
        if holds is None:
            return CappedValue(plies, None, nodes, time.perf_counter() - began)
        if holds:
            value = outcome
            break
    return CappedValue(plies, DRAW if value is None else value, nodes, time.perf_counter() - began)


def growth_fit(points: list[CappedValue], target: int) -> tuple[float, float]:
    """(nodes a ply multiplies by, projected nodes at ``target`` plies) from a least-squares line
    through log(nodes) over the caps measured (the largest half of them, where growth has settled)."""
    usable = [p for p in points if p.value is not None and p.nodes > 0]
    usable = usable[len(usable) // 2 :]
    x = np.array([p.plies for p in usable], float)
    y = np.log(np.array([p.nodes for p in usable], float))
    slope, intercept = np.polyfit(x, y, 1)
    return float(np.exp(slope)), float(np.exp(intercept + slope * target))
