"""SPSA over the compiled search's parameters, as fishtest runs it: each epoch (iteration ``k``) draws
a random sign ``delta`` a parameter and plays game pairs of the search at ``theta + c_k delta``
against ``theta - c_k delta`` (``match.engine_pairs``: the same openings, each with both colours, a
node budget a move), then moves ``theta`` by ``R_k c_k (wins - losses) delta`` (the batch's raw
wins less losses, not divided by its size).

Gains: ``c_k = c / k^gamma``, ``R_k = a / (A + k)^alpha / c_k^2`` with ``alpha = 0.602``, ``gamma =
0.101``, ``c = c_end N^gamma`` and ``a = r_end c_end^2 (A + N)^alpha`` for ``N`` iterations, so the
run ends at ``c_end`` (fishtest's ``spsa_handler.py``; inputs as ppigazzini/fishtest-spsa-lab). Each
parameter's ``c_end`` is ``spsa_c_end`` of its steps, at least half a step for an integer one, whose
values are rounded at random to a neighbour in proportion (OpenBench's probabilistic rounding).

The network is the agent file's, unchanged: the run's snapshots are it with the tuned search in their
metadata (``driver.options_metadata``), which ``compiled:`` plays and ``export`` keeps.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from neurocheckers.compiled.driver import (
    SearchOptions,
    options_from_metadata,
    options_metadata,
    tunable_fields,
)
from neurocheckers.match.engine_pairs import EngineSide, play_pairs
from neurocheckers.match.shares import MapShares, in_process
from neurocheckers.networks.agent_file import load_agent
from neurocheckers.sections import RulesSettings, RunSettings, SPSASectionSettings

ALPHA = 0.602
"""The learning rate's decay exponent (Spall; fishtest)."""
GAMMA = 0.101
"""The perturbation's decay exponent (Spall; fishtest)."""
INTEGER_C_END = 0.5
"""The least perturbation of an integer parameter, in its steps (OpenBench)."""


@dataclasses.dataclass(frozen=True)
class SPSASettings(SPSASectionSettings, RulesSettings, RunSettings):
    """What SPSA needs: its section, the rules, and the run's length and seed (``N = epochs``)."""

    @property
    def names(self) -> tuple[str, ...]:
        """The tuned parameters, in their order in ``theta``."""
        return tuple(name.strip() for name in self.spsa_parameters.split(",") if name.strip())


def check_parameters(names: tuple[str, ...]) -> list[str]:
    """What is wrong with a list of tuned parameters, one message each (``[]``: nothing)."""
    fields = tunable_fields()
    problems = [f"spsa_parameters: no tunable search parameter {n!r}; they are: {', '.join(fields)}"
                for n in names if n not in fields]  # fmt: skip
    if not names:
        problems.append("spsa_parameters names no parameter")
    if len(set(names)) != len(names):
        problems.append(f"spsa_parameters names a parameter twice: {', '.join(names)}")
    return problems


class SPSAState(struct.PyTreeNode):
    """An SPSA run's state.

    Fields:
      theta: [D] float32, the tuned parameters (``SPSASettings.names``), unrounded.
      params: the agent's network (unchanged), for the run's snapshots.
      epoch: [] int32, iterations done.
    """

    theta: jax.Array
    params: Any
    epoch: jax.Array


@functools.cache
def start_options(settings: SPSASettings) -> SearchOptions:
    """The search SPSA starts from: the agent file's tuned one, else the defaults (read once a
    process: every epoch's snapshot metadata asks for it)."""
    return options_from_metadata(load_agent(settings.spsa_agent, settings.rules).metadata, SearchOptions())


def init(settings: SPSASettings, key: jax.Array) -> SPSAState:
    """``theta`` at the start search's values, and the agent's network."""
    agent = load_agent(settings.spsa_agent, settings.rules)
    start = start_options(settings)
    theta = jnp.asarray([float(getattr(start, name)) for name in settings.names], jnp.float32)
    return SPSAState(theta, jax.tree.map(jnp.asarray, agent.params), jnp.int32(0))


@functools.cache
def _ranges(names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(low, high, step, integer)`` [D] of the tuned parameters."""
    fields = tunable_fields()
    low, high, step = (np.array([fields[n][i] for n in names], np.float64) for i in range(3))
    integer = np.array([not isinstance(getattr(SearchOptions(), n), float) for n in names])
    return low, high, step, integer


def gains(settings: SPSASettings, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(c_k, R_k)`` [D] of iteration ``k`` (from 1)."""
    _, _, step, integer = _ranges(settings.names)
    c_end = settings.spsa_c_end * step
    c_end = np.where(integer, np.maximum(c_end, INTEGER_C_END * step), c_end)
    total = settings.spsa_iterations or settings.epochs
    stability = settings.spsa_a_share * total
    c = c_end * total**GAMMA
    a = settings.spsa_r_end * c_end**2 * (stability + total) ** ALPHA
    c_k = c / k**GAMMA
    return c_k, a / (stability + k) ** ALPHA / c_k**2


def options_of(names: tuple[str, ...], theta: np.ndarray, rng: np.random.Generator | None = None) -> dict:
    """The search parameters of ``theta``: clipped to their ranges, an integer one rounded at random
    in proportion to its neighbours (``rng``), or to the nearest (None)."""
    low, high, _, integer = _ranges(names)
    theta = np.clip(np.asarray(theta, np.float64), low, high)
    if rng is None:
        rounded = np.rint(theta)
    else:
        rounded = np.floor(theta) + (rng.random(theta.shape) < theta - np.floor(theta))
    values = np.where(integer, rounded, np.round(theta, 6))  # theta is float32: 0.7 is 0.69999999
    fields = SearchOptions()
    return {n: type(getattr(fields, n))(v) for n, v in zip(names, values, strict=True)}


def tuned_search(settings: SPSASettings, state: SPSAState) -> SearchOptions:
    """The search of ``state``'s ``theta`` (rounded to the nearest), over the start search."""
    values = options_of(settings.names, np.asarray(state.theta))
    return dataclasses.replace(start_options(settings), **values)


def snapshot_metadata(settings: SPSASettings, state: SPSAState) -> dict[str, str]:
    """The tuned search as agent-file metadata (``driver.options_metadata``) for a snapshot."""
    return options_metadata(tuned_search(settings, state))


def spsa_update(
    names: tuple[str, ...],
    theta: np.ndarray,
    delta: np.ndarray,
    c_k: np.ndarray,
    r_k: np.ndarray,
    net_wins: int,
) -> np.ndarray:
    """Fishtest's step: ``theta + R_k c_k (wins - losses) delta``, clipped to the parameters' ranges
    (``net_wins``: the plus side's wins less its losses in the batch, not divided by its size)."""
    low, high, _, _ = _ranges(names)
    return np.clip(theta + r_k * c_k * net_wins * delta, low, high)


def epoch_on_host(
    settings: SPSASettings,
    state: SPSAState,
    key: jax.Array,
    map_shares: MapShares = in_process,
    shares: int = 1,
) -> tuple[SPSAState, dict[str, Any]]:
    """One SPSA iteration: the plus and minus searches play ``spsa_pairs`` pairs on the next
    committed openings, then ``theta`` moves by the batch's wins less losses (see the module
    docstring). The same state and key give the same iteration."""
    k = int(state.epoch) + 1
    rng = np.random.default_rng(np.asarray(jax.random.key_data(key)).ravel().tolist())
    names, theta = settings.names, np.asarray(state.theta, np.float64)
    delta = rng.choice(np.array([-1.0, 1.0]), size=theta.shape)
    c_k, r_k = gains(settings, k)
    plus, minus = (
        EngineSide(settings.spsa_agent, options_of(names, theta + s * c_k * delta, rng)) for s in (1, -1)
    )
    result = play_pairs(settings.rules, plus, minus, settings.spsa_pairs, settings.spsa_nodes,
                        first_opening=(k - 1) * settings.spsa_pairs, seed=settings.seed, shares=shares,
                        map_shares=map_shares)  # fmt: skip
    losses, draws, wins = (int(x) for x in result.results)
    theta = spsa_update(names, theta, delta, c_k, r_k, wins - losses)
    new = state.replace(theta=jnp.asarray(theta, jnp.float32), epoch=state.epoch + 1)
    metrics = {"games": result.games, "wins": wins, "draws": draws, "losses": losses, "plies": result.plies,
               "spsa_score": result.score, "spsa_c": float(np.mean(c_k / _ranges(names)[2]))}  # fmt: skip
    metrics.update({f"tuned_{n}": float(v) for n, v in options_of(names, theta).items()})
    return new, metrics


def host_epoch(settings: SPSASettings, map_shares: MapShares | None = None) -> Callable[..., tuple]:
    """The run's epoch: ``epoch_on_host`` with its pairs in ``spsa_workers`` shares, run by
    ``map_shares`` (Ray's, when the run names an instance), else over as many local processes (one:
    this process)."""
    shares = settings.spsa_workers
    if map_shares is None and shares > 1:
        from neurocheckers.match.shares import process_pool

        map_shares = process_pool(shares)
    chosen = map_shares or in_process
    return lambda state, key, *_: epoch_on_host(settings, state, key, chosen, shares)
