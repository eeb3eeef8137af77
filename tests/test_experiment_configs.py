"""Every committed experiment file loads, and the 8x8 method runs end to end at a tiny size."""

from __future__ import annotations

import re
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
    assert {c.evaluator for c in configs.values()} == {"mlp", "cnn", "transformer", "nnue"}
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


def test_every_settings_key_is_declared_once_with_the_documented_default():
    """The layers' settings and the config are built from the same sections: each key has one
    declaring class (a section of ``sections``), so one default, the config's."""
    import dataclasses

    from neurocheckers import sections
    from neurocheckers.evolution.settings import EvolutionSettings
    from neurocheckers.experiment.config import ExperimentConfig
    from neurocheckers.learners.dqn_settings import DQNSettings
    from neurocheckers.learners.td_lambda import TDLeafSettings

    config_defaults = {f.name: f.default for f in dataclasses.fields(ExperimentConfig)}
    homes = {c for c in vars(sections).values() if isinstance(c, type) and hasattr(c, "SECTION")}
    for settings in (EvolutionSettings, TDLeafSettings, DQNSettings, ExperimentConfig):
        for field in dataclasses.fields(settings):
            if not field.metadata.get("config_key", True):  # e.g. the strategy's generation
                continue
            assert sections.declaring_class(settings, field.name) in homes, (settings, field.name)
            assert field.default == config_defaults[field.name], (settings, field.name)
    declared = [name for cls in homes for name in vars(cls).get("__annotations__", {}) if name != "SECTION"]
    assert len(declared) == len(set(declared)) == len(config_defaults)


def test_keys_in_section_tables_and_dotted_overrides(tmp_path):
    from neurocheckers.experiment.config import ConfigError

    path = tmp_path / "sections.toml"
    path.write_text('strategy = "td_lambda"\n[network]\nlayers = 3\n[td_lambda]\nselfplay_games = 8\n')
    config = load_config(path, ["search.depth=3", "learning.lambda_=0.5"])
    assert (config.layers, config.selfplay_games, config.depth, config.lambda_) == (3, 8, 3, 0.5)
    refused = [
        (["network.population=8"], "[network] has no key 'population'; it is a key of [boss_ga]"),
        (["nowhere.layers=3"], "no section 'nowhere'"),
        (["population=8"], "population = 8 is a key of [boss_ga], which strategy 'td_lambda' does not read"),
        (["strategy=dqn", "selfplay_games=256", "population=4"], "population = 4 is a key of [boss_ga]"),
    ]
    for overrides, message in refused:
        with pytest.raises(ConfigError, match=re.escape(message)):
            load_config(path, overrides)
    assert load_config(path, ["population=256"]).population == 256  # the default is no change
