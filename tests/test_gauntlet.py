"""The gauntlet: paired openings, score intervals, Elo with errors, the rated ladder."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from neurocheckers.analysis.gauntlet import (
    GauntletConfig,
    GauntletResult,
    Row,
    agent_file_of,
    format_gauntlet,
    gauntlet_openings,
    pairings,
    play_row,
    rate,
    read_gauntlet,
    run_gauntlet,
    write_gauntlet,
)
from neurocheckers.analysis.gauntlet_merge import merge_gauntlets
from neurocheckers.match.arena import MatchOptions, run_match
from neurocheckers.players.jax_players import parse_player
from neurocheckers.rules import AMERICAN6, SIMPLE6, get_rules
from neurocheckers.rules.notation import to_fen
from neurocheckers.rules.openings import (
    load_openings,
    make_openings,
    opening_states,
    read_openings,
)
from neurocheckers.stats import elo_standard_errors, fit_elo, paired_interval

sys.path.insert(0, str(Path(__file__).resolve().parent))
from networks import material_network  # noqa: E402


def test_paired_interval_of_a_tiny_match():
    # Four openings: win+win, win+draw, draw+loss, draw+draw -> pair means 1, .75, .25, .5.
    scores = np.array([1, 1, 1, 0.5, 0.5, 0, 0.5, 0.5])
    mean, low, high = paired_interval(scores)
    assert mean == pytest.approx(0.625)
    padded = np.array([1, 0.75, 0.25, 0.5, 0.0, 1.0])
    half = 1.96 * np.sqrt(padded.var(ddof=1) / 4)
    assert (low, high) == pytest.approx((0.625 - half, min(1.0, 0.625 + half)))


def test_paired_interval_has_width_when_every_game_is_won():
    mean, low, high = paired_interval(np.ones(200))
    assert mean == 1.0 and high == 1.0
    assert 0.9 < low < 1.0


def test_paired_interval_rejects_odd_games():
    with pytest.raises(ValueError, match="even"):
        paired_interval(np.ones(3))


def test_elo_fit_recovers_a_known_gap_and_its_error():
    # 76% against the anchor over 400 games: Elo gap 400 log10(0.76 / 0.24) ~ 200.
    points = np.array([[0.0, 96.0], [304.0, 0.0]])
    games = np.array([[0.0, 400.0], [400.0, 0.0]])
    scores = points / np.where(games > 0, games, 1)
    elo = fit_elo(scores, games, prior=0.0)
    se = elo_standard_errors(scores, games, elo, prior=0.0)
    assert elo[0] == 0.0
    assert elo[1] == pytest.approx(400 * np.log10(0.76 / 0.24), abs=1e-6)
    # Fisher information of n games at p: n p (1 - p) per natural-log unit squared.
    expected_se = 400 / np.log(10) / np.sqrt(400 * 0.76 * 0.24)
    assert se[1] == pytest.approx(expected_se, rel=1e-6)


def test_elo_fit_over_a_chain_and_a_perfect_score():
    # A chain anchor - b - c where c beat b in every game: finite thanks to the prior, and above b.
    points = np.array([[0, 40, 0], [60, 0, 0], [0, 100, 0.0]])
    games = np.array([[0, 100, 0], [100, 0, 100], [0, 100, 0.0]])
    scores = points / np.where(games > 0, games, 1)
    elo = fit_elo(scores, games)
    se = elo_standard_errors(scores, games, elo)
    assert 0 < elo[1] < elo[2] < np.inf
    assert se[2] > se[1] > 0


def test_elo_fit_needs_every_player_linked_to_the_anchor():
    games = np.array([[0, 10, 0], [10, 0, 0], [0, 0, 0.0]])
    with pytest.raises(ValueError, match="linked"):
        fit_elo(np.full((3, 3), 0.5), games)


def test_committed_openings_are_distinct_valid_positions():
    for name in ("simple6", "american6", "american8"):
        rules = get_rules(name)
        openings = load_openings(rules)
        assert len(openings) >= 200
        fens = [fen for fen, _, _ in openings]
        assert len(set(fens)) == len(fens)
        states = opening_states(rules, openings[:5])
        assert not np.any(np.asarray(states.terminated))
        assert [to_fen(jax.tree.map(lambda x, i=i: x[i], states)) for i in range(5)] == fens[:5]


def test_make_openings_is_seeded_and_distinct():
    first = make_openings(SIMPLE6, 6, turns=2, seed=3)
    assert first == make_openings(SIMPLE6, 6, turns=2, seed=3)
    assert len(set(first)) == len(first) == 6
    assert read_openings(SIMPLE6, "\n".join(["# comment"] + first))[0][0] == first[0].split()[0]


def test_bad_opening_lines_and_counts_are_refused():
    with pytest.raises(ValueError, match="line 1"):
        read_openings(SIMPLE6, "B:W13:B1 x y")
    with pytest.raises(ValueError, match="--openings"):
        load_openings(SIMPLE6, 100_000)


def test_paired_openings_give_each_colour_once_per_opening():
    openings = load_openings(SIMPLE6, 3)
    starts = opening_states(SIMPLE6, openings)
    player = parse_player("random", SIMPLE6)
    options = MatchOptions(6, seed=1, batch=4, keep_actions=6, openings=starts)
    records = run_match(SIMPLE6, player.policy, None, player.policy, None, options)
    assert records.a_is_black.tolist() == [True, False] * 3
    # Both games of a pair start from the same position: their first actions are legal there.
    for game in range(6):
        start = jax.tree.map(lambda x, g=game: x[g // 2], starts)
        assert bool(np.asarray(start.legal_action_mask)[records.actions[game, 0]])


def test_pairings_cover_ladder_equal_depth_and_calibration():
    config = GauntletConfig(openings=2, depth=2, equal_depths=(1, 3))
    rows = pairings("mcts:a.safetensors:8", config)
    kinds = [k for k, _, _ in rows]
    assert kinds.count("ladder") == 4  # random, greedy-material, alphabeta:1, alphabeta:2
    assert ("equal-depth", "alphabeta:3:a.safetensors", "alphabeta:3") in rows
    calibration = [(a, b) for k, a, b in rows if k == "calibration"]
    assert calibration == [
        ("greedy-material", "random"),
        ("alphabeta:1", "greedy-material"),
        ("alphabeta:2", "alphabeta:1"),
        ("alphabeta:3", "alphabeta:2"),
    ]
    assert agent_file_of("alphabeta:2:x.safetensors") == "x.safetensors"
    assert agent_file_of("random") is None


def test_the_american8_ladder_has_the_engines_and_an_equal_time_player():
    config = GauntletConfig(
        openings=2, equal_depths=(1, 2, 3, 4), heuristic_depths=(2, 3, 4), ladder="american8", equal_time=True
    )
    rows = pairings("alphabeta:2:a.safetensors", config)
    ladder = {(a, b) for k, a, b in rows if k == "ladder"}
    for opponent in ("random", "alphabeta:6", "alphabeta:2:heuristic", "openspiel:mcts:1000", "pydraughts:8"):
        assert ("compiled:equal:a.safetensors", opponent) in ladder  # the compiled search on 8x8
    equal_depth = {(a, b) for k, a, b in rows if k == "equal-depth"}
    assert ("alphabeta:4:a.safetensors", "alphabeta:4") in equal_depth
    assert ("alphabeta:2:a.safetensors", "alphabeta:2:heuristic") in equal_depth
    assert ("calibration", "alphabeta:6:heuristic", "alphabeta:6") in rows
    only = pairings("alphabeta:2:a.safetensors", dataclasses.replace(config, only=("pydraughts:6",)))
    assert only == [("ladder", "compiled:equal:a.safetensors", "pydraughts:6")]
    # Built-in evaluations are not agent files.
    assert agent_file_of("alphabeta:2:heuristic") is None and agent_file_of("timed:1s:material") is None
    assert agent_file_of("timed:equal:x.safetensors") == "x.safetensors"


def test_darkhorse_tops_the_american8_ladder_where_it_is_built(tmp_path, monkeypatch):
    config = GauntletConfig(openings=2, ladder="american8", equal_time=True)
    driver = tmp_path / "darkhorse"
    monkeypatch.setenv("NEUROCHECKERS_DARKHORSE", str(driver))  # not there yet
    assert "darkhorse:0.1" not in {b for _, _, b in pairings("alphabeta:2:a.safetensors", config)}
    driver.write_text("#!/bin/sh\n")
    driver.chmod(0o755)
    rows = pairings("alphabeta:2:a.safetensors", config)
    assert ("ladder", "compiled:equal:a.safetensors", "darkhorse:0.1") in rows


def test_a_timed_row_gives_both_sides_time_per_move(tmp_path):
    """The equal-time player against our batched player moves one game at a time, and both sides'
    seconds per move are reported; the gauntlet's row plays from the committed openings."""
    config = GauntletConfig(openings=1, batch=2, max_plies=12)
    starts = opening_states(AMERICAN6, load_openings(AMERICAN6, 1))
    row = play_row(AMERICAN6, "ladder", "timed:equal:material", "alphabeta:1", starts, config)
    assert row.games == 2 and row.wins + row.draws + row.losses == 2
    assert row.player_seconds > 0 and row.opponent_seconds > 0
    result = GauntletResult("american6", "x", config, (row,), rate([row]))
    assert "s/move" in format_gauntlet(result)
    # Parts played apart are read back and merged into one gauntlet, rated over all rows.
    write_gauntlet(result, tmp_path / "a")
    part = read_gauntlet(tmp_path / "a" / "gauntlet.json")
    assert part.rows == result.rows and part.config == config
    other = dataclasses.replace(row, opponent="random", score=0.75)
    merged = merge_gauntlets([part, dataclasses.replace(result, rows=(other,))])
    assert merged.rows == (row, other) and {r.player for r in merged.ratings} == {
        "timed:equal:material",
        "alphabeta:1",
        "random",
    }
    with pytest.raises(ValueError, match="not a gauntlet"):
        read_gauntlet(tmp_path / "a" / "gauntlet.csv")


def part_of_a_row(first_opening: int, games: list[float], seconds: float) -> GauntletResult:
    """A one-row gauntlet part: the match ``timed:equal:a`` vs ``pydraughts:6`` from
    ``first_opening`` on, with these game scores (pairs in order)."""
    scores = np.asarray(games)
    mean, low, high = paired_interval(scores)
    row = Row(
        "ladder", "timed:equal:a", "pydraughts:6", len(games), int((scores == 1).sum()),
        int((scores == 0.5).sum()), int((scores == 0).sum()), 0, mean, low, high, seconds, 2 * seconds,
        tuple(float(p) for p in scores.reshape(-1, 2).mean(axis=1)),
    )  # fmt: skip
    config = GauntletConfig(openings=len(games) // 2, first_opening=first_opening, only=("pydraughts:6",))
    return GauntletResult("american8", "a", config, (row,), ())


def test_parts_of_a_row_over_other_openings_pool_into_one():
    """Two processes playing openings 0-1 and 2-4 of one row merge into the row of all five openings:
    counts summed, the paired interval over the five pairs, seconds weighted by games."""
    first, second = [1, 0.5, 1, 1], [0.5, 0.5, 0, 1, 1, 1]
    merged = merge_gauntlets([part_of_a_row(0, first, 0.1), part_of_a_row(2, second, 0.4)])
    (row,) = merged.rows
    assert (row.games, row.wins, row.draws, row.losses) == (10, 6, 3, 1)
    assert (row.score, row.low, row.high) == pytest.approx(paired_interval(np.asarray(first + second)))
    assert row.player_seconds == pytest.approx((0.1 * 4 + 0.4 * 6) / 10)
    assert len(row.pair_points) == 5 and merged.config.first_opening == 0
    with pytest.raises(ValueError, match="overlap"):
        merge_gauntlets([part_of_a_row(0, first, 0.1), part_of_a_row(1, second, 0.4)])
    legacy = part_of_a_row(2, second, 0.4)
    legacy = dataclasses.replace(legacy, rows=(dataclasses.replace(legacy.rows[0], pair_points=()),))
    with pytest.raises(ValueError, match="no pair points"):
        merge_gauntlets([part_of_a_row(0, first, 0.1), legacy])


def test_first_opening_picks_a_range_of_the_committed_openings(tmp_path):
    rules = get_rules("american8")
    assert gauntlet_openings(rules, GauntletConfig(openings=2, first_opening=3)) == load_openings(rules)[3:5]
    total = len(load_openings(rules))
    with pytest.raises(ValueError, match=f"more than the {total} committed openings"):
        gauntlet_openings(rules, GauntletConfig(openings=2, first_opening=total - 1))
    write_gauntlet(part_of_a_row(0, [1, 0.5], 0.1), tmp_path)
    assert read_gauntlet(tmp_path / "gauntlet.json").rows[0].pair_points == (0.75,)


def test_rows_not_linked_to_random_are_kept_unrated():
    """A part of a gauntlet (equal-depth rows only) has no link to random: no rating, no error."""
    row = Row("equal-depth", "alphabeta:2:a", "alphabeta:2", 10, 5, 0, 5, 0, 0.5, 0.2, 0.8)
    other = dataclasses.replace(row, player="alphabeta:3:a", opponent="alphabeta:3")
    ratings = rate([row, other])
    assert {r.player for r in ratings} == {"alphabeta:2:a", "alphabeta:2"}
    anchored = dataclasses.replace(row, player="alphabeta:1", opponent="random")
    assert {r.player for r in rate([row, anchored])} == {"alphabeta:1", "random"}


def test_a_small_gauntlet_rates_alphabeta_above_random(tmp_path):
    config = GauntletConfig(openings=4, depth=1, equal_depths=(), batch=8)
    result = run_gauntlet(SIMPLE6, "alphabeta:2", config)
    by_opponent = {r.opponent: r for r in result.rows if r.kind == "ladder"}
    assert by_opponent["random"].games == 8
    assert by_opponent["random"].score > 0.5
    for row in result.rows:
        assert row.wins + row.draws + row.losses == row.games
        assert row.low <= row.score <= row.high
    assert result.rating_of("random").elo == 0.0
    assert result.rating_of("alphabeta:2").elo > 0
    files = write_gauntlet(result, tmp_path)
    data = json.loads(files["gauntlet.json"].read_text())
    assert data["player"] == "alphabeta:2" and len(data["rows"]) == len(result.rows)
    assert files["gauntlet.png"].stat().st_size > 0


def test_alphabeta_with_a_material_shaped_network_plays_like_alphabeta(tmp_path):
    depth = 2  # the network at every leaf of a two-ply tree (a depth-1 case added a compile, not a case)
    from neurocheckers.networks.agent_file import save_agent
    from neurocheckers.networks.evaluator import EvaluatorSpec

    spec = EvaluatorSpec.for_rules(SIMPLE6, layers=2, width=4)
    path = tmp_path / "material.safetensors"
    save_agent(path, SIMPLE6, spec, material_network(spec))
    network = parse_player(f"alphabeta:{depth}:{path}", SIMPLE6)
    material = parse_player(f"alphabeta:{depth}", SIMPLE6)
    starts = opening_states(SIMPLE6, load_openings(SIMPLE6, 24))
    keys = jax.random.split(jax.random.key(7), 24)

    def act(params, states, keys_, policy):
        return jax.vmap(policy, in_axes=(None, 0, 0))(params, states, keys_)

    by_network = act(network.params, starts, keys, network.policy)
    by_material = act(None, starts, keys, material.policy)
    np.testing.assert_array_equal(np.asarray(by_network), np.asarray(by_material))
    # The same net at the leaves of a whole match gives the same games as the material count.
    options = MatchOptions(8, seed=2, openings=starts)
    a = run_match(SIMPLE6, network.policy, network.params, material.policy, None, options)
    b = run_match(SIMPLE6, material.policy, None, material.policy, None, options)
    np.testing.assert_array_equal(a.score, b.score)


def test_gauntlet_command_writes_its_files_and_refuses_bad_input(tmp_path, capsys):
    from neurocheckers.cli import main
    from neurocheckers.networks.agent_file import save_agent
    from neurocheckers.networks.evaluator import EvaluatorSpec

    spec = EvaluatorSpec.for_rules(SIMPLE6, layers=2, width=4)
    agent = tmp_path / "material.safetensors"
    save_agent(agent, SIMPLE6, spec, material_network(spec))
    out = tmp_path / "g"
    args = ["gauntlet", str(agent), "--openings", "2", "--depth", "1", "--equal-depths", "1"]
    assert main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "equal-depth" in printed and "ratings" in printed
    rows = json.loads((out / "gauntlet.json").read_text())["rows"]
    assert {r["kind"] for r in rows} == {"ladder", "equal-depth", "calibration"}
    assert (out / "gauntlet.csv").read_text().startswith("kind,player,opponent,games")
    assert main([*args, "--equal-depths", "one"]) == 2
    assert "--equal-depths" in capsys.readouterr().err
    assert main(["gauntlet", "random", "--openings", "0"]) == 2
    assert "openings" in capsys.readouterr().err
