"""The boss GA and its driver: promotion rule, fitness bookkeeping, evosax strategies, config
validation, run folders, reproducibility and kill-and-resume equality."""

from __future__ import annotations

import csv
import json
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.evolution.boss_ga import choose_boss, evolve_epoch, init, make_setup
from neurocheckers.experiment.config import ConfigError, load_config
from neurocheckers.experiment.folder import CHECKPOINT, RunError
from neurocheckers.experiment.run import create_run, run
from neurocheckers.formats import METRICS_FILE, TIMING_COLUMNS, read_metrics
from neurocheckers.search.play_settings import epoch_key

TINY = [
    "population=8",
    "games_per_epoch=2",
    "layers=1",
    "width=4",
    "simulations=2",
    "train_steps=2",
    "max_plies=60",
    "checkpoint_every=2",
    "epochs=5",
    "name=tiny",
]


@pytest.fixture(scope="module")
def tiny_config():
    return load_config(None, TINY)


def test_promotion_happens_exactly_at_three_quarters():
    games = 8
    at = jnp.array([1.0, 6.0, 6.0, 2.0])
    ranking, promote = choose_boss(at, games, 0.75)
    assert bool(promote) and int(ranking[0]) == 1  # tie between 1 and 2 goes to the lower index
    below = jnp.array([1.0, 5.5, 0.0, 2.0])
    _, promote = choose_boss(below, games, 0.75)
    assert not bool(promote)


def test_epoch_fitness_is_the_members_points(tiny_config):
    setup = make_setup(tiny_config.evolution_settings())
    state = init(setup, jax.random.key(0))
    new_state, metrics = evolve_epoch(setup, state, epoch_key(0, 0))
    metrics = jax.device_get(metrics)
    games = tiny_config.population * tiny_config.games_per_epoch
    assert int(metrics["games"]) == games
    assert int(metrics["wins"]) + int(metrics["draws"]) + int(metrics["losses"]) == games
    total_points = float(metrics["fitness_mean"]) * tiny_config.population
    assert total_points == pytest.approx(int(metrics["wins"]) + 0.5 * int(metrics["draws"]))
    assert float(metrics["fitness_min"]) <= float(metrics["fitness_mean"]) <= float(metrics["fitness_max"])
    assert float(metrics["best_points"]) == float(metrics["fitness_max"])
    assert int(new_state.epoch) == 1
    # The first quarter of the next generation is the elites, unchanged; the best one leads.
    best = int(metrics["best_member"])
    for old, new in zip(
        jax.tree.leaves(state.population), jax.tree.leaves(new_state.population), strict=True
    ):
        np.testing.assert_array_equal(np.asarray(old[best]), np.asarray(new[0]))
    promoted = bool(metrics["boss_changed"])
    assert int(new_state.boss_id) == int(promoted)
    boss_source = new_state.population if promoted else state.boss
    for boss_leaf, src in zip(jax.tree.leaves(new_state.boss), jax.tree.leaves(boss_source), strict=True):
        np.testing.assert_array_equal(np.asarray(boss_leaf), np.asarray(src[0] if promoted else src))


def test_evolution_settings_come_from_the_config(tiny_config):
    """Evolution gets its own settings from the experiment's config (it never imports experiment)."""
    settings = tiny_config.evolution_settings()
    for name in ("rules", "layers", "width", "population", "games_per_epoch", "simulations", "max_plies"):
        assert getattr(settings, name) == getattr(tiny_config, name), name
    assert settings.loss == tiny_config.loss and settings.strategy == tiny_config.strategy
    assert tiny_config.evolution_settings(simulations=7).simulations == 7
    # Configs that differ only in run bookkeeping share one Setup (and one compiled epoch).
    other = load_config(None, TINY + ["name=other", "seed=9", "epochs=2"])
    assert make_setup(other.evolution_settings()) is make_setup(settings)


@pytest.mark.parametrize("strategy", ["SimpleGA", "Open_ES"])
def test_evosax_strategies_run_epochs(tiny_config, strategy):
    config = load_config(None, TINY + [f"strategy={strategy}"])
    setup = make_setup(config.evolution_settings())
    state = init(setup, jax.random.key(1))
    for epoch in range(2):
        state, metrics = evolve_epoch(setup, state, epoch_key(1, epoch))
        assert np.isfinite(float(metrics["fitness_mean"]))
        assert "learner_loss_before" not in metrics  # no learners, no loss (an empty column, not NaN)
    assert int(state.epoch) == 2


@pytest.mark.parametrize(
    "override, message",
    [
        ("population=10", "population"),
        ("games_per_epoch=3", "games_per_epoch"),
        ("mutation_rate=-0.5", "mutation_rate"),
        ("layers=abc", "layers"),
        ("rules=chess", "rules"),
        ("colour=red", "colour"),
        ("loss=hinge", "loss"),
        ("strategy=PSO", "strategy"),
    ],
)
def test_config_errors_name_the_bad_key(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, [override])


def test_config_files_inherit(tmp_path):
    (tmp_path / "base.toml").write_text('rules = "american6"\nlayers = 5\nmutation_rate = 0.125\n')
    (tmp_path / "variant.toml").write_text('inherit = "base.toml"\nlayers = 3\n')
    config = load_config(tmp_path / "variant.toml", ["mutation_rate=1"])
    assert (config.name, config.rules, config.layers, config.mutation_rate) == (
        "variant",
        "american6",
        3,
        1.0,
    )
    (tmp_path / "bad.toml").write_text("population = [1\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(tmp_path / "bad.toml")


def _stable_rows(run_dir):
    return [{k: v for k, v in row.items() if k not in TIMING_COLUMNS} for row in read_metrics(run_dir)]


@pytest.fixture(scope="module")
def uninterrupted_run(tmp_path_factory, tiny_config):
    return run(create_run(tiny_config, tmp_path_factory.mktemp("runs")))


def test_run_folder_is_complete_and_reproducible(uninterrupted_run, tiny_config, tmp_path):
    rows = read_metrics(uninterrupted_run)
    assert [int(r["epoch"]) for r in rows] == list(range(tiny_config.epochs))
    assert (uninterrupted_run / CHECKPOINT).exists()
    assert json.loads((uninterrupted_run / "config.json").read_text())["config"]["population"] == 8
    with open(uninterrupted_run / "lineage.csv") as f:
        lineage = list(csv.DictReader(f))
    assert lineage[0]["boss_id"] == "0"
    assert all((uninterrupted_run / "lineage" / r["file"]).exists() for r in lineage)
    assert len(lineage) == 1 + sum(int(r["boss_changed"]) for r in rows)
    again = run(create_run(tiny_config, tmp_path))
    assert _stable_rows(again) == _stable_rows(uninterrupted_run)


def test_killed_run_resumes_to_identical_metrics(uninterrupted_run, tiny_config, tmp_path):
    run_dir = create_run(tiny_config, tmp_path)
    run(run_dir, stop_after=3)  # checkpoint after epoch 2; epoch 3's row is written after it
    assert len(read_metrics(run_dir)) == 3
    # A kill during the next checkpoint write leaves a partial temporary file behind.
    (run_dir / (CHECKPOINT + ".tmp")).write_bytes(b"\x00partial")
    run(run_dir)
    assert _stable_rows(run_dir) == _stable_rows(uninterrupted_run)
    with open(run_dir / "lineage.csv") as f, open(uninterrupted_run / "lineage.csv") as g:
        assert f.read() == g.read()


def test_bad_run_folders_give_clear_errors_and_change_nothing(uninterrupted_run, tmp_path):
    with pytest.raises(RunError, match="not a neurocheckers run folder"):
        run(tmp_path)
    broken = tmp_path / "broken"
    shutil.copytree(uninterrupted_run, broken)
    (broken / CHECKPOINT).write_bytes(b"not a checkpoint")
    before = (broken / METRICS_FILE).read_text()
    with pytest.raises(RunError, match="cannot be read"):
        run(broken)
    assert (broken / METRICS_FILE).read_text() == before
    other = tmp_path / "other"
    shutil.copytree(uninterrupted_run, other)
    config = json.loads((other / "config.json").read_text())
    config["config"]["mutation_rate"] = 0.5
    (other / "config.json").write_text(json.dumps(config))
    with pytest.raises(RunError, match="another config"):
        run(other)
