"""Learners of the evaluator network from its own games: TD(lambda) and TDLeaf(lambda) self-play
(``td_lambda``) and afterstate DQN (``dqn``, with its replay buffer in ``replay``), sharing their settings,
state, self-play games and regression (``common``). Each learner module has ``init(settings, key)``
and ``epoch(settings, state, key)``; ``experiment.run`` drives them like the evolution strategies."""

from neurocheckers.learners.common import (
    LearnerSettings,
    LearnerState,
    SelfPlayBatch,
    choose_action,
    choose_actions,
    learner_rules,
    learner_spec,
    material_positions,
    principal_leaves,
    record_length,
    regress,
    weighted_mse,
)
from neurocheckers.learners.dqn_settings import DQNSettings, DQNState
from neurocheckers.learners.replay import ReplayBuffer
from neurocheckers.learners.self_play import selfplay
from neurocheckers.learners.td_lambda import TDLeafSettings, TDSettings, td_lambda_targets

__all__ = [
    "DQNSettings",
    "DQNState",
    "ReplayBuffer",
    "LearnerSettings",
    "LearnerState",
    "SelfPlayBatch",
    "TDLeafSettings",
    "TDSettings",
    "choose_action",
    "choose_actions",
    "learner_rules",
    "learner_spec",
    "material_positions",
    "principal_leaves",
    "record_length",
    "regress",
    "selfplay",
    "td_lambda_targets",
    "weighted_mse",
]
