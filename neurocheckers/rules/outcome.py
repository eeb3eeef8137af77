"""How the end of a game is scored: a side's points from the result, and what a king is worth."""

from __future__ import annotations

import jax
import jax.numpy as jnp

KING_VALUE = 1.5
"""A king's worth in men, in every material count (alpha-beta leaves, the material evaluator, the
arena's final material difference)."""


def points_for(result: jax.Array, black: jax.Array) -> jax.Array:
    """float32 points of a side (Black where ``black``, else White) in a game with ``result`` (+1 Black
    won, -1 White won, 0 draw or unfinished): 1 for a win, 1/2 for a draw, 0 for a loss. Broadcasts."""
    sign = jnp.where(black, 1.0, -1.0)
    return 0.5 + 0.5 * sign * jnp.asarray(result).astype(jnp.float32)
