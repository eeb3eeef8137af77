"""Positions as base-5 keys of their mover's view, in NumPy (the checker's own code, not the
compiled search's): digit ``s`` is square ``s``'s content, 0 empty, 1 the mover's man, 2 its king,
3 the opponent's man, 4 its king. The board is seen as the endgame database sees it
(``endgame.index.to_mover_view``: turned half a turn when White is to move)."""

from __future__ import annotations

import numpy as np

MAX_SQUARES = 27
"""Keys fit in 63 bits up to 27 squares (6x6 boards have 18)."""


def _powers(num_squares: int) -> np.ndarray:
    if num_squares > MAX_SQUARES:
        raise ValueError(f"base-5 keys hold at most {MAX_SQUARES} squares, got {num_squares}")
    return 5 ** np.arange(num_squares, dtype=np.int64)


def encode(boards: np.ndarray, num_squares: int) -> np.ndarray:
    """[B] int64 keys of [B, 4] mover-view bitboards (mover men, kings, opponent men, kings)."""
    boards = np.asarray(boards, dtype=np.int64).reshape(-1, 4)
    bits = (boards[:, :, None] >> np.arange(num_squares)) & 1  # [B, 4, S]
    digits = (bits * np.arange(1, 5)[None, :, None]).sum(axis=1)
    if (bits.sum(axis=1) > 1).any():
        raise ValueError("a square holds two pieces")
    return digits @ _powers(num_squares)


def decode(keys: np.ndarray, num_squares: int) -> np.ndarray:
    """[B, 4] uint32 mover-view bitboards of [B] keys (the inverse of ``encode``)."""
    keys = np.asarray(keys, dtype=np.int64).reshape(-1)
    digits = (keys[:, None] // _powers(num_squares)) % 5  # [B, S]
    if (keys < 0).any() or (keys >= 5**num_squares).any():
        raise ValueError("a key outside the board's range")
    weights = np.int64(1) << np.arange(num_squares, dtype=np.int64)
    return np.stack([((digits == k) * weights).sum(axis=1) for k in range(1, 5)], axis=1).astype(np.uint32)
