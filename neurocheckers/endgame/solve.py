"""Retrograde solving of endgame slices: every position of a family (a slice and its flip) at once.

For each position the whole-turn moves are generated with the JAX engine. A move that captures or
crowns leads into a slice solved earlier (see ``index.solve_order``), whose stored value is read;
a quiet move stays in the family and becomes an edge of its move graph. Values are then settled
level by level, from the end of the game backwards: a position is won in ``k`` moves when some move
reaches a position lost in ``k - 1``, and lost in ``k`` when every move reaches a won position, the
longest of them won in ``k - 1``. What is never settled is a draw. Distances count whole turns
(a multi-jump is one) to the end of the game under perfect play: the winner takes the shortest way,
the loser the longest. The no-capture draw rule and any ply cap are ignored, as published databases do.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from neurocheckers.endgame.database import DRAW, LOSS, WIN, EndgameDB
from neurocheckers.endgame.index import Slice, SliceIndex, families, slice_of
from neurocheckers.endgame.moves import successors
from neurocheckers.rules.presets import Rules

NEVER = np.iinfo(np.int32).max
ENUMERATE_CHUNK = 1 << 17
"""Positions whose moves are generated at a time."""

Progress = Callable[[str, int, int], None]
"""``progress(slice name, positions done, positions in all)``: of a family's slices in
:func:`move_graph`, of the whole build in :func:`build`."""


@dataclasses.dataclass
class MoveGraph:
    """What the moves of a family's positions lead to. Arrays are over the family's positions
    (the first slice's, then the second's), ``[n]``, or over its quiet moves, ``[E]``.

    Fields:
      win_at: [n] int32, the shortest win through a move into a solved slice (``NEVER``: none).
      longest_loss: [n] int32, the longest loss through such moves (0: none).
      escapes: [n] bool, whether such a move reaches a draw or a position won for the mover.
      inside: [n] int32, the moves that stay in the family.
      edge_from, edge_to: [E] int32, the quiet moves that stay in the family.
    """

    win_at: np.ndarray
    longest_loss: np.ndarray
    escapes: np.ndarray
    inside: np.ndarray
    edge_from: np.ndarray
    edge_to: np.ndarray


def _record_moves(
    graph: MoveGraph, first: int, parent: np.ndarray, after: np.ndarray, db: EndgameDB, offsets: dict
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Fold one chunk's moves (positions ``first + parent``) into ``graph``; returns its in-family
    edges."""
    counts = slice_of(after)
    source = first + parent
    in_family = np.zeros(len(after), dtype=bool)
    edges = []
    for s, offset in offsets.items():
        rows = np.flatnonzero(np.all(counts == np.array(s.counts), axis=1))
        in_family[rows] = True
        target = offset + SliceIndex(db.rules, s).rank(after[rows])
        edges.append((source[rows].astype(np.int32), target.astype(np.int32)))
    outside = ~in_family
    values, distances = db.lookup(after[outside])
    if np.any(values < 0):
        missing = slice_of(after[outside][values < 0][:1])[0]
        raise RuntimeError(f"slice {Slice(*missing).name} is needed but not solved yet")
    src = source[outside]
    lost = values == LOSS
    np.minimum.at(graph.win_at, src[lost], distances[lost] + 1)
    won = values == WIN
    np.maximum.at(graph.longest_loss, src[won], distances[won] + 1)
    graph.escapes[src[~won]] = True
    np.add.at(graph.inside, np.concatenate([e[0] for e in edges]), 1)
    return edges


def move_graph(db: EndgameDB, family: tuple[Slice, ...], progress: Progress | None = None) -> MoveGraph:
    """Generate every move of every position of ``family`` (the slices it leads to must be in ``db``)."""
    sizes = [SliceIndex(db.rules, s).size for s in family]
    offsets = dict(zip(family, np.cumsum([0, *sizes[:-1]]).tolist(), strict=True))
    n = sum(sizes)
    graph = MoveGraph(
        win_at=np.full(n, NEVER, dtype=np.int32),
        longest_loss=np.zeros(n, dtype=np.int32),
        escapes=np.zeros(n, dtype=bool),
        inside=np.zeros(n, dtype=np.int32),
        edge_from=np.zeros(0, np.int32),
        edge_to=np.zeros(0, np.int32),
    )
    edges: list[tuple[np.ndarray, np.ndarray]] = []
    for s, size in zip(family, sizes, strict=True):
        offset = offsets[s]
        index = SliceIndex(db.rules, s)
        for start in range(0, size, ENUMERATE_CHUNK):
            stop = min(start + ENUMERATE_CHUNK, size)
            parent, after = successors(db.rules, index.unrank(np.arange(start, stop)))
            edges += _record_moves(graph, offsets[s] + start, parent, after, db, offsets)
            if progress:
                progress(s.name, offset + stop, n)
    graph.edge_from = np.concatenate([e[0] for e in edges]) if edges else graph.edge_from
    graph.edge_to = np.concatenate([e[1] for e in edges]) if edges else graph.edge_to
    return graph


def _predecessors(graph: MoveGraph, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The quiet-move graph reversed, as CSR: the positions moving into ``x`` are
    ``sources[starts[x]:starts[x + 1]]``."""
    order = np.argsort(graph.edge_to, kind="stable")
    starts = np.concatenate([[0], np.cumsum(np.bincount(graph.edge_to, minlength=n))])
    return starts, graph.edge_from[order]


def _gather(starts: np.ndarray, sources: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """The predecessors of every node in ``nodes`` (with repeats)."""
    lengths = starts[nodes + 1] - starts[nodes]
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=sources.dtype)
    begin = np.repeat(starts[nodes] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return sources[begin + np.arange(total)]


def settle(graph: MoveGraph) -> tuple[np.ndarray, np.ndarray]:
    """([n] int8 values, [n] int32 distances) of a family's positions from its move graph."""
    n = len(graph.inside)
    starts, sources = _predecessors(graph, n)
    values = np.full(n, -1, dtype=np.int8)
    distances = np.zeros(n, dtype=np.int32)
    win_at = graph.win_at.copy()
    waiting = graph.inside.copy()  # quiet moves not yet known to reach a position won for the opponent
    longest = graph.longest_loss.copy()
    may_lose = ~graph.escapes & (graph.win_at == NEVER)
    lose_at = np.where(may_lose & (waiting == 0), longest, NEVER).astype(np.int32)
    while True:
        open_ = values < 0
        level = min(int(win_at[open_].min(initial=NEVER)), int(lose_at[open_].min(initial=NEVER)))
        if level == NEVER:
            break
        won = np.flatnonzero(open_ & (win_at == level))
        lost = np.flatnonzero(open_ & (lose_at == level))
        values[won], distances[won] = WIN, level
        values[lost], distances[lost] = LOSS, level
        into_lost = _gather(starts, sources, lost)
        win_at[into_lost] = np.minimum(win_at[into_lost], level + 1)
        into_won = _gather(starts, sources, won)
        np.subtract.at(waiting, into_won, 1)
        longest[into_won] = np.maximum(longest[into_won], level + 1)
        done = into_won[(waiting[into_won] == 0) & may_lose[into_won] & (values[into_won] < 0)]
        lose_at[done] = longest[done]
    values[values < 0] = DRAW
    return values, distances


def solve_family(
    db: EndgameDB, family: tuple[Slice, ...], progress: Progress | None = None
) -> dict[Slice, tuple[np.ndarray, np.ndarray, dict]]:
    """Solve the slices of ``family``: per slice, (values, distances, timing stats)."""
    began = time.perf_counter()
    graph = move_graph(db, family, progress)
    generated = time.perf_counter()
    values, distances = settle(graph)
    ended = time.perf_counter()
    out, start = {}, 0
    total = len(values)
    for s in family:
        size = SliceIndex(db.rules, s).size
        share = size / max(total, 1)
        stats = {
            "seconds": round((ended - began) * share, 3),
            "move_seconds": round((generated - began) * share, 3),
            "positions_per_second": round(total / max(ended - began, 1e-9)),
        }
        out[s] = (values[start : start + size], distances[start : start + size], stats)
        start += size
    return out


def build(
    rules: Rules | str, max_pieces: int, folder: str | Path, progress: Progress | None = None
) -> EndgameDB:
    """Build (or go on building) the database of every position with at most ``max_pieces`` pieces
    in ``folder``: families already in its manifest are kept, the rest solved in order."""
    db = EndgameDB(folder, rules, create=True)
    todo = [f for f in families(max_pieces) if not all(db.holds(s) for s in f)]
    total = sum(SliceIndex(db.rules, s).size for f in todo for s in f)
    done = 0
    for family in todo:
        size = sum(SliceIndex(db.rules, s).size for s in family)

        def overall(name: str, count: int, _: int, before: int = done) -> None:
            if progress:
                progress(name, before + count, total)

        solved = solve_family(db, family, overall)
        done += size
        for s, (values, distances, stats) in solved.items():
            db.write(s, values, distances, stats)
    db.manifest["max_pieces"] = max(max_pieces, db.manifest.get("max_pieces", 0))
    db.save_manifest()
    return db
