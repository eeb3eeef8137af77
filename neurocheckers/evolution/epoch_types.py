"""The types of an evolution run's epoch: its state (``EvoState``), a strategy's ``Generation`` and
what the fitness step tells it (``Told``), and the static ``Setup`` (used by ``boss_ga``)."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from typing import Any

import jax
from flax import struct

from neurocheckers.evolution.settings import EvolutionSettings
from neurocheckers.match.arena import PopulationSearch
from neurocheckers.networks.evaluator import EvaluatorSpec
from neurocheckers.rules.presets import Rules


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
      hall_of_fame: the last ``hall_of_fame`` bosses (``selection.HallOfFame``; an empty tuple when
        off, so runs without one keep their checkpoint layout).
    """

    population: Any
    boss: Any
    boss_id: jax.Array
    boss_epoch: jax.Array
    epoch: jax.Array
    es_state: Any = ()
    hall_of_fame: Any = ()


class Told(typing.NamedTuple):
    """What the fitness step tells a generation about the population it asked for.

    Fields:
      population: the members that played ([P] params).
      es_state: the generation's state after ``ask``.
      records: the games against the boss (and, with ``learner_games = "all"``, the others), their
        positions recorded when the generation ``records_games``.
      fitness: [P] the ranking fitness (points, higher is better).
      ranking: [P] member indices, best first.
    """

    population: Any
    es_state: Any
    records: Any
    fitness: jax.Array
    ranking: jax.Array


@dataclasses.dataclass(frozen=True, eq=False)
class Generation:
    """How a strategy makes each epoch's population and learns from its fitness, in evosax's
    ask/tell shape, around the shared fitness step (``play_the_boss``). Hashes by identity.

    Fields:
      init: ``init(setup, key, boss) -> es_state``: the generation's own state (``()`` for none).
      ask: ``ask(setup, state, key) -> (population, es_state)``: the [P] members this epoch plays.
      tell: ``tell(setup, state, told, key) -> (next population, es_state, metrics)``: the population
        carried to the next epoch (``ask`` may replace it), and metrics named after ``metrics.csv``
        columns (the learners' losses).
      records_games: whether ``tell`` reads the games' positions (they are recorded only then).
      evosax: whether the setup builds an evosax adapter named by ``settings.strategy``
        (``Setup.strategy``, ``Setup.es_params``).
    """

    init: Callable[..., Any]
    ask: Callable[..., tuple[Any, Any]]
    tell: Callable[..., tuple[Any, Any, dict[str, jax.Array]]]
    records_games: bool = False
    evosax: bool = False


@dataclasses.dataclass(frozen=True, eq=False)
class Setup:
    """The static pieces of a run derived from its settings (hashes by identity: a static jit argument).

    Fields:
      settings: the evolution settings.
      rules: the rules preset.
      spec: the evaluator's shape.
      search: how members and boss search (``MCTSConfig`` or ``AlphaBetaConfig``).
      record_plies: plies of each game kept for the supervised quarter.
      generation: how the population is asked for and told its fitness.
      strategy: the evosax adapter, or None.
      es_params: the evosax params, or None.
      openings: the committed openings of the rules ([M] states), or None when no setting uses them.
      fixed_opponent: the benchmark opponent's policy, or None.
    """

    settings: EvolutionSettings
    rules: Rules
    spec: EvaluatorSpec
    search: PopulationSearch
    record_plies: int
    generation: Generation
    strategy: Any = None
    es_params: Any = None
    openings: Any = None
    fixed_opponent: Any = None
