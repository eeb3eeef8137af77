"""The TD(lambda) self-play learner: its targets against hand-computed ones, the targets of real
self-play games (multi-jumps included), updates that lower the TD error, and its config keys.

One tiny learner's self-play (2 x 4 MLP, 8 games on american6, alpha-beta depth 1) is compiled
once for the file; the run-folder tests are in tests/test_learner_runs.py.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.endgame.database import EndgameDB
from neurocheckers.endgame.device import device_db, exact_value
from neurocheckers.endgame.index import to_mover_view
from neurocheckers.experiment.config import LEARNERS, ConfigError, load_config
from neurocheckers.experiment.strategy_registry import strategy
from neurocheckers.experiment.trainers import Learner, make_trainer
from neurocheckers.learners import (
    TDSettings,
    learner_rules,
    learner_spec,
    material_positions,
    regress,
    selfplay,
    td_lambda_targets,
    weighted_mse,
)
from neurocheckers.learners.common import SelfPlayBatch, fresh_state, record_length
from neurocheckers.learners.td_lambda import init, training_data
from neurocheckers.networks.evaluator import EvaluatorSpec, encode
from neurocheckers.rules.engine import step
from neurocheckers.rules.notation import parse_fen
from neurocheckers.rules.outcome import points_for
from neurocheckers.rules.state import BLACK

SETTINGS = TDSettings(
    rules="american6",
    layers=2,
    width=4,
    search="alphabeta",
    depth=1,
    selfplay_games=8,
    opening_plies=2,
    max_plies=60,
    updates_per_epoch=2,
    batch_size=16,
    lambda_=1.0,
    exploration="softmax",
    exploration_rate=0.05,
)
"""Softmax exploration over alpha-beta root scores here; the run tests use epsilon over MCTS."""


def test_targets_equal_a_hand_computed_example():
    # Game 0: 3 plies, the mover changes after plies 0 and 2 (ply 1 continues a multi-jump); its
    # final position is lost by the side to move there (value 0). Game 1: 1 ply, then padding.
    values = jnp.array([[0.5, 0.6, 0.3, 0.0], [0.2, 0.9, 0.4, 0.7]])
    flips = jnp.array([[True, False, True], [True, True, True]])
    length = jnp.array([3, 1])
    got = td_lambda_targets(values, flips, length, 0.5)
    # Game 0, going back: t3 = 0; t2 = 0.5 (1 - 0) + 0.5 (1 - 0) = 1; t1 = 0.5 * 1 + 0.5 * 0.3 = 0.65
    # (no flip); t0 = 0.5 (1 - 0.65) + 0.5 (1 - 0.6) = 0.375. Game 1: t1 = 0.9; t0 = 1 - 0.9.
    np.testing.assert_allclose(got[0], [0.375, 0.65, 1.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(got[1, :2], [0.1, 0.9], atol=1e-6)
    # lambda = 0 is one-step TD (the next value, flipped); lambda = 1 the result (Monte Carlo).
    np.testing.assert_allclose(
        td_lambda_targets(values, flips, length, 0.0)[0], [0.4, 0.3, 1.0, 0.0], atol=1e-6
    )
    np.testing.assert_allclose(
        td_lambda_targets(values, flips, length, 1.0)[0], [0.0, 1.0, 1.0, 0.0], atol=1e-6
    )


@pytest.fixture(scope="module")
def batch_and_params():
    params = init(SETTINGS, jax.random.key(0)).params
    play = jax.jit(functools.partial(selfplay, SETTINGS))
    return play(params, jax.random.key(1), 0.1), params


def test_lambda_one_targets_are_each_game_result_for_the_side_to_move(batch_and_params):
    """With lambda = 1 every trained position's target is the final result for its own side to move:
    the flips follow the real side to move, multi-jumps (no flip) included."""
    batch, params = batch_and_params
    obs, targets, weights, *_ = jax.jit(training_data, static_argnums=0)(SETTINGS, params, batch)
    length = int(batch.positions.shape[1]) - 1
    assert bool(jnp.any(batch.finished)) and int(jnp.sum(weights)) == int(jnp.sum(batch.length))
    colors = batch.colors[:, :length]
    expected = points_for(batch.result[:, None], colors == BLACK).reshape(-1)
    finished = jnp.repeat(batch.finished, length)
    trained = (weights > 0) & finished
    np.testing.assert_allclose(targets[trained], expected[trained], atol=1e-6)
    # Some game has a multi-jump (the same side moves twice running), so both cases were checked.
    same = batch.colors[:, 1:length] == batch.colors[:, : length - 1]
    live = jnp.arange(1, length) < batch.length[:, None]
    assert bool(jnp.any(same & live))
    played = jnp.arange(length)[None, :] < batch.length[:, None]
    assert bool(jnp.all((batch.actions >= 0) == played))


def test_updates_on_a_fixed_batch_lower_the_td_error(batch_and_params):
    batch, params = batch_and_params
    settings = dataclasses.replace(SETTINGS, learning_rate=0.01, batch_size=64, lambda_=0.7)
    obs, targets, weights, *_ = jax.jit(training_data, static_argnums=0)(settings, params, batch)
    spec = learner_spec(settings)
    before = weighted_mse(spec, params, obs, targets, weights)
    state, losses = jax.jit(lambda s: regress(settings, s, obs, targets, weights, jax.random.key(2), 30))(
        fresh_state(settings, params)
    )
    after = weighted_mse(spec, state.params, obs, targets, weights)
    assert losses.shape == (30,)
    assert float(after) < 0.8 * float(before), (float(before), float(after))


def endgame_batch(fen: str, plies: int) -> tuple[SelfPlayBatch, list]:
    """A one-game batch in ``SETTINGS``' layout: ``plies`` first legal actions from ``fen`` (a
    multi-jump's jumps are plies of their own), the game cut there."""
    rules = learner_rules(SETTINGS)
    states = [parse_fen(rules, fen)]
    for _ in range(plies):
        states.append(step(rules, states[-1], int(np.flatnonzero(states[-1].legal_action_mask)[0])))
    slots = record_length(SETTINGS) + 1
    pad = slots - len(states)
    positions = np.stack([encode(rules, x) for x in states] + [np.zeros(2 * rules.num_squares)] * pad)
    colors = np.array([int(x.color) for x in states] + [0] * pad)
    turn_start = np.array([int(x.continuing) == 0 for x in states] + [False] * pad)
    batch = SelfPlayBatch(
        positions=jnp.asarray(positions, jnp.float32)[None],
        colors=jnp.asarray(colors, jnp.int32)[None],
        turn_start=jnp.asarray(turn_start)[None],
        actions=jnp.full((1, slots - 1), -1, jnp.int32),
        length=jnp.array([plies], jnp.int32),
        finished=jnp.array([False]),
        result=jnp.array([0], jnp.int32),
        final_value=jnp.array([0.5], jnp.float32),
    )
    return batch, states


def test_endgame_targets_are_the_database_values(small_db):
    """With a database every turn-start position it holds gets its exact value as target (checked
    against the host database); a position inside a multi-jump keeps its TD(lambda) target."""
    db = EndgameDB(small_db)
    exact = device_db(db)
    # Black's king on 1 takes both White kings, 1x8x3: two plies, the second inside a multi-jump.
    batch, states = endgame_batch("B:WK5,K6:BK1", 2)
    params = init(SETTINGS, jax.random.key(0)).params
    run = jax.jit(training_data, static_argnums=0)
    _, targets, weights, values, known = run(SETTINGS, params, batch, exact)
    _, plain_targets, *_ = run(SETTINGS, params, batch)
    turn_start = np.asarray(batch.turn_start[0, :2])
    np.testing.assert_array_equal(np.asarray(known[:2]), turn_start)
    boards = [
        [int(x.black_men), int(x.black_kings), int(x.white_men), int(x.white_kings)] for x in states[:2]
    ]
    black = np.array([int(x.color) == BLACK for x in states[:2]])
    found, distance = db.lookup(to_mover_view(np.array(boards), black, 18))
    expected = np.asarray(exact_value(jnp.asarray(found, jnp.int32), jnp.asarray(distance)))
    np.testing.assert_allclose(np.asarray(targets[:2])[turn_start], expected[turn_start], atol=1e-6)
    assert not np.allclose(np.asarray(targets[:2]), np.asarray(plain_targets[:2]))
    # A lone king against a lone king is drawn: a target with endgame_draws, not without.
    draw, _ = endgame_batch("B:WK18:BK1", 1)
    assert bool(run(SETTINGS, params, draw, exact)[4][0])
    assert not bool(run(dataclasses.replace(SETTINGS, endgame_draws=False), params, draw, exact)[4][0])


def test_material_bootstrap_positions_are_rated_by_material():
    obs, targets = jax.jit(material_positions, static_argnums=(0, 2))(SETTINGS, jax.random.key(3), 64)
    men, kings = np.split(np.asarray(obs), 2, axis=1)
    material = men.sum(axis=1) + 1.5 * kings.sum(axis=1)
    unfinished = (targets > 0) & (targets < 1)
    np.testing.assert_allclose(targets[unfinished], 1 / (1 + np.exp(-0.5 * material[unfinished])), atol=1e-5)


def test_learner_config_keys_are_validated_with_clear_errors():
    learner = ["strategy=td_lambda"]
    for item, message in (
        ("lambda_=1.5", "lambda_ must be in [0, 1], got 1.5"),
        ("exploration=boltzmann", "exploration must be one of epsilon, softmax, got 'boltzmann'"),
        ("exploration_rate=2", "exploration_rate (epsilon's probability) must be <= 1, got 2"),
        ("selfplay_games=0", "selfplay_games must be >= 1, got 0"),
        ("snapshot_every=0", "snapshot_every must be >= 1, got 0"),
        ("hall_of_fame=2", "hall_of_fame applies to evolution, not to strategy 'td_lambda'"),
    ):
        with pytest.raises(ConfigError) as e:
            load_config(None, [*learner, item])
        assert message in str(e.value)
    config = load_config(None, [*learner, "exploration=softmax", "exploration_rate=2", "lambda_=0.3"])
    settings = make_trainer(config).settings
    assert isinstance(settings, TDSettings) and settings.lambda_ == 0.3 and settings.exploration_rate == 2
    assert make_trainer(config).spec == EvaluatorSpec.for_rules(learner_rules(settings), 5, 32)


def test_the_learner_experiments_load():
    folder = Path(__file__).resolve().parents[1] / "experiments" / "learners"
    for rules in ("simple6", "american6"):
        config = load_config(folder / f"td_lambda_{rules}.toml")
        assert (config.strategy, config.rules, config.name) == ("td_lambda", rules, f"td_lambda_{rules}")


def test_every_learner_strategy_is_registered():
    for name in LEARNERS:  # each registry entry's algorithm and settings load
        entry = strategy(name)
        assert isinstance(entry.loaded_algorithm(), Learner)
        assert dataclasses.is_dataclass(entry.loaded_settings())
