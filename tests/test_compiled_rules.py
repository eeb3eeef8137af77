"""The compiled (numba) move generator against the published perft counts and the JAX rules."""

from __future__ import annotations

import numpy as np
import pytest

from neurocheckers.compiled.board import Position, geometry, move_actions
from neurocheckers.compiled.check import compare_moves
from neurocheckers.compiled.movegen import move_buffer, perft
from neurocheckers.rules.engine import from_position, init
from neurocheckers.rules.notation import legal_moves
from neurocheckers.rules.presets import AMERICAN8, PRESETS

PERFT_DEPTH = {"simple6": 7, "american6": 9, "american8": 7}


def start_position(rules) -> Position:
    n, men = rules.num_squares, rules.men_per_side
    return Position((1 << men) - 1, 0, ((1 << men) - 1) << (n - men), 0, 0)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_perft_matches_table(name, perft_table):
    rules = PRESETS[name]
    om, ok, pm, pk = start_position(rules).relative()
    buf = move_buffer(16)
    got = [
        int(perft(geometry(rules), om, ok, pm, pk, np.int64(0), np.int64(d), buf, np.int64(0)))
        for d in range(1, PERFT_DEPTH[name] + 1)
    ]
    assert got == perft_table[name]["perft"][: PERFT_DEPTH[name]]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_move_lists_match_jax_rules(name):
    rules = PRESETS[name]
    positions, rows, mismatches = compare_moves(rules, 2000, seed=7)
    assert mismatches == []
    assert len(rows) > 2000
    if rules.multi_jump:  # the positions exercise multi-jumps
        assert (rows[:, 2] >= 0).sum() > 20


def test_move_actions_of_a_double_jump():
    # Black man on 1 jumps White men on 6 and 14 (8x8): 1x10x19.
    state = from_position(AMERICAN8, 1 << 0, 0, (1 << 5) | (1 << 14), 0, 0)
    (move,) = legal_moves(AMERICAN8, state)
    pos = Position.from_state(state)
    assert move.notation == "1x10x19"
    # path: direction 1 (down-right) then 1 again
    assert move_actions(AMERICAN8, 0, (1 << 5) | (1 << 14), 1 | (1 << 2)) == tuple(move.actions)
    assert pos.relative()[0] == np.int64(1)


def test_position_refuses_a_pending_multi_jump():
    state = init(AMERICAN8).replace(continuing=np.uint32(1))
    with pytest.raises(ValueError, match="multi-jump"):
        Position.from_state(state)


def test_stale_numba_cache_is_dropped_when_a_source_changes(tmp_path):
    """numba checks only each function's own file; the package's stamp of all its sources clears
    the cache when any changes (a caller compiled against an older callee would be loaded)."""
    from neurocheckers.compiled import drop_stale_cache

    (tmp_path / "a.py").write_text("x = 1\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    assert drop_stale_cache(tmp_path)  # no stamp yet
    (cache / "a.f-1.py311.nbi").write_text("index")
    (cache / "a.f-1.py311.1.nbc").write_text("code")
    assert not drop_stale_cache(tmp_path)
    assert len(list(cache.glob("*.nb?"))) == 2
    (tmp_path / "a.py").write_text("x = 2\n")
    assert drop_stale_cache(tmp_path)
    assert list(cache.glob("*.nb?")) == []


def test_table_starts_on_a_cache_line():
    from neurocheckers.compiled.driver import CACHE_LINE, aligned_table

    for bits in (4, 12):
        table = aligned_table(bits)
        assert table.shape == (1 << bits, 2) and table.flags["C_CONTIGUOUS"]
        assert table.ctypes.data % CACHE_LINE == 0 and not table.any()
