"""Positions scored by a deeper search (``learners.search_targets``): the NumPy encoding is the JAX
evaluator's; scoring games keep only quiet positions, each with a value in [0, 1] and its game's
result seen by the mover, the same for the same seed; the targets, the split by games and the saved
files; fitting lowers the error; the script scores and fits end to end on 6x6."""

from __future__ import annotations

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from running_scripts import script
from test_compiled_network import _agent, _random_positions

from neurocheckers.compiled import network as nw
from neurocheckers.compiled.board import Position, game_rule, geometry
from neurocheckers.compiled.game import legal_rows
from neurocheckers.learners import search_targets as st
from neurocheckers.networks import agent_file, evaluator
from neurocheckers.rules.engine import from_position
from neurocheckers.rules.presets import AMERICAN6, AMERICAN8

SMALL = st.ScoringSettings(depth=2, opening_turns=4, exploration=0.2, max_turns=60)


@pytest.fixture(scope="module")
def nnue6(tmp_path_factory):
    """(agent path, spec, params) of a random NNUE network on 6x6."""
    return _agent(tmp_path_factory.mktemp("nnue6"), AMERICAN6, "nnue")


@pytest.fixture(scope="module")
def scored6(nnue6) -> st.ScoredPositions:
    return st.score_games(AMERICAN6, nw.load(nnue6[0]), 6, SMALL, seed=3)


@pytest.mark.parametrize("rules", [AMERICAN6, AMERICAN8], ids=lambda r: r.name)
def test_encoding_is_the_jax_evaluators(rules):
    positions = _random_positions(rules, 60, seed=2)
    boards = np.array([[p.black_men, p.black_kings, p.white_men, p.white_kings, p.color] for p in positions])
    expected = jax.jit(jax.vmap(lambda r: evaluator.encode(rules, from_position(rules, *r))))(
        jnp.asarray(boards, jnp.int32)
    )
    np.testing.assert_array_equal(st.encode_boards(rules, boards), np.asarray(expected))


def test_scored_games_keep_quiet_positions_with_values_and_results(scored6):
    geo = geometry(game_rule(AMERICAN6))
    assert len(scored6) > 50 and set(np.unique(scored6.games)) == set(range(6))
    for row in scored6.boards:
        assert not np.any(legal_rows(geo, Position(*(int(x) for x in row)))[:, 2])  # no capture
    assert np.all((scored6.values >= 0) & (scored6.values <= 1)) and np.std(scored6.values) > 0.01
    for game in range(6):
        rows = scored6.games == game
        colors, outcomes = scored6.boards[rows, 4], scored6.outcomes[rows]
        black = outcomes[colors == 0]
        white = outcomes[colors == 1]
        assert len(set(black.tolist())) <= 1 and len(set(white.tolist())) <= 1
        if len(black) and len(white):
            assert black[0] + white[0] == 1.0  # one game's result, seen by each side


def test_scoring_is_reproducible_and_depends_on_the_seed(nnue6, scored6):
    again = st.score_games(AMERICAN6, nw.load(nnue6[0]), 6, SMALL, seed=3)
    np.testing.assert_array_equal(again.boards, scored6.boards)
    np.testing.assert_array_equal(again.values, scored6.values)
    other = st.score_games(AMERICAN6, nw.load(nnue6[0]), 6, SMALL, seed=4)
    assert len(other) != len(scored6) or not np.array_equal(other.boards, scored6.boards)


def test_search_values_map_scores_to_chances():
    assert st.search_value(0.0) == 0.5 and st.search_value(0.5) == 0.75
    assert st.search_value(999.0) == 1.0 and st.search_value(-999.0) == 0.0
    assert st.search_value(3.0) == 1.0  # material beyond the network's range is clipped


def test_targets_split_and_files(scored6, tmp_path):
    targets = st.blend_targets(scored6, 0.25)
    np.testing.assert_allclose(targets, 0.75 * scored6.values + 0.25 * scored6.outcomes, atol=1e-6)
    with pytest.raises(ValueError, match="outcome_weight"):
        st.blend_targets(scored6, 1.5)
    train, held = st.split_by_games(scored6, 0.34, seed=1)
    assert len(train) + len(held) == len(scored6) and not set(train) & set(held)
    assert not set(scored6.games[train]) & set(scored6.games[held]) and len(set(scored6.games[held])) == 2
    path = tmp_path / "s.npz"
    scored6.save(path, depth="2")
    loaded = st.ScoredPositions.load(path)
    np.testing.assert_array_equal(loaded.boards, scored6.boards)
    joined = st.ScoredPositions.join([scored6, loaded])
    assert len(joined) == 2 * len(scored6) and len(np.unique(joined.games)) == 12
    (tmp_path / "bad.npz").write_bytes(b"not a file")
    with pytest.raises(ValueError, match="bad.npz"):
        st.ScoredPositions.load(tmp_path / "bad.npz")


def test_fit_lowers_the_error(nnue6, scored6):
    _, spec, params = nnue6
    obs = st.encode_boards(AMERICAN6, scored6.boards)
    targets = st.blend_targets(scored6, 0.5)
    before = st.mean_squared_error(spec, params, obs, targets)
    fitted, losses = st.fit(spec, params, obs, targets, steps=60, batch_size=64, learning_rate=3e-3,
                            key=jax.random.key(0))  # fmt: skip
    assert losses.shape == (60,)
    assert st.mean_squared_error(spec, fitted, obs, targets) < 0.7 * before


def test_script_scores_and_fits(nnue6, tmp_path):
    path = nnue6[0]
    out = script("search_targets.py", "score", str(path), "--games", "3", "--depth", "2",
                 "--out", str(tmp_path / "a.npz"), "--report-every", "1")  # fmt: skip
    assert "3 games" in out
    # One Adam step per 10 positions (scripts/nnue_recipe.sh's way of sizing the fit).
    fitted = str(tmp_path / "fit.safetensors")
    script("search_targets.py", "fit", str(path), str(tmp_path / "a.npz"), "--positions-per-step", "10",
           "--batch-size", "32", "--held-out", "0.34", "--out", fitted)  # fmt: skip
    figures = json.loads((tmp_path / "fit.json").read_text())
    assert figures["held_out"] > 0 and figures["after"]["train"] >= 0
    agent = agent_file.load_agent(tmp_path / "fit.safetensors")
    assert figures["positions"] >= 20 and agent.metadata["steps"] == str(figures["positions"] // 10)
    assert agent.spec.architecture == "nnue"


def test_keep_captures_adds_the_positions_where_the_mover_must_capture(nnue6, scored6):
    settings = dataclasses.replace(SMALL, keep_captures=True)
    every = st.score_games(AMERICAN6, nw.load(nnue6[0]), 6, settings, seed=3)
    geo = geometry(game_rule(AMERICAN6))
    captures = [np.any(legal_rows(geo, Position(*(int(x) for x in row)))[:, 2]) for row in every.boards]
    assert any(captures) and len(every) == len(scored6) + sum(captures)
    quiet = every.boards[~np.array(captures)]
    np.testing.assert_array_equal(quiet, scored6.boards)  # the same games: the quiet ones are unchanged
