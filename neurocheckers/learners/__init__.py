"""Self-play learners of the evaluator network: TD(lambda) (``td_lambda``), sharing their settings,
state, self-play games and regression (``common``). Each learner module has ``init(settings, key)``
and ``epoch(settings, state, key)``; ``experiment.run`` drives them like the evolution strategies."""

from neurocheckers.learners.common import (
    LearnerSettings,
    LearnerState,
    SelfPlayBatch,
    choose_action,
    learner_rules,
    learner_spec,
    material_positions,
    record_length,
    regress,
    selfplay,
    weighted_mse,
)
from neurocheckers.learners.td_lambda import TDSettings, td_lambda_targets

__all__ = [
    "LearnerSettings",
    "LearnerState",
    "SelfPlayBatch",
    "TDSettings",
    "choose_action",
    "learner_rules",
    "learner_spec",
    "material_positions",
    "record_length",
    "regress",
    "selfplay",
    "td_lambda_targets",
    "weighted_mse",
]
