"""The settings of an evolution run, as the evolution layer sees them (built by the experiment layer)."""

from __future__ import annotations

import dataclasses
from typing import Any

from neurocheckers.sections import (
    BossGASettings,
    LambdaSettings,
    LearningRateSettings,
    PlaySettings,
    StrategySettings,
)


@dataclasses.dataclass(frozen=True)
class EvolutionSettings(BossGASettings, LambdaSettings, LearningRateSettings, PlaySettings, StrategySettings):
    """What ``boss_ga`` needs to play and breed one population (hashable: ``make_setup`` caches on it):
    the config's sections ``game``, ``network``, ``search``, ``boss_ga``, its learning rate and
    lambda, and the strategy (boss_ga, or the evosax strategy that replaces the generation step).

    The experiment's config builds it (``ExperimentConfig.evolution_settings``); run bookkeeping
    (name, epochs, seed, checkpoints) stays in the experiment layer.
    """

    generation: Any = dataclasses.field(default=None, metadata={"config_key": False})
    """The ``boss_ga.Generation`` that asks for and breeds the population (the strategy registry's
    entry for ``strategy``); None: evosax's when ``strategy`` names an evosax algorithm, else the
    study's boss GA. Not a config key."""
