"""A play-time search that uses its thinking time: iterative deepening of ``alphabeta_stack`` to a
time or node budget per move.

Each iteration is one call of a single jitted search (the nominal depth, the node limit and the first
root move are traced, so one compiled program serves every depth and every position). What it does:

- **iterative deepening**: depth 1, 2, 3, ... until the budget is spent; an iteration cut off by the
  budget still counts when the previous best move was searched in it first (its score is then exact,
  and any move found better after it is exact too);
- **capture extensions**: leaves at the nominal depth with a capture to make are searched on until
  quiet (``EXTENSION`` levels at most), so exchanges are not cut in half at the horizon;
- **move ordering**: the previous iteration's best move first at the root, captures first elsewhere;
- **a transposition table**, optional (``table_bits`` > 0; ``transposition``): nodes searched before,
  in this iteration, an earlier one or an earlier move of the game, are scored from it when their
  stored result is deep enough and decides the window. It is off by default because it does not pay
  on XLA:CPU: it saves 30-50% of the nodes of a fixed-depth search and far more on a repeated one,
  but each table read inside the search loop costs about 5 us (a loop iteration went from 4.5 to
  11-12 us, whatever the table's size; the cause inside XLA was not found), so at 0.3 s a move it
  reached 5.3 plies instead of 5.7 with material leaves and 5.5 instead of 5.3 with a 5 x 32
  network (15 positions; ``scripts/bench_search.py --alphabeta --table-bits 0 18``);
- it stops early with one legal move, on a proven win or loss, and when the whole game tree below
  the root is searched (a complete iteration whose every leaf ended the game: ``SearchStack.cut``
  False; "an iteration no larger than the last", the rule before, also held where every move gave
  the opponent a capture, so that depth 2 searched the tree of depth 1, and stopped 4% of the moves
  of a match against ``pydraughts:6`` at depth 2 or 3).

Budgets are seconds of wall time (``seconds``), or nodes (``nodes``: deterministic, for tests and
reproducible matches). A node is one iteration of the search loop (one child searched or one node
finished), the unit of ``SearchStack.iterations``.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import State
from neurocheckers.search.alphabeta import WIN_SCORE, Heuristic, alphabeta_stack, color_sign
from neurocheckers.search.transposition import TranspositionTable, empty_table

MAX_DEPTH = 24
"""The deepest nominal depth tried (in plies, one jump of a multi-jump being one)."""
EXTENSION = 8
"""Levels beyond the nominal depth that capture extensions may use (the stack has
``MAX_DEPTH + EXTENSION`` levels: 32 searched as fast as 8, while 56 took twice as long a node)."""
DEFAULT_RATE = 100_000.0
"""Nodes per second assumed before a player has measured its own rate."""
MIN_NODES = 256
"""The smallest node limit an iteration is given."""
MEASURED_NODES = 1_000
"""An iteration this large (a few milliseconds) updates the measured rate: at 0.05 s a move no
iteration reached the 5,000 nodes once asked, so the rate stayed at ``DEFAULT_RATE`` (100,000
nodes/s, where the 5 x 64 network runs 173,000) and iterations stopped short of their deadline."""
TABLE_BITS = 0
"""The default transposition table: none (see the module docstring); 18 (4 MiB) for one."""

LeafScore = Callable[[Any, jax.Array], Heuristic]
"""``(params, key) -> Heuristic``: the leaf score of a search, built from an evaluator's parameters."""


@dataclasses.dataclass(frozen=True)
class IterationResult:
    """One iteration's answer, on the host."""

    scores: np.ndarray
    """[A] float32, root action scores from the mover's view."""
    done: np.ndarray
    """[A] bool, the legal root actions whose score is final."""
    nodes: int
    complete: bool
    cut: bool
    """Whether a leaf was cut by the depth (False: the whole game tree below the root was searched)."""


@dataclasses.dataclass(frozen=True)
class SearchInfo:
    """What one move's search did."""

    action: int
    depth: int
    """The deepest nominal depth whose result chose the move (0: the only legal move)."""
    nodes: int
    seconds: float
    score: float
    """The chosen move's score from the mover's view (a win is near ``WIN_SCORE``)."""
    table: TranspositionTable | None = None
    """The transposition table after the search (None without one): pass it to the next move's."""


@dataclasses.dataclass(frozen=True)
class IterationKernel:
    """One iteration's jitted search (``iteration_kernel``) and the size of its table."""

    run: Callable
    table_bits: int

    def __call__(self, *args):
        return self.run(*args)


@functools.cache
def iteration_kernel(
    rules: Rules, leaf: LeafScore, root_margin: float, table_bits: int = TABLE_BITS
) -> IterationKernel:
    """The jitted ``(params, state, depth, node_limit, first_action, key, table) -> (scores, done,
    nodes, complete, cut, table)`` of one iteration: a quiescent alpha-beta of nominal ``depth``, with a
    transposition table of ``2 ** table_bits`` entries (0: none; ``table`` is then None)."""

    def run(params, state, depth, node_limit, first_action, key, table):
        final = alphabeta_stack(
            rules, state, depth, leaf(params, key), root_margin, max_levels=MAX_DEPTH + EXTENSION,
            quiescence=True, node_limit=node_limit, first_action=first_action, lazy_leaves=True,
            table=table,
        )  # fmt: skip
        legal = state.legal_action_mask
        scores = color_sign(state.color) * final.root_scores
        return scores, final.root_done & legal, final.iterations, final.complete, final.cut, final.table

    return IterationKernel(jax.jit(run, donate_argnums=6), table_bits)


def new_table(kernel: IterationKernel) -> TranspositionTable | None:
    """An empty transposition table for ``kernel`` (None when it uses none)."""
    return empty_table(kernel.table_bits) if kernel.table_bits else None


def legal_actions(state: State) -> np.ndarray:
    """The legal actions of one game's host ``state``, from its ``legal_bits`` in NumPy (no device
    work: a move's fixed costs count against a small time budget)."""
    bits = np.asarray(state.legal_bits, np.uint32)
    squares = np.arange(state.num_squares, dtype=np.uint32)
    legal = (bits[:, None] >> squares[None, :]) & 1
    return np.flatnonzero(legal.reshape(-1))


def run_iteration(
    kernel: IterationKernel, params, state: State, depth: int, node_limit: int, first: int, key, table
):
    """One iteration on the host: (``IterationResult``, the updated table, on the device)."""
    out = kernel(params, state, np.int32(depth), np.int32(node_limit), np.int32(first), key, table)
    scores, done, nodes, complete, cut = jax.device_get(out[:5])
    result = IterationResult(np.asarray(scores), np.asarray(done), int(nodes), bool(complete), bool(cut))
    return result, out[5]


def choose(result: IterationResult, first: int, rng: np.random.Generator) -> tuple[int, float] | None:
    """``(action, score)`` of an iteration, or None when it cannot be trusted: an incomplete one
    counts only if the previous best move ``first`` got its final score in it. Ties are broken by
    ``rng``."""
    if not result.complete and (first < 0 or not result.done[first]):
        return None
    if not result.done.any():
        return None
    scores = np.where(result.done, result.scores, -np.inf)
    best = np.flatnonzero(scores >= scores.max())
    action = int(best[rng.integers(len(best))]) if len(best) > 1 else int(best[0])
    return action, float(scores[action])


@dataclasses.dataclass
class Deepening:
    """Iterative deepening with one evaluator; keeps its measured speed between moves.

    ``kernel`` comes from ``iteration_kernel``; ``params`` are the evaluator's. ``rate`` is the
    measured nodes per second (updated after every large iteration), used to turn the time left into
    a node limit so that an iteration stops near the deadline.
    """

    kernel: IterationKernel
    params: Any
    rate: float = DEFAULT_RATE

    def search(
        self,
        state: State,
        key: jax.Array,
        seconds: float | None = None,
        nodes: int | None = None,
        max_depth: int = MAX_DEPTH,
        rng: np.random.Generator | None = None,
        table: TranspositionTable | None = None,
    ) -> SearchInfo:
        """The move for one game's ``state`` (host or device, unbatched) within ``seconds`` of wall
        time or ``nodes`` nodes (exactly one of them); ties are broken by ``rng`` (default: one
        seeded by ``key``). ``table``: the game's transposition table from its previous move (used
        up; the new one is ``SearchInfo.table``), or None for an empty one."""
        if (seconds is None) == (nodes is None):
            raise ValueError("give exactly one budget: seconds or nodes")
        start = time.perf_counter()
        legal = legal_actions(state)
        if len(legal) <= 1:
            return SearchInfo(int(legal[0]) if len(legal) else 0, 0, 0, 0.0, 0.0, table)
        if table is None:
            table = new_table(self.kernel)
        if rng is None:
            rng = np.random.default_rng(np.asarray(jax.random.key_data(key)).ravel())
        best, spent = (int(legal[0]), 0.0), 0
        depth_done = 0
        for depth in range(1, max_depth + 1):
            limit = self._node_limit(start, seconds, nodes, spent, depth)
            if limit is None:
                break
            first = best[0] if depth_done else -1
            result, table = run_iteration(self.kernel, self.params, state, depth, limit, first, key, table)
            spent += result.nodes
            self._measure(result.nodes, time.perf_counter() - start, spent)
            chosen = choose(result, first, rng)
            if chosen is not None:
                best, depth_done = chosen, depth
            proven = abs(best[1]) >= WIN_SCORE - MAX_DEPTH - EXTENSION
            exhausted = result.complete and not result.cut
            if not result.complete or proven or exhausted:
                break
        return SearchInfo(best[0], depth_done, spent, time.perf_counter() - start, best[1], table)

    def _node_limit(self, start, seconds, nodes, spent, depth) -> int | None:
        """The node limit of the next iteration, or None when there is no budget left for it."""
        if nodes is not None:
            left = nodes - spent
            return left if left > 0 else None
        elapsed = time.perf_counter() - start
        # Past half the budget an iteration (several times the last one) would not finish.
        if depth > 1 and elapsed > 0.5 * seconds:
            return None
        return max(MIN_NODES, int((seconds - elapsed) * self.rate))

    def _measure(self, iteration_nodes: int, elapsed: float, spent: int) -> None:
        """Fold this move's speed so far into ``rate`` once it is large enough to be measured."""
        if iteration_nodes >= MEASURED_NODES and elapsed > 0:
            self.rate = 0.5 * self.rate + 0.5 * spent / elapsed
