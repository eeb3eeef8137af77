"""The endgame database in play: the compiled search of ``play`` and of the web's Play page probing
it (and saying what it decided), and ``neurocheckers verdicts`` on a saved game file.

Everything runs on ``american6`` with the session's 3-piece database (``small_db``). The positions'
values were read with ``neurocheckers endgame probe``: ``B:WK7:BK4,K8`` Black wins in 1 (4x11),
``W:WK7:BK4,K8`` White loses in 8, ``B:WK1:BK18`` is drawn; ``B:W4,7:BK1,K2`` has 4 pieces (outside
the database): 2,000 nodes of search prove it won (a score of 977 men) with the database and
score it 1.5 men without.
"""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
import sys
import warnings

import jax
import pytest
from cli_errors import error_line

from neurocheckers.cli import main
from neurocheckers.match import turns as play_turns
from neurocheckers.networks.agent_file import save_agent
from neurocheckers.networks.evaluator import EvaluatorSpec, init_params
from neurocheckers.players.compiled import parse_compiled
from neurocheckers.rules import AMERICAN6, AMERICAN8
from neurocheckers.rules.notation import parse_fen

with warnings.catch_warnings():  # Starlette >= 1.0 prefers httpx2 to httpx; both work
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

WON_IN_1, LOST_IN_8, DRAWN, FOUR_PIECES = "B:WK7:BK4,K8", "W:WK7:BK4,K8", "B:WK1:BK18", "B:W4,7:BK1,K2"


@pytest.fixture(scope="module")
def agent6(tmp_path_factory) -> str:
    spec = EvaluatorSpec.for_rules(AMERICAN6, layers=1, width=8)
    path = tmp_path_factory.mktemp("agents") / "american6.safetensors"
    save_agent(path, AMERICAN6, spec, init_params(jax.random.key(1), spec))
    return str(path)


@pytest.fixture(scope="module")
def search_db(small_db):
    return play_turns.load_endgame(str(small_db), AMERICAN6)


def test_the_compiled_turn_says_what_the_database_decided(agent6, search_db):
    assert play_turns.compiled_agent_player(agent6, AMERICAN6, 0.05, search_db).endgame is search_db
    alone = parse_compiled("compiled:2000n", AMERICAN6)  # a node budget: the same search every run
    player = dataclasses.replace(alone, endgame=search_db)

    def turn(fen: str, chosen=player):
        return play_turns.player_turn(chosen, chosen.new_game(), AMERICAN6, parse_fen(AMERICAN6, fen))

    won = turn(WON_IN_1)
    assert won.database == "database: won in 1 move" and won.move.notation == "4x11"
    assert turn(LOST_IN_8).database == "database: lost in 8 moves"
    assert turn(DRAWN).database == "database: drawn"
    assert turn(FOUR_PIECES).database == "proven win in the searched lines"  # the root is not held
    assert turn(WON_IN_1, alone).database is None
    unproven = turn(FOUR_PIECES, alone)
    assert unproven.database is None and abs(unproven.info.score) < play_turns.COMPILED_PROVEN_SCORE


def test_play_with_a_database_thinks_with_the_compiled_search_on_6x6(agent6, small_db, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    args = ["play", "--agent", agent6, "--seconds", "0.05", "--human", "white", "--endgame-db", str(small_db)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "compiled search warmed up" in out and "agent (Black) plays" in out
    assert "compiled search to depth" in out


def test_play_refuses_a_bad_database_in_one_line(agent6, small_db, tmp_path, capsys):
    args = ["play", "--agent", agent6, "--seconds", "0.05"]
    assert main([*args, "--endgame-db", str(tmp_path / "nowhere")]) == 2
    error_line(capsys, "--endgame-db", "nowhere", "holds no endgame database")
    spec = EvaluatorSpec.for_rules(AMERICAN8, layers=1, width=8)
    save_agent(tmp_path / "a8.safetensors", AMERICAN8, spec, init_params(jax.random.key(1), spec))
    other = ["play", "--agent", str(tmp_path / "a8.safetensors"), "--endgame-db", str(small_db)]
    assert main(other) == 2
    error_line(capsys, str(small_db), "holds a database for american6, not american8")
    assert main([*args, "--endgame-db", str(small_db), "--search", "mcts"]) == 2
    error_line(capsys, "--endgame-db", "compiled search", "mcts")


def test_the_play_pages_compiled_opponent_probes_the_servers_database(small_db, tmp_path):
    from neurocheckers.web.app import create_app

    client = TestClient(create_app(tmp_path, endgame=[small_db], save_games=False))

    def reply(fen: str, human: str = "white") -> dict:
        body = {"opponent": "compiled:2000n", "rules": "american6", "human": human, "fen": fen}
        game = client.post("/api/games", json=body).json()
        return client.post(f"/api/games/{game['id']}/reply").json()["evaluation"]

    assert "database: lost in 8 moves" in reply(LOST_IN_8, human="black")["text"]
    proven = reply(FOUR_PIECES)
    assert proven["search"]["database"] == "proven win in the searched lines"
    assert proven["text"].endswith("; proven win in the searched lines)")
    without = TestClient(create_app(tmp_path, save_games=False))
    body = {"opponent": "compiled:2000n", "rules": "american6", "human": "white", "fen": FOUR_PIECES}
    game = without.post("/api/games", json=body).json()
    assert without.post(f"/api/games/{game['id']}/reply").json()["evaluation"]["search"]["database"] is None


def test_an_unreadable_database_refuses_the_compiled_opponent_without_its_path(small_db, tmp_path):
    from neurocheckers.endgame.database import EndgameDB
    from neurocheckers.web.opponents import SessionError, make_opponent

    damaged = tmp_path / "damaged"
    shutil.copytree(small_db, damaged)
    first = next(damaged.glob("*.wdl"))
    first.write_bytes(bytes(len(first.read_bytes())) + b"x")
    with pytest.raises(SessionError, match="^the server's endgame database for american6 cannot be read$"):
        make_opponent(tmp_path, "compiled:100n", AMERICAN6, endgame=EndgameDB(damaged))


def _pdn_game(black: str, white: str, result: str, moves: str = "", fen: str | None = None) -> str:
    tags = [("Black", black), ("White", white), ("Result", result), ("Variant", "american6")]
    tags += [("SetUp", "1"), ("FEN", fen)] if fen else []
    return "".join(f'[{k} "{v}"]\n' for k, v in tags) + f"\n{moves} {result}\n\n"


def test_verdicts_of_a_saved_file_split_the_draws_by_the_databases_value(small_db, tmp_path, capsys):
    """A and B are the first game's Black and White: each draw (adjudicated, so its last position is
    any) is split by the database's value for its player; a start position has too many pieces."""
    games = [
        _pdn_game("us", "them", "1/2-1/2", fen=WON_IN_1),  # Black (A) to move wins
        _pdn_game("them", "us", "1/2-1/2", fen=WON_IN_1),  # Black (B) to move wins
        _pdn_game("us", "them", "1/2-1/2", fen=DRAWN),
        _pdn_game("us", "them", "1/2-1/2"),  # 12 pieces
        _pdn_game("us", "them", "1-0", "1. 4x11", fen=WON_IN_1),
        _pdn_game("them", "us", "*"),
    ]
    path = tmp_path / "games.pdn"
    path.write_text("".join(games))
    assert main(["verdicts", str(path), "--endgame-db", str(small_db), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert (found["player_a"], found["player_b"], found["games"]) == ("us", "them", 6)
    assert (found["wins"], found["draws"], found["losses"], found["unfinished"]) == (1, 4, 0, 1)
    assert (found["covered"], found["drawn"], found["disagree"]) == (4, 3, 0)
    assert (found["drawn_a_wins"], found["drawn_b_wins"], found["drawn_draws"]) == (1, 1, 1)
    assert found["values"] == [1, -1, 0, None, 1, None]
    assert found["beyond"] == {"draws": 1, "decisive": 0, "unfinished": 1} and found["max_pieces"] == 3
    assert main(["verdicts", str(path), "--endgame-db", str(small_db)]) == 0
    text = capsys.readouterr().out
    assert "draws by rule among them: 3 (the database says: won for A 1, won for B 1, drawn 1)" in text
    assert "no verdict (the last position has more than 3 pieces): 1 draws, 0 decisive games" in text


def test_verdicts_refuse_a_database_of_other_rules_in_one_line(small_db, tmp_path, capsys):
    path = tmp_path / "eight.pdn"
    path.write_text('[Black "a"]\n[White "b"]\n[Result "*"]\n[Variant "american8"]\n\n*\n')
    assert main(["verdicts", str(path), "--endgame-db", str(small_db)]) == 2
    error_line(capsys, "--endgame-db", "holds a database for american6, not american8")
