"""Network leaves of the compiled search: the packed MLP and NNUE networks give the JAX evaluator's
values (within 1e-5) on random positions of 6x6 and 8x8 boards (both colours to move, kings), with
their first layer computed afresh and kept incrementally along random games; fixed-depth scores
with network leaves equal the JAX alpha-beta's; the search takes an agent file for its leaves and
refuses one that does not fit."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_compiled_search import SMALL_PLAIN, quiet_positions

from neurocheckers.compiled import network as nw
from neurocheckers.compiled.board import Position, geometry
from neurocheckers.compiled.check import random_positions
from neurocheckers.compiled.driver import CompiledSearch, SearchOptions
from neurocheckers.compiled.game import after
from neurocheckers.networks import agent_file, evaluator
from neurocheckers.players.compiled import parse_compiled
from neurocheckers.rules.engine import from_position
from neurocheckers.rules.outcome import KING_VALUE
from neurocheckers.rules.presets import AMERICAN6, AMERICAN8
from neurocheckers.search.alphabeta import alphabeta_search, value_heuristic

NETWORKS = {
    "mlp": {"layers": 3, "width": 12},
    "mlp-material": {"layers": 2, "width": 8, "material_input": True},
    "nnue": {"layers": 1, "width": 1, "architecture": "nnue", "nnue_width": 16, "nnue_hidden": 8},
}
POSITIONS = 150


def _agent(tmp_path, rules, name: str, seed: int = 0):
    """An agent file of a random network (weights scaled up, so values spread over (0, 1))."""
    settings = dict(NETWORKS[name])
    spec = evaluator.EvaluatorSpec(
        settings.pop("layers"), settings.pop("width"), rules.board_size, **settings
    )
    params = evaluator.init_params(jax.random.key(seed), spec)
    params = jax.tree.map(lambda x: x * 2.0, params)
    if spec.material_input:
        params[next(reversed(params))]["material_weight"] = jnp.array([0.7], jnp.float32)
    path = tmp_path / f"{name}-{rules.name}.safetensors"
    agent_file.save_agent(path, rules, spec, params)
    return path, spec, params


def _jax_values(rules, spec, params, positions) -> np.ndarray:
    batch = np.array([[p.black_men, p.black_kings, p.white_men, p.white_kings, p.color] for p in positions])

    def one(row):
        state = from_position(rules, row[0], row[1], row[2], row[3], row[4])
        return evaluator.value(spec, params, state)

    return np.asarray(jax.jit(jax.vmap(one))(jnp.asarray(batch, jnp.int32)))


def _random_positions(rules, count: int, seed: int) -> list[Position]:
    geo = geometry(rules)
    rows = random_positions(geo, np.int64(count), np.int64(seed), np.int64(rules.men_per_side), np.int64(40))
    return [Position(*(int(x) for x in row)) for row in rows]


def _random_game(rules, plies: int, seed: int) -> tuple[list[Position], list]:
    """Positions and moves of a random game from the start (fewer plies when it ends)."""
    rng = np.random.default_rng(seed)
    n, men = rules.num_squares, rules.men_per_side
    search = CompiledSearch(rules, SearchOptions(table_bits=4))
    positions, moves = [Position((1 << men) - 1, 0, ((1 << men) - 1) << (n - men), 0, 0)], []
    for _ in range(plies):
        legal = search.legal_moves(positions[-1])
        if not len(legal):
            break
        moves.append(legal[rng.integers(len(legal))])
        positions.append(after(search.geo, positions[-1], moves[-1]))
    return positions, moves


def test_king_value_is_the_rules():
    assert nw.KING_VALUE == KING_VALUE


@pytest.mark.parametrize("name", sorted(NETWORKS))
@pytest.mark.parametrize("rules", [AMERICAN6, AMERICAN8], ids=lambda r: r.name)
def test_values_equal_the_jax_evaluator(tmp_path, rules, name):
    path, spec, params = _agent(tmp_path, rules, name)
    positions = _random_positions(rules, POSITIONS, seed=5)
    assert {p.color for p in positions} == {0, 1}
    assert sum(1 for p in positions if p.black_kings or p.white_kings) > POSITIONS // 4
    leaves = nw.load(path)
    compiled = nw.position_values(leaves, geometry(rules), positions)
    expected = _jax_values(rules, spec, params, positions)
    assert np.std(expected) > 0.05  # the values differ between positions
    np.testing.assert_allclose(compiled, expected, rtol=0, atol=1e-5)


@pytest.mark.parametrize("name", ["mlp", "nnue"])
@pytest.mark.parametrize("rules", [AMERICAN6, AMERICAN8], ids=lambda r: r.name)
def test_incremental_first_layer_equals_a_fresh_one(tmp_path, rules, name):
    path, spec, params = _agent(tmp_path, rules, name, seed=1)
    leaves, geo = nw.load(path), geometry(rules)
    for seed in range(3):
        positions, moves = _random_game(rules, 100, seed)
        assert any(int(m[2]) for m in moves)  # captures
        incremental = nw.position_values(leaves, geo, positions, moves)
        fresh = nw.position_values(leaves, geo, positions)
        np.testing.assert_allclose(incremental, fresh, rtol=0, atol=1e-5)
        np.testing.assert_allclose(
            incremental, _jax_values(rules, spec, params, positions), rtol=0, atol=1e-5
        )


def test_search_with_network_leaves_scores_one_move_by_the_network(tmp_path):
    """At depth 1 without quiescence the best score is the best child's ``-(2 v - 1)`` men."""
    rules = AMERICAN8
    path, spec, params = _agent(tmp_path, rules, "nnue")
    search = CompiledSearch(rules, SearchOptions(table_bits=8, quiescence=False), nw.load(path))
    position = _random_game(rules, 12, seed=4)[0][-1]
    legal = search.legal_moves(position)
    children = [after(search.geo, position, row) for row in legal]
    values = _jax_values(rules, spec, params, children)
    result = search.search(position, depth=1)
    assert result.score == pytest.approx(np.max(1 - 2 * values), abs=2e-4)


@pytest.mark.parametrize("name", ["mlp-material", "nnue"])
def test_fixed_depth_scores_equal_jax_alphabeta_with_the_network(tmp_path, name):
    """Plain alpha-beta at depth 3 with network leaves: the JAX search's best score (positions whose
    tree has no multi-jump, so plies and whole moves count alike), to the leaf's rounding (1e-4 men)."""
    rules, depth = AMERICAN8, 3
    path, spec, params = _agent(tmp_path, rules, name, seed=2)
    heuristic = value_heuristic(evaluator.value_fn(spec), params, jax.random.key(0))
    cases = quiet_positions(rules, depth, 6, seed=11)

    def one(p):
        state = from_position(rules, p[0], p[1], p[2], p[3], p[4], p[5], p[6])
        return alphabeta_search(rules, state, depth, heuristic)

    batch = np.array([[p.black_men, p.black_kings, p.white_men, p.white_kings, p.color, ply, q]
                      for p, ply, q in cases], np.int64)  # fmt: skip
    scores, legal = jax.device_get(jax.jit(jax.vmap(one))(jnp.asarray(batch.astype(np.int32))))
    search = CompiledSearch(rules, SMALL_PLAIN, nw.load(path))
    bests = []
    for (pos, ply, quiet), s, ok in zip(cases, scores, legal, strict=True):
        best = float(np.max(np.where(ok, s, -np.inf)))
        result = search.search(pos, depth=depth, ply=ply, quiet=quiet)
        assert result.score == pytest.approx(best, abs=2e-4), (pos, ply, quiet)
        bests.append(best)
    assert len({round(b, 3) for b in bests}) > 2


def test_network_must_fit_the_board_and_the_player_takes_a_file(tmp_path):
    path6, _, _ = _agent(tmp_path, AMERICAN6, "mlp")
    with pytest.raises(ValueError, match="reads 18 squares, the board has 32"):
        CompiledSearch(AMERICAN8, leaves=nw.load(path6))
    path8, _, _ = _agent(tmp_path, AMERICAN8, "nnue")
    player = parse_compiled(f"compiled:500n:{path8}", AMERICAN8)
    assert player.leaves.kind == nw.KIND_NNUE
    assert parse_compiled("compiled:500n", AMERICAN8).leaves.kind == nw.KIND_MATERIAL
    with pytest.raises(ValueError, match="missing.safetensors"):
        parse_compiled(f"compiled:0.1s:{tmp_path / 'missing.safetensors'}", AMERICAN8)
