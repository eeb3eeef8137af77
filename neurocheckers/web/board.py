"""Positions as JSON for the page: pieces by square, material, and why a finished game ended."""

from __future__ import annotations

import functools
from typing import Any

import jax

from neurocheckers.analysis.games import result_text
from neurocheckers.rules.engine import init
from neurocheckers.rules.notation import to_fen
from neurocheckers.rules.outcome import KING_VALUE
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State


def side_name(color: int) -> str:
    return "Black" if int(color) == BLACK else "White"


def squares(bits: Any) -> list[int]:
    bits = int(bits)
    return [i + 1 for i in range(32) if bits >> i & 1]


def material(state: State) -> dict[str, float]:
    """Each side's material (men 1, kings ``KING_VALUE``) and Black's lead."""
    black = int(state.black_men).bit_count() + KING_VALUE * int(state.black_kings).bit_count()
    white = int(state.white_men).bit_count() + KING_VALUE * int(state.white_kings).bit_count()
    return {"black": black, "white": white, "black_lead": black - white}


def end_reason(rules: Rules, state: State) -> str | None:
    """Why the game of ``state`` is over, in words (None while it goes on), following the engine's
    order: the no-capture limit draws first, then a side to move without pieces or moves loses (or
    draws, where a stuck side draws), then the total ply limit draws."""
    if not bool(state.terminated):
        return None
    mover = side_name(int(state.color))
    own = (int(state.black_men) | int(state.black_kings)) if int(state.color) == BLACK else (
        int(state.white_men) | int(state.white_kings)
    )  # fmt: skip
    result = int(state.result)
    if result != 0:
        winner = side_name(1 - int(state.color))
        why = "has no pieces left" if own == 0 else "has no legal move"
        return f"{winner} wins: {mover} {why}"
    quiet = rules.max_plies_without_capture
    if quiet and int(state.plies_without_capture) >= quiet:
        return f"draw: {rules.quiet_rule}"
    if rules.max_plies and int(state.ply) >= rules.max_plies:
        return f"draw: the {rules.max_plies}-ply limit of {rules.name} was reached"
    return f"draw: {mover} has no legal move (a stuck side draws in {rules.name})"


def position_json(rules: Rules, state: State) -> dict[str, Any]:
    """The page's view of ``state``: pieces, side to move, FEN, material, result and end reason."""
    pieces = [
        {"square": square, "color": color, "king": king}
        for bits, color, king in (
            (state.black_men, "black", False),
            (state.black_kings, "black", True),
            (state.white_men, "white", False),
            (state.white_kings, "white", True),
        )
        for square in squares(bits)
    ]
    continuing = squares(state.continuing)
    return {
        "board_size": rules.board_size,
        "pieces": sorted(pieces, key=lambda p: p["square"]),
        "to_move": side_name(int(state.color)).lower(),
        "continuing": continuing[0] if continuing else None,
        "ply": int(state.ply),
        "fen": to_fen(state),
        "material": material(state),
        "over": bool(state.terminated),
        "result": result_text(state),
        "reason": end_reason(rules, state),
    }


@functools.cache
def start_position(rules: Rules) -> dict[str, Any]:
    """``position_json`` of the rules' starting position (the board the Play page shows on arrival)."""
    return position_json(rules, jax.device_get(init(rules)))
