"""What every strategy passes through the one run loop: a run crashed in the middle (between two
checkpoints) and resumed gives the metrics and lineage of an uninterrupted run. The crash runs in this
process, so one strategy's programs compile once; a real ``kill -9`` of ``neurocheckers evolve`` and
``--resume`` (the process-level check: atomic files, a lock left by a dead process) runs for the boss
GA here and for TD(lambda) in tests/test_learner_runs.py, since that part of the loop is the same for
every strategy."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from killing import assert_crashed_run_resumes_identically, assert_killed_run_resumes_identically

from neurocheckers.experiment.config import STRATEGIES

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tiny import TINY_BY_STRATEGY  # noqa: E402

KILLED_RUN_EPOCHS = 60
"""Epochs of the killed run: many more than the 3 the kill waits for, where a boss GA epoch takes
10-30 ms once compiled, so the child cannot finish first."""

CRASHED_RUN_EPOCHS = 6
"""Epochs of the crashed run: the crash comes after the third, between the checkpoints of the second
and the fourth."""


def test_every_strategy_has_a_tiny_config():
    assert set(TINY_BY_STRATEGY) == set(STRATEGIES)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_run_crashed_between_checkpoints_resumes_to_identical_metrics(strategy, tmp_path):
    items = [*TINY_BY_STRATEGY[strategy], "checkpoint_every=2", f"name=crashed_{strategy.lower()}"]
    assert_crashed_run_resumes_identically(items, CRASHED_RUN_EPOCHS, tmp_path)


def test_a_boss_ga_run_killed_with_sigkill_resumes_to_identical_metrics(tmp_path):
    items = [*TINY_BY_STRATEGY["boss_ga"], "checkpoint_every=2", "name=killed_boss_ga"]
    assert_killed_run_resumes_identically(items, KILLED_RUN_EPOCHS, tmp_path)
