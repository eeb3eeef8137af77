"""The compiled search's tunable parameters (issue 56 item 2): each switch and number declared once
in ``SearchOptions`` with a range and a step, every number reaching the numba search, and a tuned
set carried by the agent file, which ``compiled:`` then plays."""

from __future__ import annotations

import dataclasses

import jax
import pytest

from neurocheckers.compiled.board import Position
from neurocheckers.compiled.driver import (
    DEFAULTS,
    CompiledSearch,
    SearchOptions,
    options_from_metadata,
    options_metadata,
    tunable_fields,
)
from neurocheckers.networks import agent_file, evaluator
from neurocheckers.players.compiled import TABLE_BITS, parse_compiled
from neurocheckers.rules.engine import init
from neurocheckers.rules.presets import AMERICAN8

SWITCHES = {
    "table",
    "pvs",
    "killers",
    "history",
    "quiescence",
    "lmr",
    "lmr_deep",
    "lmr_log",
    "counter",
    "iir",
}
NUMBERS = {
    "aspiration", "lmr_min_depth", "lmr_min_move", "lmr_deep_min_depth", "lmr_deep_min_move",
    "lmr_deep_reduction", "iir_min_depth", "next_iteration_share", "database_pieces",
}  # fmt: skip


def test_every_switch_and_number_is_declared_with_a_range_and_a_step():
    fields = tunable_fields()
    assert set(fields) == SWITCHES | NUMBERS and "table_bits" not in fields
    assert all(fields[name] == (0, 1, 1) for name in SWITCHES)
    for name, (low, high, step) in fields.items():
        assert low <= DEFAULTS[name] <= high and 0 < step <= high - low, name
    with pytest.raises(ValueError, match=r"^lmr_min_move must be in 1..12, got 0$"):
        SearchOptions(lmr_min_move=0)
    with pytest.raises(ValueError, match=r"^next_iteration_share must be in 0.3..1, got 1.5$"):
        SearchOptions(next_iteration_share=1.5)


def _nodes(depth: int, **options) -> int:
    position = Position.from_state(jax.device_get(init(AMERICAN8)))
    search = CompiledSearch(AMERICAN8, SearchOptions(table_bits=12, **options))
    return search.search(position, depth=depth).nodes


def test_the_numbers_reach_the_search():
    """Reductions from an earlier place in the order, or from shallower depths, search fewer nodes;
    the defaults written out search what the defaults do."""
    assert _nodes(8, lmr_min_move=1) < _nodes(8, lmr_min_move=12)
    assert _nodes(8, lmr_min_depth=2) < _nodes(8, lmr_min_depth=8)
    deep = {"lmr_deep": True, "lmr_deep_min_move": 2, "lmr_deep_min_depth": 3}
    assert _nodes(8, **deep, lmr_deep_reduction=3) < _nodes(8, **deep, lmr_deep_reduction=1)
    assert _nodes(8, iir=True, iir_min_depth=2) != _nodes(8, iir=True, iir_min_depth=10)
    assert _nodes(8, **{k: v for k, v in DEFAULTS.items() if k in NUMBERS}) == _nodes(8)


def test_a_tuned_set_travels_in_the_agent_file(tmp_path):
    tuned = SearchOptions(lmr_min_move=4, aspiration=0.15, killers=False)
    metadata = options_metadata(tuned)
    assert options_metadata(SearchOptions()) == {}  # the defaults add nothing to a file
    assert options_from_metadata(metadata, SearchOptions()) == tuned
    spec = evaluator.EvaluatorSpec(1, 8, AMERICAN8.board_size)
    params = evaluator.init_params(jax.random.key(0), spec)
    plain, carried = tmp_path / "plain.safetensors", tmp_path / "tuned.safetensors"
    agent_file.save_agent(plain, AMERICAN8, spec, params)
    agent_file.save_agent(carried, AMERICAN8, spec, params, metadata=metadata)
    assert parse_compiled(f"compiled:1000n:{plain}", AMERICAN8).options == SearchOptions(
        table_bits=TABLE_BITS
    )
    player = parse_compiled(f"compiled:1000n:{carried}", AMERICAN8)
    assert player.options == dataclasses.replace(tuned, table_bits=TABLE_BITS)
    with pytest.raises(ValueError, match="its search_options metadata is not a tuned search: no tunable"):
        options_from_metadata({"search_options": '{"depth": 3}'}, SearchOptions())
    broken = tmp_path / "broken.safetensors"
    agent_file.save_agent(
        broken, AMERICAN8, spec, params, metadata={"search_options": '{"lmr_min_move": 99}'}
    )
    with pytest.raises(ValueError, match="lmr_min_move must be in 1..12, got 99"):
        parse_compiled(f"compiled:1000n:{broken}", AMERICAN8)
