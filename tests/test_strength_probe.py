"""Absolute strength over training time: the strength columns of metrics.csv every N epochs, the
probe's matches, the strength figure, and run folders written before these columns existed."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from neurocheckers.analysis.plots import fitness_figure, plot_strength, strength_figure
from neurocheckers.cli import main
from neurocheckers.evolution.boss_ga import make_setup
from neurocheckers.experiment.config import load_config
from neurocheckers.experiment.folder import written_by
from neurocheckers.experiment.run import create_run, run
from neurocheckers.experiment.strength import PROBE_SEED, probe_openings, strength_probe
from neurocheckers.formats import METRIC_COLUMNS, METRICS_FILE, STRENGTH_COLUMNS, read_metrics
from neurocheckers.match.arena import MatchOptions, run_match
from neurocheckers.players.policies import alphabeta_player_policy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from networks import material_network  # noqa: E402

TINY = [
    "population=4",
    "games_per_epoch=2",
    "layers=2",
    "width=4",
    "simulations=2",
    "train_steps=1",
    "max_plies=40",
    "checkpoint_every=2",
    "epochs=4",
    "strength_every=2",
    "name=probed",
]
NEW_COLUMNS = ("confirm_score", "confirm_low", "hall_of_fame_score", "benchmark_score", *STRENGTH_COLUMNS)
"""The columns added with selection and strength probes; older metrics files lack them."""


@pytest.fixture(scope="module")
def config():
    return load_config(None, TINY)


@pytest.fixture(scope="module")
def probed_run(tmp_path_factory, config):
    return run(create_run(config, tmp_path_factory.mktemp("runs")))


def _interval(row, name):
    return tuple(float(row[f"strength_{name}{end}"]) for end in ("_low", "", "_high"))


def test_strength_columns_come_every_n_epochs_and_at_the_last(probed_run):
    rows = read_metrics(probed_run)
    assert [int(r["epoch"]) for r in rows if r["strength_material"]] == [0, 2, 3]
    for row in rows:
        if not row["strength_material"]:
            assert all(row[c] == "" for c in STRENGTH_COLUMNS)
            continue
        for name in ("material", "random"):
            low, score, high = _interval(row, name)
            assert 0.0 <= low <= score <= high <= 1.0
        assert float(row["strength_seconds"]) > 0
    # Selection settings that are off leave their columns empty.
    assert all(r["confirm_score"] == r["benchmark_score"] == "" for r in rows)


def test_the_probe_rates_the_network_at_the_leaves_against_material(config):
    """A material-shaped network at the leaves of alpha-beta plays exactly as the material count, so
    its probe score is the material count's own score against itself, game for game."""
    setup = make_setup(config.evolution_settings())
    probe = strength_probe(setup, material_network(setup.spec))
    material = alphabeta_player_policy(setup.rules, 2)
    openings = probe_openings(setup.rules)
    options = MatchOptions(64, seed=PROBE_SEED, batch=64, openings=openings)
    records = run_match(setup.rules, material, None, material, None, options)
    assert probe["strength_material"] == pytest.approx(float(np.mean(records.score)))
    assert len(records.score) == 2 * jax.tree.leaves(openings)[0].shape[0] == 64


def test_plot_draws_strength_against_epochs_and_wall_time(probed_run, tmp_path, capsys):
    rows = read_metrics(probed_run)
    fig = strength_figure([probed_run])
    ax_epoch, ax_time = fig.axes[:2]
    solid = [line for line in ax_epoch.get_lines() if line.get_linestyle() == "-"]
    np.testing.assert_array_equal(solid[0].get_xdata(), [0, 2, 3])
    probed_scores = [float(rows[i]["strength_material"]) for i in (0, 2, 3)]
    np.testing.assert_allclose(solid[0].get_ydata(), probed_scores)
    minutes = np.cumsum([float(r["wall_seconds"]) for r in rows])[[0, 2, 3]] / 60
    timed = [line for line in ax_time.get_lines() if line.get_linestyle() == "-"]
    np.testing.assert_allclose(timed[0].get_xdata(), minutes)
    assert main(["plot", str(probed_run), "--out", str(tmp_path / "fitness.png")]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path / "strength.png") in out and (tmp_path / "strength.svg").stat().st_size > 0


def _as_old_run(probed_run: Path, folder: Path) -> Path:
    """A copy of ``probed_run`` whose metrics.csv has only the columns from before selection and
    strength probes."""
    shutil.copytree(probed_run, folder)
    old_columns = [c for c in METRIC_COLUMNS if c not in NEW_COLUMNS]
    rows = read_metrics(probed_run)
    with open(folder / METRICS_FILE, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(old_columns)
        writer.writerows([r[c] for c in old_columns] for r in rows)
    return folder


def test_old_metrics_files_still_read_plot_and_resume(probed_run, tmp_path):
    old = _as_old_run(probed_run, tmp_path / "old")
    rows = read_metrics(old)
    assert len(rows) == 4 and "strength_material" not in rows[0]
    fitness_figure([old])
    assert plot_strength([old], tmp_path / "strength.png") == []
    with pytest.raises(ValueError, match="no strength probes"):
        strength_figure([old])
    run(old, epochs=5)  # one more epoch: the file gets the new header, old rows empty new columns
    with open(old / METRICS_FILE) as f:
        assert next(csv.reader(f)) == list(METRIC_COLUMNS)
    rows = read_metrics(old)
    assert [bool(r["strength_material"]) for r in rows] == [False] * 4 + [True]


def test_checkpoints_of_older_configs_still_match(config):
    stored = config.to_dict()
    for name in ("openings", "promotion_candidates", "hall_of_fame", "benchmark_opponent", "fitness"):
        del stored[name]  # a checkpoint written before these keys existed
    assert written_by(json.dumps(stored), config)
    stored["mutation_rate"] = 0.5
    assert not written_by(json.dumps(stored), config)
    assert not written_by("not json", config) and not written_by(None, config)


def test_a_wall_time_budget_ends_the_run_rated_and_checkpointed(tmp_path, capsys):
    """With a budget the first epoch spends, the run stops after it (well short of its epochs), rates
    and checkpoints that last epoch, and a resumed run does not go on past the spent budget."""
    budgeted = load_config(None, [*TINY, "budget_minutes=1e-9", "strength_every=3"])
    run_dir = run(create_run(budgeted, tmp_path))
    rows = read_metrics(run_dir)
    assert [int(r["epoch"]) for r in rows] == [0]
    assert rows[0]["strength_material"] != ""
    assert json.loads((run_dir / "config.json").read_text())["config"]["budget_minutes"] == 1e-9
    run(run_dir)  # resuming: the budget is already spent
    assert len(read_metrics(run_dir)) == 1
    assert (run_dir / "checkpoint.safetensors").exists()
    quick = Path(__file__).resolve().parents[1] / "experiments" / "quick.toml"
    assert main(["evolve", str(quick), "--set", "budget_minutes=-1", "--out", str(tmp_path)]) == 2
    assert "budget_minutes must be >= 0, got -1.0" in capsys.readouterr().err
