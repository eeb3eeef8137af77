"""The compiled alpha-beta: fixed-depth scores equal to the JAX alpha-beta's, the draw rules, and the
time and node budgets."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.compiled.board import Position, SearchRules, game_rule, geometry
from neurocheckers.compiled.check import random_positions
from neurocheckers.compiled.driver import MAX_DEPTH, PLAIN, CompiledSearch, SearchOptions
from neurocheckers.compiled.movegen import longest_move, move_buffer
from neurocheckers.compiled.search import MAX_PLY
from neurocheckers.rules.engine import from_position
from neurocheckers.rules.presets import AMERICAN8, PRESETS
from neurocheckers.rules.tables import tables
from neurocheckers.search.alphabeta import alphabeta_search

DEPTH = {"simple6": 4, "american6": 4, "american8": 3}
PER_PRESET = 12
SMALL_PLAIN = dataclasses.replace(PLAIN, table_bits=10)


def quiet_positions(rules, depth: int, count: int, seed: int) -> list[tuple[Position, int, int]]:
    """``(position, ply, quiet)`` from random playouts whose tree of ``depth`` has no multi-jump (so
    plies and whole moves count alike), some near a draw limit, with two moves or more."""
    geo, buf = geometry(rules), move_buffer(depth + 1)
    rows = random_positions(
        geo, np.int64(40 * count), np.int64(seed), np.int64(rules.men_per_side), np.int64(40)
    )
    out, mover = [], CompiledSearch(rules, SMALL_PLAIN)
    for k, row in enumerate(rows):
        pos = Position(*(int(x) for x in row))
        om, ok, pm, pk = pos.relative()
        c = np.int64(pos.color)
        if longest_move(geo, om, ok, pm, pk, c, np.int64(depth), buf, np.int64(0)) != 1:
            continue
        if len(mover.legal_moves(pos)) < 2:
            continue
        near = k % 3 == 0  # a draw limit inside the tree
        quiet = rules.max_plies_without_capture - 2 if near and rules.max_plies_without_capture else 0
        ply = rules.max_plies - 2 if near and rules.max_plies else 0
        out.append((pos, ply, quiet))
        if len(out) == count:
            break
    assert len(out) == count
    return out


@functools.cache
def jax_search(rules, depth):
    def one(p):
        state = from_position(rules, p[0], p[1], p[2], p[3], p[4], p[5], p[6])
        return alphabeta_search(rules, state, depth)

    return jax.jit(jax.vmap(one))


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_fixed_depth_scores_equal_jax_alphabeta(name):
    rules, depth = PRESETS[name], DEPTH[name]
    cases = quiet_positions(rules, depth, PER_PRESET, seed=3)
    batch = np.array([[p.black_men, p.black_kings, p.white_men, p.white_kings, p.color, ply, q]
                      for p, ply, q in cases], np.int64)  # fmt: skip
    scores, legal = jax.device_get(jax_search(rules, depth)(jnp.asarray(batch.astype(np.int32))))
    assert len({float(np.max(np.where(ok, s, -np.inf))) for s, ok in zip(scores, legal, strict=True)}) > 2
    extras = SearchOptions(
        table_bits=10, table=False, quiescence=False, counter=True, lmr_log=False
    )  # PVS, killers, counter-moves, history keep exact scores
    for (pos, ply, quiet), s, ok in zip(cases, scores, legal, strict=True):
        best = float(np.max(np.where(ok, s, -np.inf)))
        for options in (SMALL_PLAIN, extras):
            result = CompiledSearch(rules, options).search(pos, depth=depth, ply=ply, quiet=quiet)
            assert result.score == pytest.approx(best, abs=1e-6), (pos, ply, quiet, options)
            assert s[result.actions[0]] == pytest.approx(best, abs=1e-6)


def _step(square: int, direction: int) -> int:
    return int(tables(8).neighbor[direction, square])


def test_repetition_is_a_draw():
    # Black king against a White king and man: kings going back and forth repeat Q (White to move).
    a1, b1, man = 9, 26, 28
    a2, b2 = _step(a1, 1), _step(b1, 2)
    q = Position(0, 1 << a1, 1 << man, 1 << b1, 1)
    r = Position(0, 1 << a1, 1 << man, 1 << b2, 0)
    s_ = Position(0, 1 << a2, 1 << man, 1 << b2, 1)
    root = Position(0, 1 << a2, 1 << man, 1 << b1, 0)  # Black to move; a2 -> a1 repeats q
    plain = CompiledSearch(AMERICAN8, SMALL_PLAIN).search(root, depth=1, history=[q, r, s_])
    assert plain.score == -1.0
    rules = SearchRules(AMERICAN8, repetition=True)
    drawn = CompiledSearch(rules, SMALL_PLAIN).search(root, depth=1, history=[q, r, s_])
    assert drawn.score == 0.0
    assert drawn.actions == (2 * 32 + a2,)  # back up-left to a1


def test_forty_move_rule_draws_on_a_king_move():
    root = Position(0, 1 << 9, 1 << 28, 1 << 26, 0)  # Black (a king) a man behind
    no_limit = SearchRules(AMERICAN8, quiet_limit=0)
    assert CompiledSearch(no_limit, SMALL_PLAIN).search(root, depth=1, quiet=79).score == -1.0
    assert CompiledSearch(game_rule(AMERICAN8), SMALL_PLAIN).search(root, depth=1, quiet=79).score == 0.0
    assert CompiledSearch(game_rule(AMERICAN8), SMALL_PLAIN).search(root, depth=1, quiet=10).score == -1.0


def test_selective_switches_search_fewer_nodes_to_a_depth():
    start = Position(0xFFF, 0, 0xFFF00000, 0, 0)
    nodes = {}
    for name, options in (("plain lmr", {}), ("lmr_log", {"lmr_log": True}), ("iir", {"iir": True})):
        search = CompiledSearch(AMERICAN8, SearchOptions(table_bits=14, **options))
        result = search.search(start, depth=11)
        assert result.depth == 11 and tuple(result.move) in {tuple(r) for r in search.legal_moves(start)}
        nodes[name] = result.nodes
    assert nodes["lmr_log"] < 0.9 * nodes["plain lmr"], nodes


def test_budgets_return_a_legal_move():
    rules = AMERICAN8
    search = CompiledSearch(rules, SearchOptions(table_bits=16))
    start = Position(0xFFF, 0, 0xFFF00000, 0, 0)
    legal = {tuple(row) for row in search.legal_moves(start)}
    assert len(legal) == 7
    timed = search.search(start, seconds=0.05)
    assert timed.depth >= 1 and timed.nodes > 0 and len(timed.actions) == 1
    counted = CompiledSearch(rules, SearchOptions(table_bits=16)).search(start, nodes=5000)
    again = CompiledSearch(rules, SearchOptions(table_bits=16)).search(start, nodes=5000)
    assert counted == dataclass_without_time(again, counted.seconds)
    with pytest.raises(ValueError, match="budget"):
        search.search(start)
    for bad, match in (({"nodes": 0}, "nodes must be >= 1, got 0"), ({"seconds": -1.0}, "got -1.0")):
        with pytest.raises(ValueError, match=match):
            search.search(start, **bad)


def dataclass_without_time(result, seconds):
    import dataclasses

    return dataclasses.replace(result, seconds=seconds)


def test_deep_search_of_a_sparse_endgame_stays_in_its_buffers():
    # A king against a king without a draw limit: the table carries the iterations to MAX_DEPTH.
    search = CompiledSearch(SearchRules(AMERICAN8, quiet_limit=0), SearchOptions(table_bits=12))
    result = search.search(Position(0, 1 << 0, 0, 1 << 27, 0), nodes=300_000)
    assert result.depth == MAX_DEPTH and result.score == 0.0
    assert result.seldepth <= MAX_PLY - 1


@pytest.mark.parametrize(
    "position, match",
    [
        (Position(1, 1, 0, 0, 0), "square 1 is given twice"),
        (Position(1 << 31, 0, 1, 0, 0), "a Black man on 32"),
        (Position(1, 0, 1 << 20, 0, 2), "color must be 0"),
    ],
)
def test_impossible_positions_are_refused_in_one_line(position, match):
    with pytest.raises(ValueError, match=match) as info:
        CompiledSearch(AMERICAN8, SMALL_PLAIN).search(position, depth=1)
    assert "\n" not in str(info.value)


def test_incremental_keys_equal_keys_computed_afresh():
    from neurocheckers.compiled.game import after
    from neurocheckers.compiled.search import child_key, position_key

    for rules in (AMERICAN8, PRESETS["american6"]):
        geo = geometry(rules)
        search = CompiledSearch(rules, SMALL_PLAIN)
        rows = random_positions(geo, np.int64(200), np.int64(5), np.int64(rules.men_per_side), np.int64(30))
        checked = 0
        for row in rows:
            pos = Position(*(int(x) for x in row))
            om, ok, pm, pk = pos.relative()
            c = np.int64(pos.color)
            key = position_key(geo, om, ok, pm, pk, c)
            for move in search.legal_moves(pos):
                src, dst, cap = (np.int64(x) for x in move[:3])
                child = after(geo, pos, move)
                assert child_key(geo, key, om, ok, pk, c, src, dst, cap) == search.key(child)
                checked += 1
        assert checked > 500
