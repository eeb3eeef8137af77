"""Afterstate DQN's settings (every field an experiment config key) and its state: what ``dqn``
learns with, kept apart so that configs and checkpoints read them without the learner."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
from flax import struct

from neurocheckers.learners import replay
from neurocheckers.networks.architectures import spec_of_settings
from neurocheckers.networks.evaluator import EvaluatorSpec, Params
from neurocheckers.rules.presets import PRESETS, Rules, get_rules
from neurocheckers.rules.state import State
from neurocheckers.sections import (
    ArchitectureSettings,
    DQNSectionSettings,
    LearningRateSettings,
    MinibatchSettings,
    RulesSettings,
)

OPPONENTS = ("random", "self")
"""Opponents the learner builds itself; any other ``opponent`` is a player spec passed in resolved."""


@dataclasses.dataclass(frozen=True)
class DQNSettings(
    DQNSectionSettings, MinibatchSettings, LearningRateSettings, ArchitectureSettings, RulesSettings
):
    """Everything a DQN run is (hashable: a static jit argument): the config's ``game`` rules,
    ``network``, learning rate and minibatches, and its ``dqn`` section (each field the config key of
    the same name). ``batch_size`` transitions make a gradient update, which starts once the buffer
    holds that many; ``updates_per_epoch`` updates follow each epoch's moves."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value_ = getattr(self, f.name)
            kind = {"int": int, "float": (int, float), "bool": bool, "str": str}[str(f.type)]
            if not isinstance(value_, kind) or (f.type != "bool" and isinstance(value_, bool)):
                raise ValueError(f"DQNSettings.{f.name} must be {f.type}, got {value_!r}")
            if f.type == "float" and not math.isfinite(value_):
                raise ValueError(f"DQNSettings.{f.name} must be finite, got {value_!r}")
        if self.rules not in PRESETS:
            raise ValueError(f"DQNSettings.rules must be one of {', '.join(PRESETS)}, got {self.rules!r}")
        for name in ("layers", "width", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"DQNSettings.{name} must be >= 1, got {getattr(self, name)}")
        for name in ("updates_per_epoch", "learning_rate"):
            if getattr(self, name) < 0:
                raise ValueError(f"DQNSettings.{name} must be >= 0, got {getattr(self, name)}")
        problems = self.problems()  # the dqn section's own rules, as the experiment config checks them
        if problems:
            raise ValueError(f"DQNSettings.{problems[0]}")
        if not self.opponent.strip():
            raise ValueError("DQNSettings.opponent must be random, self or a player spec, got ''")

    @property
    def rules_preset(self) -> Rules:
        """The ``Rules`` of ``rules``."""
        return get_rules(self.rules)

    @property
    def spec(self) -> EvaluatorSpec:
        """The Q network's shape."""
        return spec_of_settings(self, self.rules_preset.board_size)


@struct.dataclass
class Transition:
    """One learner move and what followed (shapes for one; the buffer adds [C], a batch [B]).

    Fields:
      afterstate: [2N] int8, the encoded position after the move (``evaluator.encode``, from the
        view of the side to move there).
      same_mover: [] bool, whether the learner is still to move in the afterstate (a multi-jump).
      reward: [] float32, r (the game result if it ended, plus shaping).
      done: [] bool, whether the game ended before the learner's next move (no bootstrap).
      next_state: State, s': the learner's next position (the final one when ``done``).
    """

    afterstate: jax.Array
    same_mover: jax.Array
    reward: jax.Array
    done: jax.Array
    next_state: State


@struct.dataclass
class DQNState:
    """Everything a DQN run needs to continue (E games).

    Fields:
      params: the online Q network's parameters (``evaluator`` layout).
      target_params: the target network's parameters.
      opt_state: Adam's state.
      buffer: ``replay.ReplayBuffer`` of ``Transition``.
      games: State with a leading [E] axis, the games in progress, the learner to move in each.
      learner_black: [E] bool, whether the learner plays Black in each game.
      epoch: [] int32, epochs completed.
      updates: [] int32, gradient updates taken (the target copy counts them).
    """

    params: Params
    target_params: Params
    opt_state: Any
    buffer: replay.ReplayBuffer
    games: State
    learner_black: jax.Array
    epoch: jax.Array
    updates: jax.Array
