"""Every committed experiment file loads, and the 8x8 method runs end to end at a tiny size."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from neurocheckers.experiment.config import load_config
from neurocheckers.experiment.run import create_run, run
from neurocheckers.experiment.sweep_file import load_sweep
from neurocheckers.formats import read_metrics

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tiny import TINY_LEARNER  # noqa: E402

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


def experiment_files() -> list[Path]:
    return sorted(EXPERIMENTS.rglob("*.toml"))


@pytest.mark.parametrize("path", experiment_files(), ids=lambda p: str(p.relative_to(EXPERIMENTS)))
def test_every_experiment_file_loads(path):
    """A sweep file loads as a sweep, every other file as a run config."""
    if "[sweep]" in path.read_text():
        assert load_sweep(path).entries
    else:
        config = load_config(path)
        assert config.name


def test_the_american8_folder_holds_every_method():
    configs = {p.stem: load_config(p) for p in (EXPERIMENTS / "american8").glob("*.toml")}
    assert {c.rules for c in configs.values()} == {"american8"}
    strategies = {(c.strategy, c.evaluator, c.search) for c in configs.values()}
    assert ("td_lambda", "mlp", "alphabeta") in strategies and ("td_leaf", "mlp", "alphabeta") in strategies
    assert configs["td_leaf"].depth >= 2
    assert ("boss_ga", "mlp", "mcts") in strategies and ("dqn", "mlp", "alphabeta") in strategies
    assert {c.evaluator for c in configs.values()} == {"mlp", "cnn", "transformer"}
    assert all(c.budget_minutes == 60 for c in configs.values())


TINY_TD = [
    item for item in TINY_LEARNER if not item.startswith(("rules=", "search=", "depth=", "snapshot_every="))
]
TINY_TD += ["epochs=2", "budget_minutes=0"]


def test_the_american8_td_lambda_config_runs(tmp_path):
    """experiments/american8/td_lambda.toml, shrunk: two epochs of 8x8 self-play write their metrics."""
    config = load_config(EXPERIMENTS / "american8" / "td_lambda.toml", TINY_TD)
    run_dir = run(create_run(config, tmp_path))
    rows = read_metrics(run_dir)
    assert [int(r["epoch"]) for r in rows] == [0, 1]
    assert all(int(float(r["plies"])) > 0 for r in rows)


def test_the_config_reference_is_current():
    """docs/config.md is what ``scripts/config_doc.py`` generates from the config's docstrings, and
    lists every key once with the default the config has."""
    import dataclasses

    from neurocheckers.experiment.config import ExperimentConfig
    from neurocheckers.experiment.config_doc import config_reference, config_sections

    page = (EXPERIMENTS.parent / "docs" / "config.md").read_text()
    assert page == config_reference(), "regenerate it: python scripts/config_doc.py > docs/config.md"
    listed = [key for keys in config_sections().values() for key in keys]
    assert sorted(listed) == sorted(f.name for f in dataclasses.fields(ExperimentConfig))
    for f in dataclasses.fields(ExperimentConfig):
        shown = str(f.default).lower() if isinstance(f.default, bool) else repr(f.default)
        assert f"| `{f.name}` | `{shown}` |" in page
