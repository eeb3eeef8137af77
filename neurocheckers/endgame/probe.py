"""Answers for single positions: the value for the side to move, its distance and the best moves."""

from __future__ import annotations

import dataclasses

import numpy as np

from neurocheckers.endgame.database import DRAW, LOSS, OUTSIDE, VALUE_NAMES, WIN, EndgameDB, EndgameError
from neurocheckers.endgame.index import Slice, to_mover_view


@dataclasses.dataclass(frozen=True)
class Answer:
    """A probed position: ``value`` (``LOSS``/``DRAW``/``WIN`` for the side to move), ``distance``
    (whole moves to the end under perfect play; 0 for a draw) and the moves that keep the value."""

    value: int
    distance: int
    best_moves: tuple[str, ...]

    def line(self) -> str:
        """``win 7 11-15 12-16``: value, distance, best moves (``-`` when there is none)."""
        return f"{VALUE_NAMES[self.value]} {self.distance} {' '.join(self.best_moves) or '-'}"


def state_view(state) -> np.ndarray:
    """[1, 4] mover-view bitboards of one engine ``State`` (its counters are ignored)."""
    boards = np.array(
        [[int(state.black_men), int(state.black_kings), int(state.white_men), int(state.white_kings)]],
        dtype=np.uint32,
    )
    return to_mover_view(boards, np.array([int(state.color) == 0]), state.num_squares)


def value_of_state(db: EndgameDB, state) -> tuple[int, int]:
    """(value, distance) of an engine ``State`` at a turn boundary, ``(OUTSIDE, 0)`` outside ``db``."""
    values, distances = db.lookup(state_view(state))
    return int(values[0]), int(distances[0])


def best_moves(db: EndgameDB, state) -> tuple[str, ...]:
    """The whole moves of ``state`` that keep its value (the fastest win, the slowest loss)."""
    from neurocheckers.rules.notation import apply_move, legal_moves

    moves = legal_moves(db.rules, state)
    if not moves:
        return ()
    outcomes = [value_of_state(db, apply_move(db.rules, state, m)) for m in moves]
    if any(v == OUTSIDE for v, _ in outcomes):
        raise EndgameError("a move leads outside the database")
    # The mover's view of each move: the opponent's loss in d is our win in d + 1.
    scores = [(-1, d) if v == LOSS else (0, 0) if v == DRAW else (1, -d) for v, d in outcomes]
    best = min(scores)
    return tuple(m.notation for m, s in zip(moves, scores, strict=True) if s == best)


def probe_fen(db: EndgameDB, fen: str) -> Answer:
    """The database's answer for a FEN; ``EndgameError`` (one line) for a bad FEN or a position the
    database does not hold."""
    from neurocheckers.rules.notation import parse_fen

    try:
        state = parse_fen(db.rules, fen)
    except ValueError as e:
        raise EndgameError(f"bad FEN {fen!r}: {e}") from None
    view = state_view(state)[0]
    counts = Slice(*(int(bin(int(b)).count("1")) for b in view))
    if counts.opp_men + counts.opp_kings == 0 and counts.men + counts.kings > 0:
        raise EndgameError(f"{fen!r}: the side not to move has no pieces, so the game is already over")
    value, distance = value_of_state(db, state)
    if value == OUTSIDE:
        held = db.manifest.get("max_pieces", max((s.pieces for s in db.slices), default=0))
        reason = (
            f"it has {counts.pieces} pieces and the database holds at most {held}"
            if counts.pieces > held
            else f"the database lacks its slice {counts.name}"
        )
        raise EndgameError(f"{fen!r} is outside the database: {reason}")
    return Answer(value, distance, best_moves(db, state) if value in (WIN, DRAW, LOSS) else ())
