"""Checks of a built database against its own moves.

A labelling passes :func:`check_slice` when each position's stored value and distance are exactly
what its moves give from the stored values of the positions they reach (a win when some move
reaches a loss, the shortest such; a loss when every move reaches a win, the longest; else a draw).
By induction on the true distance, the one labelling of all slices that passes everywhere is the
game-theoretic one, so this check over every slice verifies the database, given the move generator
(itself checked against OpenSpiel and perft counts)."""

from __future__ import annotations

import numpy as np

from neurocheckers.endgame.database import DRAW, LOSS, WIN, EndgameDB, EndgameError
from neurocheckers.endgame.index import Slice, SliceIndex
from neurocheckers.endgame.moves import successors
from neurocheckers.endgame.solve import ENUMERATE_CHUNK, NEVER


def values_from_moves(db: EndgameDB, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """([B] values, [B] distances) of [B, 4] mover-view positions, one move deep into ``db``."""
    parent, after = successors(db.rules, boards)
    values, distances = db.lookup(after)
    if np.any(values < 0):
        raise EndgameError("a move leads outside the database: build its smaller slices first")
    n = len(boards)
    win_at = np.full(n, NEVER, dtype=np.int64)
    np.minimum.at(win_at, parent[values == LOSS], distances[values == LOSS] + 1)
    longest = np.zeros(n, dtype=np.int64)
    np.maximum.at(longest, parent[values == WIN], distances[values == WIN] + 1)
    escapes = np.zeros(n, dtype=bool)
    escapes[parent[values != WIN]] = True
    out = np.where(win_at < NEVER, WIN, np.where(escapes, DRAW, LOSS)).astype(np.int8)
    return out, np.where(out == WIN, win_at, np.where(out == LOSS, longest, 0))


def check_slice(db: EndgameDB, s: Slice, sample: int | None = None, seed: int = 0) -> tuple[int, int]:
    """(positions checked, positions whose stored value or distance disagrees with their moves):
    every position of ``s``, or ``sample`` of them drawn at random."""
    index = SliceIndex(db.rules, s)
    stored_values, stored_distances = db.load(s)
    if sample is None or sample >= index.size:
        chunks = [
            np.arange(a, min(a + ENUMERATE_CHUNK, index.size)) for a in range(0, index.size, ENUMERATE_CHUNK)
        ]
    else:
        rows = np.random.default_rng(seed).choice(index.size, size=sample, replace=False)
        chunks = [np.sort(rows)]
    checked = wrong = 0
    for rows in chunks:
        values, distances = values_from_moves(db, index.unrank(rows))
        bad = (values != stored_values[rows]) | (distances != stored_distances[rows])
        checked += len(rows)
        wrong += int(bad.sum())
    return checked, wrong
