"""Selection that measures strength: paired openings shared by every member, the confirmation match
before a promotion, the hall of fame and the fixed benchmark opponent, and their config checks."""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.evolution.boss_ga import evolve_epoch, init, make_setup
from neurocheckers.evolution.selection import (
    confirmed_pick,
    draw_openings,
    fixed_opponent_policy,
    hall_of_fame_add,
    hall_of_fame_init,
    hall_of_fame_sample,
    member_policy,
    paired_score_bounds,
)
from neurocheckers.experiment.config import ConfigError, load_config
from neurocheckers.networks.evaluator import EvaluatorSpec, encode
from neurocheckers.population import play_population, play_population_against
from neurocheckers.rules import SIMPLE6
from neurocheckers.rules.notation import to_fen
from neurocheckers.rules.openings import load_openings, opening_states
from neurocheckers.search.mcts import MCTSConfig
from neurocheckers.search.play_settings import epoch_key
from neurocheckers.stats import paired_interval

sys.path.insert(0, str(Path(__file__).resolve().parent))
from networks import material_network, zero_network  # noqa: E402

SPEC = EvaluatorSpec.for_rules(SIMPLE6, layers=2, width=4)
CONFIRM_SEARCH = MCTSConfig(num_simulations=8)
CONFIRM_GAMES = 48
"""A material-shaped network with 8 simulations beats an all-zero one clearly in 48 paired games."""
SMALL = ["layers=2", "width=4", "train_steps=1", "max_plies=100", "name=selection"]


@pytest.fixture(scope="module")
def committed():
    return opening_states(SIMPLE6, load_openings(SIMPLE6))


def _stack(*members):
    return jax.tree.map(lambda *xs: jnp.stack(xs), *members)


def test_paired_score_bounds_agree_with_the_stats_module():
    scores = np.array(
        [[1, 1, 1, 0.5, 0.5, 0, 0.5, 0.5], [1, 1, 1, 1, 1, 1, 1, 1], [0, 0.5, 1, 0, 0, 1, 0.5, 0]]
    )
    mean, low, high = paired_score_bounds(jnp.asarray(scores, jnp.float32))
    for row, m, lo, hi in zip(scores, mean, low, high, strict=True):
        np.testing.assert_allclose((m, lo, hi), paired_interval(row), atol=1e-6)


def test_members_meet_the_same_openings_with_each_colour_once(committed):
    openings = draw_openings(jax.random.key(3), committed, 3)
    fens = [to_fen(jax.tree.map(lambda x, i=i: x[i], openings)) for i in range(3)]
    assert len(set(fens)) == 3  # distinct openings
    population = _stack(material_network(SPEC), zero_network(SPEC), material_network(SPEC, 2.0))
    records = play_population(
        SIMPLE6, SPEC, MCTSConfig(num_simulations=2), population, zero_network(SPEC), jax.random.key(0),
        6, max_plies=20, record=True, openings=openings,
    )  # fmt: skip
    np.testing.assert_array_equal(np.asarray(records.a_is_black), np.tile([True, False], (3, 3)))
    first = np.asarray(records.positions[:, :, 0])  # [P, G, 2N], from the side to move
    for game in range(6):
        start = jax.tree.map(lambda x, g=game: x[g // 2], openings)
        for member in range(3):
            np.testing.assert_array_equal(first[member, game], np.asarray(encode(SIMPLE6, start)))
    # The same key draws the same openings: every member of an epoch meets the same ones.
    again = draw_openings(jax.random.key(3), committed, 3)
    assert jax.tree.all(jax.tree.map(lambda a, b: bool(jnp.all(a == b)), openings, again))


@pytest.fixture(scope="module")
def confirmation_scores(committed):
    """Paired scores [2, G] of a material-shaped member and of a member equal to the all-zero boss."""
    population = _stack(material_network(SPEC, 1.0), zero_network(SPEC))
    openings = draw_openings(jax.random.key(11), committed, CONFIRM_GAMES // 2)
    records = play_population(
        SIMPLE6, SPEC, CONFIRM_SEARCH, population, zero_network(SPEC), jax.random.key(1), CONFIRM_GAMES,
        max_plies=100, openings=openings,
    )  # fmt: skip
    return records.score


def test_the_confirmation_rule_promotes_a_stronger_member_and_rejects_an_equal_one(confirmation_scores):
    mean, low, _ = paired_score_bounds(confirmation_scores)
    assert float(low[0]) > 0.5 >= float(low[1])
    pick, promote, score, bound = confirmed_pick(jnp.array([True, True]), confirmation_scores)
    assert (int(pick), bool(promote)) == (0, True)
    assert (float(score), float(bound)) == (float(mean[0]), float(low[0]))
    # The equal member alone is not promoted, even though it passed the threshold.
    _, promote, _, _ = confirmed_pick(jnp.array([False, True]), confirmation_scores)
    assert not bool(promote)
    # Candidates below the threshold are never promoted, however they score.
    _, promote, _, _ = confirmed_pick(jnp.array([False, False]), confirmation_scores)
    assert not bool(promote)


def _confirming_setup(candidates: int):
    items = ["population=4", "games_per_epoch=2", "simulations=8", "promotion_threshold=0.25"]
    items += [f"promotion_candidates={candidates}", f"promotion_games={CONFIRM_GAMES}"]
    return make_setup(load_config(None, SMALL + items).evolution_settings())


def test_an_epoch_promotes_the_member_that_wins_its_confirmation_match():
    setup = _confirming_setup(4)
    zero, material = zero_network(SPEC), material_network(SPEC, 1.0)
    state = init(setup, jax.random.key(0)).replace(population=_stack(zero, zero, material, zero), boss=zero)
    new_state, metrics = evolve_epoch(setup, state, epoch_key(0, 0))
    assert bool(metrics["boss_changed"]) and float(metrics["confirm_low"]) > 0.5
    for got, want in zip(jax.tree.leaves(new_state.boss), jax.tree.leaves(material), strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_an_equal_population_promotes_by_luck_without_confirmation_and_not_with_it():
    zero = zero_network(SPEC)
    promoted = {}
    for candidates in (0, 4):
        setup = _confirming_setup(candidates)
        state = init(setup, jax.random.key(0)).replace(population=_stack(zero, zero, zero, zero), boss=zero)
        _, metrics = evolve_epoch(setup, state, epoch_key(0, 0))
        promoted[candidates] = bool(metrics["boss_changed"])
        assert ("confirm_low" in metrics) == (candidates > 0)
    assert promoted == {0: True, 4: False}


def test_the_hall_of_fame_keeps_the_last_bosses():
    boss = {"w": jnp.zeros(2)}
    hall = hall_of_fame_init(boss, 3)
    keys = jax.random.split(jax.random.key(0), 64)
    # Only the filled slot is ever drawn.
    assert {float(hall_of_fame_sample(hall, k)["w"][0]) for k in keys} == {0.0}
    for value in (1.0, 2.0, 3.0, 4.0):
        hall = hall_of_fame_add(hall, {"w": jnp.full(2, value)}, jnp.bool_(True))
        hall = hall_of_fame_add(hall, {"w": jnp.full(2, -value)}, jnp.bool_(False))  # not promoted: unchanged
    assert int(hall.count) == 5
    assert sorted(np.asarray(hall.bosses["w"][:, 0]).tolist()) == [2.0, 3.0, 4.0]  # the last three
    assert {float(hall_of_fame_sample(hall, k)["w"][0]) for k in keys} == {2.0, 3.0, 4.0}


def test_epochs_enter_every_new_boss_in_the_hall_of_fame():
    items = ["population=4", "games_per_epoch=2", "simulations=2", "promotion_threshold=0.25"]
    items += ["hall_of_fame=2", "hall_of_fame_games=2", "hall_of_fame_weight=0.5"]
    setup = make_setup(load_config(None, SMALL + items).evolution_settings())
    state = init(setup, jax.random.key(0))
    for epoch in range(3):
        state, metrics = evolve_epoch(setup, state, epoch_key(0, epoch))
        assert 0.0 <= float(metrics["hall_of_fame_score"]) <= 1.0
    hall = state.hall_of_fame
    assert int(hall.count) == int(state.boss_id) + 1 >= 2
    newest = (int(hall.count) - 1) % 2
    for got, want in zip(jax.tree.leaves(hall.bosses), jax.tree.leaves(state.boss), strict=True):
        np.testing.assert_array_equal(np.asarray(got[newest]), np.asarray(want))


def test_members_play_a_fixed_opponent_over_paired_openings(committed):
    population = _stack(material_network(SPEC, 1.0), zero_network(SPEC))
    opponent = fixed_opponent_policy(SIMPLE6, "alphabeta:1")
    assert fixed_opponent_policy(SIMPLE6, "alphabeta:1") is opponent  # one compile per opponent
    records = play_population_against(
        SIMPLE6, member_policy(SIMPLE6, SPEC, MCTSConfig(num_simulations=2)), population, opponent, None,
        jax.random.key(0), 4, draw_openings(jax.random.key(1), committed, 2), max_plies=60,
    )  # fmt: skip
    assert records.score.shape == (2, 4)
    np.testing.assert_array_equal(np.asarray(records.a_is_black), np.tile([True, False], (2, 2)))


def test_a_stationary_fitness_runs_an_evosax_strategy():
    items = ["population=4", "games_per_epoch=2", "simulations=2", "strategy=CMA_ES", "fitness=fixed"]
    items += ["benchmark_opponent=random", "benchmark_games=2"]
    setup = make_setup(load_config(None, SMALL + items).evolution_settings())
    state = init(setup, jax.random.key(0))
    for epoch in range(2):
        state, metrics = evolve_epoch(setup, state, epoch_key(0, epoch))
        assert 0.0 <= float(metrics["benchmark_score"]) <= 1.0
    assert int(state.epoch) == 2


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["openings=3"], "games_per_epoch must be 2 x openings"),
        (["openings=1000", "games_per_epoch=2000"], "openings must be <= 374"),
        (["promotion_games=5"], "promotion_games must be even"),
        (["promotion_candidates=300"], "promotion_candidates must be <= population"),
        (["hall_of_fame=-1"], "hall_of_fame must be >= 0"),
        (["benchmark_opponent=alphabeta:9"], "benchmark_opponent"),
        (["benchmark_opponent=mcts:x:4"], "benchmark_opponent"),
        (["fitness=fixed"], "needs a benchmark_opponent"),
        (["fitness=fixed", "benchmark_opponent=random", "hall_of_fame=2"], "hall_of_fame"),
        (["fitness=moving"], "fitness must be one of"),
        (["strength_every=-2"], "strength_every"),
        (["benchmark_weight=-1"], "benchmark_weight"),
    ],
)
def test_selection_config_errors_name_the_bad_key(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, overrides)


def test_the_strength_experiments_load_and_rate_their_bosses():
    folder = Path(__file__).resolve().parents[1] / "experiments" / "strength"
    configs = [load_config(path) for path in sorted(folder.glob("*.toml"))]
    assert {c.name for c in configs} >= {"paired_openings", "confirmation", "hall_of_fame", "cmaes_fixed"}
    assert all(c.strength_every > 0 and c.rules in ("simple6", "american6") for c in configs)
