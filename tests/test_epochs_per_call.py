"""``epochs_per_call`` (issue 32, part 3): K epochs in one compiled device call (a ``lax.scan``), with
rows, lineage and checkpoints between calls, give the metrics of one epoch a call; a run stopped
between calls resumes to them."""

from __future__ import annotations

import pytest
from killing import lineage_rows, stable_rows
from tiny import TINY_BY_STRATEGY

from neurocheckers.experiment import run as run_module
from neurocheckers.experiment.config import ConfigError, load_config
from neurocheckers.experiment.folder import checkpoint_epoch
from neurocheckers.experiment.run import create_run, run
from neurocheckers.experiment.strategy_registry import LEARNER, StrategyEntry, register, unregister

EPOCHS = 7
"""Calls of 3, 3 and 1 epochs; checkpoints due after epochs 2, 4 and 6 fall inside the calls."""


def _config(k: int, strategy: str = "boss_ga"):
    items = [*TINY_BY_STRATEGY[strategy], f"epochs={EPOCHS}", "checkpoint_every=2", f"epochs_per_call={k}"]
    if strategy == "boss_ga":
        items.append("promotion_threshold=0.5")  # bosses change inside the calls
    return load_config(None, [*items, f"name=k{k}"])


@pytest.fixture(scope="module")
def one_epoch_a_call(tmp_path_factory):
    return run(create_run(_config(1), tmp_path_factory.mktemp("k1")))


def test_three_epochs_a_call_write_the_rows_and_lineage_of_one(one_epoch_a_call, tmp_path, monkeypatch):
    written = []
    real = run_module.write_checkpoint
    monkeypatch.setattr(
        run_module,
        "write_checkpoint",
        lambda d, c, s, state: written.append(int(state.epoch)) or real(d, c, s, state),
    )
    scanned = run(create_run(_config(3), tmp_path))
    assert stable_rows(scanned) == stable_rows(one_epoch_a_call)
    assert lineage_rows(scanned) == lineage_rows(one_epoch_a_call)
    assert int(lineage_rows(scanned)[-1]["boss_id"]) >= 1
    assert written == [3, 6, 7]  # each due checkpoint at the end of the call it falls in, and the last


def test_a_run_stopped_between_calls_resumes_to_the_same_metrics(one_epoch_a_call, tmp_path, monkeypatch):
    run_dir = create_run(_config(3), tmp_path)
    real = run_module.write_checkpoint

    def crash_at_the_second_checkpoint(d, c, s, state):
        if int(state.epoch) > 3:
            raise OSError("disk full")
        real(d, c, s, state)

    monkeypatch.setattr(run_module, "write_checkpoint", crash_at_the_second_checkpoint)
    with pytest.raises(OSError, match="disk full"):
        run(run_dir)
    assert checkpoint_epoch(run_dir) == 3 and len(stable_rows(run_dir)) == 6  # rows 3-5 without a checkpoint
    monkeypatch.setattr(run_module, "write_checkpoint", real)
    run(run_dir)
    assert stable_rows(run_dir) == stable_rows(one_epoch_a_call)
    assert lineage_rows(run_dir) == lineage_rows(one_epoch_a_call)


def test_a_learner_scans_its_epochs_to_the_same_metrics(tmp_path):
    one = run(create_run(_config(1, "td_lambda"), tmp_path / "one"))
    scanned = run(create_run(_config(3, "td_lambda"), tmp_path / "scanned"))
    assert stable_rows(scanned) == stable_rows(one)
    assert lineage_rows(scanned) == lineage_rows(one)


def test_epochs_per_call_is_refused_below_one_and_for_an_impure_epoch():
    with pytest.raises(ConfigError, match="epochs_per_call must be >= 1, got 0"):
        load_config(None, ["epochs_per_call=0"])
    register(StrategyEntry("host_stepped", LEARNER, algorithm=None, pure_epoch=False))
    try:
        load_config(None, ["strategy=host_stepped"])  # one epoch a call: accepted
        with pytest.raises(ConfigError, match="epochs_per_call = 2: strategy 'host_stepped'"):
            load_config(None, ["strategy=host_stepped", "epochs_per_call=2"])
    finally:
        unregister("host_stepped")


def test_a_budget_spent_inside_a_call_ends_the_run_at_that_calls_end(one_epoch_a_call, tmp_path):
    """The budget is checked between calls: a budget of a few milliseconds lets the first call of
    3 epochs run whole (rows, lineage and the checkpoint of its end), and no other."""
    items = [*TINY_BY_STRATEGY["boss_ga"], f"epochs={EPOCHS}", "checkpoint_every=2", "epochs_per_call=3"]
    config = load_config(None, [*items, "promotion_threshold=0.5", "budget_minutes=0.0001", "name=k3b"])
    run_dir = run(create_run(config, tmp_path))
    assert checkpoint_epoch(run_dir) == 3
    assert stable_rows(run_dir) == stable_rows(one_epoch_a_call)[:3]
    whole = lineage_rows(one_epoch_a_call)
    assert lineage_rows(run_dir) == [row for row in whole if int(row["epoch"]) < 3]
