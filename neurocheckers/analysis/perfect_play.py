"""Move accuracy against perfect play on a solved board (``american6``): every whole move of a played
game, in every position (not only the endgame database's), judged by ``solve.oracle.PerfectPlay``:
did it keep the value of the position for its mover, or throw it away (a win to a draw or a loss, a
draw to a loss)?

Values are the solution's: by play from the position on, without the game's history and without the
move-count draw rule (``solve.oracle``). A move whose position the proof search cannot settle within
``NODE_LIMIT`` nodes is counted as ``unsolved``, not graded (none with the 7-piece database in the
games measured; many with a small database and positions far from it).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from neurocheckers.compiled.board import Position
from neurocheckers.endgame.accuracy import whole_moves
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State
from neurocheckers.solve.oracle import DRAW, LOSS, WIN, PerfectPlay
from neurocheckers.stats import wilson_interval

NODE_LIMIT = 50_000_000
"""Proof nodes a question may take before its move counts as unsolved."""


@dataclasses.dataclass(frozen=True)
class PerfectAccuracy:
    """One side's moves judged against perfect play."""

    graded: int = 0
    """Moves whose position's value was found (the positions graded)."""
    kept: int = 0
    """Of those, the moves that kept the value."""
    win_to_draw: int = 0
    """Moves from a won position to a drawn one."""
    win_to_loss: int = 0
    """Moves from a won position to a lost one."""
    draw_to_loss: int = 0
    """Moves from a drawn position to a lost one."""
    unsolved: int = 0
    """Moves not graded: the proof search found no value within its node limit."""

    @property
    def thrown(self) -> int:
        """Moves that threw the value away (``graded - kept``)."""
        return self.win_to_draw + self.win_to_loss + self.draw_to_loss

    def __add__(self, other: PerfectAccuracy) -> PerfectAccuracy:
        pairs = zip(dataclasses.astuple(self), dataclasses.astuple(other), strict=True)
        return PerfectAccuracy(*(a + b for a, b in pairs))

    def rate(self) -> tuple[float, float, float] | None:
        """The share of graded moves that kept the value with its 95% Wilson interval; None without
        graded moves."""
        return wilson_interval(self.kept, self.graded) if self.graded else None

    def text(self) -> str:
        """``0.953 (0.931..0.968) of 412 (w>d 3, w>l 1, d>l 15)``, or ``-`` without graded moves; the
        unsolved moves are named when there are any."""
        rate = self.rate()
        if rate is None:
            shown = "-"
        else:
            shown = (
                f"{rate[0]:.3f} ({rate[1]:.3f}..{rate[2]:.3f}) of {self.graded}"
                f" (w>d {self.win_to_draw}, w>l {self.win_to_loss}, d>l {self.draw_to_loss})"
            )
        return shown + (f", {self.unsolved} unsolved" if self.unsolved else "")


ROW_FIELDS = {
    "graded": "perfect_graded",
    "kept": "perfect_kept",
    "win_to_draw": "win_to_draw",
    "win_to_loss": "win_to_loss",
    "draw_to_loss": "draw_to_loss",
    "unsolved": "perfect_unsolved",
}
"""``PerfectAccuracy``'s fields and the gauntlet ``Row`` fields that hold them, after ``player_`` or
``opponent_``."""


def row_fields(side: str, accuracy: PerfectAccuracy) -> dict[str, int]:
    """``{"player_perfect_graded": ..., ...}``: ``accuracy`` as ``side``'s (``player`` or ``opponent``)
    fields of a gauntlet row."""
    return {f"{side}_{column}": getattr(accuracy, name) for name, column in ROW_FIELDS.items()}


def from_row(row: object, side: str) -> PerfectAccuracy | None:
    """``side``'s accuracy held by a gauntlet row, or None when it was not measured."""
    values = {name: getattr(row, f"{side}_{column}", None) for name, column in ROW_FIELDS.items()}
    if any(v is None for v in values.values()):
        return None
    return PerfectAccuracy(**values)


@functools.cache
def _loaded(folder: str, rules: Rules, node_limit: int) -> PerfectPlay:
    from neurocheckers.compiled.endgame import load

    return PerfectPlay(rules, load(folder, rules), node_limit=node_limit)


def load_oracle(folder: str | Path, rules: Rules) -> PerfectPlay:
    """Perfect play under ``rules`` over the endgame database in ``folder`` (one per folder and rules
    in a process, so its table is shared by every question); ``ValueError`` (one line) for rules other
    than ``american6``, a folder without a database, or a database of other rules."""
    if rules.name != "american6":
        raise ValueError(f"perfect play is for american6, the solved board, not {rules.name}")
    return _loaded(str(Path(folder).resolve()), rules, NODE_LIMIT)


def grade_move(oracle: PerfectPlay, before: Position, after: Position) -> PerfectAccuracy:
    """One move from ``before`` to ``after`` (a position at the start of the next turn) judged."""
    try:
        grade = oracle.grade(before, after)
    except RuntimeError:  # no answer within the node limit
        return PerfectAccuracy(unsolved=1)
    return PerfectAccuracy(
        graded=1,
        kept=int(grade.keeps),
        win_to_draw=int(grade.before == WIN and grade.after == DRAW),
        win_to_loss=int(grade.before == WIN and grade.after == LOSS),
        draw_to_loss=int(grade.before == DRAW and grade.after == LOSS),
    )


def grade_games(
    oracle: PerfectPlay, games: Sequence[Sequence[Position]], a_is_black: Sequence[bool]
) -> tuple[PerfectAccuracy, PerfectAccuracy]:
    """(player A's, player B's) accuracy over games given as their positions at each turn's start, in
    order (each one after the one before it by a whole move of its mover), A having Black in game
    ``g`` where ``a_is_black[g]``."""
    sides = [PerfectAccuracy(), PerfectAccuracy()]
    for positions, black in zip(games, a_is_black, strict=True):
        for before, after in zip(positions, positions[1:], strict=False):
            by_a = (before.color == BLACK) == bool(black)
            sides[0 if by_a else 1] += grade_move(oracle, before, after)
    return sides[0], sides[1]


def perfect_accuracy(
    oracle: PerfectPlay, starts: State, actions: np.ndarray, a_is_black: np.ndarray
) -> tuple[PerfectAccuracy, PerfectAccuracy]:
    """(player A's, player B's) accuracy over games given by their start states ([N] ``State``) and
    actions ([N, L], -1 after the end), as the matches record them, A having Black where
    ``a_is_black`` ([N] bool)."""
    moves = whole_moves(oracle.rules, starts, actions)
    a_is_black = np.asarray(a_is_black)
    sides = [PerfectAccuracy(), PerfectAccuracy()]
    for game, before, after, color in zip(moves.game, moves.before, moves.after, moves.color, strict=True):
        start = Position(*(int(x) for x in before), int(color))
        end = Position(*(int(x) for x in after), 1 - int(color))  # a whole move passes the turn
        by_a = (int(color) == BLACK) == bool(a_is_black[game])
        sides[0 if by_a else 1] += grade_move(oracle, start, end)
    return sides[0], sides[1]
