"""Shared test setup: a persistent JAX compilation cache so repeated compiles are cheap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from neurocheckers.runtime import configure_jax

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

configure_jax(os.environ.get("NEUROCHECKERS_CACHE", REPO / ".jax_cache"))


@pytest.fixture(scope="session")
def perft_table() -> dict:
    import json

    path = SHARED / "reference" / "perft.json"
    if not path.exists():  # pragma: no cover - the shared folder sits beside every checkout and CI clone
        raise FileNotFoundError(f"the shared perft table is missing: {path}")
    return json.loads(path.read_text())
