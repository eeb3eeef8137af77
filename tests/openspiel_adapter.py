"""OpenSpiel's ``checkers`` for the tests that cross-check our engine against it move by move.

The square and action mapping is the library's (``neurocheckers.rules.openspiel_actions``, where
the OpenSpiel facts it relies on are listed); this module adds loading the game.
"""

from __future__ import annotations

from neurocheckers.rules.openspiel_actions import (  # noqa: F401 (re-exported for the tests)
    NO_CAPTURE_DRAW_PLIES,
    OUR_DIR_OFFSETS,
    in_multi_jump,
    legal_moves_of,
    moves_without_capture,
    openspiel_action_is_capture,
    openspiel_action_to_ours,
    openspiel_action_to_squares,
    os_cell_to_algebraic,
    os_cell_to_square,
    our_action_to_openspiel,
    our_action_to_squares,
    position_of,
    rc_of,
    side_to_move,
    square_of,
    square_to_os_cell,
)

try:  # pragma: no cover - depends on the environment
    import pyspiel
except ImportError:  # pragma: no cover
    pyspiel = None


def openspiel_game():
    """OpenSpiel's checkers on the standard 8x8 board (its defaults)."""
    if pyspiel is None:
        raise ImportError("pyspiel (open-spiel) is not installed")
    return pyspiel.load_game("checkers", {"rows": 8, "columns": 8})
