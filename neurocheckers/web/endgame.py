"""Endgame databases on the Play page: each opened once when the server starts (one per rules
preset), then asked about the position at every turn boundary of a game.

``endgame_view`` gives the database's value of a position from the side to move's view and from the
person's, the distance in moves (each side's turn counts one) and the best moves, with a line of
text for the page; None outside the database. Databases score positions by their pieces alone:
the no-capture and ply limits of a game are not in them.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from neurocheckers.endgame.database import DRAW, LOSS, OUTSIDE, VALUE_NAMES, WIN, EndgameDB, EndgameError
from neurocheckers.endgame.probe import best_moves, value_of_state
from neurocheckers.rules.state import State
from neurocheckers.web.board import side_name
from neurocheckers.web.folder import LOG

MOVES_SHOWN = 4
"""The most best moves the line of text names (the view lists them all)."""


def open_databases(folders: Iterable[str | Path]) -> dict[str, EndgameDB]:
    """The databases in ``folders`` by rules name; ``EndgameError`` (one line) for a folder without a
    database, one without any slice, or a second database of the same rules."""
    databases: dict[str, EndgameDB] = {}
    for folder in folders:
        db = EndgameDB(folder)
        if not db.slices:
            raise EndgameError(f"{folder} holds an endgame database with no slice solved yet")
        if db.rules.name in databases:
            raise EndgameError(f"{folder}: a second endgame database for {db.rules.name} (give one a rules)")
        databases[db.rules.name] = db
    return databases


def database_info(databases: dict[str, EndgameDB]) -> dict[str, dict[str, int]]:
    """Per rules with a database: the most pieces it holds and its slice count (no paths)."""
    return {
        name: {
            "max_pieces": int(db.manifest.get("max_pieces", max(s.pieces for s in db.slices))),
            "slices": len(db.slices),
        }
        for name, db in databases.items()
    }


def _moves_text(moves: list[str]) -> str:
    shown = ", ".join(moves[:MOVES_SHOWN])
    return shown + (", ..." if len(moves) > MOVES_SHOWN else "")


def endgame_text(value: int, mover: int, human: int, distance: int, moves: list[str]) -> str:
    """``Endgame database: White (you) wins in 7 moves (best for White: 11-15)`` or ``Endgame
    database: drawn with best play (...)``: ``value`` is for ``mover``, the side to move."""
    if value == DRAW:
        text = "Endgame database: drawn with best play"
    else:
        winner = mover if value == WIN else 1 - mover
        who = "you" if winner == human else "the opponent"
        unit = "move" if distance == 1 else "moves"
        text = f"Endgame database: {side_name(winner)} ({who}) wins in {distance} {unit}"
    if moves:
        text += f" (best for {side_name(mover)}: {_moves_text(moves)})"
    return text


def endgame_view(db: EndgameDB | None, state: State, human: int) -> dict[str, Any] | None:
    """The database's answer for ``state`` at a turn boundary (None mid-jump, at the end, without a
    database or outside it): ``value`` for the side to move, ``for_you`` for the person (colour
    ``human``), ``winner``, ``distance`` (moves), ``best_moves`` and ``text``. A slice that cannot be
    read is logged and left out, so a game never fails for its database."""
    if db is None or bool(state.terminated) or int(state.continuing):
        return None
    try:
        value, distance = value_of_state(db, state)
    except EndgameError as e:
        LOG.warning("endgame database of %s: %s", db.rules.name, e)
        return None
    if value == OUTSIDE:
        return None
    try:
        moves = list(best_moves(db, state))
    except EndgameError as e:  # a move into a slice the database lacks or cannot read
        LOG.warning("endgame database of %s: %s", db.rules.name, e)
        moves = []
    mover = int(state.color)
    for_you = value if mover == human else {WIN: LOSS, LOSS: WIN, DRAW: DRAW}[value]
    winner = None if value == DRAW else side_name(mover if value == WIN else 1 - mover).lower()
    return {
        "to_move": side_name(mover).lower(),
        "value": VALUE_NAMES[value],
        "for_you": VALUE_NAMES[for_you],
        "winner": winner,
        "distance": distance,
        "best_moves": moves,
        "text": endgame_text(value, mover, human, distance, moves),
    }
