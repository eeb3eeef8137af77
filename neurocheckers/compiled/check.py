"""Agreement of the compiled rules with the JAX rules: random positions, and every whole-turn move of
each as rows ``[position, action 1, ..., action L, -1 ..., black men, black kings, white men, white
kings]`` (the JAX actions of the move and the position after it), built by each implementation.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from numba import njit

from neurocheckers.compiled.bitops import popcount
from neurocheckers.compiled.board import G_CROWN, G_FULL, G_LANDING, G_N, G_NEIGHBOR, geometry
from neurocheckers.compiled.movegen import (
    CAPACITY,
    M_CAPTURED,
    M_FROM,
    M_PATH,
    M_TO,
    MOVE_FIELDS,
    generate,
    make,
)
from neurocheckers.rules.engine import from_position, step
from neurocheckers.rules.presets import Rules

MAX_ACTIONS = 16
"""Actions of the longest move a row holds (a multi-jump on 8x8 captures at most 9 pieces)."""
ROW_WIDTH = 1 + MAX_ACTIONS + 4
CHUNK = 4096
"""Positions stepped at once by the JAX side (one compilation per preset)."""


@njit(cache=True)
def _random_square(free, rng_bits):
    """A random set bit of ``free`` (nonzero)."""
    k = rng_bits % popcount(free)
    for _ in range(k):
        free &= free - 1
    return free & -free


@njit(cache=True, inline="always")
def _put(out, i, boards, color):
    for k in range(4):
        out[i, k] = boards[k]
    out[i, 4] = color


@njit(cache=True)
def random_positions(geo, count, seed, men_per_side, max_turns):
    """[count, 5] int64 (black men, black kings, white men, white kings, mover): half random playouts
    of 0..``max_turns`` whole turns from the start, half random placements of men and kings."""
    np.random.seed(seed)
    n = geo[G_N]
    out = np.zeros((count, 5), np.int64)
    moves = np.zeros((CAPACITY, MOVE_FIELDS), np.int64)
    start_black = (np.int64(1) << men_per_side) - 1
    start_white = start_black << (n - men_per_side)
    for i in range(count):
        if i % 2 == 0:
            om, ok, pm, pk, color = start_black, np.int64(0), start_white, np.int64(0), np.int64(0)
            for _ in range(np.random.randint(0, max_turns + 1)):
                k = generate(geo, om, ok, pm, pk, color, moves, np.int64(0))
                if k == 0:
                    break
                j = np.random.randint(0, k)
                om, ok, pm, pk = make(geo, om, ok, pm, pk, color, moves[j, M_FROM], moves[j, M_TO],
                                      moves[j, M_CAPTURED])  # fmt: skip
                color = 1 - color
            _put(out, i, (om, ok, pm, pk) if color == 0 else (pm, pk, om, ok), color)
            continue
        free = geo[G_FULL]
        boards = np.zeros(4, np.int64)
        for kind in range(4):  # black men, black kings, white men, white kings
            allowed = free & ~geo[G_CROWN + (0 if kind == 0 else 1)] if kind % 2 == 0 else free
            for _ in range(np.random.randint(0, men_per_side // 2 + 1)):
                if allowed == 0:
                    break
                bit = _random_square(allowed, np.random.randint(0, 1 << 30))
                boards[kind] |= bit
                allowed &= ~bit
                free &= ~bit
        _put(out, i, (boards[0], boards[1], boards[2], boards[3]), np.random.randint(0, 2))
    return out


@njit(cache=True)
def compiled_rows(geo, positions):
    """The move rows (module docstring) of every position, by the compiled generator."""
    n_sq = geo[G_N]
    moves = np.zeros((CAPACITY, MOVE_FIELDS), np.int64)
    rows = np.full((positions.shape[0] * 16, ROW_WIDTH), -1, np.int64)
    r = 0
    for i in range(positions.shape[0]):
        bm, bk, wm, wk, color = (
            positions[i, 0],
            positions[i, 1],
            positions[i, 2],
            positions[i, 3],
            positions[i, 4],
        )
        own = (bm, bk, wm, wk) if color == 0 else (wm, wk, bm, bk)
        k = generate(geo, own[0], own[1], own[2], own[3], color, moves, np.int64(0))
        for j in range(k):
            if r >= rows.shape[0]:
                rows = np.concatenate((rows, np.full_like(rows, -1)))
            src, cap, path = moves[j, M_FROM], moves[j, M_CAPTURED], moves[j, M_PATH]
            length = max(np.int64(1), popcount(cap))
            if length > MAX_ACTIONS:
                raise ValueError("a move longer than MAX_ACTIONS")
            rows[r, 0] = i
            sq = src
            for a in range(length):
                d = (path >> (2 * a)) & 3
                rows[r, 1 + a] = d * n_sq + sq
                sq = geo[(G_LANDING if cap else G_NEIGHBOR) + 32 * d + sq]
            a_, b_, c_, d_ = make(geo, own[0], own[1], own[2], own[3], color, src, moves[j, M_TO], cap)
            board = (c_, d_, a_, b_) if color == 0 else (a_, b_, c_, d_)
            for k in range(4):
                rows[r, 1 + MAX_ACTIONS + k] = board[k]
            r += 1
    return rows[:r]


@functools.cache
def _jax_fns(rules: Rules):
    start = jax.jit(jax.vmap(lambda p: from_position(rules, p[0], p[1], p[2], p[3], p[4])))
    stepped = jax.jit(jax.vmap(functools.partial(step, rules)))
    return start, stepped


def _take(tree, index):
    return jax.tree.map(lambda x: np.asarray(x)[index], tree)


def jax_rows(rules: Rules, positions: np.ndarray) -> np.ndarray:
    """The move rows of every position, by the JAX engine (each jump of a multi-jump a ``step``)."""
    start, stepped = _jax_fns(rules)
    out = []
    for lo in range(0, len(positions), CHUNK):
        chunk = positions[lo : lo + CHUNK]
        pad = np.concatenate([chunk, np.repeat(chunk[:1], CHUNK - len(chunk), 0)])
        states = _take(start(jnp.asarray(pad.astype(np.uint32))), slice(0, len(chunk)))
        prefix = np.full((len(chunk), 1 + MAX_ACTIONS), -1, np.int64)
        prefix[:, 0] = lo + np.arange(len(chunk))
        for depth in range(MAX_ACTIONS):
            parent, action = np.nonzero(np.asarray(states.legal_action_mask))
            if len(parent) == 0:
                break
            children = _step_padded(stepped, _take(states, parent), action.astype(np.int32))
            prefix = prefix[parent]
            prefix[:, 1 + depth] = action
            going_on = np.asarray(children.continuing) != 0
            done = ~going_on
            fields = ("black_men", "black_kings", "white_men", "white_kings")
            boards = np.stack([np.asarray(getattr(children, f)).astype(np.int64)[done] for f in fields], 1)
            out.append(np.concatenate([prefix[done], boards], 1))
            states, prefix = _take(children, going_on), prefix[going_on]
    return np.concatenate(out) if out else np.zeros((0, ROW_WIDTH), np.int64)


def _step_padded(stepped, states, actions):
    """``stepped`` over any number of states, in fixed-size chunks (one compilation)."""
    parts = []
    for lo in range(0, len(actions), CHUNK):
        idx = np.arange(lo, min(lo + CHUNK, len(actions)))
        pad = np.concatenate([idx, np.full(CHUNK - len(idx), idx[0])])
        result = stepped(_take(states, pad), jnp.asarray(actions[pad]))
        parts.append(_take(result, slice(0, len(idx))))
    return jax.tree.map(lambda *xs: np.concatenate(xs), *parts)


def sorted_rows(rows: np.ndarray) -> np.ndarray:
    return rows[np.lexsort(rows.T[::-1])]


def compare_moves(
    rules: Rules, count: int, seed: int = 0, max_turns: int = 60
) -> tuple[np.ndarray, np.ndarray, list]:
    """``(positions, rows, mismatches)``: the whole-turn moves of ``count`` random positions by both
    implementations (``rows``: the compiled ones, sorted); ``mismatches`` lists the positions
    (bitboards and mover) where the two differ."""
    geo = geometry(rules)
    positions = random_positions(geo, np.int64(count), np.int64(seed), np.int64(rules.men_per_side),
                                 np.int64(max_turns))  # fmt: skip
    ours = sorted_rows(compiled_rows(geo, positions))
    theirs = sorted_rows(jax_rows(rules, positions))
    if ours.shape == theirs.shape and np.array_equal(ours, theirs):
        return positions, ours, []
    bad = sorted(set(np.unique(ours[:, 0])) ^ set(np.unique(theirs[:, 0])) | {
        i for i in range(count)
        if not np.array_equal(ours[ours[:, 0] == i], theirs[theirs[:, 0] == i])
    })  # fmt: skip
    return positions, ours, [tuple(int(x) for x in positions[i]) for i in bad]
