"""The web server starts no program a request names: external engines on the Play page are only those
named when the server started (``serve --engine NAME=PATH``), asked for by name, and shown by name."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():  # Starlette >= 1.0 prefers httpx2 to httpx; both work
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from neurocheckers.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_errors import error_line  # noqa: E402

from neurocheckers.players.external import named_engine_spec, named_engines  # noqa: E402
from neurocheckers.web.app import create_app  # noqa: E402

FAKE = Path(__file__).resolve().parent / "protocol_engine.py"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("served")
    script = folder / "engine.sh"  # a program inside the served folder: not runnable by a request either
    script.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} --rules american6 "$@"\n')
    script.chmod(0o755)
    return folder


@pytest.fixture
def started(monkeypatch) -> list:
    """Every program the process tries to start from here on (none is started)."""
    calls = []

    def refuse(command, *args, **kwargs):
        calls.append(command)
        raise AssertionError(f"a request started {command!r}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    return calls


@pytest.mark.parametrize("named", [False, True])
def test_no_request_starts_a_program(served, started, named):
    engines = [f"fake={served / 'engine.sh'}"] if named else []
    client = TestClient(create_app(served, engines=engines, save_games=False))
    specs = ["engine:/bin/false:0.1", "engine:/bin/sh:equal", f"engine:{served / 'engine.sh'}:0.1",
             "engine:engine.sh:0.1", "darkhorse:0.1", "darkhorse:equal"]  # fmt: skip
    for spec in specs:
        response = client.post("/api/games", json={"opponent": spec, "rules": "american8"})
        assert response.status_code == 400, (spec, response.text)
        error = response.json()["error"]
        assert "only the engines named when it started" in error and "\n" not in error
        assert ("engine:fake:SECONDS" in error) == named, error
    assert started == []


def test_a_named_engine_plays_by_its_name(served):
    client = TestClient(create_app(served, engines=[f"fake={served / 'engine.sh'}"], save_games=False))
    choices = client.get("/api/info").json()["opponents"]["american6"]
    assert {"spec": "engine:fake:equal", "label": "fake for the think time", "group": "Engines"} in choices
    response = client.post(
        "/api/games",
        json={"opponent": "engine:fake:equal", "rules": "american6", "human": "white", "think_seconds": 0.1},
    )
    assert response.status_code == 201, response.text
    game = response.json()
    assert str(served) not in response.text  # the engine's path is never shown
    reply = client.post(f"/api/games/{game['id']}/reply")
    assert reply.status_code == 200, reply.text
    assert len(reply.json()["turns"]) == 1 and reply.json()["human_to_move"]
    assert str(served) not in reply.text and reply.json()["opponent"] == "engine:fake:equal"


def test_engine_names_are_checked_at_start(served, tmp_path):
    program = str(served / "engine.sh")
    assert named_engines([f"fake={program}"]) == {"fake": program}
    assert named_engine_spec("engine:fake:0.1", {"fake": program}) == f"engine:{program}:0.1"
    assert named_engine_spec("darkhorse:equal", {"darkhorse": program}) == f"engine:{program}:equal"
    for bad, what in [
        ("fake", "is not NAME=PATH"),
        ("a b=/bin/sh", "engine name 'a b'"),
        (f"x={tmp_path}", "no executable file"),
        ("x=/no/such", "no executable file"),
    ]:
        with pytest.raises(ValueError, match=what):
            named_engines([bad])
    with pytest.raises(ValueError, match="given twice"):
        named_engines([f"x={program}", f"x={program}"])


def test_serve_refuses_a_bad_engine(served, capsys):
    assert main(["serve", str(served), "--engine", "x=/no/such/program"]) == 2
    error_line(capsys, "--engine", "/no/such/program")


def test_an_engine_that_fails_mid_game_is_a_502(served):
    crash = served / "crash.sh"
    fail = "--rules american6 --fail crash --after 0"
    crash.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} {fail} "$@"\n')
    crash.chmod(0o755)
    client = TestClient(create_app(served, engines=[f"crash={crash}"], save_games=False))
    game = client.post(
        "/api/games", json={"opponent": "engine:crash:0.1", "rules": "american6", "human": "white"}
    )
    assert game.status_code == 201, game.text
    reply = client.post(f"/api/games/{game.json()['id']}/reply")
    assert reply.status_code == 502, reply.text
    error = reply.json()["error"]
    assert error.startswith("the opponent failed: engine engine:crash:0.1: exited") and "\n" not in error
    assert str(served) not in error
