"""A position set up to play on from (the Play page's **Start from**): a FEN, or a PDN game and the
number of its moves played before the person takes over."""

from __future__ import annotations

from typing import Any

from neurocheckers.analysis.games import replay_game
from neurocheckers.analysis.pdn_games import game_of_pdn
from neurocheckers.rules.notation import parse_fen
from neurocheckers.rules.pdn import read_pdn
from neurocheckers.rules.presets import get_rules
from neurocheckers.rules.state import BLACK, State
from neurocheckers.web.board import end_reason, side_name
from neurocheckers.web.opponents import SessionError


def _count(value: Any, key: str, default: int | None) -> int | None:
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise SessionError(f"{key!r} must be a whole number, got {value!r}")
    return value


def _from_pdn(rules, text: str, number: int, moves: int | None) -> State:
    """The position after ``moves`` moves (default all) of game ``number`` of the PDN ``text``."""
    try:
        games = read_pdn(text)
    except ValueError as error:
        raise SessionError(f"cannot read the PDN: {error}") from None
    if not 1 <= number <= len(games):
        raise SessionError(f"'pdn_game' must be in 1..{len(games)}, got {number}")
    try:
        states, _ = replay_game(rules, game_of_pdn(rules, games[number - 1]))
    except ValueError as error:
        raise SessionError(f"PDN game {number} under {rules.name}: {error}") from None
    moves = len(states) - 1 if moves is None else moves
    if moves >= len(states):
        raise SessionError(f"'pdn_move' must be in 0..{len(states) - 1} (the game's moves), got {moves}")
    return states[moves]


def setup_position(rules: Any, body: dict[str, Any]) -> State | None:
    """The start position a new-game request sets up (None: the rules' own): ``fen``, or ``pdn``
    (text) with ``pdn_game`` (from 1, default 1) and ``pdn_move`` (moves played, default all).
    ``SessionError`` naming what is wrong, or when the position is already over."""
    fen, pdn = body.get("fen"), body.get("pdn")
    if fen is None and pdn is None:
        return None
    try:
        preset = get_rules(rules)
    except ValueError as error:
        raise SessionError(str(error)) from None
    if fen is not None and pdn is not None:
        raise SessionError("give 'fen' or 'pdn', not both")
    if not isinstance(fen if fen is not None else pdn, str):
        raise SessionError("'fen' and 'pdn' must be text")
    if fen is not None:
        try:
            state = parse_fen(preset, fen.strip())
        except ValueError as error:
            raise SessionError(f"bad FEN for {preset.name}: {error}") from None
    else:
        number = _count(body.get("pdn_game"), "pdn_game", 1)
        state = _from_pdn(preset, pdn, number, _count(body.get("pdn_move"), "pdn_move", None))
    if bool(state.terminated):
        raise SessionError(f"the position set up is already over ({end_reason(preset, state)})")
    for side, pieces in ((BLACK, int(state.black_men) | int(state.black_kings)),
                         (1 - BLACK, int(state.white_men) | int(state.white_kings))):  # fmt: skip
        if not pieces:  # over as surely as when the side without pieces is to move
            winner, loser = side_name(1 - side), side_name(side)
            raise SessionError(f"the position set up is already over ({winner} wins: {loser} has no pieces)")
    return state
