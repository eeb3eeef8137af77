"""Checkers rules: presets, the state, and pure JAX functions over it."""

from neurocheckers.rules.engine import (
    from_position,
    init,
    legal_action_slots,
    material_balance,
    piece_counts,
    random_action,
    step,
)
from neurocheckers.rules.presets import AMERICAN6, AMERICAN8, PRESETS, SIMPLE6, Rules, get_rules
from neurocheckers.rules.state import BLACK, WHITE, State

__all__ = [
    "AMERICAN6",
    "AMERICAN8",
    "BLACK",
    "PRESETS",
    "SIMPLE6",
    "WHITE",
    "Rules",
    "State",
    "from_position",
    "get_rules",
    "init",
    "legal_action_slots",
    "material_balance",
    "piece_counts",
    "random_action",
    "step",
]
