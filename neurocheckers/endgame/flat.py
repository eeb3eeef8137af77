"""A database's slices end to end with the tables of their index, as plain NumPy arrays: what the
jitted lookups read (``device`` for JAX, ``compiled.endgame`` for numba). Importing it loads no JAX."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from neurocheckers.endgame.database import EndgameDB
from neurocheckers.endgame.index import MAX_SQUARES, board_masks, men_offsets


@dataclasses.dataclass(frozen=True)
class FlatDB:
    """Fields ([T] over the positions of every held slice, end to end; P the most pieces):
    values: [T] int8, LOSS/DRAW/WIN for the side to move.
    distances: [T] int32, whole moves to the end under perfect play.
    slice_start: [P+1, P+1, P+1, P+1] int32, where each slice (men, kings, opponent men, opponent
      kings) starts in ``values``; -1 for a slice not held.
    men_offsets: [M] int32, ``index.men_offsets`` of every (men, opponent men) pair, end to end.
    men_start: [P+1, P+1] int32, where each pair's offsets start in ``men_offsets``.
    binom: [33, P+1] int32, binomial coefficients.
    num_squares, max_pieces, masks (every square, a mover's man's squares, an opponent man's).
    """

    values: np.ndarray
    distances: np.ndarray
    slice_start: np.ndarray
    men_offsets: np.ndarray
    men_start: np.ndarray
    binom: np.ndarray
    num_squares: int
    max_pieces: int
    masks: tuple[int, int, int]


def flat_db(db: EndgameDB) -> FlatDB:
    """Every slice of ``db`` loaded end to end (checksums checked on loading)."""
    slices = sorted(db.slices)
    p = max(s.pieces for s in slices)
    starts = np.full((p + 1,) * 4, -1, dtype=np.int32)
    values, distances, at = [], [], 0
    for s in slices:
        v, d = db.load(s)
        starts[s.counts] = at
        values.append(v)
        distances.append(d.astype(np.int32))
        at += len(v)
    if at >= 2**31:
        raise ValueError(f"{db.folder} holds {at} positions: too many for 32-bit indices")
    men_start = np.zeros((p + 1, p + 1), dtype=np.int32)
    offsets, at = [], 0
    for men in range(p + 1):
        for opp_men in range(p + 1 - men):
            men_start[men, opp_men] = at
            offsets.append(men_offsets(db.rules, men, opp_men).astype(np.int32))
            at += len(offsets[-1])
    binom = np.array([[math.comb(n, k) for k in range(p + 1)] for n in range(MAX_SQUARES + 1)])
    return FlatDB(
        values=np.concatenate(values),
        distances=np.concatenate(distances),
        slice_start=starts,
        men_offsets=np.concatenate(offsets),
        men_start=men_start,
        binom=binom.astype(np.int32),
        num_squares=db.rules.num_squares,
        max_pieces=p,
        masks=board_masks(db.rules),
    )
