"""Both sides' thinking time and search depth in a match, and the equal-time mode's allowance
(``match.host.play_engine_games`` times every move into a ``MoveClock``)."""

from __future__ import annotations

import dataclasses

import numpy as np

from neurocheckers.players.registry import SearchReport
from neurocheckers.players.timed import EQUAL_TIME_SHARE


@dataclasses.dataclass
class MoveClock:
    """The thinking time of both sides of a match, keyed by side (True: A, False: B).

    A move is a turn (a multi-jump is one move, however many actions it takes). Host players (the
    engines, timed search) are timed one game at a time; our batched JAX players' time is the batched
    call's wall time shared equally among the games it moved in.
    """

    seconds: dict[bool, float] = dataclasses.field(default_factory=lambda: {True: 0.0, False: 0.0})
    moves: dict[bool, int] = dataclasses.field(default_factory=lambda: {True: 0, False: 0})
    depths: dict[bool, float] = dataclasses.field(default_factory=lambda: {True: 0.0, False: 0.0})
    """The sum of the depths of each side's searches (host players' ``SearchReport``)."""
    searches: dict[bool, int] = dataclasses.field(default_factory=lambda: {True: 0, False: 0})
    """How many searches reported a depth, by side."""

    def add(self, side: bool, seconds: float, moves: int) -> None:
        self.seconds[side] += seconds
        self.moves[side] += moves

    def add_searches(self, side: bool, reports: list[SearchReport]) -> None:
        """Count the depths of ``side``'s searches (moves with a single legal move are not searched)."""
        for report in reports:
            if report.depth > 0:
                self.depths[side] += report.depth
                self.searches[side] += 1

    def depth_per_move(self, side: bool) -> float | None:
        """Mean depth of ``side``'s searches (None when it reported none)."""
        return self.depths[side] / self.searches[side] if self.searches[side] else None

    def per_move(self, side: bool) -> float | None:
        """Mean seconds per move of ``side`` (None before its first move)."""
        return self.seconds[side] / self.moves[side] if self.moves[side] else None

    def allowance(self, side: bool) -> float | None:
        """The seconds ``side`` may spend on its next move in the equal-time mode (None before the
        opponent has moved). Its nominal share is ``EQUAL_TIME_SHARE`` of the opponent's mean time
        per move; the bank (that share for each of its moves so far and this one, less what it
        spent) is paid out or paid back ``1 / BANK_SPREAD`` a move, within ``ALLOWANCE_RANGE`` times
        the share. Spreading it keeps every move's search near the same depth: handing the whole
        bank to one move, as before, gave a few moves a second each and left others the bank's debt
        (depth 1 or 2, on 19% of the moves of a 20-game match against ``pydraughts:6``)."""
        opponent = self.per_move(not side)
        if opponent is None:
            return None
        share = EQUAL_TIME_SHARE * opponent
        bank = share * (self.moves[side] + 1) - self.seconds[side]
        low, high = ALLOWANCE_RANGE
        return float(np.clip(share + (bank - share) / BANK_SPREAD, low * share, high * share))


BANK_SPREAD = 4
"""An equal-time player's surplus or debt is spread over about this many moves."""
ALLOWANCE_RANGE = (0.25, 3.0)
"""The least and most an equal-time move may be given, as multiples of its nominal share."""
