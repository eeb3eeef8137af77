"""The analysis of a game (``analysis.game_analysis``), its API endpoints (a saved game and a Play
page game) and ``show --analyse``: on a short ``american6`` game from a few-piece position whose
first move throws away a win, with a 4-piece database built here: the database's verdicts, perfect
play's without it, the thrown move flagged, the engine's best move and line; an 8x8 game with
material leaves; the evaluation graph as a PNG."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():  # Starlette >= 1.0 prefers httpx2 to httpx; both work
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from neurocheckers.analysis.game_analysis import (
    AnalysisOptions,
    analyse_game,
    analysis_lines,
    perfect_play,
    save_analysis_plot,
)
from neurocheckers.analysis.games import save_games
from neurocheckers.cli import main
from neurocheckers.compiled.endgame import load
from neurocheckers.rules import AMERICAN6, AMERICAN8
from neurocheckers.web.app import create_app

sys.path.insert(0, str(Path(__file__).resolve().parent))
from web_folder import long_game  # noqa: E402

START = "B:WK16:BK13,7"
"""Black to move wins in one (7-11); 7-10 lets White's king take and win."""
MOVES = ["7-10", "16x11", "10-13", "11x16"]
"""The thrown move, then the database's best play to White's win."""
NODES = AnalysisOptions(nodes=300, line_moves=4)


def _game(start: str, moves: list[str], result: str = "*") -> dict:
    return {
        "black": "a",
        "white": "b",
        "start_fen": start,
        "moves": moves,
        "result": result,
        "plies": len(moves),
    }


@pytest.fixture(scope="module")
def database(four_piece_db) -> Path:
    return four_piece_db


@pytest.fixture(scope="module")
def served(tmp_path_factory, database):
    """A served folder with the thrown-win game and an 8x8 game, and a client of its app."""
    root = tmp_path_factory.mktemp("served")
    save_games(root / "games" / "endgame.json", AMERICAN6, [_game(START, MOVES, "0-1")])
    _, eight = long_game(AMERICAN8, 6)
    save_games(root / "games" / "eight.json", AMERICAN8, [eight])
    return root, TestClient(create_app(root, endgame=[database], analysis_nodes=300))


def _assert_thrown_win(positions: list[dict], source: str) -> None:
    first = positions[0]
    assert (first["verdict"], first["source"], first["move"]) == ("win", source, "7-10")
    assert first["throws"] and first["move_leaves"] == "loss"
    assert first["best_move"] == "7-11" and first["line"][0] == "7-11"
    assert [p["throws"] for p in positions[1:]] == [False] * (len(positions) - 1)
    assert positions[-1]["verdict"] == "loss" and positions[-1]["source"] == "game over"
    assert positions[-1]["over"] and positions[-1]["black_value"] == -1.0


def test_a_thrown_win_by_the_database_and_by_perfect_play(database):
    db = load(database, AMERICAN6)
    by_database = analyse_game(AMERICAN6, _game(START, MOVES), NODES, endgame=db)
    assert by_database.thrown() == [0] and not by_database.perfect_play
    positions = by_database.to_json()["positions"]
    _assert_thrown_win(positions, "endgame database")
    assert positions[0]["distance"] == 1 and positions[1]["verdict"] == "win"  # White, after the throw
    by_perfect_play = analyse_game(AMERICAN6, _game(START, MOVES), NODES, perfect=perfect_play(AMERICAN6, db))
    _assert_thrown_win(by_perfect_play.to_json()["positions"], "perfect play")
    text = analysis_lines(by_perfect_play)
    assert "7-10 ??" in text[1] and "throws away the win: win -> loss" in text[1]
    assert text[-1] == "moves that throw away the value: 0. 7-10"


def test_an_8x8_game_has_an_evaluation_and_lines_but_no_verdict(tmp_path):
    _, game = long_game(AMERICAN8, 6)
    analysis = analyse_game(AMERICAN8, game, NODES, perfect=None)
    assert len(analysis.positions) == 7
    for p in analysis.positions:
        assert p.verdict is None and not p.throws and -1 <= p.black_value <= 1
        assert p.best_move and 1 <= len(p.line) <= 4 and p.depth >= 1
    assert perfect_play(AMERICAN8, None) is None
    png = save_analysis_plot(analysis, tmp_path / "graph.png")
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_the_analysis_endpoint_of_a_saved_game(served):
    _, client = served
    response = client.get("/api/game-file/analysis", params={"path": "games/endgame.json", "game": 1})
    assert response.status_code == 200, response.text
    view = response.json()
    assert view["rules"] == "american6" and view["nodes"] == 300 and view["database_pieces"] == 4
    assert view["perfect_play"] and view["thrown"] == [0]
    _assert_thrown_win(view["positions"], "endgame database")
    eight = client.get("/api/game-file/analysis", params={"path": "games/eight.json"}).json()
    assert eight["rules"] == "american8" and not eight["perfect_play"] and eight["thrown"] == []
    assert all(p["best_move"] for p in eight["positions"])
    missing = client.get("/api/game-file/analysis", params={"path": "games/endgame.json", "game": 2})
    assert missing.status_code == 400


def test_the_analysis_endpoint_of_a_play_page_game(served):
    _, client = served
    game = client.post("/api/games", json={"opponent": "random", "rules": "american6", "fen": START}).json()
    for move in ((7, 10),):
        game = client.post(f"/api/games/{game['id']}/move", json={"from": move[0], "to": move[1]}).json()
    client.post(f"/api/games/{game['id']}/reply")
    view = client.get(f"/api/games/{game['id']}/analysis").json()
    assert [p["move"] for p in view["positions"]][:1] == ["7-10"]
    assert view["positions"][0]["throws"] and view["thrown"] == [0]
    assert client.get("/api/games/nosuchgame/analysis").status_code == 404


def test_show_prints_the_analysis_and_saves_the_graph(served, database, tmp_path, capsys):
    root, _ = served
    png = tmp_path / "analysis.png"
    args = ["--analyse", "--nodes", "300", "--endgame-db", str(database), "--plot", str(png)]
    assert main(["show", str(root / "games" / "endgame.json"), *args]) == 0
    out = capsys.readouterr().out
    assert "7-10 ??" in out and "win (endgame database, 1)" in out and "best 7-11" in out
    assert "moves that throw away the value: 0. 7-10" in out
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert main(["show", str(root / "games" / "endgame.json"), "--plot", str(png)]) == 2
    assert "go with --analyse" in capsys.readouterr().err
    assert json.loads((root / "games" / "endgame.json").read_text())["rules"] == "american6"
