"""The game state: an immutable struct of arrays (one game; batches carry a leading axis)."""

from __future__ import annotations

import jax
from flax import struct

from neurocheckers.rules.bits import count_legal, legal_mask

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
      plies_without_capture: [] int32, the quiet counter: actions in a row without a capture (nor a
        man's move, under ``Rules.man_moves_reset_quiet_count``).
      legal_bits: [4] uint32, per direction, the bitboard of squares whose piece may move that way;
        all 0 once the game is over (whatever ended it), so "no legal action" and "terminated" agree.
      terminated: [] bool, whether the game is over.
      result: [] int32, +1 if Black won, -1 if White won, 0 for a draw or a game still going on.
      num_squares: static int N, the dark squares of the board (sizes ``legal_action_mask``).

    ``legal_action_mask`` ([A] bool, A = 4N) is computed from ``legal_bits`` on demand rather than
    stored, so searches and playouts that never read it neither store nor copy it. Like
    ``legal_bits`` it is all False at a terminal state (Pgx instead sets it all True there; here an
    empty mask is what a lost game has anyway, and a policy facing one returns action 0).
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
    terminated: jax.Array
    result: jax.Array
    num_squares: int = struct.field(pytree_node=False)

    @property
    def legal_action_mask(self) -> jax.Array:
        """[A] bool: the legal actions ``direction * N + square`` (all False at a terminal state)."""
        return legal_mask(self.legal_bits, self.num_squares)

    @property
    def num_legal_actions(self) -> jax.Array:
        """[] int32: how many actions are legal (0 exactly when the game is over)."""
        return count_legal(self.legal_bits)
