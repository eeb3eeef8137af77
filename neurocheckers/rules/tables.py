"""Move tables for a board size, built once with NumPy.

Squares are numbered as in American notation: row 0 is at the top (Black's side), a square is dark
when ``(row + col) % 2 == 1``, and square number ``row * size // 2 + col // 2 + 1``. Bit ``i`` of a
bitboard is square ``i + 1``.

Directions: 0 = down-left, 1 = down-right (Black's forward), 2 = up-left, 3 = up-right (White's
forward); the opposite of ``d`` is ``3 - d``.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

DIRECTIONS = ((1, -1), (1, 1), (-1, -1), (-1, 1))
"""(row step, column step) of each direction."""


@dataclasses.dataclass(frozen=True)
class Tables:
    """Precomputed geometry of one board size. Arrays are NumPy constants.

    Fields:
      size: squares per side.
      num_squares: N dark squares.
      coords: [N, 2] (row, col) of each square.
      neighbor: [4, N] the adjacent square in each direction, -1 off the board.
      jump_landing: [4, N] the square two steps away in each direction, -1 off the board.
      step_groups: per direction, ((source mask, shift), ...): the bitboard of neighbours of a set X is
        the OR over groups of ``shift(X & mask, shift)`` (a negative shift shifts right).
      step_bit: [4 * N] uint32, the bit of the adjacent square of each action (0 off the board).
      landing_bit: [4 * N] uint32, the bit of the jump landing square of each action.
      first_row, last_row: uint32 bitboards of row 0 (White crowns) and the last row (Black crowns).
      all_squares: uint32 bitboard of every square.
    """

    size: int
    num_squares: int
    coords: np.ndarray
    neighbor: np.ndarray
    jump_landing: np.ndarray
    step_groups: tuple[tuple[tuple[int, int], ...], ...]
    step_bit: np.ndarray
    landing_bit: np.ndarray
    first_row: int
    last_row: int
    all_squares: int


def square_of(size: int, row: int, col: int) -> int:
    """0-based index of the dark square at (row, col); -1 if it is off the board or light."""
    if not (0 <= row < size and 0 <= col < size) or (row + col) % 2 != 1:
        return -1
    return row * (size // 2) + col // 2


@functools.cache
def tables(size: int) -> Tables:
    """The move tables of a ``size`` x ``size`` board."""
    n = size * size // 2
    coords = np.array([(r, c) for r in range(size) for c in range(size) if (r + c) % 2 == 1], dtype=np.int32)
    assert len(coords) == n
    neighbor = np.full((4, n), -1, dtype=np.int32)
    landing = np.full((4, n), -1, dtype=np.int32)
    for d, (dr, dc) in enumerate(DIRECTIONS):
        for s, (r, c) in enumerate(coords):
            neighbor[d, s] = square_of(size, r + dr, c + dc)
            if neighbor[d, s] >= 0:
                landing[d, s] = square_of(size, r + 2 * dr, c + 2 * dc)
    groups = []
    for d in range(4):
        by_shift: dict[int, int] = {}
        for s in range(n):
            t = int(neighbor[d, s])
            if t >= 0:
                by_shift[t - s] = by_shift.get(t - s, 0) | (1 << s)
        groups.append(tuple((mask, shift) for shift, mask in sorted(by_shift.items())))
    bit = np.uint32(1) << np.arange(n, dtype=np.uint32)

    def bits_of(targets: np.ndarray) -> np.ndarray:
        return np.where(targets >= 0, bit[np.maximum(targets, 0)], np.uint32(0)).astype(np.uint32)

    half = size // 2
    return Tables(
        size=size,
        num_squares=n,
        coords=coords,
        neighbor=neighbor,
        jump_landing=landing,
        step_groups=tuple(groups),
        step_bit=bits_of(neighbor).reshape(-1),
        landing_bit=bits_of(landing).reshape(-1),
        first_row=(1 << half) - 1,
        last_row=((1 << half) - 1) << (n - half),
        all_squares=(1 << n) - 1,
    )
