"""The hybrid: the boss GA's supervised quarter learning TD(lambda) targets instead of results."""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.evolution.boss_ga import evolve_epoch, init, learner_training_data, make_setup
from neurocheckers.experiment.config import ConfigError, load_config
from neurocheckers.networks.fitting import td_lambda_targets
from neurocheckers.population import play_population

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
    targets = td_lambda_targets(values, valid, jnp.zeros_like(valid), jnp.array([1.0]), lam)
    np.testing.assert_allclose(np.asarray(targets)[0, [0, 2, 3]], [t0, t2, t3], rtol=1e-6)
    outcome = td_lambda_targets(values, valid, jnp.zeros_like(valid), jnp.array([0.5]), 1.0)
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


def _training_setup(*keys: str):
    return make_setup(load_config(None, [*TINY_RUN, *keys]).evolution_settings())


def test_both_sides_train_on_the_opponents_positions_with_their_result():
    setup = _training_setup("learner_sides=both")
    member_only = _training_setup()
    state = init(setup, jax.random.key(0))
    records = play_population(
        setup.rules, setup.spec, setup.search, state.population, state.boss, jax.random.key(1), 2,
        max_plies=setup.record_plies, record=True,
    )  # fmt: skip
    _, targets, weights = learner_training_data(setup, state.population, records)
    _, member_targets, member_weights = learner_training_data(member_only, state.population, records)
    a_moved = np.asarray(records.a_to_move & records.recorded).reshape(targets.shape)
    b_moved = np.asarray(~records.a_to_move & records.recorded).reshape(targets.shape)
    score = np.repeat(np.asarray(records.score), records.a_to_move.shape[-1], axis=1)
    assert b_moved.any() and a_moved.any()
    np.testing.assert_array_equal(np.asarray(weights), a_moved | b_moved)
    np.testing.assert_array_equal(np.asarray(member_weights), a_moved)
    # Outcome targets: the member's points where it moved, its opponent's (1 - them) where that did.
    np.testing.assert_allclose(np.asarray(targets)[a_moved], score[a_moved])
    np.testing.assert_allclose(np.asarray(targets)[b_moved], 1.0 - score[b_moved])
    np.testing.assert_allclose(np.asarray(member_targets)[a_moved], score[a_moved])


def test_learners_can_train_on_the_benchmark_games_too():
    keys = ("benchmark_opponent=greedy-material", "benchmark_games=2", "fitness=fixed")
    setup = _training_setup(*keys, "learner_games=all", "learner_sides=both")
    boss_only = _training_setup(*keys, "learner_sides=both")
    state = init(setup, jax.random.key(0))
    key = jax.random.key(1)
    _, metrics = evolve_epoch(setup, state, key)
    _, boss_metrics = evolve_epoch(boss_only, state, key)
    assert np.isfinite(float(metrics["learner_loss_after"]))
    # The same boss games plus the benchmark games: the learners see other data, so another loss.
    assert float(metrics["learner_loss_before"]) != float(boss_metrics["learner_loss_before"])
    assert int(metrics["games"]) == int(boss_metrics["games"])
    with pytest.raises(ConfigError, match="learner_games must be one of boss, all, got 'every'"):
        load_config(None, [*TINY_RUN, "learner_games=every"])
    with pytest.raises(ConfigError, match="learner_sides must be one of member, both"):
        load_config(None, [*TINY_RUN, "learner_sides=neither"])


def test_pooled_learners_train_on_every_members_games():
    keys = ("train_steps=3", "train_batch=8")
    pooled = _training_setup(*keys, "learner_pool=true")
    own = _training_setup(*keys)
    state = init(pooled, jax.random.key(0))
    key = jax.random.key(1)
    pooled_state, metrics = evolve_epoch(pooled, state, key)
    own_state, own_metrics = evolve_epoch(own, state, key)
    assert np.isfinite(float(metrics["learner_loss_after"]))
    # The first three quarters are the same; the learners (last quarter) saw other data.
    first, last = (jax.tree.leaves(s.population)[0] for s in (pooled_state, own_state))
    np.testing.assert_array_equal(np.asarray(first[:3]), np.asarray(last[:3]))
    assert not np.array_equal(np.asarray(first[3:]), np.asarray(last[3:]))
    with pytest.raises(ConfigError, match="strategy 'memetic_pool' needs train_batch > 0"):
        load_config(None, [*TINY_RUN, "learner_pool=true", "train_batch=0"])


def test_td_lambda_targets_of_a_hand_computed_game_with_turns_and_skipped_slots():
    """One game of the general target function: slot 1 is passed over (not a position to learn),
    the side to move changes after slot 0 and after slot 2 (the end is seen by the other side)."""
    values = jnp.array([0.3, 0.8, 0.6, 0.1])
    valid = jnp.array([True, False, True, True])
    flips = jnp.array([True, False, False, True])  # slot 0 -> 2 turns; 2 -> 3 does not; 3 -> end turns
    end, lam = jnp.array(0.0), 0.25  # the side after slot 3 lost: slot 3's side won
    t3 = lam * 1.0 + (1 - lam) * 1.0
    t2 = lam * t3 + (1 - lam) * 0.1
    t0 = lam * (1 - t2) + (1 - lam) * (1 - 0.6)
    got = td_lambda_targets(values, valid, flips, end, lam)
    np.testing.assert_allclose(np.asarray(got)[[0, 2, 3]], [t0, t2, t3], rtol=1e-6)
