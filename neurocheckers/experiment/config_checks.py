"""The experiment config's checks by section: its selection settings, its learners' sections, its
network, and every section's own ``problems`` (a plug-in's among them). ``experiment.config.validate``
asks each; each raises ``ConfigError`` naming the first bad value. No JAX."""

from __future__ import annotations

from typing import Any

from neurocheckers.experiment.files import ConfigError
from neurocheckers.formats import parse_fixed_opponent
from neurocheckers.rules.presets import PRESETS

Config = Any
"""An ``experiment.config.ExperimentConfig`` (not imported: the config imports these checks)."""

EXPLORATIONS = ("epsilon", "softmax")
LOSSES = ("mae", "mse")
SEARCHES = ("mcts", "alphabeta")
FITNESS = ("boss", "fixed")
SUPERVISED_TARGETS = ("outcome", "td_lambda")
LEARNER_GAMES = ("boss", "all")
LEARNER_SIDES = ("member", "both")


def validate_sections(c: Config) -> None:
    """``ConfigError`` with the first problem a section of ``c`` finds in its keys (the sections that
    define ``problems``: DQN's, a plug-in's)."""
    for section in type(c).__mro__:
        if getattr(section, "SECTION", "") and "problems" in vars(section):
            problems = section.problems(c)
            if problems:
                raise ConfigError(problems[0])


def validate_learner(c: Config) -> None:
    """Raise ``ConfigError`` for impossible self-play learner settings (the ``td_lambda`` and ``dqn``
    sections, and the learners' minibatches)."""

    def need(condition: bool, message: str) -> None:
        if not condition:
            raise ConfigError(message)

    need(0 <= c.lambda_ <= 1, f"lambda_ must be in [0, 1], got {c.lambda_}")
    need(1 <= c.selfplay_games < 2**31, f"selfplay_games must be >= 1, got {c.selfplay_games}")
    need(
        c.exploration in EXPLORATIONS,
        f"exploration must be one of {', '.join(EXPLORATIONS)}, got {c.exploration!r}",
    )
    need(c.exploration_rate >= 0, f"exploration_rate must be >= 0, got {c.exploration_rate}")
    need(
        c.exploration != "epsilon" or c.exploration_rate <= 1,
        f"exploration_rate (epsilon's probability) must be <= 1, got {c.exploration_rate}",
    )
    need(0 <= c.anchor_weight <= 1, f"anchor_weight must be in [0, 1], got {c.anchor_weight}")
    need(
        c.anchor_weight == 0 or bool(c.initial_agent),
        f"anchor_weight = {c.anchor_weight} pulls towards initial_agent's values: set initial_agent",
    )
    for name in ("updates_per_epoch", "bootstrap_positions", "bootstrap_steps"):
        need(getattr(c, name) >= 0, f"{name} must be >= 0, got {getattr(c, name)}")
    for name in ("batch_size", "snapshot_every"):
        need(getattr(c, name) >= 1, f"{name} must be >= 1, got {getattr(c, name)}")
    validate_dqn(c)


def validate_dqn(c: Config) -> None:
    """Raise ``ConfigError`` for a DQN opponent that is no player spec (the section's other rules are
    ``DQNSectionSettings.problems``, asked by ``validate_sections``)."""
    if c.opponent not in ("random", "self"):
        try:
            parse_fixed_opponent(c.opponent)
        except ValueError as e:
            raise ConfigError(f"opponent: {e}") from None


def validate_selection(c: Config) -> None:
    """Raise ``ConfigError`` for impossible selection settings (openings, confirmation, hall of fame,
    benchmark opponent, fitness, strength probes)."""

    def need(condition: bool, message: str) -> None:
        if not condition:
            raise ConfigError(message)

    for name in ("openings", "promotion_candidates", "hall_of_fame", "strength_every"):
        need(getattr(c, name) >= 0, f"{name} must be >= 0, got {getattr(c, name)}")
    for name in ("promotion_games", "hall_of_fame_games", "benchmark_games"):
        value = getattr(c, name)
        need(value >= 2 and value % 2 == 0, f"{name} must be even and >= 2 (paired games), got {value}")
    for name in ("hall_of_fame_weight", "benchmark_weight", "budget_minutes"):
        need(getattr(c, name) >= 0, f"{name} must be >= 0, got {getattr(c, name)}")
    if c.openings:
        need(
            c.games_per_epoch == 2 * c.openings,
            f"games_per_epoch must be 2 x openings (each opening with both colours), got "
            f"games_per_epoch = {c.games_per_epoch} with openings = {c.openings}",
        )
        available = _committed_openings(c.rules)
        need(c.openings <= available, f"openings must be <= {available} for {c.rules}, got {c.openings}")
    need(
        c.promotion_candidates <= c.population,
        f"promotion_candidates must be <= population ({c.population}), got {c.promotion_candidates}",
    )
    if c.benchmark_opponent:
        try:
            parse_fixed_opponent(c.benchmark_opponent)
        except ValueError as e:
            raise ConfigError(f"benchmark_opponent: {e}") from None
    need(c.fitness in FITNESS, f"fitness must be one of {', '.join(FITNESS)}, got {c.fitness!r}")
    need(
        c.supervised_target in SUPERVISED_TARGETS,
        f"supervised_target must be one of {', '.join(SUPERVISED_TARGETS)}, got {c.supervised_target!r}",
    )
    need(
        c.learner_games in LEARNER_GAMES,
        f"learner_games must be one of {', '.join(LEARNER_GAMES)}, got {c.learner_games!r}",
    )
    need(
        c.learner_sides in LEARNER_SIDES,
        f"learner_sides must be one of {', '.join(LEARNER_SIDES)}, got {c.learner_sides!r}",
    )
    need(c.train_batch >= 0, f"train_batch must be >= 0, got {c.train_batch}")
    if c.fitness == "fixed":
        need(bool(c.benchmark_opponent), 'fitness = "fixed" needs a benchmark_opponent')
        need(
            c.hall_of_fame == 0,
            f'fitness = "fixed" ranks by the benchmark alone; got hall_of_fame = {c.hall_of_fame}',
        )


def validate_evaluator(c: Config) -> None:
    """Raise ``ConfigError`` for an unknown evaluator or bad architecture settings."""
    from neurocheckers.networks.architectures import ARCHITECTURES, spec_of_settings

    if c.evaluator not in ARCHITECTURES:
        raise ConfigError(f"evaluator must be one of {', '.join(ARCHITECTURES)}, got {c.evaluator!r}")
    try:
        spec_of_settings(c, PRESETS[c.rules].board_size)
    except ValueError as e:
        raise ConfigError(str(e).removeprefix("EvaluatorSpec.")) from None


def _committed_openings(rules: str) -> int:
    """How many openings the committed set of ``rules`` holds."""
    from neurocheckers.rules.openings import load_openings
    from neurocheckers.rules.presets import get_rules

    return len(load_openings(get_rules(rules)))
