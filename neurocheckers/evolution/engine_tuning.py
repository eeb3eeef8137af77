"""What the evolution strategies tuned by engine games share (``search_tuners``: CMA-ES and the GA
over the compiled search's parameters; ``network_es``: an ES over a network's top layers).

- The search genome: each tuned parameter (``compiled.driver.tunable_fields``) scaled to [0, 1]
  over its range; a genome is decoded clipped to the ranges, an integer parameter rounded to the
  nearest (``decode``).
- The fitness: every candidate plays game pairs against one reference (the mean, or the best elite)
  on the same openings (``play_candidates``), the games of all candidates in one call of the shares
  (``match.shares``: this process, local processes, Ray tasks); a candidate that plays as the
  reference does scores 0.5 without games (a node budget is deterministic: it would draw the pair).
- The epoch of a run (``host_epoch``): ``epoch_on_host(settings, state, key, map_shares, shares)``
  over ``workers`` shares.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from neurocheckers.compiled.driver import SearchOptions, options_from_metadata, tunable_fields
from neurocheckers.match.engine_pairs import EngineSide, PairResult, play_pair_share
from neurocheckers.match.shares import MapShares, in_process
from neurocheckers.networks.agent_file import load_agent

DRAWN_PAIR = PairResult(np.array([0, 0, 1, 0, 0]), np.array([0, 2, 0]), 0, 0.0)
"""What a candidate that plays as the reference scores, with no games: one drawn pair (0.5)."""


def parameter_names(text: str) -> tuple[str, ...]:
    """The comma-separated parameter names of ``text``, in order."""
    return tuple(name.strip() for name in text.split(",") if name.strip())


@functools.cache
def bounds(names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(low, high, integer)`` [D] of the tuned parameters."""
    fields = tunable_fields()
    low, high = (np.array([fields[n][i] for n in names], np.float64) for i in range(2))
    integer = np.array([not isinstance(getattr(SearchOptions(), n), float) for n in names])
    return low, high, integer


@functools.cache
def start_search(agent: str, rules: str) -> SearchOptions:
    """The search a tuning starts from: the agent file's tuned one, else the defaults (read once a
    process)."""
    return options_from_metadata(load_agent(agent, rules).metadata, SearchOptions())


def encode(names: tuple[str, ...], options: SearchOptions) -> np.ndarray:
    """[D] float64 in [0, 1]: ``options``' values of ``names`` as shares of their ranges."""
    low, high, _ = bounds(names)
    values = np.array([float(getattr(options, n)) for n in names])
    return np.clip((values - low) / (high - low), 0.0, 1.0)


def decode(names: tuple[str, ...], genome: np.ndarray) -> dict[str, float]:
    """The search parameters of a genome ([D] shares of the ranges): clipped to the ranges, an integer
    one rounded to the nearest, a float one to 6 decimals."""
    low, high, integer = bounds(names)
    values = low + np.clip(np.asarray(genome, np.float64), 0.0, 1.0) * (high - low)
    values = np.where(integer, np.rint(values), np.round(values, 6))
    fields = SearchOptions()
    return {n: type(getattr(fields, n))(v) for n, v in zip(names, values, strict=True)}


def key_rng(key: jax.Array) -> np.random.Generator:
    """A NumPy generator drawn from a JAX key (the same key, the same draws)."""
    return np.random.default_rng(np.asarray(jax.random.key_data(key)).ravel().tolist())


def _same(a: EngineSide, b: EngineSide) -> bool:
    """Whether two sides play the same: the same file, parameters and tensors."""
    if a.agent != b.agent or dict(a.options) != dict(b.options) or set(a.tensors) != set(b.tensors):
        return False
    return all(np.array_equal(a.tensors[n], b.tensors[n]) for n in a.tensors)


def play_candidates(
    rules: str, candidates: Sequence[EngineSide], reference: EngineSide, pairs: int, nodes: int,
    first_opening: int, shares: int = 1, map_shares: MapShares = in_process,
) -> list[PairResult]:  # fmt: skip
    """Each candidate's ``pairs`` pairs against ``reference`` at ``nodes`` a move, on the committed
    openings ``first_opening ..`` (the same for every candidate), A the candidate. The games of all
    candidates go to ``map_shares`` at once, each candidate's pairs in pieces enough for ``shares``
    workers; a candidate that plays as the reference gets ``DRAWN_PAIR`` ``pairs`` times."""
    playing = [i for i, c in enumerate(candidates) if not _same(c, reference)]
    pieces = max(1, min(pairs, -(-shares // max(1, len(playing)))))
    sizes = [pairs // pieces + (j < pairs % pieces) for j in range(pieces)]
    starts = np.cumsum([0, *sizes[:-1]])
    work, owner = [], []
    for i in playing:
        for start, size in zip(starts, sizes, strict=True):
            work.append((rules, candidates[i], reference, first_opening + int(start), size, nodes, 0))
            owner.append(i)
    drawn = PairResult(DRAWN_PAIR.counts * pairs, DRAWN_PAIR.results * pairs, 0, 0.0)
    results = [drawn] * len(candidates)
    played = [None] * len(candidates)
    for i, result in zip(owner, map_shares(play_pair_share, work) if work else [], strict=True):
        played[i] = result if played[i] is None else played[i] + result
    return [p if p is not None else r for p, r in zip(played, results, strict=True)]


def game_metrics(results: Sequence[PairResult]) -> dict[str, float]:
    """The games' columns of an epoch: games, wins, draws and losses (the candidates'), plies, and
    ``tune_score`` (the candidates' mean score against the reference) and ``tune_best`` (the best)."""
    played = [r for r in results if r.games and r.plies]
    losses, draws, wins = (int(sum(r.results[i] for r in played)) for i in range(3))
    scores = [r.score for r in results]
    return {"games": sum(r.games for r in played), "wins": wins, "draws": draws, "losses": losses,
            "plies": sum(r.plies for r in played), "tune_score": float(np.mean(scores)),
            "tune_best": float(np.max(scores))}  # fmt: skip


def host_epoch(
    epoch_on_host: Callable[..., tuple], settings: Any, workers: int, map_shares: MapShares | None = None
) -> Callable[..., tuple]:
    """The run's epoch: ``epoch_on_host(settings, state, key, map_shares, shares)`` with its games in
    ``workers`` shares, run by ``map_shares`` (Ray's, when the run names an instance), else over as
    many local processes (one: this process)."""
    if map_shares is None and workers > 1:
        from neurocheckers.match.shares import process_pool

        map_shares = process_pool(workers)
    chosen = map_shares or in_process
    return lambda state, key, *_: epoch_on_host(settings, state, key, chosen, workers)


def tuned_columns(names: tuple[str, ...], genome: np.ndarray) -> dict[str, float]:
    """``tuned_NAME`` columns: each parameter's value in ``genome`` (decoded)."""
    return {f"tuned_{n}": float(v) for n, v in decode(names, genome).items()}


def with_search(options: SearchOptions, names: tuple[str, ...], genome: np.ndarray) -> SearchOptions:
    """``options`` with the parameters of ``genome`` (decoded)."""
    return dataclasses.replace(options, **decode(names, genome))
