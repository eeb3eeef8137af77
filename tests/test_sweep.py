"""Sweeps: the sweep file format and its errors, grid expansion, the study grid, resuming an
interrupted sweep without redoing finished runs, the process pool, the CLI and Ray (a local
instance; CI installs the ray extra)."""

from __future__ import annotations

import csv
import json
import os
import re
import sys
from pathlib import Path

import pytest

from neurocheckers.cli import main
from neurocheckers.experiment.config import ExperimentConfig
from neurocheckers.experiment.sweep import format_summary, run_sweep
from neurocheckers.experiment.sweep_file import SweepError, grid_entries, load_sweep
from neurocheckers.formats import TIMING_COLUMNS, read_metrics

REPO = Path(__file__).resolve().parents[1]

# Every tiny config has the same shapes, so the runs share compiled programs (in memory or on disk).
TINY = """
rules = "simple6"
population = 8
layers = 2
width = 8
simulations = 2
games_per_epoch = 2
epochs = 3
train_steps = 2
max_plies = 60
checkpoint_every = 2
"""


def write_tiny(folder: Path, sweep: str = 'configs = ["a.toml", "b.toml"]', tail: str = "") -> Path:
    """a.toml, b.toml (inherits a, another seed) and a sweep file s.toml in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a.toml").write_text('name = "a"\n' + TINY)
    (folder / "b.toml").write_text('inherit = "a.toml"\nname = "b"\nseed = 1\n')
    path = folder / "s.toml"
    path.write_text(f'[sweep]\nname = "tiny"\n{sweep}\n{tail}')
    return path


def files_of(run_dir: Path) -> dict[str, tuple[int, bytes]]:
    return {
        str(p.relative_to(run_dir)): (p.stat().st_mtime_ns, p.read_bytes())
        for p in run_dir.rglob("*")
        if p.is_file()
    }


# --- loading -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sweep", "tail", "message"),
    [
        ('configs = ["a.toml"]', "[extra]\nx = 1\n", "unknown key(s) in"),
        ('configs = ["a.toml"]\nmode = "fast"', "", "unknown key(s) in [sweep]"),
        ("", "", "is empty"),
        ('configs = ["a.toml"]', "[set]\nlayerz = 3\n", "unknown config key(s) in [set]"),
        ('configs = ["a.toml"]', "[grid]\nname = ['x']\n", "unknown config key(s) in [grid]"),
        ('configs = ["a.toml"]', "[grid]\nseed = 3\n", "grid.seed"),
        ('configs = ["a.toml"]', "[grid]\nseed = []\n", "non-empty list"),
        (
            'configs = ["a.toml"]',
            "[grid]\nmutation_rate = [0.5, -1.0]\n",
            "sweep entry 'a_mutation_rate=-1.0': mutation_rate must be >= 0",
        ),
        ('configs = ["missing.toml"]', "", "config 'missing.toml': config file not found"),
        ('configs = ["a.toml"]', "[set]\nlayers = 0\n", "config 'a.toml': layers must be >= 1"),
        ('configs = ["a.toml", "a.toml"]', "", "two entries are labelled 'a'"),
        ('configs = "a.toml"', "", "must be a list of file names"),
    ],
)
def test_load_errors(tmp_path, sweep, tail, message):
    path = write_tiny(tmp_path, sweep, tail)
    with pytest.raises(SweepError) as info:
        load_sweep(path)
    assert message in str(info.value)


def test_missing_sweep_file(tmp_path):
    with pytest.raises(SweepError, match="sweep file not found"):
        load_sweep(tmp_path / "nope.toml")


def test_configs_are_relative_to_the_sweep_file(tmp_path, monkeypatch):
    path = write_tiny(tmp_path / "deep" / "er", tail="[set]\nepochs = 7\n")
    monkeypatch.chdir(tmp_path)
    sweep = load_sweep(path)
    assert sweep.name == "tiny"
    assert [(e.label, e.config.name, e.config.seed, e.config.epochs) for e in sweep.entries] == [
        ("a", "a", 0, 7),
        ("b", "b", 1, 7),
    ]


def test_grid_expansion(tmp_path):
    path = write_tiny(tmp_path, 'base = "a.toml"', "[grid]\nmutation_rate = [0.015625, 1]\nseed = [0, 1]\n")
    sweep = load_sweep(path)
    labels = [e.label for e in sweep.entries]
    assert labels == [
        "a_mutation_rate=0.015625_seed=0",
        "a_mutation_rate=0.015625_seed=1",
        "a_mutation_rate=1_seed=0",
        "a_mutation_rate=1_seed=1",
    ]
    assert [(e.config.mutation_rate, e.config.seed) for e in sweep.entries] == [
        (0.015625, 0),
        (0.015625, 1),
        (1.0, 0),
        (1.0, 1),
    ]
    assert all(e.config.name == e.label and e.config.layers == 2 for e in sweep.entries)
    (only,) = grid_entries(sweep.entries[0].config, {"loss": ["mse"], "opening_plies": [2]})
    assert only.label == "a_mutation_rate=0.015625_seed=0_loss=mse_opening_plies=2"
    with pytest.raises(SweepError, match="sweep entry 'a_rules=x-y': rules must be one of"):
        grid_entries(ExperimentConfig(name="a"), {"rules": ["x/y"]})  # the label is filesystem-safe


def test_study_grid():
    sweep = load_sweep(REPO / "experiments" / "study_grid.toml")
    configs = {e.label: e.config for e in sweep.entries}
    assert sweep.name == "study_grid"
    assert list(configs) == [
        "base",
        "mutation_high",
        "mutation_low",
        "layers3",
        "layers7",
        "games4",
        "games16",
    ]
    for c in configs.values():
        assert (c.rules, c.population, c.epochs, c.simulations) == ("simple6", 256, 512, 16)
    base = configs["base"]
    assert (base.layers, base.mutation_rate, base.learning_rate, base.games_per_epoch) == (5, 0.125, 0.002, 8)
    expected = {
        "mutation_high": {"mutation_rate": 1.0, "learning_rate": 0.2},
        "mutation_low": {"mutation_rate": 0.015625},
        "layers3": {"layers": 3},
        "layers7": {"layers": 7},
        "games4": {"games_per_epoch": 4},
        "games16": {"games_per_epoch": 16},
    }
    for label, changes in expected.items():
        differs = {k: v for k, v in configs[label].to_dict().items() if v != base.to_dict()[k]}
        assert differs == {"name": label, **changes}


# --- running -----------------------------------------------------------------------------------


class Interrupt:
    """An ``on_event`` that records events and raises KeyboardInterrupt at a chosen one."""

    def __init__(self, kind: str | None = None, label: str | None = None, epochs_done: int | None = None):
        self.at = (kind, label, epochs_done)
        self.events = []

    def __call__(self, event) -> None:
        self.events.append((event.kind, event.label, event.epochs_done))
        kind, label, done = self.at
        if event.kind == kind and event.label == label and done in (None, event.epochs_done):
            raise KeyboardInterrupt


def test_sweep_resumes_after_interruption(tmp_path, capsys):
    path = write_tiny(tmp_path)
    out = tmp_path / "out"
    sweep = load_sweep(path)

    with pytest.raises(KeyboardInterrupt):  # stopped right after run a finished
        run_sweep(sweep, out, on_event=Interrupt("done", "a"))
    folder = out / "tiny"
    state = json.loads((folder / "sweep.json").read_text())
    assert state["entries"]["a"]["status"] == "done"
    a_dir = folder / state["entries"]["a"]["run_dir"]
    a_files = files_of(a_dir)
    assert len(read_metrics(a_dir)) == 3

    with pytest.raises(KeyboardInterrupt):  # stopped inside run b, after its checkpoint at epoch 2
        run_sweep(sweep, out, on_event=Interrupt("progress", "b", 2))
    state = json.loads((folder / "sweep.json").read_text())
    assert state["entries"]["b"]["status"] == "running"

    events = Interrupt()
    result = run_sweep(sweep, out, on_event=events)
    assert events.events[0] == ("skip", "a", 3)
    assert events.events[1] == ("start", "b", 2)  # continued from the checkpoint
    assert events.events[-1] == ("done", "b", 3)
    assert files_of(a_dir) == a_files  # the finished run was not touched
    b_dir = folder / json.loads((folder / "sweep.json").read_text())["entries"]["b"]["run_dir"]
    assert [int(r["epoch"]) for r in read_metrics(b_dir)] == [0, 1, 2]
    assert not result.failed
    with open(result.summary, newline="") as f:
        summary = list(csv.DictReader(f))
    assert [(r["label"], r["status"], r["epochs_done"]) for r in summary] == [
        ("a", "done", "3"),
        ("b", "done", "3"),
    ]
    assert summary[0]["median_seconds_per_epoch"]
    # Points per game, as in the plots: the mean member's points over the epoch's games.
    games = sweep.entries[0].config.games_per_epoch
    last = read_metrics(a_dir)[-1]
    assert float(summary[0]["final_mean_points_per_game"]) == pytest.approx(
        float(last["fitness_mean"]) / games, abs=1e-3
    )
    assert int(summary[0]["bosses_promoted"]) == int(last["boss_id"])

    # Resuming must agree with what was started: the same --epochs, unchanged configs.
    with pytest.raises(SweepError, match="started with each config's own epochs"):
        run_sweep(sweep, out, epochs=5)
    (tmp_path / "b.toml").write_text('inherit = "a.toml"\nname = "b"\nseed = 1\nlearning_rate = 0.5\n')
    with pytest.raises(SweepError, match=r"sweep entry 'b' changed .*learning_rate: 0.002 -> 0.5"):
        run_sweep(load_sweep(path), out)

    # The CLI on the finished sweep: nothing to run, the summary table and where it is.
    (tmp_path / "b.toml").write_text('inherit = "a.toml"\nname = "b"\nseed = 1\n')
    capsys.readouterr()
    assert main(["sweep", str(path), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "a: finished earlier" in printed and f"summary: {folder / 'summary.csv'}" in printed
    assert format_summary(result.rows) in printed
    assert main(["sweep", str(path), "--out", str(out), "--epochs", "0"]) == 2
    assert "--epochs must be >= 1, got 0" in capsys.readouterr().err


def test_pool_sweep(tmp_path):
    """Two runs at once in spawned processes, with an --epochs override stored in each run's config."""
    path = write_tiny(tmp_path)
    events = Interrupt()
    result = run_sweep(load_sweep(path), tmp_path / "out", epochs=1, workers=2, on_event=events)
    assert not result.failed, result.failed
    assert sorted(e for e in events.events if e[0] == "done") == [("done", "a", 1), ("done", "b", 1)]
    assert [(r["label"], r["epochs_done"], r["epochs"]) for r in result.rows] == [
        ("a", "1", "1"),
        ("b", "1", "1"),
    ]
    state = json.loads((result.sweep_dir / "sweep.json").read_text())
    assert state["epochs"] == 1
    config = json.loads((result.sweep_dir / state["entries"]["a"]["run_dir"] / "config.json").read_text())
    assert config["config"]["epochs"] == 1


def test_failed_runs_are_recorded_and_retried(tmp_path, monkeypatch):
    import neurocheckers.experiment.run as run_module

    def broken(run_dir, **kwargs):
        raise RuntimeError(f"out of memory in {Path(run_dir).name}")

    monkeypatch.setattr(run_module, "run", broken)
    path = write_tiny(tmp_path)
    result = run_sweep(load_sweep(path), tmp_path / "out")
    assert [r["label"] for r in result.failed] == ["a", "b"]  # b ran although a failed
    state = json.loads((result.sweep_dir / "sweep.json").read_text())
    assert state["entries"]["a"]["error"].startswith("RuntimeError: out of memory in a_seed0_")
    events = Interrupt()
    run_sweep(load_sweep(path), tmp_path / "out", on_event=events)
    assert ("start", "a", 0) in events.events  # tried again


def test_ray_missing(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails
    path = write_tiny(tmp_path)
    with pytest.raises(
        SweepError, match=re.escape("install the ray extra: pip install 'neurocheckers[ray]'")
    ):
        run_sweep(load_sweep(path), tmp_path / "out", ray_address="auto")
    assert not (tmp_path / "out").exists()


def _stable_metrics(sweep_dir: Path) -> dict[str, list[dict[str, str]]]:
    """Each entry's metrics rows without the timing columns, and its lineage rows, by label."""
    state = json.loads((sweep_dir / "sweep.json").read_text())
    found = {}
    for label, entry in state["entries"].items():
        run_dir = sweep_dir / entry["run_dir"]
        rows = [{k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in read_metrics(run_dir)]
        with open(run_dir / "lineage.csv", newline="") as f:
            found[label] = (rows, list(csv.DictReader(f)))
    return found


@pytest.mark.filterwarnings("ignore:os.fork")  # Ray starts its own processes; they exec at once
def test_ray_sweep_writes_what_the_local_sweep_writes(tmp_path):
    """Two runs as Ray tasks on a local Ray instance: the same metrics and lineage as the same sweep
    run in this process. CI installs the ray extra, so there this test never skips. One CPU: Ray runs
    the two tasks one after the other in one worker process, which imports JAX and traces the run
    once (with 2 CPUs, two workers each paid both)."""
    try:
        import ray
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("ray is not installed; CI installs the test and ray extras (README)")
        pytest.skip("the ray extra is not installed (pip install -e '.[test,ray]')")
    path = write_tiny(tmp_path)
    local = run_sweep(load_sweep(path), tmp_path / "local", epochs=2)
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        remote = run_sweep(load_sweep(path), tmp_path / "ray", epochs=2, ray_address="local")
    finally:
        ray.shutdown()
    assert not remote.failed, remote.failed
    assert [(r["label"], r["status"], r["epochs_done"]) for r in remote.rows] == [
        ("a", "done", "2"),
        ("b", "done", "2"),
    ]
    expected = _stable_metrics(local.sweep_dir)
    assert [len(rows) for rows, _ in expected.values()] == [2, 2]
    assert _stable_metrics(remote.sweep_dir) == expected


def test_summary_table_fits_80_columns_with_one_column_per_fact():
    row = {
        "label": "base_seed=0_mutation_rate=0.25_xy",  # 35 characters
        "run_dir": "base_seed=0_mutation_rate=0.25_xy_seed0_20261122-190251",
        "status": "running",
        "epochs_done": "512",
        "epochs": "512",
        "bosses_promoted": "438",
        "median_seconds_per_epoch": "0.1537",
        "final_mean_points_per_game": "0.427",
    }
    text = format_summary([row, {**row, "label": "b", "status": "done"}])
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[0].split() == ["run", "status", "epochs", "bosses", "s/epoch", "pts/game"]
    assert lines[2].split() == [row["label"], "running", "512/512", "438", "0.1537", "0.427"]
    assert row["run_dir"] not in text  # the folder is in summary.csv


def test_sweep_set_overrides_every_run_and_names_a_bad_key(tmp_path, capsys):
    from neurocheckers.experiment.sweep_file import with_overrides

    plan = with_overrides(load_sweep(write_tiny(tmp_path)), ["population=8", "mutation_rate=0.5"])
    assert {(e.config.population, e.config.mutation_rate) for e in plan.entries} == {(8, 0.5)}
    with pytest.raises(SweepError, match="--set: unknown config key.*colour"):
        with_overrides(plan, ["colour=red"])
    assert (
        main(["sweep", str(write_tiny(tmp_path)), "--set", "population=3", "--out", str(tmp_path / "o")]) == 2
    )
    assert "population" in capsys.readouterr().err and not (tmp_path / "o").exists()
