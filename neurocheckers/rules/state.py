"""The game state: an immutable struct of arrays (one game; batches carry a leading axis)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

BLACK = 0
"""``State.color`` of Black, the first mover (men on the low-numbered squares)."""
WHITE = 1
"""``State.color`` of White."""


@struct.dataclass
class State:
    """One position with its game bookkeeping. Shapes are for one game; ``jax.vmap`` adds ``[B]``.

    Bitboards are uint32: bit ``i`` is square ``i + 1`` in American notation.

    Fields:
      black_men, black_kings, white_men, white_kings: [] uint32 bitboards of each kind of piece.
      color: [] int32, the side to move (``BLACK`` = 0 or ``WHITE`` = 1).
      continuing: [] uint32, the bit of the piece that must go on jumping (0 when none): a multi-jump
        is a sequence of actions by the same player.
      ply: [] int32, actions played since the start (each jump of a multi-jump is one ply).
      plies_without_capture: [] int32, actions in a row without a capture.
      legal_bits: [4] uint32, per direction, the bitboard of squares whose piece may move that way.
      legal_action_mask: [A] bool, ``legal_bits`` as a mask over actions ``direction * N + square``.
      terminated: [] bool, whether the game is over.
      result: [] int32, +1 if Black won, -1 if White won, 0 for a draw or a game still going on.
    """

    black_men: jax.Array
    black_kings: jax.Array
    white_men: jax.Array
    white_kings: jax.Array
    color: jax.Array
    continuing: jax.Array
    ply: jax.Array
    plies_without_capture: jax.Array
    legal_bits: jax.Array
    legal_action_mask: jax.Array
    terminated: jax.Array
    result: jax.Array

    @property
    def rewards(self) -> jax.Array:
        """[2] float32: the final score of Black and White (+1 win, -1 loss, 0 draw or ongoing)."""
        r = self.result.astype(jnp.float32)
        return jnp.stack([r, -r], axis=-1)

    @property
    def num_legal_actions(self) -> jax.Array:
        """[] int32: how many actions are legal."""
        return jnp.sum(jax.lax.population_count(self.legal_bits), axis=-1).astype(jnp.int32)
