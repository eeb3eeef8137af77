"""The two function types that players and searches are built from (defined once, imported elsewhere)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from neurocheckers.rules.state import State

Policy = Callable[[Any, State, jax.Array], jax.Array]
"""``(params, state, key) -> action`` ([] int32) for one game; vmapped over games by the arena.

On a terminated state (no legal action) every policy of this package returns 0, which ``step``
ignores on a finished game."""

ValueFn = Callable[[Any, State, jax.Array], jax.Array]
"""``(params, state, key) -> v`` ([] float32): the chance in [0, 1] that the side to move in ``state``
wins, a draw counting one half."""
