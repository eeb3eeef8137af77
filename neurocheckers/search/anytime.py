"""MCTS by the clock: the simulation count that fits a time per move on this machine
(``calibrate_simulations``, for runs), and a search that grows until a deadline (``anytime_search``,
for play)."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from typing import Any

import jax

from neurocheckers.rules.engine import init_batch
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import State
from neurocheckers.search.mcts import MCTSConfig, SearchOutput, batched_search, search
from neurocheckers.search.types import ValueFn


def calibrate_simulations(
    rules: Rules,
    config: MCTSConfig,
    value_fn: ValueFn,
    params: Any,
    seconds_per_move: float,
    batch_size: int,
    states: State | None = None,
    repeats: int = 3,
) -> int:
    """The simulation count whose batched search of ``batch_size`` games takes ``seconds_per_move``.

    Times the jitted, vmapped search on this machine (median of ``repeats`` after a compile run) at
    ``config.num_simulations``, then once more at the estimate when it is far off, since the cost per
    simulation grows with the tree. ``states`` ([batch_size] positions) default to the initial
    position. Returns at least 1. Record the count, not the time budget, so runs are reproducible.
    """
    if seconds_per_move <= 0:
        raise ValueError(f"seconds_per_move must be > 0, got {seconds_per_move!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
    if states is None:
        states = init_batch(rules, batch_size)
    keys = jax.random.split(jax.random.key(0), batch_size)

    def seconds_per_sim(num_sims: int) -> float:
        run = batched_search(rules, dataclasses.replace(config, num_simulations=num_sims), value_fn)
        jax.block_until_ready(run(params, states, keys))  # compile
        times = []
        for _ in range(max(repeats, 1)):
            start = time.perf_counter()
            jax.block_until_ready(run(params, states, keys))
            times.append(time.perf_counter() - start)
        return sorted(times)[len(times) // 2] / num_sims

    probe = config.num_simulations
    estimate = max(1, int(seconds_per_move / seconds_per_sim(probe)))
    if not probe / 2 <= estimate <= probe * 2:
        estimate = max(1, int(seconds_per_move / seconds_per_sim(estimate)))
    return estimate


def anytime_search(
    rules: Rules,
    config: MCTSConfig,
    value_fn: ValueFn,
    params: Any,
    state: State,
    key: jax.Array,
    seconds: float,
    max_simulations: int = 1 << 16,
    clock: Callable[[], float] = time.perf_counter,
) -> SearchOutput:
    """Search one game until a wall-clock deadline of ``seconds``, for interactive play.

    Runs the jitted ``search`` with ``config.num_simulations``, then doubles the count while the next
    run is predicted to end before the deadline (2.2x the last run, plus the last compile time when
    the next size is not compiled yet) and stays within ``max_simulations``, and returns the last
    completed result. The first run always completes. Compiled sizes are kept for the process, so
    later moves only pay for running. A position with at most one legal move returns after the first
    run. ``clock`` (seconds) times the deadline, the runs and the compiles; tests inject their own.
    """
    deadline = clock() + seconds
    inputs = (params, state, key)
    num_sims = config.num_simulations
    while True:
        static = (rules, dataclasses.replace(config, num_simulations=num_sims), value_fn)
        compiled, compile_seconds = _compiled_search(static, inputs, clock)
        started = clock()
        result = jax.block_until_ready(compiled(*inputs))
        took = clock() - started
        if int(state.num_legal_actions) <= 1 or num_sims * 2 > max_simulations:
            return result
        bigger = (rules, dataclasses.replace(config, num_simulations=num_sims * 2), value_fn)
        compiled_already = _search_signature(bigger, inputs) in _COMPILED_SEARCHES
        predicted = 2.2 * took + (0.0 if compiled_already else compile_seconds)
        if clock() + predicted > deadline:
            return result
        num_sims *= 2


_COMPILED_SEARCHES: dict[tuple, tuple[Any, float]] = {}
"""Compiled one-game searches of ``anytime_search`` with the seconds their compilation took."""


def _search_signature(static: tuple, inputs: tuple) -> tuple:
    """The key of a compiled search: its static ``(rules, config, value_fn)`` and the structure and
    shapes of its ``(params, state, key)``."""
    params_and_state = inputs[:2]
    shapes = tuple((x.shape, x.dtype) for x in jax.tree.leaves(params_and_state))
    return *static, jax.tree.structure(params_and_state), shapes


def _compiled_search(static: tuple, inputs: tuple, clock: Callable[[], float]) -> tuple[Any, float]:
    """``search(*static, *inputs)`` compiled for these settings and argument shapes (``static``:
    rules, config, value_fn; ``inputs``: params, state, key), and its compile seconds."""
    signature = _search_signature(static, inputs)
    if signature not in _COMPILED_SEARCHES:
        started = clock()
        compiled = jax.jit(functools.partial(search, *static)).lower(*inputs).compile()
        _COMPILED_SEARCHES[signature] = (compiled, clock() - started)
    return _COMPILED_SEARCHES[signature]
