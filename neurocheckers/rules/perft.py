"""Perft: count the leaves of the legal-move tree, one depth per whole turn.

Runs breadth-first on the host with the jitted, vmapped engine. Positions reached more than once
are merged with a multiplicity, so deep counts stay cheap; every distinct capture path still counts
as its own move. Draw limits are ignored, as is usual for perft.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

import jax
import jax.numpy as jnp
import numpy as np

from neurocheckers.rules.engine import step
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import State

_CHUNK = 8192
_KEY_FIELDS = ("black_men", "black_kings", "white_men", "white_kings", "color", "continuing")


@functools.cache
def _batched_step(rules: Rules) -> Callable[[State, jax.Array], State]:
    return jax.jit(jax.vmap(functools.partial(step, rules)))


def _take(states: State, index: np.ndarray) -> State:
    return jax.tree.map(lambda x: x[index], states)


def _concat(parts: list[State]) -> State:
    return jax.tree.map(lambda *xs: np.concatenate(xs), *parts)


def _step_all(rules: Rules, states: State, actions: np.ndarray) -> State:
    """Step many states on the host in fixed-size chunks (one compilation per preset)."""
    fn = _batched_step(rules)
    out = []
    for start in range(0, len(actions), _CHUNK):
        stop = min(start + _CHUNK, len(actions))
        pad = np.concatenate([np.arange(start, stop), np.full(_CHUNK - (stop - start), start)])
        chunk = _take(states, pad)
        result = fn(chunk, jnp.asarray(actions[pad]))
        count = stop - start
        out.append(jax.tree.map(lambda x, count=count: np.asarray(x)[:count], result))
    return _concat(out)


def _merge(states: State, weights: np.ndarray) -> tuple[State, np.ndarray]:
    """Merge identical positions (same pieces, side to move and continuing piece), adding weights."""
    keys = np.stack([np.asarray(getattr(states, f)).astype(np.uint32) for f in _KEY_FIELDS], axis=1)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    merged = np.bincount(inverse.reshape(-1), weights=weights, minlength=len(first))
    return _take(states, first), np.rint(merged).astype(np.int64)


def _expand(rules: Rules, states: State, weights: np.ndarray) -> tuple[State, np.ndarray]:
    """All positions after one whole turn from ``states``, multi-jumps followed to their end."""
    done_states: list[State] = []
    done_weights: list[np.ndarray] = []
    while len(weights):
        # Perft ignores draw limits: clear counters so no state is terminated by them.
        states = states.replace(
            ply=np.zeros_like(states.ply),
            plies_without_capture=np.zeros_like(states.plies_without_capture),
            terminated=np.zeros_like(states.terminated),
        )
        parent, action = np.nonzero(np.asarray(states.legal_action_mask))
        if len(parent) == 0:
            break
        children = _step_all(rules, _take(states, parent), action.astype(np.int32))
        child_weights = weights[parent]
        going_on = np.asarray(children.continuing) != 0
        done_states.append(_take(children, ~going_on))
        done_weights.append(child_weights[~going_on])
        states, weights = _merge(_take(children, going_on), child_weights[going_on])
    if not done_states:
        return states, np.zeros(0, dtype=np.int64)
    return _merge(_concat(done_states), np.concatenate(done_weights))


def perft_iter(rules: Rules, state: State, depth: int) -> Iterator[tuple[int, int]]:
    """Yield ``(d, count)`` for d = 1..depth: the number of d-turn move sequences from ``state``."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth!r}")
    states = jax.tree.map(lambda x: np.asarray(x)[None], state)
    weights = np.ones(1, dtype=np.int64)
    for d in range(1, depth + 1):
        states, weights = _expand(rules, states, weights)
        yield d, int(weights.sum())


def perft(rules: Rules, state: State, depth: int) -> list[int]:
    """Counts for depths 1..depth (see ``perft_iter``)."""
    return [count for _, count in perft_iter(rules, state, depth)]
