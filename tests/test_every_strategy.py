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


def test_every_strategy_has_a_tiny_config():
    assert set(TINY_BY_STRATEGY) == set(STRATEGIES)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_run_killed_with_sigkill_resumes_to_identical_metrics(strategy, tmp_path):
    items = [*TINY_BY_STRATEGY[strategy], "checkpoint_every=2", f"name=killed_{strategy.lower()}"]
    assert_killed_run_resumes_identically(items, 60, tmp_path)  # tens of ms an epoch once compiled
