"""Endgame databases: exact values of every position with few pieces, by retrograde analysis.

``build`` solves slice by slice into a folder; ``EndgameDB`` reads one (``lookup`` for many
positions at once, from the side to move's point of view); ``probe_fen`` answers one position with
its best moves; ``check_slice`` verifies a slice against its own moves. Names load on first use,
so that reading a database does not import JAX.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neurocheckers.runtime import lazy_exports

_HOMES = {
    "DRAW": "database",
    "LOSS": "database",
    "OUTSIDE": "database",
    "WIN": "database",
    "EndgameDB": "database",
    "EndgameError": "database",
    "Slice": "index",
    "SliceIndex": "index",
    "to_mover_view": "index",
    "Answer": "probe",
    "probe_fen": "probe",
    "build": "solve",
    "check_slice": "verify",
}

__all__ = [
    "DRAW",
    "LOSS",
    "OUTSIDE",
    "WIN",
    "Answer",
    "EndgameDB",
    "EndgameError",
    "Slice",
    "SliceIndex",
    "build",
    "check_slice",
    "probe_fen",
    "to_mover_view",
]

if TYPE_CHECKING:
    from neurocheckers.endgame.database import DRAW, LOSS, OUTSIDE, WIN, EndgameDB, EndgameError
    from neurocheckers.endgame.index import Slice, SliceIndex, to_mover_view
    from neurocheckers.endgame.probe import Answer, probe_fen
    from neurocheckers.endgame.solve import build
    from neurocheckers.endgame.verify import check_slice

__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
