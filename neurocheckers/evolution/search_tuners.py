"""Two evolution strategies over the compiled search's parameters of one agent, by engine games
(issue 56 item 3), beside SPSA (``learners.spsa``) and over the same parameters:

- CMA-ES (evosax's ``CMA_ES``, through ``strategies.make_strategy``) on the search genome
  (``engine_tuning``: each parameter a share of its range): each epoch (one generation) asks
  ``cma_population`` candidates, each plays ``cma_pairs`` pairs against the mean's search on the
  epoch's shared openings, and their scores are told (the mean kept inside the ranges);
- the study's GA (``operators``: ``rank_members``, ``mutate_one_layer``, ``crossover_layers``,
  ``pick_partners``) on the same genome, a gene a "layer": the next population is the best quarter
  unchanged, each of them with one gene mutated, crossed with another elite, and with every gene
  mutated; each member plays ``ga_pairs`` pairs against the best elite (which scores 0.5).

The network is the agent file's, unchanged: the snapshots are it with the tuned search (the CMA
mean, the GA's best member) in their metadata, as SPSA's."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from neurocheckers.compiled.driver import SearchOptions, options_metadata
from neurocheckers.evolution.engine_tuning import decode as decode_genome
from neurocheckers.evolution.engine_tuning import (
    encode,
    game_metrics,
    parameter_names,
    play_candidates,
    start_search,
    tuned_columns,
    with_search,
)
from neurocheckers.evolution.operators import crossover_layers, mutate_one_layer, pick_partners, rank_members
from neurocheckers.evolution.strategies import FlatStrategy, es_ask, es_init, es_tell, make_strategy
from neurocheckers.match.engine_pairs import EngineSide, PairResult
from neurocheckers.match.shares import MapShares, in_process
from neurocheckers.networks.agent_file import load_agent
from neurocheckers.sections import (
    CMASearchSectionSettings,
    GASearchSectionSettings,
    RulesSettings,
    RunSettings,
)

CMA_STD_MIN = 0.02
"""CMA-ES's least step size, a share of the ranges: noisy scores must not freeze the search."""


@dataclasses.dataclass(frozen=True)
class CMASearchSettings(CMASearchSectionSettings, RulesSettings, RunSettings):
    """What CMA-ES over the search needs: its section, the rules, and the run's seed."""

    @property
    def names(self) -> tuple[str, ...]:
        """The tuned parameters, in their order in the genome."""
        return parameter_names(self.cma_parameters)


@dataclasses.dataclass(frozen=True)
class GASearchSettings(GASearchSectionSettings, RulesSettings, RunSettings):
    """What the GA over the search needs: its section, the rules, and the run's seed."""

    @property
    def names(self) -> tuple[str, ...]:
        """The tuned parameters, in their order in the genome."""
        return parameter_names(self.ga_parameters)


class CMASearchState(struct.PyTreeNode):
    """CMA-ES's run state.

    Fields:
      es: evosax's CMA_ES state; its ``mean`` [D] is the tuned genome (shares of the ranges).
      params: the agent's network (unchanged), for the snapshots.
      epoch: [] int32, generations done.
    """

    es: Any
    params: Any
    epoch: jax.Array


class GASearchState(struct.PyTreeNode):
    """The search GA's run state.

    Fields:
      genomes: [P, D] float32, the members (shares of the ranges), the best elite of their breeding first.
      fitness: [P] float32, each member's score against that elite (all 0 before the first epoch).
      params: the agent's network (unchanged), for the snapshots.
      epoch: [] int32, generations done.
    """

    genomes: jax.Array
    fitness: jax.Array
    params: Any
    epoch: jax.Array


# --- CMA-ES -------------------------------------------------------------------------------------


@functools.cache
def cma_strategy(population: int, dims: int, sigma: float) -> tuple[FlatStrategy, Any]:
    """evosax's CMA_ES over a [D] genome (one object a shape: its ask and tell compile once; built
    concretely, also when first asked for inside a trace)."""
    with jax.ensure_compile_time_eval():
        return make_strategy(
            "CMA_ES", population, jnp.zeros(dims, jnp.float32), std=sigma, std_min=CMA_STD_MIN
        )


def cma_init(key: jax.Array, start: np.ndarray, population: int, sigma: float) -> Any:
    """CMA_ES's state, its mean at ``start`` ([D] shares of the ranges), its step ``sigma``."""
    es, params = cma_strategy(population, len(start), sigma)
    return es_init(key, es, params, jnp.asarray(start, jnp.float32))


def cma_ask(key: jax.Array, state: Any, population: int, sigma: float) -> tuple[np.ndarray, Any]:
    """``(candidates [P, D], state)``: the generation's genomes (not yet clipped to [0, 1])."""
    es, params = cma_strategy(population, int(state.mean.shape[0]), sigma)
    candidates, state = es_ask(key, es, state, params)
    return np.asarray(candidates, np.float64), state


def cma_tell(
    key: jax.Array, state: Any, candidates: np.ndarray, scores: np.ndarray, population: int, sigma: float
) -> Any:
    """The state told the candidates' scores ([P], higher is better), its mean clipped to [0, 1]."""
    es, params = cma_strategy(population, int(state.mean.shape[0]), sigma)
    told = jnp.asarray(candidates, jnp.float32)
    state, _ = es_tell(key, es, told, jnp.asarray(scores, jnp.float32), state, params)
    return state.replace(mean=jnp.clip(state.mean, 0.0, 1.0))


def cma_init_state(settings: CMASearchSettings, key: jax.Array) -> CMASearchState:
    """The mean at the agent file's search, the agent's network."""
    agent = load_agent(settings.cma_agent, settings.rules)
    start = encode(settings.names, start_search(settings.cma_agent, settings.rules))
    es = cma_init(key, start, settings.cma_population, settings.cma_sigma)
    return CMASearchState(es, jax.tree.map(jnp.asarray, agent.params), jnp.int32(0))


def cma_search(settings: CMASearchSettings, state: CMASearchState) -> SearchOptions:
    """The tuned search: the mean's, over the agent file's."""
    start = start_search(settings.cma_agent, settings.rules)
    return with_search(start, settings.names, np.asarray(state.es.mean))


def cma_metadata(settings: CMASearchSettings, state: CMASearchState) -> dict[str, str]:
    """The tuned search as agent-file metadata, for a snapshot."""
    return options_metadata(cma_search(settings, state))


def play_genomes(
    settings: Any, agent: str, genomes: np.ndarray, reference: np.ndarray, pairs: int, nodes: int,
    epoch: int, map_shares: MapShares, shares: int,
) -> list[PairResult]:  # fmt: skip
    """Each genome's ``pairs`` pairs against the reference genome's search, on the epoch's openings
    (``epoch * pairs ..``)."""
    names = settings.names
    sides = [EngineSide(agent, decode_genome(names, g)) for g in genomes]
    opponent = EngineSide(agent, decode_genome(names, reference))
    return play_candidates(settings.rules, sides, opponent, pairs, nodes, epoch * pairs, shares, map_shares)


def cma_epoch_on_host(
    settings: CMASearchSettings,
    state: CMASearchState,
    key: jax.Array,
    map_shares: MapShares = in_process,
    shares: int = 1,
) -> tuple[CMASearchState, dict[str, Any]]:
    """One generation: ask, play each candidate against the mean, tell. The same state and key give
    the same generation."""
    ask_key, tell_key = jax.random.split(key)
    size, sigma = settings.cma_population, settings.cma_sigma
    candidates, es = cma_ask(ask_key, state.es, size, sigma)
    mean, epoch = np.asarray(state.es.mean), int(state.epoch)
    results = play_genomes(settings, settings.cma_agent, candidates, mean, settings.cma_pairs,
                           settings.cma_nodes, epoch, map_shares, shares)  # fmt: skip
    es = cma_tell(tell_key, es, candidates, np.array([r.score for r in results]), size, sigma)
    new = state.replace(es=es, epoch=state.epoch + 1)
    metrics = {**game_metrics(results), "tune_sigma": float(es.std)}
    return new, {**metrics, **tuned_columns(settings.names, np.asarray(es.mean))}


# --- the GA -------------------------------------------------------------------------------------


def _genes(genomes: jax.Array) -> dict:
    """[..., D] genomes as a parameter tree, one gene a "layer" (``g0``, ``g1`` ...)."""
    return {"params": {f"g{i}": genomes[..., i : i + 1] for i in range(genomes.shape[-1])}}


def _genomes(tree: dict) -> jax.Array:
    """The inverse of ``_genes``."""
    genes = tree["params"]
    return jnp.concatenate([genes[f"g{i}"] for i in range(len(genes))], axis=-1)


@jax.jit
def ga_breed(key: jax.Array, genomes: jax.Array, fitness: jax.Array, sigma: float) -> jax.Array:
    """The next population [P, D] of ``genomes`` [P, D] scored ``fitness`` [P] (higher is better), in
    quarters of E = P // 4 from the best E (best first): the elites unchanged, each with one gene
    mutated (N(0, sigma^2)), each crossed gene by gene with another elite, each with every gene
    mutated; clipped to [0, 1]. Its first member is the best elite."""
    count = genomes.shape[0] // 4
    mutate_key, partner_key, cross_key, explore_key = jax.random.split(key, 4)
    elites = genomes[rank_members(fitness)[:count]]
    mutants = jax.vmap(mutate_one_layer, in_axes=(0, 0, None))(
        jax.random.split(mutate_key, count), _genes(elites), sigma
    )
    partners = elites[pick_partners(partner_key, count)]
    cross_keys = jax.random.split(cross_key, count)
    children = jax.vmap(crossover_layers)(cross_keys, _genes(elites), _genes(partners))
    explorers = elites + sigma * jax.random.normal(explore_key, elites.shape)
    return jnp.clip(jnp.concatenate([elites, _genomes(mutants), _genomes(children), explorers]), 0.0, 1.0)


def ga_best(genomes: np.ndarray, fitness: np.ndarray) -> np.ndarray:
    """The best member's genome (the first of the best, by ``rank_members``)."""
    return np.asarray(genomes)[int(rank_members(jnp.asarray(fitness))[0])]


def ga_init_state(settings: GASearchSettings, key: jax.Array) -> GASearchState:
    """Every member at the agent file's search (all scored 0), the agent's network."""
    agent = load_agent(settings.ga_agent, settings.rules)
    start = encode(settings.names, start_search(settings.ga_agent, settings.rules))
    genomes = jnp.tile(jnp.asarray(start, jnp.float32), (settings.ga_population, 1))
    fitness = jnp.zeros(settings.ga_population, jnp.float32)
    return GASearchState(genomes, fitness, jax.tree.map(jnp.asarray, agent.params), jnp.int32(0))


def ga_search(settings: GASearchSettings, state: GASearchState) -> SearchOptions:
    """The tuned search: the best member's, over the agent file's."""
    start = start_search(settings.ga_agent, settings.rules)
    return with_search(start, settings.names, ga_best(state.genomes, state.fitness))


def ga_metadata(settings: GASearchSettings, state: GASearchState) -> dict[str, str]:
    """The tuned search as agent-file metadata, for a snapshot."""
    return options_metadata(ga_search(settings, state))


def ga_epoch_on_host(
    settings: GASearchSettings,
    state: GASearchState,
    key: jax.Array,
    map_shares: MapShares = in_process,
    shares: int = 1,
) -> tuple[GASearchState, dict[str, Any]]:
    """One generation: breed, then every member plays the best elite. The same state and key give
    the same generation."""
    genomes = np.asarray(ga_breed(key, state.genomes, state.fitness, settings.ga_sigma), np.float64)
    results = play_genomes(settings, settings.ga_agent, genomes, genomes[0], settings.ga_pairs,
                           settings.ga_nodes, int(state.epoch), map_shares, shares)  # fmt: skip
    fitness = np.array([r.score for r in results], np.float32)
    new = state.replace(genomes=jnp.asarray(genomes, jnp.float32), fitness=jnp.asarray(fitness),
                        epoch=state.epoch + 1)  # fmt: skip
    spread = float(np.mean(np.std(genomes, axis=0)))
    metrics = {**game_metrics(results), "tune_sigma": spread}
    return new, {**metrics, **tuned_columns(settings.names, ga_best(genomes, fitness))}
