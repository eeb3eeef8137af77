"""Perfect play on a solved board: the value of any position of ``american6`` for its mover, and
whether a move keeps it, by the proof-number search down to the endgame database (a few thousand
nodes a position once the 7-piece database is at the leaves).

Positions are valued as the solution values them: by play from the position on (a repetition of a
position of that play is a draw), without the game's history before it and without the move-count
rule. One table is kept between questions, so the positions of one game share their work.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from neurocheckers.compiled import proof
from neurocheckers.compiled.board import Position, game_rule, geometry
from neurocheckers.compiled.endgame import SearchDB
from neurocheckers.compiled.movegen import M_CAPTURED, M_FROM, M_TO, generate, make, move_buffer
from neurocheckers.endgame.database import DRAW, LOSS, VALUE_NAMES, WIN
from neurocheckers.rules.presets import Rules

__all__ = ["DRAW", "LOSS", "WIN", "Grade", "PerfectPlay"]


@dataclasses.dataclass(frozen=True)
class Grade:
    """A move judged against perfect play."""

    before: int
    """The position's value for the mover (``LOSS``, ``DRAW``, ``WIN``)."""
    after: int
    """The value the move leaves the mover."""

    @property
    def keeps(self) -> bool:
        """Whether the move keeps the position's value (a perfect move)."""
        return self.after == self.before

    def describe(self) -> str:
        if self.keeps:
            return f"keeps the {VALUE_NAMES[self.before]}"
        return f"throws away the {VALUE_NAMES[self.before]}: {VALUE_NAMES[self.after]} after it"


class PerfectPlay:
    """Values of positions by the proof search over ``db`` (a ``compiled.endgame`` database)."""

    def __init__(self, rules: Rules, db: SearchDB, table_bits: int = 22, node_limit: int = 50_000_000,
                 keep_line_results: bool = False):  # fmt: skip
        """``keep_line_results``: the search's fast mode (``proof.new_aux``), for small databases,
        whose rare wrong answers no proof checks here."""
        if rules.num_squares > proof.MAX_SQUARES:
            raise ValueError(
                f"perfect play is for boards of at most {proof.MAX_SQUARES} squares, not {rules.name}"
            )
        self.rules, self.db, self.node_limit = rules, db, node_limit
        self.keep_line_results = keep_line_results
        self.geo = geometry(game_rule(rules))
        self.table = proof.new_table(table_bits)
        self.moves = proof.move_buffer()
        self.nodes = 0
        self._cache: dict[tuple, int] = {}

    def _holds(self, position: Position, goal: int) -> bool:
        aux = proof.new_aux(goal, self.node_limit, self.keep_line_results)
        state = (*position.relative(), position.color)
        answer = proof.solve(self.geo, self.db.array, self.table, self.moves, aux, state, True)
        self.nodes += int(aux[proof.X_NODES])
        if answer is None:
            raise RuntimeError(f"no answer within {self.node_limit:,} nodes for {position}")
        return answer

    def value(self, position: Position) -> int:
        """``WIN``, ``DRAW`` or ``LOSS`` for the side to move."""
        cached = self._cache.get(dataclasses.astuple(position))
        if cached is not None:
            return cached
        if self._holds(position, proof.GOAL_WIN):
            value = WIN
        elif self._holds(position, proof.GOAL_NOT_LOSE):
            value = DRAW
        else:
            value = LOSS
        self._cache[dataclasses.astuple(position)] = value
        return value

    def successors(self, position: Position) -> list[Position]:
        """The positions after each whole-turn move (the compiled generator's order)."""
        buffer = move_buffer(1)
        om, ok, pm, pk = position.relative()
        color = np.int64(position.color)
        out = []
        for i in range(generate(self.geo, om, ok, pm, pk, color, buffer, 0)):
            a, b, c, d = make(
                self.geo, om, ok, pm, pk, color, buffer[i, M_FROM], buffer[i, M_TO], buffer[i, M_CAPTURED]
            )
            black, white = ((c, d), (a, b)) if position.color == 0 else ((a, b), (c, d))
            out.append(
                Position(int(black[0]), int(black[1]), int(white[0]), int(white[1]), 1 - position.color)
            )
        return out

    def value_after(self, after: Position) -> int:
        """The value for the side that moved into ``after``."""
        return 2 - self.value(after)

    def grade(self, before: Position, after: Position) -> Grade:
        """Whether the move from ``before`` to ``after`` keeps ``before``'s value for its mover."""
        return Grade(self.value(before), self.value_after(after))

    def best_successors(self, position: Position) -> list[Position]:
        """The positions after the moves that keep the value."""
        target = self.value(position)
        return [p for p in self.successors(position) if self.value_after(p) == target]
