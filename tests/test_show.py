"""Tests of game files (``analysis.games``), board drawings (``analysis.board_plot``), ``match
--save-games`` and ``show``."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest
from PIL import Image

from neurocheckers.analysis import board_plot, games
from neurocheckers.cli import main
from neurocheckers.match.arena import play_match
from neurocheckers.players.jax_players import parse_player
from neurocheckers.rules import AMERICAN6, SIMPLE6, init
from neurocheckers.rules.notation import apply_move, legal_moves


@pytest.fixture(scope="module")
def american_games():
    """12 random-vs-greedy games on american6 (forced multi-jumps), with their records."""
    a, b = parse_player("random", AMERICAN6), parse_player("greedy-material", AMERICAN6)
    records = jax.device_get(
        play_match(
            AMERICAN6,
            a.policy,
            a.params,
            b.policy,
            b.params,
            jax.random.key(3),
            12,
            120,
            2,
            record_actions=True,
        )
    )
    black = ["random" if x else "greedy-material" for x in records.a_is_black]
    white = ["greedy-material" if x else "random" for x in records.a_is_black]
    return records, games.games_from_actions(AMERICAN6, records.actions, black, white)


def test_actions_are_recorded_only_when_asked():
    a = parse_player("random", SIMPLE6)
    plain = play_match(SIMPLE6, a.policy, None, a.policy, None, jax.random.key(0), 4, 30)
    assert plain.actions.shape == (4, 0)


def test_games_from_actions_match_the_records(american_games):
    records, played = american_games
    assert len(played) == 12
    for i, game in enumerate(played):
        assert game["plies"] == int(records.length[i])
        assert np.all(records.actions[i, game["plies"] :] == -1)
        expected = games.RESULTS[int(records.result[i])] if records.finished[i] else "*"
        assert game["result"] == expected
        assert game["black"] == ("random" if records.a_is_black[i] else "greedy-material")
        # Replaying the notation gives the recorded actions, multi-jumps grouped into one move.
        states, moves = games.replay_game(AMERICAN6, game)
        assert [a for m in moves for a in m.actions] == records.actions[i, : game["plies"]].tolist()
        assert games.result_text(states[-1]) == game["result"]
    assert any(m.count("x") >= 2 for g in played for m in g["moves"]), "expected a multi-jump"


def test_save_and_load_round_trip(american_games, tmp_path):
    _, played = american_games
    path = games.save_games(tmp_path / "g.json", AMERICAN6, played)
    document = json.loads(path.read_text())
    assert document["format"] == "neurocheckers-games" and document["version"] == 1
    assert document["rules"] == "american6"
    loaded = games.load_games(path)
    assert loaded.rules == AMERICAN6 and list(loaded.games) == played


def _write(path, document) -> str:
    path.write_text(json.dumps(document))
    return str(path)


def test_load_refuses_bad_files(american_games, tmp_path):
    _, played = american_games
    game = played[0]
    good = {"format": "neurocheckers-games", "version": 1, "rules": "american6", "games": [game]}
    cases = [
        ({**good, "format": "pgn"}, "'format' is 'pgn'"),
        ({**good, "version": 7}, "version 7 is not supported"),
        ({**good, "rules": "chess"}, "unknown rules preset 'chess'"),
        (
            {**good, "games": [{**game, "moves": game["moves"][:2] + ["1-2"]}]},
            "game 1: move 3: illegal move '1-2'",
        ),
        ({**good, "games": [{**game, "moves": ["hello"]}]}, "game 1: move 1: malformed move 'hello'"),
        ({**good, "games": [{**game, "result": "2-0"}]}, "'result' must be one of"),
        ({**good, "games": [{**game, "plies": 1}]}, "'plies' is 1, but the moves take"),
        ({**good, "games": [{**game, "moves": game["moves"][:3], "plies": 3}]}, "but the moves end in '*'"),
        ({**good, "games": [{**game, "black": 3}]}, "'black' must be a str"),
    ]
    for index, (document, message) in enumerate(cases):
        with pytest.raises(ValueError, match="g.json: .*" + message.replace("(", r"\(")) as info:
            games.load_games(_write(tmp_path / "g.json", document))
        assert "\n" not in str(info.value), index
    (tmp_path / "g.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a readable JSON file"):
        games.load_games(tmp_path / "g.json")
    with pytest.raises(ValueError, match="no such game file"):
        games.load_games(tmp_path / "missing.json")


def test_games_from_actions_refuses_bad_actions():
    # Every replay has the shape [1, 3], so it compiles once.
    state = jax.device_get(init(SIMPLE6))
    first = legal_moves(SIMPLE6, state)[0]
    with pytest.raises(ValueError, match="game 1: action 0 at ply 0 is illegal"):
        games.games_from_actions(SIMPLE6, np.array([[0, -1, -1]]), "a", "b")
    with pytest.raises(ValueError, match="action follows the end marker"):
        games.games_from_actions(SIMPLE6, np.array([[first.actions[0], -1, 3]]), "a", "b")
    with pytest.raises(ValueError, match="2 names for 1 games"):
        games.games_from_actions(SIMPLE6, np.array([[first.actions[0]]]), ["a", "b"], "b")
    (game,) = games.games_from_actions(SIMPLE6, np.array([[first.actions[0], -1, -1]]), "a", "b")
    assert game["moves"] == [first.notation] and game["result"] == "*" and game["plies"] == 1


def _short(game: dict, moves: int) -> dict:
    """The first ``moves`` moves of ``game`` as an unfinished game."""
    state = games.replay_game(AMERICAN6, {**game, "moves": game["moves"][:moves]})[0][-1]
    return {**game, "moves": game["moves"][:moves], "result": "*", "plies": int(state.ply)}


def test_render_gif_and_svgs(american_games, tmp_path):
    _, played = american_games
    game = _short(played[0], 5)
    gif = board_plot.save_gif(AMERICAN6, game, tmp_path / "out" / "game.gif", fps=4)
    with Image.open(gif) as image:
        assert image.n_frames == 6
    svgs = board_plot.save_svgs(AMERICAN6, game, tmp_path / "svgs")
    assert [p.name for p in svgs] == [f"move_{i:03d}.svg" for i in range(6)]
    assert all(p.read_text().startswith("<?xml") for p in svgs)
    assert "move 5/5" in svgs[-1].read_text()
    frames = board_plot.game_frames(AMERICAN6, game)
    assert frames[0].move is None and frames[0].caption == "start, Black to move"
    after = apply_move(AMERICAN6, frames[1].state, game["moves"][1])
    assert int(after.ply) == int(frames[2].state.ply)


def test_match_save_games_and_show(tmp_path, capsys):
    saved = tmp_path / "games.json"
    args = ["match", "random", "greedy-material", "--games", "6", "--batch", "6", "--max-plies", "16"]
    assert main([*args, "--save-games", str(saved), "--save-count", "4", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["games_file"] == str(saved)
    loaded = games.load_games(saved)
    assert loaded.rules == SIMPLE6 and len(loaded.games) == 4
    assert sorted(g["black"] for g in loaded.games) == ["greedy-material"] * 2 + ["random"] * 2
    assert all(g["plies"] <= 16 for g in loaded.games)

    assert main(["show", str(saved), "--game", "2", "--svg-dir", str(tmp_path / "svg")]) == 0
    out = capsys.readouterr().out
    frames = len(loaded.games[1]["moves"]) + 1
    assert f"{frames} SVG boards" in out and len(list((tmp_path / "svg").glob("*.svg"))) == frames
    assert main(["show", str(saved), "--fps", "5"]) == 0
    with Image.open(tmp_path / "games-game1.gif") as image:
        assert image.n_frames == len(loaded.games[0]["moves"]) + 1

    assert main(["show", str(saved), "--out", str(tmp_path)]) == 2
    assert "is a folder; give a file name" in capsys.readouterr().err
    assert main(["show", str(saved), "--out", str(tmp_path / "x.txt")]) == 2
    assert "x.txt' must end in .gif" in capsys.readouterr().err
    assert main(["show", str(saved), "--game", "9"]) == 2
    assert "--game must be in 1..4" in capsys.readouterr().err
    assert main(["show", str(tmp_path / "none.json")]) == 2
    assert "no such game file" in capsys.readouterr().err
    assert main([*args, "--save-games", str(saved), "--save-count", "0"]) == 2
    assert "--save-count must be >= 1, got 0" in capsys.readouterr().err
