"""DQN in the run machinery: the same run folder, metrics, snapshots, resume and export as the
other learners (the learner itself is tested in tests/test_dqn.py)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from neurocheckers.cli import main
from neurocheckers.experiment.config import ConfigError, load_config
from neurocheckers.experiment.run import create_run, run
from neurocheckers.experiment.trainers import make_trainer
from neurocheckers.formats import TIMING_COLUMNS, read_lineage, read_metrics
from neurocheckers.networks.evaluator import value
from neurocheckers.networks.numpy_agent import NumpyAgent, encode_fen
from neurocheckers.players.jax_players import parse_player

DQN_RUN = [
    "name=tinydqn",
    "strategy=dqn",
    "rules=american6",
    "layers=1",
    "width=4",
    "search=alphabeta",
    "depth=1",
    "envs=4",
    "buffer_size=64",
    "batch_size=8",
    "steps_per_epoch=2",
    "updates_per_epoch=2",
    "max_plies=40",
    "epochs=4",
    "snapshot_every=2",
    "checkpoint_every=2",
    "target_update_every=3",
    "epsilon_decay_epochs=3",
]


@pytest.fixture(scope="module")
def config():
    return load_config(None, DQN_RUN)


@pytest.fixture(scope="module")
def dqn_run(tmp_path_factory, config):
    return run(create_run(config, tmp_path_factory.mktemp("runs")))


def _stable_rows(run_dir):
    return [{k: v for k, v in row.items() if k not in TIMING_COLUMNS} for row in read_metrics(run_dir)]


def test_dqn_run_writes_metrics_and_snapshots_and_resumes_identically(dqn_run, config, tmp_path):
    rows = read_metrics(dqn_run)
    assert [int(r["epoch"]) for r in rows] == [0, 1, 2, 3]
    assert all(r["loss"] and r["epsilon"] and float(r["plies"]) > 0 for r in rows)
    assert float(rows[0]["epsilon"]) > float(rows[3]["epsilon"])  # the schedule decays
    assert [int(r["epoch"]) for r in read_lineage(dqn_run)] == [-1, 1, 3]
    interrupted = create_run(config, tmp_path)
    run(interrupted, stop_after=3)
    run(interrupted)
    assert _stable_rows(interrupted) == _stable_rows(dqn_run)


def test_exported_dqn_agent_loads_with_numpy_and_plays(dqn_run, config, tmp_path):
    agent_file = tmp_path / "dqn.safetensors"
    assert main(["export", str(dqn_run), "--out", str(agent_file)]) == 0
    setup = make_trainer(config)
    player = parse_player(f"greedy:{agent_file}", setup.rules)
    fen = "B:W13,14,15,16,17,18:B1,2,3,4,5,6"
    expected = value(setup.spec, player.params, encode_fen(fen, 6))
    np.testing.assert_allclose(NumpyAgent.load(agent_file).value_of_fen(fen), float(expected), rtol=1e-5)
    assert main(["match", f"alphabeta:1:{agent_file}", "random", "--rules", "american6", "--games", "2"]) == 0


@pytest.mark.parametrize(
    "setting, message",
    [
        ("buffer_size=2", "buffer_size must be >= envs (4), got 2"),
        ("gamma=1.5", "gamma must be in [0, 1], got 1.5"),
        ("opponent=alphabeta:x", "opponent:"),
    ],
)
def test_bad_dqn_settings_are_refused(setting, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(None, [*DQN_RUN, setting])


def test_a_dqn_run_plots(dqn_run, tmp_path):
    """DQN fills no TD-error column; its learning curve still draws (the loss alone)."""
    assert main(["plot", str(dqn_run), "--out", str(tmp_path / "fitness.png")]) == 0
    assert (tmp_path / "fitness.png").stat().st_size > 0
