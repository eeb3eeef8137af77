"""Every strategy as the one run loop drives it: a ``Trainer`` of pure ``init`` and ``epoch``
functions (evosax's init/ask/tell shape, one compiled epoch), the network it saves, and how its
lineage grows.

Every strategy is built here from an ``ExperimentConfig`` and its entry of the strategy registry
(``strategy_registry``): an evolution strategy's ``boss_ga.Generation`` runs inside the boss GA's
epoch, a learner's ``Learner`` is driven alone. ``experiment.run`` knows none of them by name.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Generator
from typing import Any

import jax
import jax.numpy as jnp

from neurocheckers.endgame.database import EndgameDB, EndgameError
from neurocheckers.endgame.device import device_db
from neurocheckers.evolution import boss_ga, engine_tuning, network_es, search_tuners
from neurocheckers.evolution.selection import fixed_opponent_policy
from neurocheckers.experiment.config import ExperimentConfig
from neurocheckers.experiment.folder import RunError, search_metadata
from neurocheckers.experiment.strategy_registry import LEARNER, StrategyEntry, strategy
from neurocheckers.learners import dqn, pbt, pbt_shares, spsa, td_lambda
from neurocheckers.match.arena import PopulationSearch
from neurocheckers.match.shares import ray_shares
from neurocheckers.networks.agent_file import load_agent
from neurocheckers.networks.architectures import spec_of_settings
from neurocheckers.networks.evaluator import EvaluatorSpec
from neurocheckers.rules.presets import Rules, get_rules
from neurocheckers.search.play_settings import epoch_key, population_search
from neurocheckers.sharding import MemoryLimitError, check_memory


@dataclasses.dataclass(frozen=True, eq=False)
class Trainer:
    """One strategy of a run config, as the run loop drives it (hashes by identity).

    Fields:
      rules: the rules preset.
      spec: the network's shape.
      search: how the network plays (``MCTSConfig`` or ``AlphaBetaConfig``), for the strength probe.
      simulations: MCTS simulations per move (a ``seconds_per_move`` run's calibrated count).
      settings: the static first argument of ``init`` and ``epoch`` (a boss GA ``Setup``, or a
        learner's frozen settings).
      init: ``init(settings, key) -> state``: pure; the state is a pytree of plain arrays (no typed
        PRNG keys: it is checkpointed leaf by leaf) with ``epoch`` ([] int32, epochs completed).
      epoch: ``epoch(settings, state, key) -> (state, metrics)``, jitted with ``settings`` static:
        pure (a resumed run repeats the metrics), ``epoch + 1``; metrics are scalars named after
        ``metrics.csv`` columns (others are dropped), ``plies`` among them.
      network: ``network(state) -> params``: the network saved in the lineage, probed and exported.
      checked: ``checked(state) -> pytree`` of the arrays that must stay finite.
      snapshots: True for a learner (its one network is saved every ``snapshot_every`` epochs), False
        for evolution (an epoch's ``boss_changed`` metric saves the new boss).
      points_column: the metrics column saved as a lineage entry's ``points``.
      agent_metadata: metadata of every lineage file besides its id, epoch and points.
      non_finite_hint: what to lower when the parameters stop being finite.
      memory_hint: what to lower when an epoch does not fit in memory.
      epoch_data: arrays ``epoch`` takes after the key, traced (not folded into the compiled
        program): a TD learner's endgame database (``endgame_targets``), else none.
      epoch_steps: ``epoch_steps(settings, state, key, *epoch_data)``: a generator that plays the
        epoch in pieces, yielding after each and returning ``epoch``'s (state, metrics), so a run
        with a wall-time budget can stop inside a long epoch; None: the epoch is one call.
      host_epoch: ``host_epoch(state, key, *epoch_data) -> (state, metrics)``, a Python function that
        plays the epoch instead of ``epoch`` (the same result; e.g. PBT's members as Ray tasks, or
        SPSA's engine games, which have no ``epoch``): the run plays one epoch a call and ``evolve
        --seeds`` runs the seeds one after another; None: ``epoch``.
      state_metadata: ``state_metadata(state) -> dict``: metadata of the lineage file saved from
        ``state`` besides ``agent_metadata`` (SPSA's tuned search); None: none.
    """

    rules: Rules
    spec: EvaluatorSpec
    search: PopulationSearch
    simulations: int
    settings: Any
    init: Callable[[Any, jax.Array], Any]
    epoch: Callable[[Any, Any, jax.Array], tuple[Any, dict[str, Any]]]
    network: Callable[[Any], Any]
    checked: Callable[[Any], Any]
    snapshots: bool
    points_column: str
    agent_metadata: dict[str, str]
    non_finite_hint: str
    memory_hint: str
    epoch_data: tuple = ()
    epoch_steps: Callable[..., Generator[None, None, tuple[Any, dict[str, Any]]]] | None = None
    host_epoch: Callable[..., tuple[Any, dict[str, Any]]] | None = None
    state_metadata: Callable[[Any], dict[str, str]] | None = None

    def metadata_of(self, state: Any) -> dict[str, str]:
        """The lineage metadata ``state`` adds (``state_metadata``), or none."""
        return {} if self.state_metadata is None else self.state_metadata(state)

    def run_epoch(self, state: Any, key: jax.Array) -> tuple[Any, dict[str, Any]]:
        """One epoch of ``state`` with ``key`` (``host_epoch`` when there is one)."""
        if self.host_epoch is not None:
            return self.host_epoch(state, key, *self.epoch_data)
        return self.epoch(self.settings, state, key, *self.epoch_data)

    def run_epoch_steps(
        self, state: Any, key: jax.Array
    ) -> Generator[None, None, tuple[Any, dict[str, Any]]]:
        """One epoch of ``state`` with ``key`` in pieces (a trainer with ``epoch_steps``)."""
        return (yield from self.epoch_steps(self.settings, state, key, *self.epoch_data))

    def template(self) -> Any:
        """The state's shapes and dtypes (nothing is computed)."""
        return jax.eval_shape(lambda: self.init(self.settings, jax.random.key(0)))

    def check_fits(self) -> None:
        """Compile one epoch (cheap whatever the sizes; the run reuses it) and raise ``RunError`` when
        its arrays need more memory than this machine has, before anything runs. Nothing is checked
        for a ``host_epoch``, whose work may be elsewhere (PBT's members on Ray's workers)."""
        if self.host_epoch is not None:
            return
        key = jax.eval_shape(lambda: epoch_key(0, 0))  # shapes only
        compiled = self.epoch.lower(self.settings, self.template(), key, *self.epoch_data).compile()
        try:
            check_memory(compiled, "one epoch of this config")
        except MemoryLimitError as e:
            raise RunError(f"{e}; lower {self.memory_hint}") from None


@functools.cache
def jitted(function: Callable) -> Callable:
    """``function(settings, ...)`` jitted with the settings static (a jitted one is inlined)."""
    return jax.jit(function, static_argnums=0)


@jax.jit
def all_finite(tree: Any) -> jax.Array:
    """Whether every array of ``tree`` is finite ([] bool)."""
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(tree)]))


@dataclasses.dataclass(frozen=True)
class Learner:
    """A self-play learner (a module of ``neurocheckers.learners``): its pure ``init(settings, key)``
    and ``epoch(settings, state, key)`` (state with ``params`` in ``evaluator`` layout), over the
    frozen settings dataclass of its registry entry (every field the config key of the same name)."""

    init: Callable[[Any, jax.Array], Any]
    epoch: Callable[[Any, Any, jax.Array], tuple[Any, dict[str, Any]]] | None
    """None for a learner that plays on the host alone (its ``host_epoch`` always gives an epoch)."""
    epoch_steps: Callable | None = None
    """The epoch in pieces (``Trainer.epoch_steps``), or None."""
    host_epoch: Callable[[ExperimentConfig, Any], Callable | None] | None = None
    """``host_epoch(config, settings)``: the run's ``Trainer.host_epoch`` (None: the compiled epoch)."""
    network_spec: Callable[[ExperimentConfig], EvaluatorSpec] | None = None
    """The network's shape when the learner does not take [network]'s (SPSA: its agent file's)."""
    state_metadata: Callable[[Any, Any], dict[str, str]] | None = None
    """``state_metadata(settings, state)``: the ``Trainer.state_metadata`` of its snapshots."""
    start_from: Callable[[Any, Any, jax.Array], Any] | None = None
    """``start_from(settings, params, key)``: ``init``'s state with the network ``params`` (a run's
    ``initial_agent``), or None where the learner cannot start from an agent."""


def dqn_opponent(settings: dqn.DQNSettings) -> tuple[Any, Any] | None:
    """The (policy, params) DQN plays against: None for random and self-play (built in), else the
    fixed opponent's policy."""
    if settings.opponent in ("random", "self"):
        return None
    return fixed_opponent_policy(get_rules(settings.rules), settings.opponent), None


def dqn_init(settings: dqn.DQNSettings, key: jax.Array) -> dqn.DQNState:
    return dqn.init(settings, key, dqn_opponent(settings))


def dqn_epoch(settings: dqn.DQNSettings, state: dqn.DQNState, key: jax.Array):
    return dqn.epoch(settings, state, key, dqn_opponent(settings))


TD_LAMBDA = Learner(
    td_lambda.init, td_lambda.epoch, td_lambda.epoch_in_pieces, start_from=td_lambda.start_from
)
"""TD(lambda) and TDLeaf(lambda) (their settings tell them apart)."""


def pbt_host_epoch(config: ExperimentConfig, settings: pbt.PBTSettings) -> Callable | None:
    """PBT's epoch with its members trained as Ray tasks, ``ray_share`` a task, on the Ray instance at
    ``ray_address`` (connected at the first epoch unless this process already is); the tournament and
    the exploit step here (``pbt_shares.epoch_in_shares``). None without ``ray_address``."""
    if not config.ray_address:
        return None
    from neurocheckers.experiment.cluster import connect_ray, import_ray

    import_ray(RunError)  # before anything is written

    def epoch(state: pbt.PBTState, key: jax.Array, *epoch_data: Any) -> tuple[pbt.PBTState, dict]:
        connect_ray(config.ray_address, RunError)
        on_ray = ray_shares()
        return pbt_shares.epoch_in_shares(settings, state, key, on_ray, config.ray_share, *epoch_data)

    return epoch


PBT = Learner(pbt.init, pbt.epoch, host_epoch=pbt_host_epoch, start_from=pbt.start_from)
"""Population-based training of TD(lambda) / TDLeaf(lambda) members (``learners.pbt``)."""


def spsa_network_spec(config: ExperimentConfig) -> EvaluatorSpec:
    """The network of SPSA's agent file; ``RunError`` naming a file that cannot be read."""
    try:
        return load_agent(config.spsa_agent, config.rules).spec
    except (OSError, ValueError) as e:
        raise RunError(f"spsa_agent = {config.spsa_agent!r}: {e}") from None


def spsa_host_epoch(config: ExperimentConfig, settings: spsa.SPSASettings) -> Callable:
    """SPSA's epoch, its pairs as Ray tasks on ``spsa_ray_address`` (connected at the first epoch
    unless this process already is), else in local processes."""
    if not config.spsa_ray_address:
        return spsa.host_epoch(settings)
    from neurocheckers.experiment.cluster import connect_ray, import_ray

    import_ray(RunError)  # before anything is written
    on_ray = spsa.host_epoch(settings, ray_shares())

    def epoch(state: spsa.SPSAState, key: jax.Array, *epoch_data: Any) -> tuple:
        connect_ray(config.spsa_ray_address, RunError)
        return on_ray(state, key)

    return epoch


SPSA = Learner(
    spsa.init,
    None,
    host_epoch=spsa_host_epoch,
    network_spec=spsa_network_spec,
    state_metadata=spsa.snapshot_metadata,
)
"""SPSA over the compiled search's parameters of one agent, by engine games (``learners.spsa``)."""


def tuner_host_epoch(epoch_on_host: Callable, prefix: str) -> Callable[[ExperimentConfig, Any], Callable]:
    """The ``Learner.host_epoch`` of an engine-game evolution strategy whose keys start ``prefix``:
    its games in ``PREFIX_workers`` shares, as Ray tasks on ``PREFIX_ray_address`` (connected at the
    first epoch unless this process already is), else in local processes."""

    def host_epoch(config: ExperimentConfig, settings: Any) -> Callable:
        workers, address = getattr(config, f"{prefix}_workers"), getattr(config, f"{prefix}_ray_address")
        if not address:
            return engine_tuning.host_epoch(epoch_on_host, settings, workers)
        from neurocheckers.experiment.cluster import connect_ray, import_ray

        import_ray(RunError)  # before anything is written
        on_ray = engine_tuning.host_epoch(epoch_on_host, settings, workers, ray_shares())

        def epoch(state: Any, key: jax.Array, *epoch_data: Any) -> tuple:
            connect_ray(address, RunError)
            return on_ray(state, key)

        return epoch

    return host_epoch


def tuner_network_spec(prefix: str, architectures: tuple[str, ...] = ()) -> Callable:
    """The ``Learner.network_spec`` of a tuner: the network of its ``PREFIX_agent`` file; ``RunError``
    naming a file that cannot be read (or whose architecture is not among ``architectures``)."""

    def network_spec(config: ExperimentConfig) -> EvaluatorSpec:
        path = getattr(config, f"{prefix}_agent")
        try:
            spec = load_agent(path, config.rules).spec
        except (OSError, ValueError) as e:
            raise RunError(f"{prefix}_agent = {path!r}: {e}") from None
        if architectures and spec.architecture not in architectures:
            raise RunError(f"{prefix}_agent = {path!r}: a {spec.architecture} network; the compiled search "
                           f"plays {' and '.join(architectures)} networks")  # fmt: skip
        return spec

    return network_spec


CMA_SEARCH = Learner(
    search_tuners.cma_init_state,
    None,
    host_epoch=tuner_host_epoch(search_tuners.cma_epoch_on_host, "cma"),
    network_spec=tuner_network_spec("cma"),
    state_metadata=search_tuners.cma_metadata,
)
"""CMA-ES over the compiled search's parameters of one agent, by engine games."""
GA_SEARCH = Learner(
    search_tuners.ga_init_state,
    None,
    host_epoch=tuner_host_epoch(search_tuners.ga_epoch_on_host, "ga"),
    network_spec=tuner_network_spec("ga"),
    state_metadata=search_tuners.ga_metadata,
)
"""The study's GA over the compiled search's parameters of one agent, by engine games."""
NETWORK_ES = Learner(
    network_es.init,
    None,
    host_epoch=tuner_host_epoch(network_es.epoch_on_host, "es"),
    network_spec=tuner_network_spec("es", ("mlp", "nnue")),
    state_metadata=network_es.snapshot_metadata,
)
"""OpenAI-ES over the top layers of an agent's network, by engine games."""
DQN = Learner(dqn_init, dqn_epoch)
"""Afterstate DQN, against the opponent its settings name."""


def evolution_trainer(config: ExperimentConfig, simulations: int) -> Trainer:
    """An evolution strategy (its ``boss_ga.Generation``, which ``evolution_settings`` carries) in the
    boss GA's epoch, with ``simulations`` per move for MCTS."""
    setup = boss_ga.make_setup(config.evolution_settings(simulations))
    return Trainer(
        rules=setup.rules,
        spec=setup.spec,
        search=setup.search,
        simulations=simulations,
        settings=setup,
        init=boss_ga.init,  # not jitted: the runs written before the one loop started so
        epoch=boss_ga.evolve_epoch,
        network=lambda state: state.boss,
        checked=lambda state: (state.population, state.boss),
        snapshots=False,
        points_column="promoted_points",
        agent_metadata={
            "games_per_epoch": str(setup.settings.games_per_epoch),
            "simulations": str(setup.settings.simulations),
            **search_metadata(setup.settings.search, setup.settings.depth),
        },
        non_finite_hint=f"mutation_rate ({config.mutation_rate}) or learning_rate ({config.learning_rate})",
        memory_hint="population, games_per_epoch, simulations or max_plies",
    )


def learner_trainer(config: ExperimentConfig, simulations: int, entry: StrategyEntry) -> Trainer:
    """A learner (``entry``'s ``Learner``, over its settings dataclass); its snapshots are its lineage."""
    learner = entry.loaded_algorithm()
    settings_class = entry.loaded_settings()
    fields = dataclasses.fields(settings_class)
    settings = settings_class(**{f.name: getattr(config, f.name) for f in fields})
    rules = get_rules(config.rules)
    spec = (
        learner.network_spec(config) if learner.network_spec else spec_of_settings(config, rules.board_size)
    )
    own_metadata = learner.state_metadata
    return Trainer(
        rules=rules,
        spec=spec,
        search=population_search(config),
        simulations=simulations,
        settings=settings,
        init=learner_init(config, learner, spec),
        epoch=jitted(learner.epoch) if learner.epoch is not None else None,
        network=lambda state: state.params,
        checked=lambda state: state.params,
        snapshots=True,
        points_column="strength_material",
        agent_metadata={
            "strategy": config.strategy,
            "games_per_epoch": str(config.selfplay_games),
            "simulations": str(simulations),
            **search_metadata(config.search, config.depth),
            **({"initial_agent": config.initial_agent} if config.initial_agent else {}),
        },
        non_finite_hint=f"learning_rate ({config.learning_rate})",
        memory_hint="selfplay_games, max_plies, simulations or depth",
        epoch_data=learner_epoch_data(config, entry),
        # With a wall-time budget the epoch is played in pieces, so the run can stop inside one.
        epoch_steps=learner.epoch_steps if config.budget_minutes > 0 else None,
        host_epoch=learner.host_epoch(config, settings) if learner.host_epoch else None,
        state_metadata=(lambda state: own_metadata(settings, state)) if own_metadata else None,
    )


def learner_init(config: ExperimentConfig, learner: Learner, spec: EvaluatorSpec) -> Callable:
    """The trainer's ``init``: the learner's own, or with ``initial_agent`` its ``start_from`` over
    that file's network; ``RunError`` for a file that cannot be read, is of other rules or another
    network than ``spec``, or a learner that cannot start from one."""
    path = config.initial_agent
    if not path:
        return jitted(learner.init)
    if learner.start_from is None:
        raise RunError(f"initial_agent = {path!r}: strategy {config.strategy!r} cannot start from an agent")
    try:
        agent = load_agent(path, config.rules)
    except (OSError, ValueError) as e:
        raise RunError(f"initial_agent = {path!r}: {e}") from None
    if agent.spec != spec:
        ours, theirs = spec.describe(), agent.spec.describe()
        raise RunError(f"initial_agent = {path!r}: the file's network: {theirs}; [network]'s: {ours}")
    start, params = jitted(learner.start_from), agent.params
    return lambda settings, key: start(settings, params, key)


def endgame_targets(config: ExperimentConfig, entry: StrategyEntry) -> tuple:
    """``(DeviceDB,)`` of the ``endgame_targets`` database of a learner that reads the ``td_lambda``
    section, or ``()``; ``RunError`` naming a folder that holds none, or one of other rules."""
    folder = config.endgame_targets
    if not folder or "td_lambda" not in entry.section_names():
        return ()
    try:
        return (device_db(EndgameDB(folder, config.rules)),)
    except EndgameError as e:
        raise RunError(f"endgame_targets = {folder!r}: {e}") from None


def learner_epoch_data(config: ExperimentConfig, entry: StrategyEntry) -> tuple:
    """What a learner's epoch takes after its key: ``endgame_targets``' database, then, with an
    ``anchor_weight``, ``initial_agent``'s network (the targets' pull; the database None without one)."""
    exact = endgame_targets(config, entry)
    if not config.anchor_weight or "td_lambda" not in entry.section_names():
        return exact
    return (exact[0] if exact else None, load_agent(config.initial_agent, config.rules).params)


@functools.cache
def make_trainer(config: ExperimentConfig, simulations: int | None = None) -> Trainer:
    """The ``Trainer`` of ``config`` (cached: one compiled epoch per config), with ``simulations``
    per move (default: the config's)."""
    simulations = config.simulations if simulations is None else simulations
    entry = strategy(config.strategy)
    if entry.kind == LEARNER:
        return learner_trainer(config, simulations, entry)
    return evolution_trainer(config, simulations)
