"""The threefold-repetition draw, for games played one at a time on the host.

The batched JAX step cannot see a repetition (it would need each game's history); its games end by
the quiet counter alone (80 plies under ``american8``). Where games are played one at a time (host
match loops, the web board, ``play``), a :class:`RepetitionWatch` adds the game's full rule: call
``observe`` with every state a game reaches, and the third occurrence of a position ends it drawn.
``compiled.game.Game`` applies the same rule to games played by whole turns.
"""

from __future__ import annotations

import collections

import numpy as np

from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import State

REPETITIONS = 3
"""Occurrences of one position (same pieces, same side to move) that draw the game."""

REASON = "draw: threefold repetition"
"""Why a game ended by ``RepetitionWatch``, in words."""

_BOARDS = ("black_men", "black_kings", "white_men", "white_kings", "color")


def _irreversible(before: tuple[int, ...], after: tuple[int, ...]) -> bool:
    """Whether a turn from ``before`` to ``after`` (bitboards and mover) moved a man or captured:
    after either, no earlier position can occur again."""
    men_moved = (before[0], before[2]) != (after[0], after[2])
    kings = [bin(x[1]).count("1") + bin(x[3]).count("1") for x in (before, after)]
    return men_moved or kings[0] != kings[1]


class RepetitionWatch:
    """The positions of one game, or of each game of a batch (by index), since its last capture or
    man's move, counted at the start of each turn."""

    def __init__(self, rules: Rules):
        self.rules = rules
        self._seen: dict[int, collections.Counter] = collections.defaultdict(collections.Counter)
        self._last: dict[int, tuple[int, ...]] = {}
        self.drawn: set[int] = set()
        """The games (flat batch indices; 0 for one game) that ``observe`` ended by repetition."""

    def observe(self, state: State) -> State:
        """``state`` (one game or a batch of any leading shape) after its latest ply, with each game
        whose position now occurs for the third time ended as a draw (``terminated``, ``result`` 0,
        no legal move). Call it with every state a game reaches, the first included; states in the
        middle of a multi-jump and ended games are skipped. Unchanged when the rules have no
        repetition draw (``Rules.threefold_repetition``)."""
        if not self.rules.threefold_repetition:
            return state
        boards = [np.asarray(getattr(state, name)).reshape(-1) for name in _BOARDS]
        going = ~np.asarray(state.terminated).reshape(-1) & (np.asarray(state.continuing).reshape(-1) == 0)
        ends = np.zeros(going.shape, bool)
        for i in np.flatnonzero(going):
            key = tuple(int(b[i]) for b in boards)
            if i not in self._last or _irreversible(self._last[i], key):
                self._seen[i].clear()
            self._last[i] = key
            self._seen[i][key] += 1
            ends[i] = self._seen[i][key] >= REPETITIONS
        if not ends.any():
            return state
        self.drawn.update(int(i) for i in np.flatnonzero(ends))
        shape = np.shape(state.terminated)
        ends = ends.reshape(shape)
        legal = np.asarray(state.legal_bits)
        return state.replace(
            terminated=np.asarray(state.terminated) | ends,
            result=np.where(ends, 0, np.asarray(state.result)).astype(np.int32),
            legal_bits=np.where(ends[..., None], 0, legal).astype(legal.dtype),
        )

    def reason(self, game: int = 0) -> str | None:
        """``REASON`` when ``observe`` ended game ``game`` (flat batch index), else None."""
        return REASON if game in self.drawn else None
