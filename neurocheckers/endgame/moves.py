"""Whole-turn successors of many positions at once, with the JAX engine (multi-jumps followed to
their end), in the mover orientation of :mod:`neurocheckers.endgame.index`."""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import numpy as np

from neurocheckers.endgame.index import to_mover_view
from neurocheckers.rules.engine import from_position, step_unchecked
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State

CHUNK = 32768
"""Positions stepped per call of the jitted engine (smaller batches are padded to a power of two)."""


@functools.cache
def _start(rules: Rules) -> Callable[..., State]:
    def start(boards: jax.Array) -> State:
        return from_position(rules, boards[0], boards[1], boards[2], boards[3], BLACK)

    return jax.jit(jax.vmap(start))


@functools.cache
def _step(rules: Rules) -> Callable[[State, jax.Array], State]:
    return jax.jit(jax.vmap(functools.partial(step_unchecked, rules)))


def _padded_calls(fn: Callable, count: int, *arrays) -> list:
    """``fn`` over ``arrays`` (sliced on their first axis) in chunks padded to fixed sizes, so that
    a preset compiles a handful of shapes; returns the host results, unpadded, chunk by chunk."""
    out = []
    for start in range(0, count, CHUNK):
        stop = min(start + CHUNK, count)
        size = max(1024, 1 << (stop - start - 1).bit_length())
        rows = np.minimum(np.arange(start, start + size), stop - 1)
        result = fn(*(jax.tree.map(lambda x, rows=rows: x[rows], a) for a in arrays))
        out.append(jax.tree.map(lambda x, n=stop - start: np.asarray(x)[:n], jax.device_get(result)))
    return out


def _concat(parts: list) -> State:
    return jax.tree.map(lambda *xs: np.concatenate(xs), *parts)


def _legal_pairs(states: State, num_squares: int) -> tuple[np.ndarray, np.ndarray]:
    """(state row, action) of every legal action of ``states``."""
    bits = np.asarray(states.legal_bits, dtype=np.uint32)
    squares = np.arange(num_squares, dtype=np.uint32)
    mask = ((bits[:, :, None] >> squares) & np.uint32(1)).astype(bool).reshape(len(bits), -1)
    rows, actions = np.nonzero(mask)
    return rows, actions.astype(np.int32)


def successors(rules: Rules, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every whole-turn move of [B, 4] mover-view positions (mover men, kings, opponent men, kings).

    Returns ``(parent, after)``: [E] int64, the row of ``boards`` each move is played from, and
    [E, 4] uint32, the position after it seen from the next mover (so it lies in a slice again).
    Every distinct capture path is its own move. A position without a move has no rows."""
    boards = np.asarray(boards, dtype=np.uint32)
    if len(boards) == 0:
        return np.zeros(0, np.int64), np.zeros((0, 4), np.uint32)
    states = _concat(_padded_calls(_start(rules), len(boards), boards.T.copy().T))
    parents = np.arange(len(boards), dtype=np.int64)
    done_parents, done_boards = [], []
    while len(parents):
        rows, actions = _legal_pairs(states, rules.num_squares)
        if len(rows) == 0:
            break
        frontier = jax.tree.map(lambda x, rows=rows: x[rows], states)
        children = _concat(_padded_calls(_step(rules), len(rows), frontier, actions))
        going_on = np.asarray(children.continuing) != 0
        finished = ~going_on
        after = np.stack(
            [
                np.asarray(getattr(children, f))[finished]
                for f in ("black_men", "black_kings", "white_men", "white_kings")
            ],
            axis=1,
        )
        done_parents.append(parents[rows][finished])
        done_boards.append(to_mover_view(after, np.zeros(len(after), bool), rules.num_squares))
        states = jax.tree.map(lambda x, keep=going_on: x[keep], children)
        parents = parents[rows][going_on]
    if not done_parents:
        return np.zeros(0, np.int64), np.zeros((0, 4), np.uint32)
    return np.concatenate(done_parents), np.concatenate(done_boards).astype(np.uint32)
