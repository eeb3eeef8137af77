"""What every strategy passes through the one run loop: a real ``kill -9`` of ``neurocheckers
evolve`` in the middle of a run, then ``--resume``, gives the metrics and lineage of an
uninterrupted run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from killing import assert_killed_run_resumes_identically

from neurocheckers.experiment.config import STRATEGIES

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tiny import TINY_BY_STRATEGY  # noqa: E402

KILLED_RUN_EPOCHS = 60
"""Epochs of the killed run: many more than the 3 the kill waits for, where an epoch takes 10-30 ms
once compiled (the GAs, the memetic pool, the evosax strategies but CMA-ES, DQN), so the child cannot
finish first."""

SLOW_EPOCH_STRATEGIES = {"CMA_ES", "td_lambda", "td_leaf", "pbt"}
SLOW_EPOCH_KILLED_RUN_EPOCHS = 6
"""Epochs of the killed run of strategies whose epochs take 0.4-4 s on the loaded 2-core machine
(self-play, PBT's members, CMA-ES's covariance; the tests' XLA optimisation level 0 runs them
slowly): the kill leaves 1-3 of 6 epochs, each far longer than the 10 ms between looks, and the whole
run and the resumed one play every epoch (td_leaf's 60 epochs made the slowest test, 99 s)."""


def test_every_strategy_has_a_tiny_config():
    assert set(TINY_BY_STRATEGY) == set(STRATEGIES)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_run_killed_with_sigkill_resumes_to_identical_metrics(strategy, tmp_path):
    items = [*TINY_BY_STRATEGY[strategy], "checkpoint_every=2", f"name=killed_{strategy.lower()}"]
    epochs = SLOW_EPOCH_KILLED_RUN_EPOCHS if strategy in SLOW_EPOCH_STRATEGIES else KILLED_RUN_EPOCHS
    assert_killed_run_resumes_identically(items, epochs, tmp_path)
