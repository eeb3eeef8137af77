"""One game a person plays against a player, a ply at a time: the game session that ``play`` (the
terminal) and the web's Play page (``web.session.GameSession``) share.

A ``GameLine`` keeps every ply played (the positions before and after it, the action, its squares,
who played it), so the position, the move list, undo and the game's end all come from one history.
Every position the game reaches goes through the rules' end rules as games played one at a time see
them: the threefold repetition of ``rules.repetition`` where the rules have it (``american8``),
checked again from the history after an undo.
"""

from __future__ import annotations

import dataclasses

from neurocheckers.rules.notation import Move, action_squares, apply_move
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.repetition import REASON, RepetitionWatch
from neurocheckers.rules.state import State


@dataclasses.dataclass(frozen=True)
class Ply:
    """One action played: the positions before and after it, the action, its squares and who
    played it."""

    before: State
    after: State
    action: int
    src: int
    dst: int
    capture: bool
    by_human: bool
    repetition: bool = False
    """Whether this ply's position ended the game by a threefold repetition."""


@dataclasses.dataclass(frozen=True)
class Turn:
    """A whole turn (a multi-jump is one): the position before it, the move, who played it."""

    before: State
    move: Move
    by_human: bool


@dataclasses.dataclass
class GameLine:
    """A game's start and the plies played since."""

    rules: Rules
    """The rules the game is played and judged by."""
    start: State
    """The position the game started from (one game's host ``State``)."""
    plies: list[Ply] = dataclasses.field(default_factory=list)
    """Every ply played, in order."""

    @property
    def state(self) -> State:
        """The position now."""
        return self.plies[-1].after if self.plies else self.start

    def play_ply(self, action: int, by_human: bool) -> Ply:
        """Play the legal ``action`` (one ply), by the person or by the opponent; the position it
        reaches is ended drawn on its third occurrence when the rules say so."""
        state = self.state
        src, dst, capture = action_squares(self.rules, state, action)
        after = apply_move(self.rules, state, Move((action,), (src, dst), capture))
        watch = self._watched()
        after = watch.observe(after)
        ply = Ply(state, after, action, src, dst, capture, by_human, bool(watch.drawn))
        self.plies.append(ply)
        return ply

    def play_move(self, move: Move, by_human: bool) -> None:
        """Play every action of a whole turn."""
        for action in move.actions:
            self.play_ply(action, by_human)

    def _watched(self) -> RepetitionWatch:
        """A repetition watch that has seen the game so far (rebuilt from the history, so that an
        undo or a new start is always seen right)."""
        watch = RepetitionWatch(self.rules)
        for state in [self.start, *(p.after for p in self.plies)]:
            watch.observe(state)
        return watch

    def repetition_reason(self) -> str | None:
        """``rules.repetition.REASON`` when the game ended by a threefold repetition, else None."""
        return REASON if self.plies and self.plies[-1].repetition else None

    def turns(self) -> list[Turn]:
        """The whole turns played, in order (the last may be a multi-jump still going on)."""
        turns: list[Turn] = []
        start = 0
        for i in range(len(self.plies)):
            if i + 1 == len(self.plies) or not int(self.plies[i + 1].before.continuing):
                played = self.plies[start : i + 1]
                path = (played[0].src, *(p.dst for p in played))
                move = Move(tuple(p.action for p in played), path, any(p.capture for p in played))
                turns.append(Turn(played[0].before, move, played[0].by_human))
                start = i + 1
        return turns

    def undo_person(self) -> list[Ply]:
        """Take back the person's last move (or the jumps of one unfinished) and everything after it
        (the opponent's reply); returns the plies taken back. ``ValueError`` when the person has not
        moved yet."""
        starts = [i for i, p in enumerate(self.plies) if p.by_human and not int(p.before.continuing)]
        if not starts:
            raise ValueError("nothing to undo: you have not moved yet")
        taken = self.plies[starts[-1] :]
        del self.plies[starts[-1] :]
        return taken
