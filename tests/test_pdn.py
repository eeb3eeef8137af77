"""Tests of PDN game files: the JAX-free text reader and writer (``rules.pdn``), the engine-checked
games (``analysis.pdn_games``), ``match --openings N --save-games FILE.pdn`` and ``show FILE.pdn``."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.analysis import games, pdn_games
from neurocheckers.cli import main
from neurocheckers.match.arena import MatchOptions, paired_opening_starts, run_match
from neurocheckers.players.jax_players import parse_player
from neurocheckers.rules import AMERICAN8, SIMPLE6
from neurocheckers.rules.openings import load_openings, opening_states
from neurocheckers.rules.pdn import PdnGame, read_pdn, write_pdn

# A short American checkers game as checkers programs write it: the seven-tag roster, comments,
# a variation, a NAG and strength marks, a leading zero, a capture written with '-' (PDN 2.0 allows
# it), and White's double jump 25x18x11 in the short form 25x11; Black resigned. Then a second game
# from a set-up position with White to move (range FEN, "1..." numbering), unfinished.
HAND_WRITTEN = """
[Event "Club night"]
[Site "Internet"]
[Date "2024.05.01"]
[Round "3"]
[Black "Smith, A."]
[White "Jones, B."]
[Result "0-1"]
[GameType "21"]
{ An opening that ends in a shot. }
1. 11-15 24-19 2. 15x24 27-20 {recapture} 3. 10-15 (3. 8-11 {the usual move} 28-24) 23-18
4. 09-13! $1 18x11 5. 8x15 22-17* 6. 13x22 25x11 {two for one} 0-1

[Event "Club night"]
[Black "Smith, A."]
[White "Jones, B."]
[Result "*"]
[SetUp "1"]
[FEN "W:W21-32:B1-10,12,15"]
1... 23-19 2. 8-11 22-17 *
"""
HAND_MOVES = ["11-15", "24-19", "15x24", "27x20", "10-15", "23-18", "9-13", "18x11", "8x15", "22-17"]
HAND_MOVES += ["13x22", "25x18x11"]


def test_reading_text_skips_comments_variations_and_numbers():
    parsed = read_pdn(HAND_WRITTEN)
    assert len(parsed) == 2
    first, second = parsed
    assert first.tags["Black"] == "Smith, A." and first.tags["Round"] == "3"
    assert first.moves[:4] == ("11-15", "24-19", "15x24", "27-20") and first.moves[6] == "9-13"
    assert first.moves[-1] == "25x11" and len(first.moves) == 12 and first.result == "0-1"
    assert second.tags["FEN"] == "W:W21-32:B1-10,12,15" and second.moves == ("23-19", "8-11", "22-17")
    assert second.result == "*"


def test_reading_results_games_and_errors():
    text = '1. 11-15 23-19 2-0\n1. 9-14 1-1\n[Event "x \\"y\\""]\n1. 10-14 22-18 ; a note\n0-2\n'
    text += "1. 9-13 ... 22-18"
    parsed = read_pdn(text)
    assert [g.result for g in parsed] == ["1-0", "1/2-1/2", "0-1", "*"]
    assert parsed[2].tags["Event"] == 'x "y"' and parsed[2].moves == ("10-14", "22-18")
    assert parsed[3].moves == ("9-13", "22-18")  # "..." for an unknown move is skipped
    tags = '[Black "a"]\n1. 9-13 *\n[Black "b"]\n1. 10-14 *'
    assert [g.tags["Black"] for g in read_pdn(tags)] == ["a", "b"]
    for bad, message in (
        ("1. 11-15 {open", "game 1: a comment opened"),
        ("1. 11-15 *\n1. 9-13 (22-18 *", "game 2: a variation opened"),
        ("1. 11-15 0-0", "double forfeit"),
        ("1. 11-15 22-18 1-0\n1. a3-b4 *", "game 2: cannot read 'a3-b4 \\*'"),
        ('[Result "1-0"]\n1. 11-15 0-1', "the Result tag says 1-0, the movetext ends in 0-1"),
    ):
        with pytest.raises(ValueError, match=message):
            read_pdn(bad)


def test_writing_numbers_moves_and_wraps_lines():
    game = PdnGame({"Event": 'say "hi"', "FEN": "W:W21:B1"}, ("22-18", "1-5") * 30, "1/2-1/2")
    text = write_pdn([game])
    assert text.startswith('[Event "say \\"hi\\""]\n[FEN "W:W21:B1"]\n\n1... 22-18 2. 1-5 22-18 3. 1-5')
    assert max(len(line) for line in text.splitlines()) <= 80 and text.rstrip().endswith("1/2-1/2")
    assert read_pdn(text) == [game]
    with pytest.raises(ValueError, match="result must be"):
        write_pdn([PdnGame({}, (), "2-0")])


def test_the_text_module_does_not_import_jax():
    code = "import sys, neurocheckers.rules.pdn; sys.exit('jax' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_hand_written_games_read_with_the_engine(tmp_path, capsys):
    path = tmp_path / "club.pdn"
    path.write_text(HAND_WRITTEN)
    loaded = pdn_games.load_game_file(path)
    assert loaded.rules == AMERICAN8 and len(loaded.games) == 2
    first, second = loaded.games
    assert first["moves"] == HAND_MOVES  # the short form and the '-' capture in full notation
    assert first["result"] == "0-1" and first["plies"] == 13  # resigned: the file's result is kept
    assert first["black"] == "Smith, A." and first["event"] == "Club night"
    states, moves = games.replay_game(AMERICAN8, first)
    assert games.result_text(states[-1]) == "*" and len(moves[-1].actions) == 2
    assert second["start_fen"] == "W:W21-32:B1-10,12,15" and second["moves"] == ["23-19", "8-11", "22-17"]
    # Written back, the tags the file had are kept and the moves read the same.
    again = pdn_games.load_pdn(pdn_games.save_pdn(tmp_path / "again.pdn", AMERICAN8, loaded.games))
    assert [g["moves"] for g in again.games] == [first["moves"], second["moves"]]
    assert again.games[0]["tags"]["Date"] == "2024.05.01" and again.games[1]["result"] == "*"
    assert main(["show", str(path), "--game", "2"]) == 0
    assert "Smith, A. (Black) vs Jones, B. (White): 3 moves, *" in capsys.readouterr().out
    assert (tmp_path / "club-game2.gif").exists()


def test_an_illegal_move_names_the_game_and_the_move(tmp_path, capsys):
    path = tmp_path / "bad.pdn"
    path.write_text(HAND_WRITTEN.replace("2. 8-11 22-17", "2. 8-11 22-13"))
    loaded = pdn_games.load_game_file(path)  # the bad game is skipped, the others stay readable
    assert len(loaded.games) == HAND_WRITTEN.count("[Event") - 1
    assert len(loaded.skipped) == 1
    assert re.search(r"bad.pdn: game 2: move 3: illegal move '22-13'; legal moves: ", loaded.skipped[0])
    assert main(["show", str(path), "--out", str(tmp_path / "first.gif")]) == 0
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "warning: skipped" in error and "game 2: move 3" in error
    second_alone = "[Event" + HAND_WRITTEN.split("[Event")[2]
    path.write_text(second_alone.replace("22-17", "22-13"))
    with pytest.raises(ValueError, match=r"game 1: move 3: illegal move '22-13'"):  # no game left
        pdn_games.load_game_file(path)
    path.write_text(HAND_WRITTEN.replace('[Result "0-1"]', '[Result "1-0"]').replace("} 0-1", "} 1-0"))
    assert pdn_games.load_pdn(path).games[0]["result"] == "1-0"  # a result the moves do not settle
    path.write_text('[GameType "20"]\n1. 32-28 *')
    with pytest.raises(ValueError, match="GameType '20' is not American checkers"):
        pdn_games.load_pdn(path)
    path.write_text("1. 11-15 23-19 2. 8-11 22-17 1/2-1/2\n")
    assert pdn_games.load_pdn(path).games[0]["result"] == "1/2-1/2"
    path.write_text('[Variant "american6"]\n1. 5-8 *\n[Variant "american8"]\n1. 11-15 *')
    mixed = pdn_games.load_pdn(path)
    assert len(mixed.games) == 1 and mixed.rules.name == "american6"
    assert "game 2: its rules are american8, an earlier game's american6" in mixed.skipped[0]


def test_a_skipped_game_keeps_the_numbers_after_it(tmp_path, capsys):
    """Game 2 of three is illegal: games 1 and 3 keep their numbers for ``show --game`` and the Games
    page, and game 2 is refused by its number."""
    import warnings

    from neurocheckers.web.app import create_app

    with warnings.catch_warnings():  # Starlette >= 1.0 prefers httpx2 to httpx; both work
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    third = '[Black "Third"]\n[White "Player"]\n1. 9-13 22-18 *\n'
    path = tmp_path / "three.pdn"
    path.write_text(HAND_WRITTEN.replace("2. 8-11 22-17", "2. 8-11 22-13") + "\n" + third)
    loaded = pdn_games.load_game_file(path)
    assert loaded.numbers == (1, 3) and [n for n, _ in loaded.numbered()] == [1, 3]
    assert loaded.game(3)["black"] == "Third" and loaded.game(2) is None and loaded.number_spans() == "1, 3"
    assert "three.pdn: game 2: move 3" in loaded.skipped[0]  # the skipped one by its number
    assert main(["show", str(path), "--game", "3"]) == 0
    assert "Third (Black) vs Player (White): 2 moves, *" in capsys.readouterr().out
    assert (tmp_path / "three-game3.gif").exists()
    assert main(["show", str(path), "--game", "2"]) == 2
    assert "--game must be in 1, 3 for" in capsys.readouterr().err
    client = TestClient(create_app(tmp_path))
    listing = client.get("/api/game-file", params={"path": "three.pdn"}).json()
    assert [(g["number"], g["black"]) for g in listing["games"]] == [(1, "Smith, A."), (3, "Third")]
    view = client.get("/api/game-file/game", params={"path": "three.pdn", "game": "3"}).json()
    assert view["black"] == "Third" and view["moves"] == ["9-13", "22-18"]
    pdn = client.get("/api/game-file/pdn", params={"path": "three.pdn", "game": "3"})
    assert pdn.status_code == 200 and '[Black "Third"]' in pdn.text
    refused = client.get("/api/game-file/game", params={"path": "three.pdn", "game": "2"})
    assert refused.status_code == 400 and refused.json()["error"] == "game must be in 1, 3, got '2'"
    unnumbered = games.GameFile(AMERICAN8, loaded.games)  # a JSON file's games: 1, 2, ...
    assert unnumbered.number_spans() == "1..2" and unnumbered.game(2)["black"] == "Third"


def test_match_games_round_trip_through_pdn(tmp_path):
    """Games of a paired-openings match, written as PDN and read back: the same actions and results.
    simple6 draws at 60 plies in all, so its openings' ply counts must travel with the games."""
    rules = SIMPLE6
    player = parse_player("random", rules)
    openings = opening_states(rules, load_openings(rules, 2))
    options = MatchOptions(4, seed=2, batch=4, keep_actions=4, openings=openings)
    records = run_match(rules, player.policy, None, player.policy, None, options)  # as `match --openings 2`
    starts = paired_opening_starts(openings, jnp.arange(4))
    played = games.games_from_actions(rules, records.actions, "a", "b", starts)
    path = pdn_games.save_game_file(tmp_path / "match.pdn", rules, played, event="round trip")
    text = path.read_text()
    assert f'[GameType "21,B,6,6,N1,0"]\n[Variant "{rules.name}"]\n[SetUp "1"]\n[FEN "' in text
    assert '[Event "round trip"]' in text and '[StartPly "4"]' in text
    loaded = pdn_games.load_game_file(path)
    assert loaded.rules == rules and len(loaded.games) == 4
    for i, game in enumerate(loaded.games):
        _, moves = games.replay_game(rules, game)
        assert [a for m in moves for a in m.actions] == records.actions[i, : records.length[i]].tolist()
        assert game["result"] == games.RESULTS[int(records.result[i])] == played[i]["result"]
        assert game["start_fen"] == played[i]["start_fen"] and game["plies"] == played[i]["plies"]
    assert np.all(records.finished)
    assert {g["result"] for g in loaded.games} - {"1-0", "0-1", "1/2-1/2"} == set()


def test_match_saves_pdn_games_from_openings(tmp_path, capsys):
    saved = tmp_path / "games.pdn"
    args = ["match", "random", "random", "--rules", "american6", "--games", "4", "--batch", "4"]
    assert main([*args, "--openings", "2", "--save-games", str(saved), "--save-count", "3", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["games_file"] == str(saved) and summary["games"] == 4
    loaded = pdn_games.load_game_file(saved)
    assert len(loaded.games) == 3 and loaded.games[0]["event"] == "neurocheckers match random vs random"
    first_fens = [line for line in saved.read_text().splitlines() if line.startswith("[FEN")]
    assert first_fens[0] == first_fens[1] != first_fens[2]  # games 0 and 1 share opening 0

    later = tmp_path / "later.pdn"  # part of a longer match: openings 1 and 2, pooled later
    assert main([*args, "--openings", "2", "--first-opening", "1", "--save-games", str(later), "--json"]) == 0
    part = json.loads(capsys.readouterr().out)
    assert (part["first_opening"], part["openings"]) == (1, 2) and summary["first_opening"] == 0
    later_fens = [line for line in later.read_text().splitlines() if line.startswith("[FEN")]
    assert later_fens[0] == later_fens[1] == first_fens[2] != later_fens[2]
    assert main([*args, "--openings", "0"]) == 2
    assert "--openings must be in 1.." in capsys.readouterr().err
    assert main([*args, "--first-opening", "1"]) == 2
    assert "--first-opening 1 needs --openings" in capsys.readouterr().err
    assert main([*args, "--openings", "2", "--first-opening", "100000"]) == 2
    assert "--first-opening must be in 0.." in capsys.readouterr().err
