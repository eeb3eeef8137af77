"""The reference study's boss-lineage genetic algorithm, as pure functions over ``EvoState``.

One epoch is evosax's ask/tell around one shared fitness step, "play the boss": a ``Generation``
asks for the population, every member plays ``games_per_epoch`` games against the boss (half with
each colour), fitness = points (win 1, draw 1/2, loss 0), ranking best first with ties to the lower
index; the best member becomes the new boss when its points reach ``promotion_threshold *
games_per_epoch``; then the generation is told the fitness. The study's generation (``BOSS_GA``)
breeds elites, mutants, crossovers and learners (``operators.next_generation``); the memetic pool
(``MEMETIC_POOL``) is the same with every learner training on the whole population's games; an
evosax strategy (``EVOSAX``) asks and tells on flat genomes. They are equals: each is one
``Generation`` value, and a plug-in strategy is another (``experiment.strategy_registry``).

Selection settings, all off by default (``selection``): games against the boss from K paired openings
drawn per epoch; promotion only after a confirmation match whose lower 95% bound is above 1/2; extra
games against a boss drawn from a hall of fame and against a fixed benchmark opponent, weighted into
the fitness; or a stationary fitness (the benchmark points alone). Their draws use keys folded off the
epoch key, so with every setting off an epoch is exactly the study's.

``evolve_epoch`` is one jitted function of (state, key). The run loop scans it over several epochs
in one compiled call and vmaps runs of several seeds, as it does every strategy's pure epoch
(``experiment.run.epochs_program``: ``epochs_per_call``, ``evolve --seeds``; the PureJaxRL way), with
the same metrics as the epoch-by-epoch loop (tests/test_epochs_per_call.py, tests/test_seeds.py).
"""

from __future__ import annotations

import functools
import typing
from typing import Any

import jax
import jax.numpy as jnp

from neurocheckers.evolution.epoch_types import EvoState, Generation, Setup, Told
from neurocheckers.evolution.operators import next_generation, rank_members
from neurocheckers.evolution.selection import (
    confirmed_pick,
    draw_openings,
    fixed_opponent_policy,
    hall_of_fame_add,
    hall_of_fame_init,
    hall_of_fame_sample,
    member_policy,
)
from neurocheckers.evolution.settings import EvolutionSettings
from neurocheckers.evolution.strategies import es_ask, es_init, es_tell, is_evosax, make_strategy
from neurocheckers.networks.architectures import spec_of_settings
from neurocheckers.networks.evaluator import init_params, init_population, value
from neurocheckers.networks.fitting import td_lambda_targets
from neurocheckers.population import play_population, play_population_against
from neurocheckers.rules.openings import load_openings, opening_states
from neurocheckers.rules.presets import get_rules
from neurocheckers.search.play_settings import population_search


def uses_openings(settings: EvolutionSettings) -> bool:
    """Whether any game of an epoch starts from the committed openings."""
    return bool(
        settings.openings
        or settings.promotion_candidates
        or settings.hall_of_fame
        or settings.benchmark_opponent
    )


def generation_of(settings: EvolutionSettings) -> Generation:
    """The settings' generation: ``settings.generation`` (the experiment's strategy registry sets
    it), else an evosax strategy's when ``strategy`` names one, else the study's boss GA."""
    if settings.generation is not None:
        return settings.generation
    return EVOSAX if is_evosax(settings.strategy) else BOSS_GA


@functools.cache
def make_setup(settings: EvolutionSettings) -> Setup:
    """The ``Setup`` of ``settings``. Cached, so equal settings share one Setup and one compiled epoch."""
    rules = get_rules(settings.rules)
    spec = spec_of_settings(settings, rules.board_size)
    search = population_search(settings)
    record = min(settings.max_plies, rules.max_plies) if rules.max_plies else settings.max_plies
    generation = generation_of(settings)
    strategy = es_params = None
    if generation.evosax:
        example = init_params(jax.random.key(0), spec)
        strategy, es_params = make_strategy(
            settings.strategy, settings.population, example, std=settings.mutation_rate
        )
    openings = opening_states(rules, load_openings(rules)) if uses_openings(settings) else None
    fixed = fixed_opponent_policy(rules, settings.benchmark_opponent) if settings.benchmark_opponent else None
    return Setup(settings, rules, spec, search, record, generation, strategy, es_params, openings, fixed)


def init(setup: Setup, key: jax.Array) -> EvoState:
    """Random members and a random first boss, all from ``key``."""
    pop_key, boss_key, es_key = jax.random.split(key, 3)
    population = init_population(pop_key, setup.spec, setup.settings.population)
    boss = init_params(boss_key, setup.spec)
    es_state = setup.generation.init(setup, es_key, boss)
    size = setup.settings.hall_of_fame
    return EvoState(
        population=population,
        boss=boss,
        boss_id=jnp.int32(0),
        boss_epoch=jnp.int32(-1),
        epoch=jnp.int32(0),
        es_state=es_state,
        hall_of_fame=hall_of_fame_init(boss, size) if size else (),
    )


def learner_records(setup: Setup, records: Any, extra_records: list[Any]) -> Any:
    """The games the learner quarter trains on: those against the boss, and with ``learner_games =
    "all"`` also those against the hall of fame and the benchmark opponent (joined along games)."""
    if setup.settings.learner_games != "all" or not extra_records:
        return records
    return jax.tree.map(lambda *fields: jnp.concatenate(fields, axis=1), records, *extra_records)


def learner_training_data(setup: Setup, population: Any, records) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Each member's positions as the side to move [P, M, 2N], its target in each [P, M] and a 0/1
    validity mask [P, M], with M = games x recorded plies. The target is the mover's final score in
    that game (``supervised_target = "outcome"``, the study's), or its TD(lambda) target from the
    member's network's values of the mover's later positions (``"td_lambda"``, with ``lambda_``).
    The positions are those the member moved from (``learner_sides = "member"``, the study's), or
    also its opponents' (``"both"``), each valued from its mover's side."""
    positions = records.positions  # [P, G, L, 2N]
    p, g, length, d = positions.shape
    c = setup.settings
    member_moves = records.a_to_move & records.recorded
    opponent_moves = ~records.a_to_move & records.recorded
    score = records.score[:, :, None]
    if c.supervised_target == "td_lambda":
        flat = positions.reshape(p, g * length, d)
        values = jax.vmap(functools.partial(value, setup.spec))(population, flat).reshape(p, g, length)
        # Each player's positions seen by that player alone: no flips between them.
        no_flips = jnp.zeros_like(member_moves)
        targets = td_lambda_targets(values, member_moves, no_flips, records.score, c.lambda_)
        if c.learner_sides == "both":
            theirs = td_lambda_targets(values, opponent_moves, no_flips, 1.0 - records.score, c.lambda_)
            targets = jnp.where(records.a_to_move, targets, theirs)
    else:
        targets = jnp.broadcast_to(jnp.where(records.a_to_move, score, 1.0 - score), (p, g, length))
    valid = member_moves | opponent_moves if c.learner_sides == "both" else member_moves
    valid = valid.astype(jnp.float32)
    return positions.reshape(p, g * length, d), targets.reshape(p, g * length), valid.reshape(p, g * length)


def choose_boss(
    fitness: jax.Array, games: int, threshold: float, boss_points: jax.Array | None = None
) -> tuple[jax.Array, jax.Array]:
    """(ranking [P] best first, promote []): the best member by ``fitness`` (ties to the lower index)
    becomes the boss when its points against the boss (``boss_points``, by default ``fitness``)
    reach ``threshold * games`` (>=, so exactly 3/4 of the games is enough)."""
    ranking = rank_members(fitness)
    boss_points = fitness if boss_points is None else boss_points
    return ranking, boss_points[ranking[0]] >= threshold * games


def _quantiles(fitness: jax.Array) -> jax.Array:
    return jnp.quantile(fitness, jnp.array([0.0, 0.25, 0.5, 0.75, 1.0]))


def no_state(setup: Setup, key: jax.Array, boss: Any) -> Any:
    """A generation's ``init`` when it keeps no state of its own."""
    return ()


def carried_population(setup: Setup, state: EvoState, key: jax.Array) -> tuple[Any, Any]:
    """The boss GA's ``ask``: the population its last ``tell`` bred."""
    return state.population, state.es_state


def breed(
    setup: Setup, state: EvoState, told: Told, key: jax.Array, pooled: bool = False
) -> tuple[Any, Any, dict[str, jax.Array]]:
    """The boss GA's ``tell``: the next generation's four quarters (``operators.next_generation``),
    the learners trained on their own games, or (``pooled``, the memetic pool) on minibatches of
    every member's games; the metrics are the learners' losses."""
    c = setup.settings
    inputs, targets, weights = learner_training_data(setup, told.population, told.records)
    next_population, gen_metrics = next_generation(
        key,
        told.population,
        told.ranking,
        inputs,
        targets,
        weights,
        apply_fn=functools.partial(value, setup.spec),
        mutation_rate=c.mutation_rate,
        learning_rate=c.learning_rate,
        train_steps=c.train_steps,
        loss=c.loss,
        batch_size=c.train_batch,
        pooled=pooled,
    )
    losses = {name: gen_metrics[name] for name in ("learner_loss_before", "learner_loss_after")}
    return next_population, told.es_state, losses


def evosax_init(setup: Setup, key: jax.Array, boss: Any) -> Any:
    """An evosax strategy's state, centred on the first boss."""
    es_state = es_init(key, setup.strategy, setup.es_params, boss)
    return jax.tree.map(lambda x: jnp.array(x, dtype=jnp.asarray(x).dtype), es_state)


def evosax_ask(setup: Setup, state: EvoState, key: jax.Array) -> tuple[Any, Any]:
    """An evosax strategy's candidates (``strategies.es_ask``)."""
    return es_ask(key, setup.strategy, state.es_state, setup.es_params)


def evosax_tell(setup: Setup, state: EvoState, told: Told, key: jax.Array) -> tuple[Any, Any, dict]:
    """The evosax strategy told the fitness; no metrics (it has no learners: their loss columns stay
    empty)."""
    es_state, _ = es_tell(key, setup.strategy, told.population, told.fitness, told.es_state, setup.es_params)
    # Keep the carried state's exact types (no weak types) so the next epoch reuses this compile.
    es_state = jax.tree.map(lambda new, old: jnp.asarray(new, old.dtype), es_state, state.es_state)
    return told.population, es_state, {}


BOSS_GA = Generation(no_state, carried_population, breed, records_games=True)
"""The study's generation: elites, mutants, crossovers and learners on their own games."""
MEMETIC_POOL = Generation(
    no_state, carried_population, functools.partial(breed, pooled=True), records_games=True
)
"""The boss GA whose learners train on minibatches of every member's games (a memetic GA)."""
EVOSAX = Generation(evosax_init, evosax_ask, evosax_tell, evosax=True)
"""An evosax strategy (the one ``settings.strategy`` names) on flat genomes."""


def _epoch_metrics(records: Any, fitness: jax.Array, best: jax.Array) -> dict[str, jax.Array]:
    """The fitness and game columns of the epoch's row of ``metrics.csv`` (``fitness``: each member's
    points over the epoch's games against the boss)."""
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
        games=jnp.int32(records.score.size),
        plies=jnp.sum(records.length),
        wins=jnp.sum(records.score == 1.0),
        draws=jnp.sum(records.score == 0.5),
        losses=jnp.sum(records.score == 0.0),
    )


SELECTION_SALT = 12
"""Folded into the epoch key for the draws of the selection games (openings, confirmation, hall of
fame, benchmark), so the study's own draws (the split of the epoch key) stay as they were."""


def _selection_keys(key: jax.Array) -> dict[str, jax.Array]:
    names = ("boss_openings", "confirm_openings", "confirm_games", "hall_pick", "hall_openings")
    names += ("hall_games", "benchmark_openings", "benchmark_games")
    keys = jax.random.split(jax.random.fold_in(key, SELECTION_SALT), len(names))
    return dict(zip(names, keys, strict=True))


def _boss_openings(setup: Setup, keys: dict[str, jax.Array]) -> Any:
    """The epoch's openings against the boss ([K] states, the same for every member), or None."""
    c = setup.settings
    return draw_openings(keys["boss_openings"], setup.openings, c.openings) if c.openings else None


def _other_opponents(
    setup: Setup, state: EvoState, population: Any, keys: dict[str, jax.Array]
) -> tuple[dict[str, jax.Array], dict[str, jax.Array], list[Any]]:
    """(points, metrics, records): each member's points ([P]) against a boss drawn from the hall of
    fame and against the benchmark opponent, for those that are on, over paired openings shared by
    all members; the metrics are the mean points per game; the records keep the games' positions
    when the learners train on them (``learner_games = "all"``), else the list is empty."""
    c = setup.settings
    points: dict[str, jax.Array] = {}
    metrics: dict[str, jax.Array] = {}
    record = c.learner_games == "all" and setup.generation.records_games
    kept: list[Any] = []
    if c.hall_of_fame:
        opponent = hall_of_fame_sample(state.hall_of_fame, keys["hall_pick"])
        openings = draw_openings(keys["hall_openings"], setup.openings, c.hall_of_fame_games // 2)
        records = play_population(
            setup.rules, setup.spec, setup.search, population, opponent, keys["hall_games"],
            c.hall_of_fame_games, max_plies=setup.record_plies, opening_plies=c.opening_plies,
            openings=openings, record=record,
        )  # fmt: skip
        kept += [records] if record else []
        points["hall_of_fame"] = jnp.sum(records.score, axis=1)
        metrics["hall_of_fame_score"] = jnp.mean(records.score)
    if c.benchmark_opponent:
        openings = draw_openings(keys["benchmark_openings"], setup.openings, c.benchmark_games // 2)
        records = play_population_against(
            setup.rules, member_policy(setup.rules, setup.spec, setup.search), population,
            setup.fixed_opponent, None, keys["benchmark_games"], c.benchmark_games, openings,
            max_plies=setup.record_plies, opening_plies=c.opening_plies, record=record,
        )  # fmt: skip
        kept += [records] if record else []
        points["benchmark"] = jnp.sum(records.score, axis=1)
        metrics["benchmark_score"] = jnp.mean(records.score)
    return points, metrics, kept


def _ranking_fitness(setup: Setup, boss_points: jax.Array, extra: dict[str, jax.Array]) -> jax.Array:
    """[P] fitness that ranks the members: points against the boss plus the weighted points against
    the other opponents, or (``fitness = "fixed"``) the points against the benchmark opponent alone."""
    c = setup.settings
    if c.fitness == "fixed":
        return extra["benchmark"]
    fitness = boss_points
    if "hall_of_fame" in extra:
        fitness = fitness + c.hall_of_fame_weight * extra["hall_of_fame"]
    if "benchmark" in extra:
        fitness = fitness + c.benchmark_weight * extra["benchmark"]
    return fitness


def _promotion(
    setup: Setup,
    state: EvoState,
    population: Any,
    fitness: jax.Array,
    boss_points: jax.Array,
    keys: dict[str, jax.Array],
) -> tuple[jax.Array, jax.Array, jax.Array, dict[str, jax.Array]]:
    """(ranking [P], the member to promote [], promote [], metrics). Without confirmation the best
    ranked member is promoted when its points against the boss reach the threshold; with it the
    ``promotion_candidates`` best ranked play a paired-openings match against the boss, and one at
    the threshold is promoted only when its score's lower 95% bound is above 1/2 (``confirmed_pick``)."""
    c = setup.settings
    ranking, promote = choose_boss(fitness, c.games_per_epoch, c.promotion_threshold, boss_points)
    if not c.promotion_candidates:
        return ranking, ranking[0], promote, {}
    candidates = ranking[: c.promotion_candidates]
    eligible = boss_points[candidates] >= c.promotion_threshold * c.games_per_epoch
    openings = draw_openings(keys["confirm_openings"], setup.openings, c.promotion_games // 2)
    records = play_population(
        setup.rules, setup.spec, setup.search, jax.tree.map(lambda x: x[candidates], population),
        state.boss, keys["confirm_games"], c.promotion_games, max_plies=setup.record_plies,
        opening_plies=c.opening_plies, openings=openings,
    )  # fmt: skip
    pick, promote, score, low = confirmed_pick(eligible, records.score)
    return ranking, candidates[pick], promote, {"confirm_score": score, "confirm_low": low}


class BossGames(typing.NamedTuple):
    """The fitness step's result (``play_the_boss``).

    Fields:
      told: what the generation is told (``Told``).
      boss_points: [P] each member's points against the boss.
      chosen: [] the member promoted when ``promote``.
      promote: [] bool, whether the boss changes.
      metrics: the selection metrics (other opponents' scores, the confirmation match).
    """

    told: Told
    boss_points: jax.Array
    chosen: jax.Array
    promote: jax.Array
    metrics: dict[str, jax.Array]


def play_the_boss(setup: Setup, state: EvoState, population: Any, es_state: Any, key: jax.Array) -> BossGames:
    """The fitness step every generation shares: ``population`` plays the boss (and the other
    opponents the selection settings name), is ranked, and the member that earned it is picked for
    promotion. ``key`` is the epoch's key."""
    c = setup.settings
    games_key = jax.random.split(key, 3)[0]
    keys = _selection_keys(key)
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
        record=setup.generation.records_games,
        openings=_boss_openings(setup, keys),
    )
    boss_points = jnp.sum(records.score, axis=1)
    extra_points, extra_metrics, extra_records = _other_opponents(setup, state, population, keys)
    fitness = _ranking_fitness(setup, boss_points, extra_points)
    ranking, chosen, promote, confirm_metrics = _promotion(
        setup, state, population, fitness, boss_points, keys
    )
    told = Told(population, es_state, learner_records(setup, records, extra_records), fitness, ranking)
    metrics = {**_epoch_metrics(records, boss_points, ranking[0]), **extra_metrics, **confirm_metrics}
    return BossGames(told, boss_points, chosen, promote, metrics)


@functools.partial(jax.jit, static_argnums=0)
def evolve_epoch(setup: Setup, state: EvoState, key: jax.Array) -> tuple[EvoState, dict[str, jax.Array]]:
    """One epoch: ask the generation for the population, play the boss, promote a boss if one
    earned it, and tell the generation the fitness."""
    c = setup.settings
    _, breed_key, ask_key = jax.random.split(key, 3)
    population, es_state = setup.generation.ask(setup, state, ask_key)
    games = play_the_boss(setup, state, population, es_state, key)
    chosen_params = jax.tree.map(lambda x: x[games.chosen], population)
    boss = jax.tree.map(lambda new, old: jnp.where(games.promote, new, old), chosen_params, state.boss)
    next_population, es_state, tell_metrics = setup.generation.tell(setup, state, games.told, breed_key)
    hall = hall_of_fame_add(state.hall_of_fame, boss, games.promote) if c.hall_of_fame else ()
    new_state = EvoState(
        population=next_population,
        boss=boss,
        boss_id=state.boss_id + games.promote.astype(jnp.int32),
        boss_epoch=jnp.where(games.promote, state.epoch, state.boss_epoch),
        epoch=state.epoch + 1,
        es_state=es_state,
        hall_of_fame=hall,
    )
    lineage = {
        "boss_changed": games.promote,
        "boss_id": new_state.boss_id,
        "boss_age": state.epoch - new_state.boss_epoch,
        "promoted_points": games.boss_points[games.chosen],
    }
    return new_state, {**tell_metrics, **games.metrics, **lineage}
