"""The hybrid: the boss GA's supervised quarter learning TD(lambda) targets instead of results."""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.evolution.boss_ga import evolve_epoch, init, make_setup
from neurocheckers.evolution.operators import td_lambda_member_targets
from neurocheckers.experiment.config import ConfigError, load_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tiny import TINY_RUN  # noqa: E402


def test_member_targets_equal_a_hand_computed_example():
    # The member moved from slots 0, 2 and 3 (slot 1 is the opponent's), then won (score 1).
    values = jnp.array([[0.2, 0.9, 0.4, 0.6]])
    valid = jnp.array([[True, False, True, True]])
    lam = 0.5
    t3 = lam * 1.0 + (1 - lam) * 1.0  # the end of the game, valued at the score
    t2 = lam * t3 + (1 - lam) * 0.6
    t0 = lam * t2 + (1 - lam) * 0.4
    targets = td_lambda_member_targets(values, valid, jnp.array([1.0]), lam)
    np.testing.assert_allclose(np.asarray(targets)[0, [0, 2, 3]], [t0, t2, t3], rtol=1e-6)
    outcome = td_lambda_member_targets(values, valid, jnp.array([0.5]), 1.0)
    np.testing.assert_allclose(np.asarray(outcome)[0, [0, 2, 3]], 0.5)


def test_a_hybrid_epoch_trains_its_learners_on_td_targets():
    config = load_config(None, [*TINY_RUN, "supervised_target=td_lambda", "lambda_=0.5", "train_steps=2"])
    setup = make_setup(config.evolution_settings())
    outcome_setup = make_setup(load_config(None, [*TINY_RUN, "train_steps=2"]).evolution_settings())
    state = init(setup, jax.random.key(0))
    key = jax.random.key(1)
    _, metrics = evolve_epoch(setup, state, key)
    _, outcome_metrics = evolve_epoch(outcome_setup, state, key)
    assert np.isfinite(float(metrics["learner_loss_after"]))
    # Same games, other targets: the learners' losses differ from the outcome-trained ones.
    assert float(metrics["learner_loss_before"]) != float(outcome_metrics["learner_loss_before"])
    with pytest.raises(ConfigError, match="supervised_target must be one of outcome, td_lambda"):
        load_config(None, [*TINY_RUN, "supervised_target=bogus"])
