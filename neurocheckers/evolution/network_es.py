"""A sampling evolution strategy over an agent's network, by engine games (issue 56 item 3): evosax's
OpenAI-ES (``Open_ES``, through ``strategies.make_strategy``) with antithetic sampling and Adam on
the mean, over the weights of the network's ``es_layers`` top layers (from the output layer down;
0: all of them), the others kept.

Each epoch (one generation) asks ``es_population`` candidates, ``mean + sigma z`` and ``mean - sigma
z`` in pairs; each candidate plays ``es_pairs`` game pairs against the mean's network at ``es_nodes``
a move, every candidate on the epoch's same openings (so the + and - of a pair meet the same
positions), all with the agent file's search. Their scores are told (centred ranks, evosax's
default). The candidates' networks go to the shares as arrays (``EngineSide.tensors``), not files.

The network is an MLP's or an NNUE's (what the compiled search plays); the run's snapshots are it
with the mean's weights, which ``compiled:`` plays and ``export`` keeps."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct
from jax.flatten_util import ravel_pytree

from neurocheckers.compiled.driver import options_metadata
from neurocheckers.evolution.engine_tuning import game_metrics, play_candidates, start_search
from neurocheckers.evolution.strategies import FlatStrategy, es_ask, es_init, es_tell, make_strategy
from neurocheckers.match.engine_pairs import EngineSide
from neurocheckers.match.shares import MapShares, in_process
from neurocheckers.networks.agent_file import load_agent
from neurocheckers.networks.architectures import param_shapes
from neurocheckers.sections import NetworkESSectionSettings, RulesSettings, RunSettings


@dataclasses.dataclass(frozen=True)
class NetworkESSettings(NetworkESSectionSettings, RulesSettings, RunSettings):
    """What the network ES needs: its section, the rules, and the run's seed."""


class NetworkESState(struct.PyTreeNode):
    """The network ES's run state.

    Fields:
      es: evosax's Open_ES state; its ``mean`` [D] is the tuned layers' weights, flat.
      params: the agent's network with the mean's weights in its tuned layers (the snapshots').
      epoch: [] int32, generations done.
    """

    es: Any
    params: Any
    epoch: jax.Array


@functools.cache
def agent_network(path: str, rules: str) -> tuple[Any, tuple[str, ...]]:
    """``(params, layers)``: the agent file's network and its layers, output layer last (read once a
    process)."""
    with jax.ensure_compile_time_eval():  # arrays, not tracers, when first asked for in a trace
        agent = load_agent(path, rules)
    return agent.params, tuple(param_shapes(agent.spec))


def tuned_layers(layers: tuple[str, ...], count: int) -> tuple[str, ...]:
    """The ``count`` top layers (0: all), in the network's order."""
    return layers[-count:] if 0 < count < len(layers) else layers


def _tuned(settings: NetworkESSettings) -> tuple[dict, tuple[str, ...]]:
    params, layers = agent_network(settings.es_agent, settings.rules)
    names = tuned_layers(layers, settings.es_layers)
    return {name: params[name] for name in names}, names


@functools.cache
def flat_start(settings: NetworkESSettings) -> np.ndarray:
    """[D] float32: the agent file's weights of the tuned layers, flat (computed once a process)."""
    tree, _ = _tuned(settings)  # in ravel_pytree's order, without JAX (init is traced)
    return np.concatenate([np.asarray(leaf, np.float32).ravel() for leaf in jax.tree.leaves(tree)])


def unflatten(settings: NetworkESSettings, flat: np.ndarray) -> dict:
    """The tuned layers' tree of a flat [D] vector."""
    tree, _ = _tuned(settings)
    return ravel_pytree(tree)[1](jnp.asarray(flat, jnp.float32))


def tensors_of(tree: Mapping, prefix: str = "") -> dict[str, np.ndarray]:
    """A network tree's arrays by agent-file tensor name (``layer/kernel``), float32."""
    found: dict[str, np.ndarray] = {}
    for key, child in tree.items():
        name = f"{prefix}/{key}" if prefix else str(key)
        if isinstance(child, Mapping):
            found.update(tensors_of(child, name))
        else:
            found[name] = np.asarray(child, np.float32)
    return found


@functools.cache
def es_strategy(population: int, dims: int, sigma: float, learning_rate: float) -> tuple[FlatStrategy, Any]:
    """evosax's Open_ES over a [D] vector: antithetic sampling, constant ``sigma``, Adam (one object a
    shape: its ask and tell compile once; built concretely, also when first asked for in a trace)."""
    with jax.ensure_compile_time_eval():
        return make_strategy("Open_ES", population, jnp.zeros(dims, jnp.float32), std=sigma,
                         optimizer=optax.adam(learning_rate), use_antithetic_sampling=True)  # fmt: skip


def es_start(key: jax.Array, start: np.ndarray, population: int, sigma: float, learning_rate: float) -> Any:
    """Open_ES's state, its mean at ``start`` ([D])."""
    es, params = es_strategy(population, len(start), sigma, learning_rate)
    return es_init(key, es, params, jnp.asarray(start, jnp.float32))


def es_candidates(
    key: jax.Array, state: Any, population: int, sigma: float, learning_rate: float
) -> tuple[np.ndarray, Any]:
    """``(candidates [P, D], state)``: ``mean + sigma z_i`` for i < P/2, then ``mean - sigma z_i``."""
    es, params = es_strategy(population, int(state.mean.shape[0]), sigma, learning_rate)
    candidates, state = es_ask(key, es, state, params)
    return np.asarray(candidates, np.float32), state


def es_update(
    key: jax.Array, state: Any, candidates: np.ndarray, scores: np.ndarray, population: int, sigma: float,
    learning_rate: float,
) -> Any:  # fmt: skip
    """The state told the candidates' scores ([P], higher is better): one Adam step of the mean."""
    es, params = es_strategy(population, int(state.mean.shape[0]), sigma, learning_rate)
    told = jnp.asarray(candidates, jnp.float32)
    state, _ = es_tell(key, es, told, jnp.asarray(scores, jnp.float32), state, params)
    return state


def with_mean(settings: NetworkESSettings, params: Any, mean: Any) -> Any:
    """``params`` with the tuned layers of the flat ``mean``."""
    return {**params, **unflatten(settings, mean)}


def snapshot_metadata(settings: NetworkESSettings, state: NetworkESState) -> dict[str, str]:
    """The agent file's own search (its tuned one, if any), kept in every snapshot."""
    return options_metadata(start_search(settings.es_agent, settings.rules))


def init(settings: NetworkESSettings, key: jax.Array) -> NetworkESState:
    """The mean at the agent file's weights, the agent's network."""
    params, _ = agent_network(settings.es_agent, settings.rules)
    state = es_start(key, flat_start(settings), settings.es_population, settings.es_sigma,
                     settings.es_learning_rate)  # fmt: skip
    return NetworkESState(state, jax.tree.map(jnp.asarray, params), jnp.int32(0))


def epoch_on_host(
    settings: NetworkESSettings,
    state: NetworkESState,
    key: jax.Array,
    map_shares: MapShares = in_process,
    shares: int = 1,
) -> tuple[NetworkESState, dict[str, Any]]:
    """One generation: ask the antithetic pairs, play each candidate against the mean, tell. The same
    state and key give the same generation."""
    ask_key, tell_key = jax.random.split(key)
    hyper = (settings.es_population, settings.es_sigma, settings.es_learning_rate)
    candidates, es = es_candidates(ask_key, state.es, *hyper)
    agent, pairs = settings.es_agent, settings.es_pairs
    sides = [EngineSide(agent, tensors=tensors_of(unflatten(settings, c))) for c in candidates]
    mean = EngineSide(agent, tensors=tensors_of(unflatten(settings, np.asarray(es.mean))))
    results = play_candidates(settings.rules, sides, mean, pairs, settings.es_nodes, int(state.epoch) * pairs,
                              shares, map_shares)  # fmt: skip
    es = es_update(tell_key, es, candidates, np.array([r.score for r in results]), *hyper)
    new = state.replace(es=es, params=with_mean(settings, state.params, es.mean), epoch=state.epoch + 1)
    moved = np.asarray(es.mean) - flat_start(settings)
    distance = float(np.sqrt(np.mean(moved**2)))
    return new, {**game_metrics(results), "tune_sigma": settings.es_sigma, "tune_distance": distance}
