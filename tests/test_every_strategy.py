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
once compiled (the GAs, the evosax strategies but CMA-ES, DQN), so the child cannot finish first."""

SLOW_EPOCH_KILLED_RUN_EPOCHS = {"CMA_ES": 10, "td_lambda": 8, "td_leaf": 8, "pbt": 8}
"""Strategies whose epochs take 0.4-1.5 s on the 2-core machine (self-play, CMA-ES's covariance), with the
tests' XLA optimisation level 0: 5 epochs to spare after the kill are seconds, and the whole run and
the resumed one play every epoch (td_leaf's 60 epochs made the slowest test of the suite, 99 s)."""


def test_every_strategy_has_a_tiny_config():
    assert set(TINY_BY_STRATEGY) == set(STRATEGIES)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_run_killed_with_sigkill_resumes_to_identical_metrics(strategy, tmp_path):
    items = [*TINY_BY_STRATEGY[strategy], "checkpoint_every=2", f"name=killed_{strategy.lower()}"]
    epochs = SLOW_EPOCH_KILLED_RUN_EPOCHS.get(strategy, KILLED_RUN_EPOCHS)
    assert_killed_run_resumes_identically(items, epochs, tmp_path)
