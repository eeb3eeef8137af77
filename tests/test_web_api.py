"""The web app's JSON API through Starlette's TestClient, and its library functions directly: legal
moves, a move, an illegal move (4xx, game unchanged), undo, a multi-jump step by step, the end
reasons, runs and their status, saved games, and paths outside the served folder refused; the
opponents: an agent file alone (the timed search for the think time), ``timed:`` specs, py-draughts,
and the best agent of the rules offered first; the Play page's compulsory-capture message, resigning,
a game's PDN read back, the position after any turn, random game ids, the opponent list, a PDN of
any saved game, and a run folder that cannot be read listed as failed; client mistakes (nested JSON,
NUL bytes and over-long paths, a colour that is not a word) as 400s, games from a FEN or a PDN game,
no win chance once a game is over, and games read back after a restart of the server."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import jax
import pytest

with warnings.catch_warnings():  # Starlette >= 1.0 prefers httpx2 to httpx; both work
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from neurocheckers.analysis.pdn_games import load_game_file, save_game_file
from neurocheckers.cli import main
from neurocheckers.experiment.folder import run_is_locked, run_lock
from neurocheckers.networks.agent_file import save_agent
from neurocheckers.networks.evaluator import EvaluatorSpec, init_params
from neurocheckers.rules import AMERICAN6, SIMPLE6
from neurocheckers.rules.notation import legal_moves, parse_fen
from neurocheckers.web import opponents
from neurocheckers.web import session as play
from neurocheckers.web.app import create_app
from neurocheckers.web.board import end_reason

sys.path.insert(0, str(Path(__file__).resolve().parent))
from web_folder import EPOCHS_WRITTEN, GAME_MOVES, make_served_folder  # noqa: E402


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Path:
    return make_served_folder(tmp_path_factory.mktemp("served"))


@pytest.fixture(scope="module")
def client(served) -> TestClient:
    return TestClient(create_app(served))


def _new(client, **settings) -> dict:
    response = client.post("/api/games", json={"opponent": "random", "rules": "american6", **settings})
    assert response.status_code == 201, response.text
    return response.json()


def test_a_move_an_illegal_move_and_undo(client):
    game = _new(client)
    assert game["human_to_move"] and game["position"]["to_move"] == "black"
    assert sorted(game["steps"]) == [[4, 7], [5, 7], [5, 8], [6, 8], [6, 9]]  # American6's opening
    assert sorted(game["moves"]) == sorted(game["steps"])  # no jumps yet: whole moves are single steps
    url = f"/api/games/{game['id']}"
    refused = client.post(f"{url}/move", json={"from": 4, "to": 9})
    assert refused.status_code == 400
    assert refused.json()["error"] == "illegal move 4-9: legal from 4: 7"
    assert client.get(url).json() == game  # unchanged
    assert client.post(f"{url}/move", json={"from": "4", "to": 7}).status_code == 400
    assert client.post(f"{url}/reply").status_code == 400  # not the opponent's turn
    moved = client.post(f"{url}/move", json={"from": 4, "to": 7}).json()
    assert moved["opponent_to_move"] and [t["notation"] for t in moved["turns"]] == ["4-7"]
    early = client.post(f"{url}/move", json={"from": 7, "to": 10}).json()
    assert early["error"].startswith("it is not your turn")
    replied = client.post(f"{url}/reply").json()
    assert replied["human_to_move"] and len(replied["turns"]) == 2 and not replied["turns"][1]["by_human"]
    assert replied["position"]["fen"] != moved["position"]["fen"]
    assert replied["evaluation"] is None  # random has none
    undone = client.post(f"{url}/undo").json()
    assert undone["turns"] == [] and undone["position"] == game["position"] and not undone["can_undo"]
    assert client.post(f"{url}/undo").json() == {"error": "nothing to undo: you have not moved yet"}


def test_the_opponent_opens_when_the_person_plays_white_and_reports_an_evaluation(client):
    game = _new(client, human="white", opponent="alphabeta:2", rules="simple6")
    assert game["opponent_to_move"] and game["steps"] != []
    replied = client.post(f"/api/games/{game['id']}/reply").json()
    assert replied["human_to_move"] and replied["turns"][0]["side"] == "black"
    assert replied["evaluation"]["material_lead"] == 0
    assert replied["evaluation"]["text"].startswith("your material lead: +0")


def test_an_agent_file_opponent_is_found_in_the_served_folder(client, served):
    game = _new(client, opponent="alphabeta:1:agent.safetensors", rules="simple6", human="white")
    assert game["opponent"] == "alphabeta:1:agent.safetensors"
    replied = client.post(f"/api/games/{game['id']}/reply").json()
    assert 0 <= replied["evaluation"]["win_chance"] <= 1 and "network" in replied["evaluation"]["text"]
    chance = round(100 * (1 - replied["evaluation"]["win_chance"]))  # said from the person's side
    assert replied["evaluation"]["text"].startswith(f"your win chance: {chance}% (")


def test_an_agent_file_alone_plays_the_timed_search_for_the_think_time(client):
    game = _new(client, opponent="agent.safetensors", rules="simple6", human="white", think_seconds=0.05)
    assert game["opponent"] == "timed:0.05s:agent.safetensors" and game["think_seconds"] == 0.05
    replied = client.post(f"/api/games/{game['id']}/reply").json()
    evaluation = replied["evaluation"]
    assert replied["human_to_move"] and len(replied["turns"]) == 1
    assert 0 <= evaluation["win_chance"] <= 1 and evaluation["search"]["depth"] >= 1
    text = evaluation["text"]
    assert text.startswith("your win chance: ") and "(alpha-beta to depth " in text
    assert f"{evaluation['search']['nodes']:,} nodes in " in text


def test_a_timed_material_opponent_with_a_node_budget(client):
    game = _new(client, opponent="timed:500n:material", rules="american6", human="white")
    assert game["opponent"] == "timed:500n:material"
    replied = client.post(f"/api/games/{game['id']}/reply").json()
    evaluation = replied["evaluation"]
    assert replied["human_to_move"] and evaluation["material_lead"] == 0
    assert 0 < evaluation["search"]["nodes"] <= 500 and "win_chance" not in evaluation
    assert evaluation["text"].startswith("your material lead: +0 (alpha-beta to depth ")
    assert ", score " in evaluation["text"]


def test_an_explicit_mcts_spec_still_thinks_with_mcts(served):
    opponent = opponents.make_opponent(served, "mcts:agent.safetensors:2", SIMPLE6, 0.05)
    assert opponent.player.search_label == "MCTS" and opponent.agent is not None
    assert opponent.player.config.num_simulations == 2 and opponent.player.seconds == 0.05
    assert opponent.spec == opponent.player.name == "mcts:agent.safetensors:2"


def test_py_draughts_opens_on_american8(served):
    pytest.importorskip("draughts")
    session = play.new_session(served, "pydraughts:1", "american8", "white", 0.1)
    play.opponent_reply(session)
    view = play.session_view(session)
    assert view["human_to_move"] and view["turns"][0]["side"] == "black" and not view["turns"][0]["by_human"]
    assert view["evaluation"]["material_lead"] == 0


def test_the_best_agent_of_the_rules_is_offered_first(tmp_path):
    spec = EvaluatorSpec.for_rules(SIMPLE6, layers=1, width=4)
    params = init_params(jax.random.key(0), spec)
    for name in ("other.safetensors", "results/best_simple6.safetensors", "best_simple6.safetensors"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        save_agent(tmp_path / name, SIMPLE6, spec, params)
    six = EvaluatorSpec.for_rules(AMERICAN6, layers=1, width=4)
    (tmp_path / "deep").mkdir()
    save_agent(
        tmp_path / "deep" / "best_american6.safetensors", AMERICAN6, six, init_params(jax.random.key(0), six)
    )
    info = TestClient(create_app(tmp_path)).get("/api/info").json()
    assert info["best"] == {
        "simple6": "results/best_simple6.safetensors",  # results/ before the top of the folder
        "american6": "deep/best_american6.safetensors",
    }
    simple6 = info["suggestions"]["simple6"]
    assert simple6[:3] == [
        "results/best_simple6.safetensors",
        "mcts:results/best_simple6.safetensors:16",
        "alphabeta:2:results/best_simple6.safetensors",
    ]
    assert simple6.count("results/best_simple6.safetensors") == 1 and "random" in simple6
    assert info["suggestions"]["american6"][0] == "deep/best_american6.safetensors"
    american8 = info["suggestions"]["american8"]
    assert american8[0] == info["agents"][0] and "alphabeta:4:heuristic" in american8


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"opponent": "mcts:../outside.safetensors:2"}, "outside the served folder"),
        ({"opponent": "mcts:missing.safetensors:2"}, "no agent file 'missing.safetensors'"),
        ({"opponent": "alphabeta:1:agent.safetensors", "rules": "american6"}, "agent plays 'simple6'"),
        ({"opponent": "minimax:3"}, "bad player spec 'minimax:3'"),
        ({"opponent": "missing.safetensors"}, "no agent file 'missing.safetensors'"),
        ({"opponent": "timed:9000000n:material"}, "a node budget must be at most 5,000,000 here"),
        ({"opponent": "timed:fast:material"}, "bad player spec 'timed:fast:material'"),
        (
            {"opponent": "openspiel:mcts:10", "rules": "american8"},
            "OpenSpiel's bots cannot play on this page",
        ),
        ({"opponent": "pydraughts:4"}, "american8 only"),
        ({"opponent": "random", "human": "red"}, "black or white, got 'red'"),
        ({"opponent": "random", "think_seconds": 0}, "think time must be in"),
        ({"opponent": "random", "rules": "chess"}, "unknown rules preset 'chess'"),
        ({}, "'opponent' must be a player spec"),
        ({"opponent": "random", "seed": "x"}, "seed must be an integer"),
        ({"opponent": "random", "seed": 1.5}, "seed must be an integer"),
        ({"opponent": "random", "seed": [1]}, "seed must be an integer"),
        ({"opponent": "random", "seed": -1}, "seed must be an integer"),
        ({"opponent": "random", "rules": 7}, "rules"),
        ({"opponent": "random", "human": 5}, "human"),
        ({"opponent": "random", "think_seconds": "x"}, "think time must be a number"),
        ({"opponent": 5}, "'opponent' must be a player spec"),
    ],
)
def test_bad_game_settings_are_refused_with_a_message(client, served, settings, message):
    (served.parent / "outside.safetensors").write_bytes((served / "agent.safetensors").read_bytes())
    response = client.post("/api/games", json=settings)
    assert response.status_code in (400, 403, 404) and message in response.json()["error"]
    assert str(served.resolve()) not in response.text


def test_a_request_body_over_the_limit_is_refused_unread(client):
    from neurocheckers.web.app import MAX_BODY_BYTES

    big = b'{"opponent": "' + b"x" * (MAX_BODY_BYTES + 10) + b'"}'
    response = client.post("/api/games", content=big, headers={"content-type": "application/json"})
    assert response.status_code == 413 and "bytes" in response.json()["error"]
    huge = b"x" * (2 << 20)  # 2 MB
    assert client.post("/api/games", content=huge).status_code == 413
    assert (
        client.post("/api/games", content=b"[1, 2]").json()["error"]
        == "the request body must be a JSON object"
    )


def test_a_multi_jump_is_played_step_by_step_and_undone_whole(served):
    session = play.new_session(served, "random", "american6", "black", 0.1)
    session.start = parse_fen(AMERICAN6, "B:W5,11:B1")
    assert play.session_view(session)["moves"] == [[1, 8, 13]]
    with pytest.raises(opponents.SessionError, match="illegal move 1-13"):
        play.human_step(session, 1, 13)
    play.human_step(session, 1, 8)
    view = play.session_view(session)
    assert view["human_to_move"] and view["position"]["continuing"] == 8 and view["steps"] == [[8, 13]]
    assert view["turns"][0]["notation"] == "1x8..."
    play.human_step(session, 8, 13)
    view = play.session_view(session)
    assert view["turns"][0]["notation"] == "1x8x13" and view["position"]["over"]
    assert view["position"]["reason"] == "Black wins: White has no pieces left"
    play.undo(session)
    assert play.session_view(session)["position"]["fen"] == "B:W5,11:B1"


def test_end_reasons():
    assert end_reason(SIMPLE6, parse_fen(SIMPLE6, "B:W13:B4")) is None
    assert end_reason(AMERICAN6, parse_fen(AMERICAN6, "B:W8:B")) == "White wins: Black has no pieces left"
    assert end_reason(AMERICAN6, parse_fen(AMERICAN6, "B:W18:B15")) == "White wins: Black has no legal move"
    stuck = "draw: Black has no legal move (a stuck side draws in simple6)"
    assert end_reason(SIMPLE6, parse_fen(SIMPLE6, "B:W18:B15")) == stuck
    limit = "draw: the 60-ply limit of simple6 was reached"
    assert end_reason(SIMPLE6, parse_fen(SIMPLE6, "B:W13:B4", ply=60)) == limit
    quiet = parse_fen(AMERICAN6, "B:W13:B4", plies_without_capture=50)
    assert end_reason(AMERICAN6, quiet) == "draw: 50 plies in a row without a capture"


def test_runs_their_status_curves_and_lineage(client, served):
    runs = client.get("/api/runs").json()["runs"]
    assert len(runs) == 1 and runs[0]["path"].startswith("runs/tiny_seed0_")
    assert runs[0]["status"] == "interrupted (resumable)" and runs[0]["epochs_done"] == EPOCHS_WRITTEN
    path = runs[0]["path"]
    curves = client.get("/api/run/curves", params={"path": path}).json()
    assert curves["epoch"] == list(range(EPOCHS_WRITTEN))
    assert curves["columns"]["fitness_median"] == [2.0 + 0.3 * e for e in range(EPOCHS_WRITTEN)]
    assert curves["columns"]["strength_material"] == [None] * EPOCHS_WRITTEN
    detail = client.get("/api/run", params={"path": path}).json()
    assert detail["config"]["population"] == 4 and detail["epochs"] > EPOCHS_WRITTEN
    boss = detail["lineage"][-1]
    assert (boss["boss_id"], boss["epoch"], boss["points"]) == (1, 2, 3.5)
    download = client.get("/api/agent-file", params={"path": boss["file"]})
    assert download.status_code == 200 and download.content == (served / boss["file"]).read_bytes()
    run_dir = served / path
    assert not run_is_locked(run_dir)
    with run_lock(run_dir):
        assert run_is_locked(run_dir)
        assert client.get("/api/runs").json()["runs"][0]["status"] == "running"
    assert client.get("/api/runs").json()["runs"][0]["status"] == "interrupted (resumable)"


def test_a_saved_game_with_the_agents_evaluation(client):
    assert client.get("/api/game-files").json()["files"] == ["games/sample.json"]
    listing = client.get("/api/game-file", params={"path": "games/sample.json"}).json()
    assert listing["rules"] == "simple6" and listing["games"][0]["moves"] == GAME_MOVES
    view = client.get("/api/game-file/game", params={"path": "games/sample.json", "game": "1"}).json()
    assert len(view["moves"]) == GAME_MOVES and len(view["positions"]) == GAME_MOVES + 1
    assert view["positions"][0]["material"] == {"black": 6, "white": 6, "black_lead": 0}
    chances = view["evaluation"]["black_chance"]
    assert view["evaluation"]["agent"] == "agent.safetensors" and len(chances) == GAME_MOVES + 1
    assert all(0 <= c <= 1 for c in chances)
    bad = client.get("/api/game-file/game", params={"path": "games/sample.json", "game": "2"})
    assert bad.status_code == 400 and bad.json()["error"] == "game must be in 1, got '2'"


def test_the_games_page_reads_pdn_files(client, served):
    """A PDN file is opened through the same loader as the JSON game files, with the same replay."""
    json_game = load_game_file(served / "games" / "sample.json")
    save_game_file(served / "games" / "sample.pdn", json_game.rules, json_game.games)
    assert client.get("/api/game-files").json()["files"] == ["games/sample.json", "games/sample.pdn"]
    views = [
        client.get("/api/game-file/game", params={"path": f"games/sample.{suffix}", "game": "1"}).json()
        for suffix in ("json", "pdn")
    ]
    assert views[0]["moves"] == views[1]["moves"] and views[0]["positions"] == views[1]["positions"]
    (served / "games" / "sample.pdn").unlink()


def test_paths_outside_the_folder_are_refused(client, served, tmp_path):
    (tmp_path / "secret.safetensors").write_bytes(b"x")
    (served / "link.safetensors").symlink_to(tmp_path / "secret.safetensors")
    for url, path in [
        ("/api/agent-file", "../secret.safetensors"),
        ("/api/agent-file", str(tmp_path / "secret.safetensors")),
        ("/api/agent-file", "link.safetensors"),
        ("/api/run", ".."),
        ("/api/game-file", "../../etc/passwd"),
    ]:
        response = client.get(url, params={"path": path})
        assert response.status_code == 403, (url, path)
        assert "outside the served folder" in response.json()["error"]
    missing = client.get("/api/run", params={"path": "runs/nothing"})
    assert missing.status_code == 404
    assert missing.json()["error"] == "nothing at 'runs/nothing' in the served folder"
    assert client.get("/api/games/nope").status_code == 404


def test_serve_refuses_a_missing_folder(capsys, tmp_path):
    assert main(["serve", str(tmp_path / "nothing")]) == 2
    assert "FOLDER must be a folder" in capsys.readouterr().err


def test_links_out_of_the_folder_are_left_out_of_listings_and_messages_hold_no_server_path(
    client, served, tmp_path, caplog
):
    """A link to a file outside the served folder is not listed (and logged); the listings go on;
    no answer names the served folder's place on the server."""
    (tmp_path / "away.safetensors").write_bytes((served / "agent.safetensors").read_bytes())
    (tmp_path / "away.pdn").write_text((served / "games" / "sample.json").read_text())
    links = [served / "away.safetensors", served / "games" / "away.pdn"]
    for link in links:
        link.symlink_to(tmp_path / link.name)
    try:
        with caplog.at_level("WARNING", logger="neurocheckers.web"):
            info = client.get("/api/info")
            files = client.get("/api/game-files")
        assert info.status_code == 200 and "away.safetensors" not in info.json()["agents"]
        assert files.status_code == 200 and "games/away.pdn" not in files.json()["files"]
        assert "away.safetensors leads outside the served folder" in caplog.text
        answers = [info, files, client.get("/api/runs"), client.get("/api/run", params={"path": "runs/x"})]
        answers.append(client.post("/api/games", json={"opponent": "mcts:../x.safetensors:2"}))
        for answer in answers:
            assert str(served.resolve()) not in answer.text and str(served) not in answer.text
    finally:
        for link in links:
            link.unlink()


def test_an_internal_error_is_a_logged_500_with_a_generic_message(client, monkeypatch, caplog):
    from neurocheckers.web import games as game_listing

    def broken(*_):
        raise KeyError("an internal table lost a key")

    monkeypatch.setattr(game_listing, "game_files", broken)
    with caplog.at_level("ERROR", logger="neurocheckers.web"):
        response = client.get("/api/game-files")
    assert response.status_code == 500
    assert "internal error" in response.json()["error"] and "lost a key" not in response.text
    assert "GET /api/game-files failed" in caplog.text and "lost a key" in caplog.text


def test_a_run_that_spent_its_budget_says_so(tmp_path):
    import json

    from neurocheckers.web.folder import run_status

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.json").write_text(json.dumps({"config": {"budget_minutes": 1.0, "epochs": 100},
                                                     "simulations_used": 16}))  # fmt: skip
    rows = "".join(f"{e},{30.5}\n" for e in range(2))
    (run_dir / "metrics.csv").write_text("epoch,wall_seconds\n" + rows)
    assert run_status(run_dir, 100, 2) == "budget reached"
    (run_dir / "metrics.csv").write_text("epoch,wall_seconds\n0,30.5\n")
    assert run_status(run_dir, 100, 1) == "interrupted (resumable)"
    assert run_status(run_dir, 1, 1) == "finished"


def test_a_compulsory_capture_is_named_and_a_quiet_move_refused_with_it(served):
    session = play.new_session(served, "random", "american6", "black", 0.1)
    session.start = parse_fen(AMERICAN6, "B:W8,9:B4,5,1")
    view = play.session_view(session)
    assert view["must_capture"] == "You must capture: the piece on 5 can jump"
    with pytest.raises(opponents.SessionError, match="^You must capture: the piece on 5 can jump$"):
        play.human_step(session, 4, 7)
    with pytest.raises(opponents.SessionError, match="^illegal move 5-8: legal from 5: 12$"):
        play.human_step(session, 5, 8)
    session.start = parse_fen(AMERICAN6, "B:W8,9:B4,5,6")
    with pytest.raises(
        opponents.SessionError, match="^You must capture: the pieces on 5 and 6 can each jump$"
    ):
        play.human_step(session, 4, 7)
    session.start = parse_fen(AMERICAN6, "B:W8:B4,1")
    assert play.session_view(session)["must_capture"] is None
    session.start = parse_fen(SIMPLE6, "B:W8,9:B4,5,1")
    session.rules = SIMPLE6  # captures are optional in simple6
    assert play.session_view(session)["must_capture"] is None


def test_resigning_ends_the_game_for_the_opponent(client):
    game = _new(client, rules="american6")
    url = f"/api/games/{game['id']}"
    client.post(f"{url}/move", json={"from": 4, "to": 7})
    resigned = client.post(f"{url}/resign").json()
    assert resigned["over"] and resigned["result"] == "0-1"
    assert resigned["reason"] == "White wins: Black resigned"
    assert not resigned["human_to_move"] and not resigned["opponent_to_move"] and not resigned["can_undo"]
    assert client.post(f"{url}/resign").json()["error"] == "the game is already over"
    assert client.post(f"{url}/reply").json()["error"] == "it is not the opponent's turn"
    assert client.post(f"{url}/undo").json()["error"] == "you resigned: start a new game"
    assert client.post(f"{url}/move", json={"from": 7, "to": 10}).status_code == 400


def test_a_games_pdn_reads_back_to_its_moves(client):
    from neurocheckers.analysis.pdn_games import game_of_pdn
    from neurocheckers.rules.pdn import read_pdn

    game = _new(client, rules="american6", human="white")
    url = f"/api/games/{game['id']}"
    for _ in range(3):
        view = client.post(f"{url}/reply").json()
        view = client.post(
            f"{url}/move", json=dict(zip(("from", "to"), view["steps"][0], strict=True))
        ).json()
        while view["human_to_move"]:  # a multi-jump goes on
            view = client.post(
                f"{url}/move", json=dict(zip(("from", "to"), view["steps"][0], strict=True))
            ).json()
    response = client.get(f"{url}/pdn")
    assert response.status_code == 200 and "attachment" in response.headers["content-disposition"]
    [pdn] = read_pdn(response.text)
    assert list(pdn.moves) == [t["notation"] for t in view["turns"]] and len(pdn.moves) == 6
    assert pdn.tags["Black"] == "random" and pdn.tags["White"] == "human" and pdn.result == "*"
    assert game_of_pdn(AMERICAN6, pdn)["moves"] == list(pdn.moves)  # legal moves, replayed by the engine


def test_the_position_after_any_turn_of_the_move_list(client):
    game = _new(client, rules="american6")
    url = f"/api/games/{game['id']}"
    client.post(f"{url}/move", json={"from": 4, "to": 7})
    now = client.post(f"{url}/reply").json()
    assert client.get(f"{url}/positions/0").json() == game["position"]
    assert client.get(f"{url}/positions/2").json() == now["position"]
    after_one = client.get(f"{url}/positions/1").json()
    assert 7 in [p["square"] for p in after_one["pieces"]] and after_one["to_move"] == "white"
    assert client.get(f"{url}/positions/3").json()["error"] == "turn must be in 0..2, got 3"
    assert client.get(f"{url}/positions/x").status_code == 400


def test_game_ids_are_random_so_an_old_link_does_not_open_another_game(client):
    ids = {_new(client)["id"] for _ in range(3)}
    assert len(ids) == 3 and not ids & {"g1", "g2", "g3"}
    assert all(len(i) > 8 for i in ids)
    assert "no game 'g1'" in client.get("/api/games/g1").json()["error"]


def test_the_opponent_list_fits_the_rules_and_names_levels(tmp_path):
    spec = EvaluatorSpec.for_rules(SIMPLE6, layers=1, width=4)
    params = init_params(jax.random.key(0), spec)
    for name in ("results/best_simple6.safetensors", "other.safetensors"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        save_agent(tmp_path / name, SIMPLE6, spec, params)
    (tmp_path / "broken.safetensors").write_bytes(b"not an agent")
    info = TestClient(create_app(tmp_path)).get("/api/info").json()
    assert info["default_rules"] == "simple6"  # the only rules with a best agent here
    simple6 = info["opponents"]["simple6"]
    assert simple6[0] == {
        "spec": "results/best_simple6.safetensors",
        "label": "Strongest: results/best_simple6.safetensors (alpha-beta for the think time)",
        "group": "Strongest",
    }
    specs = [c["spec"] for c in simple6]
    assert specs[1:5] == ["random", "greedy-material", "alphabeta:2", "alphabeta:4"]
    assert "other.safetensors" in specs and "broken.safetensors" not in specs
    american8 = [c["spec"] for c in info["opponents"]["american8"]]
    assert "other.safetensors" not in american8 and "alphabeta:4:heuristic" in american8
    assert (
        info["start"]["american6"]["to_move"] == "black" and len(info["start"]["american6"]["pieces"]) == 12
    )


def test_a_run_folder_that_cannot_be_read_is_listed_as_failed(client, served):
    broken = served / "runs" / "broken_run"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    (broken / "metrics.csv").write_text("epoch\n")
    try:
        runs = {r["path"]: r for r in client.get("/api/runs").json()["runs"]}
    finally:
        for f in broken.iterdir():
            f.unlink()
        broken.rmdir()
    assert runs["runs/broken_run"]["status"] == "failed"
    assert runs["runs/broken_run"]["stop_reason"].startswith("failed: the run folder cannot be read: ")
    [tiny] = [r for path, r in runs.items() if path.startswith("runs/tiny")]
    assert (
        tiny["stop_reason"]
        == f"interrupted after {EPOCHS_WRITTEN} of {tiny['epochs']} epochs: evolve --resume goes on"
    )
    assert str(served.resolve()) not in str(runs)


def test_any_listed_game_downloads_as_pdn(client):
    from neurocheckers.rules.pdn import read_pdn

    params = {"path": "games/sample.json", "game": "1"}
    response = client.get("/api/game-file/pdn", params=params)
    assert (
        response.status_code == 200
        and 'filename="sample-game1.pdn"' in response.headers["content-disposition"]
    )
    [pdn] = read_pdn(response.text)
    view = client.get("/api/game-file/game", params=params).json()
    assert list(pdn.moves) == view["moves"] and pdn.tags["Black"] == view["black"]
    bad = client.get("/api/game-file/pdn", params={"path": "games/sample.json", "game": "0"})
    assert bad.status_code == 400 and bad.json()["error"] == "game must be in 1, got '0'"


def _game_at(client, fen: str, human: str = "black") -> str:
    """A game of american6 against random, set up at ``fen``; its URL."""
    game = _new(client, human=human)
    client.app.state.sessions.get(game["id"]).start = parse_fen(AMERICAN6, fen)
    return f"/api/games/{game['id']}"


def test_the_endgame_database_values_positions_it_holds(served, small_db):
    """The Play page's position carries the database's value (side to move and the person), distance
    and best moves, as ``probe_fen`` gives them; nothing outside it or mid-jump; ``/api/info`` names
    the rules with a database, without its path."""
    from neurocheckers.endgame import EndgameDB, probe_fen

    db = EndgameDB(small_db)
    client = TestClient(create_app(served, endgame=[small_db]))
    info = client.get("/api/info")
    assert info.json()["endgame"] == {"american6": {"max_pieces": 3, "slices": len(db.slices)}}
    assert str(small_db) not in info.text and "/" not in str(info.json()["endgame"])
    for fen, human in (("B:W18:B14", "black"), ("B:W18:B14", "white"), ("W:W17,18:B1", "black")):
        url = _game_at(client, fen, human)
        endgame = client.get(url).json()["position"]["endgame"]
        answer = probe_fen(db, fen)
        assert endgame["value"] == ("loss", "draw", "win")[answer.value], fen
        assert endgame["distance"] == answer.distance and endgame["best_moves"] == list(answer.best_moves)
        mover_is_human = endgame["to_move"] == human
        flip = {"win": "loss", "loss": "win", "draw": "draw"}
        assert endgame["for_you"] == (endgame["value"] if mover_is_human else flip[endgame["value"]])
    assert client.get(_game_at(client, "B:W18:B14")).json()["position"]["endgame"]["text"] == (
        "Endgame database: Black (you) wins in 5 moves (best for Black: 14-17)"
    )
    url = _game_at(client, "B:W18:B14", "white")
    view = client.get(url).json()
    assert view["position"]["endgame"]["text"].startswith("Endgame database: Black (the opponent) wins")
    after = client.post(f"{url}/reply").json()
    assert after["position"]["endgame"]["to_move"] == "white"
    assert client.get(f"{url}/positions/0").json() == view["position"]
    assert client.get(f"{url}/positions/1").json() == after["position"]
    outside = client.get(_game_at(client, "B:W17,18:B1,2")).json()  # 4 pieces: beyond the database
    assert outside["position"]["endgame"] is None
    assert (
        client.get("/api/games/" + _new(client, rules="american8")["id"]).json()["position"]["endgame"]
        is None
    )
    url = _game_at(client, "B:W5,11:B1")
    jumping = client.post(f"{url}/move", json={"from": 1, "to": 8}).json()
    assert jumping["position"]["continuing"] == 8 and jumping["position"]["endgame"] is None


def test_serve_refuses_a_bad_endgame_folder_in_one_line(capsys, served, small_db, tmp_path):
    assert main(["serve", str(served), "--endgame", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err.strip()
    assert "--endgame:" in err and "holds no endgame database" in err and len(err.splitlines()) == 1
    assert main(["serve", str(served), "--endgame", f"{small_db},{small_db}"]) == 2
    err = capsys.readouterr().err.strip()
    assert "a second endgame database for american6" in err and len(err.splitlines()) == 1


PATH_ENDPOINTS = (
    "/api/run",
    "/api/run/curves",
    "/api/agent-file",
    "/api/game-file",
    "/api/game-file/game",
    "/api/game-file/pdn",
)


@pytest.mark.parametrize("url", PATH_ENDPOINTS)
def test_a_path_with_a_nul_byte_or_5000_characters_is_a_400(client, url):
    for path, message in (("games/a\x00b.pdn", "NUL byte"), ("x" * 5000, "at most 1024 characters")):
        response = client.get(url, params={"path": path})
        assert response.status_code == 400, (url, response.text)
        assert message in response.json()["error"] and "\n" not in response.json()["error"]
    assert client.get(url, params={"path": "y" * 300}).status_code == 404  # one name over the limit


def test_a_deeply_nested_body_and_odd_numbers_are_client_mistakes(client):
    nested = b"[" * 30_000 + b"]" * 30_000  # under the size limit, too deep for the JSON reader
    response = client.post("/api/games", content=nested)
    assert response.status_code == 400 and response.json()["error"] == "the request body is nested too deeply"
    game = _new(client)
    for turn in ("\u00b2", "9" * 5000):  # a superscript two passes str.isdigit; 5000 digits int()
        response = client.get(f"/api/games/{game['id']}/positions/{turn}")
        assert response.status_code == 400 and "turn must be a whole number" in response.json()["error"]
    response = client.get("/api/game-file/game", params={"path": "games/sample.json", "game": "\u00b2"})
    assert response.status_code == 400


@pytest.mark.parametrize("human", [1, 0, True, None, ["black"]])
def test_a_colour_that_is_not_a_word_is_refused(client, human):
    response = client.post("/api/games", json={"opponent": "random", "human": human})
    assert response.status_code == 400 and "'human' must be black or white" in response.json()["error"]


def test_the_win_chance_is_cleared_once_the_game_ends(client):
    game = _new(client, opponent="alphabeta:1:agent.safetensors", rules="simple6", human="white")
    replied = client.post(f"/api/games/{game['id']}/reply").json()
    assert replied["evaluation"] is not None and "win_chance" in replied["evaluation"]
    resigned = client.post(f"/api/games/{game['id']}/resign").json()
    assert resigned["over"] and resigned["evaluation"] is None


def test_a_game_starts_from_a_fen_or_a_pdn_game(client):
    game = _new(client, fen="W:W10,11:B1,2", human="white")
    assert game["position"]["fen"] == "W:W10,11:B1,2" and game["start_fen"] == "W:W10,11:B1,2"
    assert game["human_to_move"] and game["turns"] == []
    pdn = client.get("/api/game-file/pdn", params={"path": "games/sample.json"}).text
    sample = client.get("/api/game-file/game", params={"path": "games/sample.json"}).json()
    from_pdn = _new(client, rules="simple6", pdn=pdn, pdn_move=3)
    assert from_pdn["position"]["fen"] == sample["positions"][3]["fen"]
    assert from_pdn["human_to_move"] == (sample["positions"][3]["to_move"] == "black")
    whole = _new(client, rules="simple6", pdn=pdn, human="white")
    assert whole["position"]["fen"] == sample["positions"][-1]["fen"]
    for settings, message in (
        ({"fen": "W:W99:B1"}, "bad FEN for american6"),
        ({"fen": "B:W10:B"}, "already over"),
        ({"fen": "W:W:B"}, "already over"),
        ({"fen": "W:W13,16"}, "already over (White wins: Black has no pieces)"),  # White to move, alike
        ({"fen": "B:W:B1"}, "already over (Black wins: White has no pieces)"),
        ({"fen": "W:W10:B1", "pdn": pdn}, "not both"),
        ({"fen": 5}, "must be text"),
        ({"pdn": pdn, "rules": "simple6", "pdn_move": 99}, "'pdn_move' must be in 0..8"),
        ({"pdn": pdn, "rules": "simple6", "pdn_game": 2}, "'pdn_game' must be in 1..1"),
        ({"pdn": "1. 30-26 *", "rules": "simple6"}, "PDN game 1 under simple6: move 1"),
    ):
        response = client.post("/api/games", json={"opponent": "random", "rules": "american6", **settings})
        assert response.status_code == 400 and message in response.json()["error"], (settings, response.text)


def test_games_survive_a_restart_of_the_server(served):
    from neurocheckers.web.sessions import GAMES_DIR

    before = TestClient(create_app(served))
    game = before.post(
        "/api/games", json={"opponent": "random", "rules": "american6", "fen": "B:W10,11,12:B1,2,5"}
    )
    url = f"/api/games/{game.json()['id']}"
    before.post(f"{url}/move", json={"from": 5, "to": 8})
    played = before.post(f"{url}/reply").json()
    saved = served / GAMES_DIR / f"{played['id']}.json"
    assert saved.is_file() and saved.read_text().startswith("{")  # JSON, not a pickle
    after = TestClient(create_app(served))  # a new server over the same folder
    assert after.get(url).json() == played
    assert after.post(f"{url}/undo").json()["turns"] == []
    assert TestClient(create_app(served)).get(url).json()["turns"] == []  # the undo was saved too
    assert after.get("/api/game-files").json()["files"] == before.get("/api/game-files").json()["files"]
    saved.write_text("not json")
    broken = TestClient(create_app(served)).get(url)
    assert broken.status_code == 404 and "cannot be read back" in broken.json()["error"]
    assert TestClient(create_app(served)).get("/api/games/g..%2F..%2Fx").status_code == 404


def test_an_agent_file_alone_plays_the_compiled_search_on_8x8_with_its_depth(tmp_path):
    """On 8x8 an agent file alone is the compiled search with its network for the think time; the
    evaluation names the depth reached; an undo starts the search's game again."""
    from neurocheckers.rules import AMERICAN8

    spec = EvaluatorSpec.for_rules(AMERICAN8, layers=1, width=8)
    save_agent(tmp_path / "agent8.safetensors", AMERICAN8, spec, init_params(jax.random.key(2), spec))
    session = play.new_session(tmp_path, "agent8.safetensors", "american8", "white", 0.05)
    assert session.opponent.spec == "compiled:0.05s:agent8.safetensors"
    play.opponent_reply(session)
    evaluation = play.session_view(session)["evaluation"]
    assert 0 <= evaluation["win_chance"] <= 1 and evaluation["search"]["depth"] >= 1
    assert "(compiled search to depth " in evaluation["text"]
    first = session.engine
    for action in legal_moves(AMERICAN8, session.state)[0].actions:
        play.play_ply(session, action, True)
    play.undo(session)
    assert session.engine is not first and len(session.plies) == 1


def test_a_forced_reply_keeps_the_last_search_s_win_chance(tmp_path):
    spec = EvaluatorSpec.for_rules(AMERICAN6, layers=1, width=8)
    save_agent(tmp_path / "agent6.safetensors", AMERICAN6, spec, init_params(jax.random.key(2), spec))
    start = parse_fen(AMERICAN6, "B:W5,16:B1")  # Black must take 1x8, its only move
    session = play.new_session(tmp_path, "agent6.safetensors", "american6", "white", 0.05, start=start)
    session.evaluation = {"ply": 0, "win_chance": 0.3, "text": "your win chance: 70% (an earlier search)"}
    play.opponent_reply(session)
    assert session.evaluation["win_chance"] == 0.3 and "search" not in session.evaluation
    assert session.evaluation["text"] == "your win chance: 70% (a forced move: the opponent's last search)"


def test_a_game_file_is_parsed_once_while_it_is_unchanged(tmp_path):
    from neurocheckers.web.games import open_games

    path = tmp_path / "g.pdn"
    path.write_text('[Event "a"]\n[GameType "21"]\n1. 11-15 23-19 *\n')
    first = open_games(path)
    assert open_games(path) is first and len(first.games) == 1  # the parsed file, kept
    path.write_text('[Event "a"]\n[GameType "21"]\n1. 11-15 23-19 *\n\n[Event "b"]\n1. 9-13 *\n')
    assert len(open_games(path).games) == 2  # changed: parsed again


def test_a_thinned_run_without_a_lineage_counts_its_epochs_and_offers_its_agent_files(served, tmp_path):
    """A committed learner run keeps its metrics thinned to the probe epochs and its final network
    alone: its row counts the epochs its rows reach, and its agent files stand in for the lineage."""
    import shutil

    [run] = (served / "runs").iterdir()
    copy = tmp_path / "runs" / run.name
    shutil.copytree(run, copy)
    shutil.rmtree(copy / "lineage", ignore_errors=True)
    (copy / "lineage.csv").unlink(missing_ok=True)
    shutil.copy(served / "agent.safetensors", copy / "final.safetensors")
    header, *rows = (copy / "metrics.csv").read_text().splitlines()
    (copy / "metrics.csv").write_text("\n".join([header, rows[0], rows[3]]) + "\n")  # epochs 0 and 3
    thinned = TestClient(create_app(tmp_path))
    [summary] = thinned.get("/api/runs").json()["runs"]
    assert summary["epochs_done"] == 4 and f"4 of {summary['epochs']} epochs" in summary["stop_reason"]
    detail = thinned.get("/api/run", params={"path": summary["path"]}).json()
    assert detail["lineage"] == [] and detail["agents"] == [f"{summary['path']}/final.safetensors"]
