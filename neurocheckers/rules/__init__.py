"""Checkers rules: presets, the state, and pure JAX functions over it.

Names are loaded on first use, so that the plain-Python modules of this package (``presets``,
``fen``, ``tables``) can be imported without importing JAX (``numpy_agent`` relies on that).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neurocheckers.runtime import lazy_exports

_HOMES = {
    "from_position": "engine",
    "init": "engine",
    "init_batch": "engine",
    "legal_action_slots": "engine",
    "material_balance": "engine",
    "piece_counts": "engine",
    "random_action": "engine",
    "step": "engine",
    "step_unchecked": "engine",
    "AMERICAN6": "presets",
    "AMERICAN8": "presets",
    "AMERICAN8_OPENSPIEL": "presets",
    "PRESETS": "presets",
    "SIMPLE6": "presets",
    "VARIANTS": "presets",
    "Rules": "presets",
    "get_rules": "presets",
    "BLACK": "state",
    "WHITE": "state",
    "State": "state",
}

__all__ = [
    "AMERICAN6",
    "AMERICAN8",
    "AMERICAN8_OPENSPIEL",
    "BLACK",
    "PRESETS",
    "SIMPLE6",
    "VARIANTS",
    "WHITE",
    "Rules",
    "State",
    "from_position",
    "get_rules",
    "init",
    "init_batch",
    "legal_action_slots",
    "material_balance",
    "piece_counts",
    "random_action",
    "step",
    "step_unchecked",
]

if TYPE_CHECKING:
    from neurocheckers.rules.engine import (
        from_position,
        init,
        init_batch,
        legal_action_slots,
        material_balance,
        piece_counts,
        random_action,
        step,
        step_unchecked,
    )
    from neurocheckers.rules.presets import (
        AMERICAN6,
        AMERICAN8,
        AMERICAN8_OPENSPIEL,
        PRESETS,
        SIMPLE6,
        VARIANTS,
        Rules,
        get_rules,
    )
    from neurocheckers.rules.state import BLACK, WHITE, State


__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
