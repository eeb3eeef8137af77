"""The reference study's boss-lineage genetic algorithm, as pure functions over ``EvoState``.

One epoch: every member plays ``games_per_epoch`` games against the boss (half with each colour),
fitness = points (win 1, draw 1/2, loss 0), ranking best first with ties to the lower index; the best
member becomes the new boss when its points reach ``promotion_threshold * games_per_epoch``; the
next generation is elites, mutants, crossovers and learners (``operators.next_generation``).
evosax strategies replace the generation step (ask/tell on flat genomes) but keep the same games,
fitness and boss promotion. ``evolve_epoch`` is one jitted function of (state, key);
``evolve_epochs`` scans it over many epochs as one compiled function of the seed, so several seeds
can be vmapped at once (the PureJaxRL way) with the same metrics as the epoch-by-epoch driver.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from neurocheckers.arena import PopulationSearch, play_population
from neurocheckers.evaluator import EvaluatorSpec, init_params, init_population, value
from neurocheckers.evolution.operators import next_generation, rank_members
from neurocheckers.evolution.settings import EvolutionSettings
from neurocheckers.evolution.strategies import es_ask, es_init, es_tell, make_strategy
from neurocheckers.rules.presets import Rules, get_rules
from neurocheckers.search.baselines import AlphaBetaConfig
from neurocheckers.search.mcts import MCTSConfig


@struct.dataclass
class EvoState:
    """Everything an evolution run needs to continue (P members).

    Fields:
      population: member params with a leading [P] axis.
      boss: params of the current boss (no leading axis).
      boss_id: [] int32, 0 for the random first boss, then 1, 2, ... per promotion.
      boss_epoch: [] int32, the epoch in which the boss was promoted (-1 for the first boss).
      epoch: [] int32, epochs completed.
      es_state: the evosax strategy's state (an empty tuple for the boss GA).
    """

    population: Any
    boss: Any
    boss_id: jax.Array
    boss_epoch: jax.Array
    epoch: jax.Array
    es_state: Any = ()


@dataclasses.dataclass(frozen=True, eq=False)
class Setup:
    """The static pieces of a run derived from its settings (hashes by identity: a static jit argument).

    Fields:
      settings: the evolution settings.
      rules: the rules preset.
      spec: the evaluator's shape.
      search: how members and boss search (``MCTSConfig`` or ``AlphaBetaConfig``).
      record_plies: plies of each game kept for the supervised quarter.
      strategy: the evosax adapter, or None for the boss GA.
      es_params: the evosax params, or None.
    """

    settings: EvolutionSettings
    rules: Rules
    spec: EvaluatorSpec
    search: PopulationSearch
    record_plies: int
    strategy: Any = None
    es_params: Any = None


@functools.cache
def make_setup(settings: EvolutionSettings) -> Setup:
    """The ``Setup`` of ``settings``. Cached, so equal settings share one Setup and one compiled epoch."""
    rules = get_rules(settings.rules)
    spec = EvaluatorSpec.for_rules(rules, settings.layers, settings.width, settings.material_input)
    search = population_search(settings)
    record = min(settings.max_plies, rules.max_plies) if rules.max_plies else settings.max_plies
    strategy = es_params = None
    if settings.strategy != "boss_ga":
        example = init_params(jax.random.key(0), spec)
        strategy, es_params = make_strategy(
            settings.strategy, settings.population, example, std=settings.mutation_rate
        )
    return Setup(settings, rules, spec, search, record, strategy, es_params)


def population_search(settings: EvolutionSettings) -> PopulationSearch:
    """The search members and boss play with: MCTS of ``simulations``, or alpha-beta of ``depth``."""
    if settings.search == "alphabeta":
        return AlphaBetaConfig(depth=int(settings.depth))
    if settings.search != "mcts":
        raise ValueError(f"search must be 'mcts' or 'alphabeta', got {settings.search!r}")
    return MCTSConfig(num_simulations=int(settings.simulations))


def init(setup: Setup, key: jax.Array) -> EvoState:
    """Random members and a random first boss, all from ``key``."""
    pop_key, boss_key, es_key = jax.random.split(key, 3)
    population = init_population(pop_key, setup.spec, setup.settings.population)
    boss = init_params(boss_key, setup.spec)
    es_state: Any = ()
    if setup.strategy is not None:
        es_state = es_init(es_key, setup.strategy, setup.es_params, boss)
        es_state = jax.tree.map(lambda x: jnp.array(x, dtype=jnp.asarray(x).dtype), es_state)
    return EvoState(
        population=population,
        boss=boss,
        boss_id=jnp.int32(0),
        boss_epoch=jnp.int32(-1),
        epoch=jnp.int32(0),
        es_state=es_state,
    )


def epoch_key(seed: int, epoch: int | jax.Array) -> jax.Array:
    """The key of one epoch: derived from the seed and the epoch number alone, so a resumed run
    draws exactly what an uninterrupted one would."""
    return jax.random.fold_in(jax.random.key(seed), epoch)


def _training_data(setup: Setup, records) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Each member's positions as the side to move [P, M, 2N], its final score in that game [P, M]
    and a 0/1 validity mask [P, M], with M = games x recorded plies."""
    positions = records.positions  # [P, G, L, 2N]
    p, g, length, d = positions.shape
    targets = jnp.broadcast_to(records.score[:, :, None], (p, g, length))
    valid = (records.a_to_move & records.recorded).astype(jnp.float32)
    return positions.reshape(p, g * length, d), targets.reshape(p, g * length), valid.reshape(p, g * length)


def choose_boss(fitness: jax.Array, games: int, threshold: float) -> tuple[jax.Array, jax.Array]:
    """(ranking [P] best first, promote []): the best member (ties to the lower index) becomes the
    boss when its points reach ``threshold * games`` (>=, so exactly 3/4 of the games is enough)."""
    ranking = rank_members(fitness)
    return ranking, fitness[ranking[0]] >= threshold * games


def _quantiles(fitness: jax.Array) -> jax.Array:
    return jnp.quantile(fitness, jnp.array([0.0, 0.25, 0.5, 0.75, 1.0]))


def _breed(
    setup: Setup,
    state: EvoState,
    population: Any,
    es_state: Any,
    records: Any,
    fitness: jax.Array,
    ranking: jax.Array,
    key: jax.Array,
) -> tuple[Any, Any, dict[str, jax.Array]]:
    """(next population, next strategy state, the learners' losses): the boss GA's four quarters, or
    the evosax strategy told the fitness (its losses are NaN: it has no learners)."""
    c = setup.settings
    if setup.strategy is None:
        inputs, targets, weights = _training_data(setup, records)
        next_population, gen_metrics = next_generation(
            key,
            population,
            ranking,
            inputs,
            targets,
            weights,
            apply_fn=functools.partial(value, setup.spec),
            mutation_rate=c.mutation_rate,
            learning_rate=c.learning_rate,
            train_steps=c.train_steps,
            loss=c.loss,
        )
        losses = {name: gen_metrics[name] for name in ("learner_loss_before", "learner_loss_after")}
        return next_population, es_state, losses
    es_state, _ = es_tell(key, setup.strategy, population, fitness, es_state, setup.es_params)
    # Keep the carried state's exact types (no weak types) so the next epoch reuses this compile.
    es_state = jax.tree.map(lambda new, old: jnp.asarray(new, old.dtype), es_state, state.es_state)
    nan = jnp.float32(jnp.nan)
    return population, es_state, {"learner_loss_before": nan, "learner_loss_after": nan}


def _epoch_metrics(
    state: EvoState,
    new_state: EvoState,
    records: Any,
    fitness: jax.Array,
    best: jax.Array,
    promote: jax.Array,
) -> dict[str, jax.Array]:
    """The epoch's row of ``metrics.csv`` (fitness in points over the epoch's games), without the
    learners' losses and the timing columns."""
    q = _quantiles(fitness)
    return dict(
        fitness_min=q[0],
        fitness_q25=q[1],
        fitness_median=q[2],
        fitness_q75=q[3],
        fitness_max=q[4],
        fitness_mean=jnp.mean(fitness),
        best_member=best,
        best_points=fitness[best],
        boss_changed=promote,
        boss_id=new_state.boss_id,
        boss_age=state.epoch - new_state.boss_epoch,
        games=jnp.int32(records.score.size),
        plies=jnp.sum(records.length),
        wins=jnp.sum(records.score == 1.0),
        draws=jnp.sum(records.score == 0.5),
        losses=jnp.sum(records.score == 0.0),
    )


@functools.partial(jax.jit, static_argnums=0)
def evolve_epoch(setup: Setup, state: EvoState, key: jax.Array) -> tuple[EvoState, dict[str, jax.Array]]:
    """Play one epoch's games, promote a boss if one earned it, and breed the next generation."""
    c = setup.settings
    games_key, breed_key, ask_key = jax.random.split(key, 3)
    es_state = state.es_state
    population = state.population
    if setup.strategy is not None:
        population, es_state = es_ask(ask_key, setup.strategy, es_state, setup.es_params)
    records = play_population(
        setup.rules,
        setup.spec,
        setup.search,
        population,
        state.boss,
        games_key,
        c.games_per_epoch,
        max_plies=setup.record_plies,
        opening_plies=c.opening_plies,
        record=setup.strategy is None,
    )
    fitness = jnp.sum(records.score, axis=1)
    ranking, promote = choose_boss(fitness, c.games_per_epoch, c.promotion_threshold)
    best = ranking[0]
    best_params = jax.tree.map(lambda x: x[best], population)
    boss = jax.tree.map(lambda new, old: jnp.where(promote, new, old), best_params, state.boss)
    next_population, es_state, losses = _breed(
        setup, state, population, es_state, records, fitness, ranking, breed_key
    )
    new_state = EvoState(
        population=next_population,
        boss=boss,
        boss_id=state.boss_id + promote.astype(jnp.int32),
        boss_epoch=jnp.where(promote, state.epoch, state.boss_epoch),
        epoch=state.epoch + 1,
        es_state=es_state,
    )
    return new_state, {**losses, **_epoch_metrics(state, new_state, records, fitness, best, promote)}


def _evolve_epochs(setup: Setup, num_epochs: int, state: EvoState, seed: jax.Array):
    def one_epoch(state: EvoState, _):
        return evolve_epoch(setup, state, epoch_key(seed, state.epoch))

    return jax.lax.scan(one_epoch, state, None, length=num_epochs)


@functools.partial(jax.jit, static_argnums=(0, 1))
def evolve_epochs(
    setup: Setup, num_epochs: int, state: EvoState, seed: int | jax.Array
) -> tuple[EvoState, dict[str, jax.Array]]:
    """``num_epochs`` epochs from ``state`` as one compiled ``lax.scan``; metrics get a leading
    [num_epochs] axis. Epoch keys come from ``seed`` and the epoch number as in :func:`epoch_key`, so
    the result equals ``num_epochs`` calls of :func:`evolve_epoch`."""
    return _evolve_epochs(setup, num_epochs, state, jnp.asarray(seed, jnp.uint32))


@functools.partial(jax.jit, static_argnums=(0, 1))
def evolve_seeds(setup: Setup, num_epochs: int, seeds: jax.Array) -> tuple[EvoState, dict[str, jax.Array]]:
    """Whole runs of ``num_epochs`` epochs for every seed in ``seeds`` ([S]) at once, vmapped: states
    get a leading [S] axis, metrics [S, num_epochs]. Each run equals the single run of that seed."""

    def one_run(seed: jax.Array):
        state = init(setup, jax.random.key(seed))
        return _evolve_epochs(setup, num_epochs, state, seed)

    return jax.vmap(one_run)(jnp.asarray(seeds, jnp.uint32))
