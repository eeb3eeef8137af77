"""The built-in strategies, one registry line each (``strategy_registry``), with the sections, rules,
columns and summaries they own. No JAX: algorithms and settings are named by ``"module:name"``.

Their sections are the classes of ``neurocheckers.sections`` (not of the strategies' own modules):
the algorithms' settings below the experiment layer (``evolution.settings``, ``learners``) inherit
them, and the config is built from them without importing JAX. A plug-in keeps its section in its
own module (``tests/test_strategy_plugins.py`` has one)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from neurocheckers.experiment.strategy_registry import (
    EVOLUTION,
    EVOLUTION_COLUMNS,
    GAME_COLUMNS,
    LEARNER,
    StrategyEntry,
    register,
)
from neurocheckers.formats import PBT_COLUMNS
from neurocheckers.sections import (
    PBT_MEMBER_LEARNERS,
    BossGASettings,
    CMASearchSectionSettings,
    DQNSectionSettings,
    GASearchSectionSettings,
    NetworkESSectionSettings,
    PBTSectionSettings,
    SelfPlaySettings,
    SPSASectionSettings,
)

if TYPE_CHECKING:
    from neurocheckers.experiment.config import ExperimentConfig

BREEDING_COLUMNS = (*EVOLUTION_COLUMNS, "learner_loss_before", "learner_loss_after")
"""The boss GA's columns: evolution's and its learner quarter's losses."""
TD_COLUMNS = ("loss", "td_error", "epsilon", "value_mean", "learner_loss_before", "learner_loss_after")
DQN_COLUMNS = ("loss", "epsilon", "score_vs_opponent")
DQN_UNLOGGED = ("buffer_size", "games_finished", "mean_target", "updates_taken", "win_rate_vs_opponent")
"""DQN's diagnostics, returned by its epoch and kept out of ``metrics.csv``."""

SEARCH_PARAMETERS = (
    "table", "pvs", "killers", "history", "quiescence", "lmr", "lmr_deep", "lmr_log", "counter", "iir",
    "aspiration", "lmr_min_depth", "lmr_min_move", "lmr_deep_min_depth", "lmr_deep_min_move",
    "lmr_deep_reduction", "iir_min_depth", "next_iteration_share", "database_pieces",
)  # fmt: skip
"""The compiled search's tunable parameters (``compiled.driver.tunable_fields``, which a test holds
this list to), named here without importing the search."""
SPSA_COLUMNS = ("spsa_score", "spsa_c", *(f"tuned_{name}" for name in SEARCH_PARAMETERS))
"""SPSA's columns: the plus side's score, the mean perturbation (steps), each parameter's value."""
TUNE_COLUMNS = ("tune_score", "tune_best", "tune_sigma")
"""An engine-game evolution strategy's columns: the candidates' mean and best score against the
reference (the mean, or the best elite), and the spread of the candidates (the step size)."""
SEARCH_TUNE_COLUMNS = (*TUNE_COLUMNS, *(f"tuned_{name}" for name in SEARCH_PARAMETERS))
"""CMA-ES's and the search GA's columns: ``TUNE_COLUMNS`` and each parameter's tuned value."""
NETWORK_ES_COLUMNS = (*TUNE_COLUMNS, "tune_distance")
"""The network ES's columns: ``TUNE_COLUMNS`` and the RMS change of the tuned weights from the file's."""
TUNERS = {"spsa": "spsa", "cma_search": "cma", "ga_search": "ga", "es_network": "es"}
"""The strategies tuned by engine games, with their keys' prefix (``spsa_agent``, ``cma_agent`` ...)."""

CMA_ES_MAX_PARAMS = 10_000
"""The most weights CMA_ES may evolve: it keeps a full D x D covariance and decomposes it every
generation (on the 5,441 weights of a 5 x 32 MLP one generation took 46 s on 2 cores)."""


def _need(condition: bool, message: str) -> None:
    from neurocheckers.experiment.files import ConfigError

    if not condition:
        raise ConfigError(message)


def check_pool(c: ExperimentConfig) -> None:
    """The memetic pool draws its learners' minibatches from every member's games."""
    _need(c.train_batch > 0, f"strategy {c.strategy!r} needs train_batch > 0 (minibatches of the pool)")


def check_cma_es(c: ExperimentConfig) -> None:
    """CMA_ES keeps a full covariance of the weights: at most ``CMA_ES_MAX_PARAMS`` of them."""
    from neurocheckers.networks.architectures import spec_of_settings
    from neurocheckers.rules.presets import PRESETS

    spec = spec_of_settings(c, PRESETS[c.rules].board_size)
    _need(
        spec.num_params <= CMA_ES_MAX_PARAMS,
        f'strategy = "CMA_ES" evolves at most {CMA_ES_MAX_PARAMS} weights, but this {spec.describe()} '
        f"has {spec.num_params}; use SNES, Open_ES, SimpleGA or boss_ga, or a smaller network",
    )


def check_learner(c: ExperimentConfig) -> None:
    """A learner plays a fixed search, and none of evolution's selection settings."""
    _need(
        c.seconds_per_move == 0,
        f"strategy {c.strategy!r} needs seconds_per_move = 0, got {c.seconds_per_move}",
    )
    evolution_only = f"applies to evolution, not to strategy {c.strategy!r}"
    for name in ("openings", "promotion_candidates", "hall_of_fame"):
        value = getattr(c, name)
        _need(value == 0, f"{name} {evolution_only}; got {name} = {value}")
    _need(not c.benchmark_opponent, f"benchmark_opponent {evolution_only}")


def check_td_leaf(c: ExperimentConfig) -> None:
    """TDLeaf learns from the principal leaves of an alpha-beta search of at least two plies."""
    check_learner(c)
    _need(
        c.search == "alphabeta" and c.depth >= 2,
        f"strategy {c.strategy!r} learns from alpha-beta leaves: it needs search = alphabeta and depth >= 2, "
        f"got search = {c.search!r}, depth = {c.depth}",
    )


def check_pbt(c: ExperimentConfig) -> None:
    """PBT trains its members as a TD learner, and replaces at most half of them after a tournament."""
    check_learner(c)
    _need(
        c.member_learner in PBT_MEMBER_LEARNERS,
        f"member_learner must be one of {', '.join(PBT_MEMBER_LEARNERS)}, got {c.member_learner!r}",
    )
    if c.member_learner == "td_leaf":
        check_td_leaf(c)
    _need(c.members >= 2, f"members must be >= 2, got {c.members}")
    _need(c.exploit_interval >= 1, f"exploit_interval must be >= 1, got {c.exploit_interval}")
    _need(0 < c.perturbation < 1, f"perturbation must be in (0, 1), got {c.perturbation}")
    _need(0 < c.quantile <= 0.5, f"quantile must be in (0, 0.5], got {c.quantile}")
    _need(c.tournament_openings >= 1, f"tournament_openings must be >= 1, got {c.tournament_openings}")
    _need(
        c.max_depth == 0 or (c.search == "alphabeta" and c.max_depth >= c.depth),
        f"max_depth evolves the alpha-beta depth: it needs search = alphabeta and max_depth >= depth "
        f"(or 0: the depth fixed), got search = {c.search!r}, depth = {c.depth}, max_depth = {c.max_depth}",
    )
    _need(
        c.min_width == 0 or (c.evaluator == "mlp" and 1 <= c.min_width <= c.width),
        f"min_width evolves the MLP's width: it needs evaluator = mlp and 1 <= min_width <= width "
        f"(or 0: the width fixed), got evaluator = {c.evaluator!r}, width = {c.width}, "
        f"min_width = {c.min_width}",
    )
    _need(
        not c.share_games or (c.search == "alphabeta" and (c.depth == 1 or c.exploration == "epsilon")),
        f"share_games needs the members' games in one batch: search = alphabeta with exploration = "
        f"epsilon (or depth 1), got search = {c.search!r}, depth = {c.depth}, "
        f"exploration = {c.exploration!r}",
    )
    _need(
        not (c.share_games and c.ray_address),
        f"share_games needs every member's games in one process: leave ray_address empty, "
        f"got {c.ray_address!r}",
    )
    if c.ray_address:
        _need(
            c.ray_share >= 1 and c.members % c.ray_share == 0,
            f"ray_share must be >= 1 and divide members ({c.members}), got {c.ray_share}",
        )
        _need(
            c.epochs_per_call == 1,
            f"ray_address trains the members as Ray tasks, one epoch a call: it needs epochs_per_call = 1, "
            f"got {c.epochs_per_call}",
        )


def check_spsa(c: ExperimentConfig) -> None:
    """SPSA tunes the compiled search of one agent file, over parameters the search has."""
    check_learner(c)
    _need(bool(c.spsa_agent), "strategy 'spsa' tunes the search of an agent: set spsa_agent to its file")
    names = [name.strip() for name in c.spsa_parameters.split(",") if name.strip()]
    unknown = [name for name in names if name not in SEARCH_PARAMETERS]
    _need(bool(names), "spsa_parameters names no parameter")
    _need(not unknown, f"spsa_parameters: no tunable search parameter {unknown[0] if unknown else ''!r}; "
                       f"they are: {', '.join(SEARCH_PARAMETERS)}")  # fmt: skip
    _need(len(set(names)) == len(names), f"spsa_parameters names a parameter twice: {c.spsa_parameters}")


def check_search_tuner(c: ExperimentConfig) -> None:
    """CMA-ES and the GA over the search tune the compiled search of one agent file, over parameters
    the search has."""
    check_learner(c)
    prefix = TUNERS[c.strategy]
    message = f"strategy {c.strategy!r} tunes the search of an agent: set {prefix}_agent to its file"
    _need(bool(getattr(c, f"{prefix}_agent")), message)
    text = getattr(c, f"{prefix}_parameters")
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in SEARCH_PARAMETERS]
    _need(bool(names), f"{prefix}_parameters names no parameter")
    _need(not unknown, f"{prefix}_parameters: no tunable search parameter {unknown[0] if unknown else ''!r}; "
                       f"they are: {', '.join(SEARCH_PARAMETERS)}")  # fmt: skip
    _need(len(set(names)) == len(names), f"{prefix}_parameters names a parameter twice: {text}")


def check_network_es(c: ExperimentConfig) -> None:
    """The network ES tunes the network of one agent file."""
    check_learner(c)
    _need(bool(c.es_agent), "strategy 'es_network' tunes the network of an agent: set es_agent to its file")


def _search_words(c: ExperimentConfig, simulations: int) -> str:
    return f"alpha-beta depth {c.depth}" if c.search == "alphabeta" else f"{simulations} simulations/move"


def _network_words(c: ExperimentConfig) -> str:
    from neurocheckers.networks.architectures import network_summary

    return network_summary(c) + (" + material input" if c.material_input else "")


def evolution_summary(c: ExperimentConfig, simulations: int) -> str:
    """An evolution run in one line: its network, population, games and search."""
    return (
        f"{c.name}: {c.rules}, {_network_words(c)}, P={c.population}, G={c.games_per_epoch}, "
        f"{_search_words(c, simulations)}, strategy {c.strategy}, seed {c.seed}"
    )


def selfplay_summary(c: ExperimentConfig, simulations: int) -> str:
    """A TD learner's run in one line: its network, lambda, self-play games, search and exploration."""
    return (
        f"{c.name}: {c.rules}, {_network_words(c)}, strategy {c.strategy}, lambda {c.lambda_:g}, "
        f"{c.selfplay_games} self-play games/epoch, {_search_words(c, c.simulations)}, "
        f"{c.exploration} {c.exploration_rate:g}, seed {c.seed}"
    )


def pbt_summary(c: ExperimentConfig, simulations: int) -> str:
    """A PBT run in one line: its members, their games, the exploit interval and the starting values."""
    return (
        f"{c.name}: {c.rules}, {_network_words(c)}, strategy pbt: {c.members} {c.member_learner} members x "
        f"{c.selfplay_games} self-play games/epoch, exploit every {c.exploit_interval} epochs, "
        f"{_search_words(c, c.simulations)}{f' (evolving up to {c.max_depth})' if c.max_depth else ''}, "
        f"{f'width evolving in [{c.min_width}, {c.width}], ' if c.min_width else ''}"
        f"starting from lambda {c.lambda_:g}, learning rate "
        f"{c.learning_rate:g}, {c.exploration} {c.exploration_rate:g}, seed {c.seed}"
    )


def spsa_summary(c: ExperimentConfig, simulations: int) -> str:
    """An SPSA run in one line: its agent, parameters, pairs, nodes and gains."""
    return (
        f"{c.name}: {c.rules}, strategy spsa: the compiled search of {c.spsa_agent} ({c.spsa_parameters}), "
        f"{c.spsa_pairs} pairs/epoch at {c.spsa_nodes} nodes/move, c_end {c.spsa_c_end:g} steps, "
        f"r_end {c.spsa_r_end:g}, A {c.spsa_a_share:g} of {c.spsa_iterations or c.epochs} iterations, "
        f"seed {c.seed}"
    )


def tuner_summary(c: ExperimentConfig, simulations: int) -> str:
    """An engine-game evolution strategy's run in one line: its agent, what it tunes, its candidates,
    games and step."""
    p = TUNERS[c.strategy]
    tuned = f"the layers of {c.es_agent} ({c.es_layers or 'all'} from the top)" if p == "es" else (
        f"the compiled search of {getattr(c, f'{p}_agent')} ({getattr(c, f'{p}_parameters')})")  # fmt: skip
    return (
        f"{c.name}: {c.rules}, strategy {c.strategy}: {tuned}, {getattr(c, f'{p}_population')} candidates "
        f"x {getattr(c, f'{p}_pairs')} pairs/epoch at {getattr(c, f'{p}_nodes')} nodes/move, "
        f"sigma {getattr(c, f'{p}_sigma'):g}, seed {c.seed}"
    )


def tuner(name: str, algorithm: str, settings: str, section: type, columns: tuple, validate, doc: str):
    """The entry of an evolution strategy tuned by engine games (a learner driven on the host)."""
    return StrategyEntry(
        name,
        LEARNER,
        algorithm=f"neurocheckers.experiment.trainers:{algorithm}",
        settings=settings,
        sections=(section,),
        validate=validate,
        metric_columns=(*GAME_COLUMNS, *columns),
        summary=tuner_summary,
        pure_epoch=False,
        doc=doc,
    )


def dqn_summary(c: ExperimentConfig, simulations: int) -> str:
    """A DQN run in one line: its network, opponent, games at once, discount and exploration."""
    return (
        f"{c.name}: {c.rules}, {_network_words(c)}, strategy {c.strategy} against {c.opponent}, "
        f"{c.envs} games at once, gamma {c.gamma:g}, epsilon {c.epsilon_start:g}->{c.epsilon_end:g}, "
        f"seed {c.seed}"
    )


def evosax(name: str, doc: str, validate=None) -> StrategyEntry:
    """The entry of evosax's strategy ``name``: the boss's games and promotion, evosax's ask/tell."""
    return StrategyEntry(
        name,
        EVOLUTION,
        algorithm="neurocheckers.evolution.boss_ga:EVOSAX",
        sections=(BossGASettings,),
        validate=validate,
        metric_columns=EVOLUTION_COLUMNS,
        summary=evolution_summary,
        doc=f"evosax's {doc} over the flat weights",
    )


def self_play(name: str, settings: str, doc: str, validate=check_learner) -> StrategyEntry:
    """The entry of a TD self-play learner (``td_lambda`` section) over its ``settings`` dataclass."""
    return StrategyEntry(
        name,
        LEARNER,
        algorithm="neurocheckers.experiment.trainers:TD_LAMBDA",
        settings=settings,
        sections=(SelfPlaySettings,),
        validate=validate,
        metric_columns=(*TD_COLUMNS, *GAME_COLUMNS),
        summary=selfplay_summary,
        doc=doc,
    )


register(
    StrategyEntry(
        "boss_ga",
        EVOLUTION,
        algorithm="neurocheckers.evolution.boss_ga:BOSS_GA",
        sections=(BossGASettings,),
        metric_columns=BREEDING_COLUMNS,
        summary=evolution_summary,
        doc="the study's GA: elites, mutants, crossovers, learners",
    )
)
register(
    StrategyEntry(
        "memetic_pool",
        EVOLUTION,
        algorithm="neurocheckers.evolution.boss_ga:MEMETIC_POOL",
        sections=(BossGASettings,),
        validate=check_pool,
        metric_columns=BREEDING_COLUMNS,
        summary=evolution_summary,
        defaults={"train_batch": 256},
        legacy={"boss_ga.learner_pool": True},  # the boss GA's flag before the pool was a strategy
        doc="the boss GA, its learners trained on all members' games",
    )
)
register(evosax("SimpleGA", "simple GA"))
register(evosax("Open_ES", "OpenAI-ES"))
register(evosax("SNES", "separable NES"))
register(evosax("CMA_ES", "CMA-ES (small networks only)", validate=check_cma_es))
register(self_play("td_lambda", "neurocheckers.learners.td_lambda:TDSettings", "self-play TD(lambda)"))
register(
    self_play(
        "td_leaf",
        "neurocheckers.learners.td_lambda:TDLeafSettings",
        "self-play TDLeaf(lambda), on alpha-beta leaves",
        validate=check_td_leaf,
    )
)
register(
    StrategyEntry(
        "dqn",
        LEARNER,
        algorithm="neurocheckers.experiment.trainers:DQN",
        settings="neurocheckers.learners.dqn_settings:DQNSettings",
        sections=(DQNSectionSettings,),
        validate=check_learner,
        metric_columns=(*DQN_COLUMNS, *GAME_COLUMNS),
        unlogged=DQN_UNLOGGED,
        summary=dqn_summary,
        doc="afterstate DQN against a fixed opponent or itself",
    )
)
register(
    StrategyEntry(
        "pbt",
        LEARNER,
        algorithm="neurocheckers.experiment.trainers:PBT",
        settings="neurocheckers.learners.pbt:PBTSettings",
        sections=(SelfPlaySettings, PBTSectionSettings),
        validate=check_pbt,
        metric_columns=(*TD_COLUMNS, *PBT_COLUMNS, *GAME_COLUMNS),
        summary=pbt_summary,
        doc="population-based training of TD learners",
    )
)
register(
    StrategyEntry(
        "spsa",
        LEARNER,
        algorithm="neurocheckers.experiment.trainers:SPSA",
        settings="neurocheckers.learners.spsa:SPSASettings",
        sections=(SPSASectionSettings,),
        validate=check_spsa,
        metric_columns=(*GAME_COLUMNS, *SPSA_COLUMNS),
        summary=spsa_summary,
        pure_epoch=False,
        doc="SPSA over the compiled search's parameters, by engine games",
    )
)
register(
    tuner(
        "cma_search",
        "CMA_SEARCH",
        "neurocheckers.evolution.search_tuners:CMASearchSettings",
        CMASearchSectionSettings,
        SEARCH_TUNE_COLUMNS,
        check_search_tuner,
        "evosax's CMA-ES over the compiled search's parameters, by engine games",
    )
)
register(
    tuner(
        "ga_search",
        "GA_SEARCH",
        "neurocheckers.evolution.search_tuners:GASearchSettings",
        GASearchSectionSettings,
        SEARCH_TUNE_COLUMNS,
        check_search_tuner,
        "the study's GA over the compiled search's parameters, by engine games",
    )
)
register(
    tuner(
        "es_network",
        "NETWORK_ES",
        "neurocheckers.evolution.network_es:NetworkESSettings",
        NetworkESSectionSettings,
        NETWORK_ES_COLUMNS,
        check_network_es,
        "evosax's OpenAI-ES (antithetic) over a network's top layers, by engine games",
    )
)
