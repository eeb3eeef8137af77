"""Shared test setup: a persistent JAX compilation cache so repeated compiles are cheap, and the
published perft counts (tests/data/perft.json, inside the checkout)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from neurocheckers.runtime import configure_jax

REPO = Path(__file__).resolve().parents[1]
PERFT_TABLE = Path(__file__).resolve().parent / "data" / "perft.json"

# No test process writes the persistent cache (it still reads it): late in a full session, after
# hundreds of compiled programs, jaxlib 0.10's CPU backend aborted or segfaulted while serialising an
# executable for the cache, at whichever test compiled next. Subprocess runs inherit the setting.
os.environ.setdefault("NEUROCHECKERS_CACHE_MIN_SECONDS", "1e9")
configure_jax(os.environ.get("NEUROCHECKERS_CACHE", REPO / ".jax_cache"))


@pytest.fixture(scope="session")
def perft_table() -> dict:
    import json

    return json.loads(PERFT_TABLE.read_text())


def pytest_sessionfinish(session, exitstatus):
    """In CI (``CI`` set, as ``.ci/run`` does) a skipped test fails the run: every test must run there,
    OpenSpiel's and Ray's included (the test and ray extras are installed)."""
    if not os.environ.get("CI"):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped:
        reporter.write("\n")
        reporter.write_sep("=", f"CI: {len(skipped)} test(s) skipped; in CI every test must run", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
