"""Tests of OpenSpiel's bots as opponents (``match.host``): specs, the host-side match loop (every move
legal in both engines, colours balanced, paired openings), ``match`` and the gauntlet's rows."""

from __future__ import annotations

import importlib

import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("pyspiel")

from neurocheckers.analysis.games import RESULTS, games_from_actions  # noqa: E402
from neurocheckers.analysis.gauntlet import GauntletConfig, play_row  # noqa: E402
from neurocheckers.analysis.pdn_games import load_game_file  # noqa: E402
from neurocheckers.cli import main  # noqa: E402
from neurocheckers.match import host as engines  # noqa: E402
from neurocheckers.match.arena import MatchOptions, paired_opening_starts  # noqa: E402
from neurocheckers.players import openspiel  # noqa: E402
from neurocheckers.players.policies import Player  # noqa: E402
from neurocheckers.players.timed import EQUAL_TIME_SHARE  # noqa: E402
from neurocheckers.rules import AMERICAN6, AMERICAN8, SIMPLE6  # noqa: E402
from neurocheckers.rules.notation import parse_fen  # noqa: E402
from neurocheckers.rules.openings import load_openings, opening_states  # noqa: E402
from neurocheckers.rules.openspiel_actions import position_of  # noqa: E402


def test_specs_and_their_errors(monkeypatch):
    bot = engines.parse_any_player("openspiel:mcts:100", AMERICAN8)
    assert bot == openspiel.EngineBot("openspiel:mcts:100", "mcts", 100)
    assert isinstance(engines.parse_any_player("random", AMERICAN8), Player)
    for preset in (SIMPLE6, AMERICAN6):
        with pytest.raises(ValueError, match=f"american8 only; got --rules {preset.name}"):
            openspiel.parse_engine("openspiel:alphabeta:2", preset)
    for bad in ("openspiel:mcts:0", "openspiel:alphabeta:x", "openspiel:gnu:3", "openspiel:mcts"):
        with pytest.raises(ValueError, match="bad player spec"):
            openspiel.parse_engine(bad, AMERICAN8)
    real = importlib.import_module

    def without_openspiel(name, *args):
        if name == "pyspiel":
            raise ImportError(name)
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", without_openspiel)
    with pytest.raises(ValueError, match=r'OpenSpiel players need OpenSpiel: pip install -e "\.\[engines\]"'):
        openspiel.parse_engine("openspiel:mcts:10", AMERICAN8)


def test_material_counts_the_pieces_of_each_side():
    pyspiel, _, _ = openspiel.openspiel_modules()
    state = pyspiel.load_game("checkers").new_initial_state()
    captures = 0
    while not state.is_terminal() and captures < 3:
        position = position_of(state)
        black = len(position["black_men"]) + 1.5 * len(position["black_kings"])
        white = len(position["white_men"]) + 1.5 * len(position["white_kings"])
        value = openspiel.material_for(0)(state)
        assert value == -openspiel.material_for(1)(state) == pytest.approx((black - white) / 19.0)
        action = state.legal_actions()[-1]
        captures += action % 2
        state.apply_action(action)
    assert captures == 3


def test_opening_path_reaches_the_opening():
    pyspiel, _, _ = openspiel.openspiel_modules()
    game = pyspiel.load_game("checkers")
    fen, ply, quiet = load_openings(AMERICAN8, 1)[0]
    path = openspiel.opening_path(game, parse_fen(AMERICAN8, fen, ply, quiet))
    assert len(path) == ply == 4
    with pytest.raises(ValueError, match="no sequence of 4 actions"):
        openspiel.opening_path(game, parse_fen(AMERICAN8, "B:W21-32:B1-12", 4, 0))


def test_a_tiny_match_against_openspiel_is_legal_and_balanced():
    openings = opening_states(AMERICAN8, load_openings(AMERICAN8, 2))
    a = engines.parse_any_player("random", AMERICAN8)
    b = engines.parse_any_player("openspiel:alphabeta:1", AMERICAN8)
    seen = []
    options = MatchOptions(4, seed=1, keep_actions=4, openings=openings)
    records = engines.play_any_match(AMERICAN8, a, b, options, on_progress=lambda d, n: seen.append(d))
    assert records.a_is_black.tolist() == [True, False, True, False] and seen[-1] == 4
    assert np.all(records.finished) and records.actions.shape[0] == 4
    assert np.array_equal(
        records.score, np.where(records.a_is_black, 0.5 + 0.5 * records.result, 0.5 - 0.5 * records.result)
    )
    # Replaying the recorded actions in our engine from the paired openings gives the same results.
    starts = paired_opening_starts(openings, jnp.arange(4))
    played = games_from_actions(AMERICAN8, records.actions, "a", "b", starts)
    assert played[0]["start_fen"] == played[1]["start_fen"] != played[2]["start_fen"]
    assert [g["result"] for g in played] == [RESULTS[int(r)] for r in records.result]
    # OpenSpiel's MCTS plays too, as A (Black in game 0).
    mcts = engines.play_any_match(
        AMERICAN8, engines.parse_any_player("openspiel:mcts:4", AMERICAN8), a, MatchOptions(1)
    )
    assert mcts.a_is_black.tolist() == [True] and bool(mcts.finished[0])


def test_py_draughts_and_the_timed_search_play_in_the_host_loop():
    """pydraughts:1 against the timed search (a node budget) from the committed openings: every move
    legal (checked by both adapters), results by our rules, both sides timed."""
    openings = opening_states(AMERICAN8, load_openings(AMERICAN8, 1))
    a = engines.parse_any_player("timed:300n:material", AMERICAN8)
    b = engines.parse_any_player("pydraughts:1", AMERICAN8)
    clock = engines.MoveClock()
    options = MatchOptions(2, seed=0, max_plies=60, openings=openings)
    records = engines.play_any_match(AMERICAN8, a, b, options, clock=clock)
    assert records.a_is_black.tolist() == [True, False]
    assert clock.moves[True] > 0 and clock.moves[False] > 0
    assert clock.per_move(True) > 0 and clock.per_move(False) > 0
    again = engines.play_any_match(AMERICAN8, a, b, options)
    assert np.array_equal(again.score, records.score) and np.array_equal(again.length, records.length)


def test_match_and_gauntlet_rows_accept_openspiel(capsys, tmp_path):
    assert main(["match", "random", "openspiel:mcts:10", "--rules", "simple6", "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "american8 only" in err
    args = ["match", "openspiel:alphabeta:1", "random", "--rules", "american8", "--games", "2", "--json"]
    args += ["--max-plies", "30"]
    saved = tmp_path / "games.pdn"
    assert main([*args, "--save-games", str(saved)]) == 0
    out = capsys.readouterr().out
    # Played under OpenSpiel's draw rule, and named so in the summary and in the saved games.
    assert '"player_a": "openspiel:alphabeta:1"' in out and '"rules": "american8-openspiel"' in out
    assert load_game_file(saved).rules.name == "american8-openspiel"
    starts = opening_states(AMERICAN8, load_openings(AMERICAN8, 1))
    config = GauntletConfig(openings=1, max_plies=30)
    row = play_row(AMERICAN8, "ladder", "openspiel:alphabeta:1", "random", starts, config)
    assert row.games == 2 and row.wins + row.draws + row.losses == 2 and row.unfinished <= 2


def test_the_equal_time_bank_is_spread_over_moves():
    """The equal-time allowance is the nominal share (95% of the opponent's mean) plus a quarter of
    the bank's surplus or debt, within 0.25 and 3 times the share: one long move is paid back over
    several, never by a move with no time, and a surplus is not spent on one move."""
    clock = engines.MoveClock()
    assert clock.allowance(True) is None
    clock.add(False, 1.0, 10)  # the opponent: 0.1 s a move
    share = EQUAL_TIME_SHARE * 0.1
    assert clock.allowance(True) == pytest.approx(share)
    clock.add(True, 2.0, 1)  # one move far over its share
    assert clock.allowance(True) == pytest.approx(0.25 * share)
    clock = engines.MoveClock()
    clock.add(False, 1.0, 10)
    clock.add(True, 0.0, 40)  # forty moves played at once: a surplus of 40 shares
    assert clock.allowance(True) == pytest.approx(3 * share)
    for spent, expected in ((2 * share, share), (0.0, share + 2 * share / 4)):
        clock = engines.MoveClock()
        clock.add(False, 1.0, 10)
        clock.add(True, spent, 2)  # two moves: each its share (nothing banked), or none (two banked)
        assert clock.allowance(True) == pytest.approx(expected)
