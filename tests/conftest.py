"""Shared test setup: a persistent JAX compilation cache so repeated compiles are cheap, and the
published perft counts (tests/data/perft.json, inside the checkout)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from neurocheckers._setup import configure_jax

REPO = Path(__file__).resolve().parents[1]
PERFT_TABLE = Path(__file__).resolve().parent / "data" / "perft.json"

configure_jax(os.environ.get("NEUROCHECKERS_CACHE", REPO / ".jax_cache"))


@pytest.fixture(scope="session")
def perft_table() -> dict:
    import json

    return json.loads(PERFT_TABLE.read_text())
