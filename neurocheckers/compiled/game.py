"""One game played by whole turns under a ``SearchRules``: the counters and history the compiled
search needs (actions played, the quiet counter, the positions since the last irreversible move)
and the game's end by its rules, repetition included (a draw on the third occurrence)."""

from __future__ import annotations

import collections
import dataclasses

import numpy as np

from neurocheckers.compiled.board import Position, SearchRules, geometry
from neurocheckers.compiled.movegen import CAPACITY, MOVE_FIELDS, generate, make
from neurocheckers.rules.repetition import REPETITIONS


def legal_rows(geo: np.ndarray, position: Position) -> np.ndarray:
    """[n, 4] int64: source, destination, captured, path of each whole-turn move."""
    buf = np.zeros((CAPACITY, MOVE_FIELDS), np.int64)
    n = generate(geo, *position.relative(), np.int64(position.color), buf, np.int64(0))
    return buf[:n, :4].copy()


def after(geo: np.ndarray, position: Position, row) -> Position:
    """The position after the whole-turn move ``row`` (source, destination, captured, ...)."""
    a, b, c, d = (int(x) for x in make(geo, *position.relative(), np.int64(position.color),
                                       np.int64(row[0]), np.int64(row[1]), np.int64(row[2])))  # fmt: skip
    return Position(c, d, a, b, 1) if position.color == 0 else Position(a, b, c, d, 0)


@dataclasses.dataclass
class Game:
    """A game from ``position``: ``play`` a whole-turn move, read ``result`` (None while it goes on)."""

    search_rules: SearchRules
    """The rules the game is played and judged by."""
    position: Position
    """The position now, the mover's turn starting."""
    ply: int = 0
    """Actions played (each jump one, as ``State.ply``)."""
    quiet: int = 0
    """Plies since the last capture (or man's move, with ``man_moves_reset``)."""
    history: list[Position] = dataclasses.field(default_factory=list)
    """The positions since the last capture or man's move, before the current one."""
    result: int | None = None
    """+1 Black won, -1 White won, 0 drawn; None while the game goes on."""
    reason: str = ""
    """Why the game ended ("" while it goes on)."""
    seen: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    """How often each position occurred since the last capture or man's move (repetitions)."""

    def __post_init__(self) -> None:
        self.geo = geometry(self.search_rules)
        self.seen[self.position] += 1
        self._conclude()

    def legal(self) -> np.ndarray:
        return legal_rows(self.geo, self.position)

    def play(self, row) -> None:
        """Play the whole-turn move ``row`` (one of ``legal()``'s rows)."""
        if self.result is not None:
            raise ValueError(f"the game is over ({self.reason})")
        pos = self.position
        own_men = pos.black_men if pos.color == 0 else pos.white_men
        captured = int(row[2])
        man = (own_men >> int(row[0])) & 1
        self.ply += max(1, bin(captured).count("1"))
        irreversible = bool(captured or man)
        resets = captured or (man and self.search_rules.man_moves_reset)
        self.quiet = 0 if resets else self.quiet + 1
        self.history = [] if irreversible else [*self.history, pos]
        if irreversible:
            self.seen.clear()
        self.position = after(self.geo, pos, row)
        self.seen[self.position] += 1
        self._conclude()

    def _conclude(self) -> None:
        """Set ``result`` when the game is over (the JAX engine's order, then repetition)."""
        sr, rules = self.search_rules, self.search_rules.rules
        limit = rules.max_plies_without_capture if sr.quiet_limit is None else sr.quiet_limit
        pos = self.position
        mover_sign = 1 if pos.color == 0 else -1
        own = (pos.black_men | pos.black_kings) if pos.color == 0 else (pos.white_men | pos.white_kings)
        stuck = len(self.legal()) == 0
        if limit and self.quiet >= limit:
            self.result, self.reason = 0, f"{limit} plies without a reset of the quiet counter"
        elif stuck and (rules.stuck_loses or own == 0):
            self.result, self.reason = -mover_sign, "no legal move"
        elif stuck:
            self.result, self.reason = 0, "no legal move (a draw under these rules)"
        elif rules.max_plies and self.ply >= rules.max_plies:
            self.result, self.reason = 0, f"{rules.max_plies} plies played"
        elif sr.repetition and self.seen[pos] >= REPETITIONS:
            self.result, self.reason = 0, "threefold repetition"
