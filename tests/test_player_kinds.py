"""The player registry (``players.registry``): every spec parsed through it, a new engine registered by
one line and played in a match, limits and ``--help`` from one place, the search reports."""

from __future__ import annotations

import jax
import pytest
from fake_engine import FAKE_KIND, FakeEngine

from neurocheckers.players import registry as player_kinds
from neurocheckers.players.registry import PlayerKind, SearchReport, parse_spec, spec_forms
from neurocheckers.rules import AMERICAN8, SIMPLE6
from neurocheckers.search import limits


@pytest.fixture
def fake_kind():
    player_kinds.register(FAKE_KIND)
    yield FAKE_KIND
    player_kinds.unregister("fake")


def test_a_registered_engine_plays_a_match_and_reports_its_depth(fake_kind):
    from neurocheckers.match.arena import MatchOptions
    from neurocheckers.match.host import MoveClock, parse_any_player, play_any_match

    fake = parse_any_player("fake:2", SIMPLE6)
    assert isinstance(fake, FakeEngine) and fake.index == 2
    assert "fake:N" in spec_forms()
    clock = MoveClock()
    records = play_any_match(
        SIMPLE6, fake, parse_any_player("random", SIMPLE6), MatchOptions(2, batch=2), clock=clock
    )
    assert records.score.shape == (2,) and records.finished.all()
    assert fake.warmed  # warm_up() was called before any move was timed
    assert clock.depth_per_move(True) == 2.0 and clock.depth_per_move(False) is None
    with pytest.raises(ValueError, match="N must be in 1..9, got 'x'"):
        parse_spec("fake:x", SIMPLE6)


def test_unknown_kinds_and_rules_a_kind_does_not_play():
    with pytest.raises(
        ValueError, match="bad player spec 'nope:3'; expected one of: random .*compiled:SECONDSs"
    ):
        parse_spec("nope:3", SIMPLE6)
    player_kinds.register(PlayerKind("only8", "only8", "x", lambda spec, rules: spec, rules=("american8",)))
    try:
        assert parse_spec("only8", AMERICAN8) == "only8"
        with pytest.raises(ValueError, match="'only8' plays american8 only; got --rules simple6"):
            parse_spec("only8", SIMPLE6)
    finally:
        player_kinds.unregister("only8")


def test_limits_come_from_one_constant_each():
    with pytest.raises(
        ValueError, match=f"in 1..{limits.MAX_ALPHABETA_DEPTH}, got {limits.MAX_ALPHABETA_DEPTH + 1}"
    ):
        parse_spec(f"alphabeta:{limits.MAX_ALPHABETA_DEPTH + 1}", SIMPLE6)
    parse_spec(f"alphabeta:{limits.MAX_ALPHABETA_DEPTH}", SIMPLE6)
    help_text = player_kinds.spec_help()
    for kind in player_kinds.BUILTIN_KINDS:
        assert kind.forms in help_text
    assert f"D in 1..{limits.MAX_ALPHABETA_DEPTH})" in help_text
    assert f"depth D in 1..{limits.MAX_PYDRAUGHTS_DEPTH}" in help_text
    assert f"D in 1..{limits.MAX_OPENSPIEL_DEPTH} actions" in help_text


def test_search_reports_from_any_search_result():
    from types import SimpleNamespace

    timed = SimpleNamespace(action=7, depth=5, nodes=900, seconds=0.1, score=0.25)
    assert SearchReport.of(timed) == SearchReport((7,), 0.25, 5.0, 900, 0.1)
    compiled = SimpleNamespace(
        actions=(3, 9), move=(1, 2, 3), depth=12, nodes=10**6, seconds=0.09, score=-10000
    )
    assert SearchReport.of(compiled).move == (3, 9)
    report = SearchReport((1,), 0.0, 1, 1, 0.0)
    assert SearchReport.of(report) is report


def test_match_help_lists_every_kind_from_the_registry():
    from typer.testing import CliRunner

    from neurocheckers.cli.main import app

    text = " ".join(CliRunner().invoke(app, ["match", "--help"], terminal_width=200).output.split())
    for kind in player_kinds.BUILTIN_KINDS:
        assert " ".join(kind.forms.split()) in text, kind.forms


def test_match_of_the_compiled_search_shows_each_sides_time_and_depth(capsys):
    from neurocheckers.cli.main import main

    args = ["match", "compiled:300n", "timed:300n:material", "--rules", "american8", "--games", "2"]
    assert main([*args, "--max-plies", "16", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("seconds per move"))
    depths = line.split("depth per move: ")[1]
    a, b = (part.split()[1] for part in depths.split(", "))
    assert float(a) >= 1 and float(b) >= 1


def test_the_compiled_search_on_the_american8_ladder_and_its_depth_in_gauntlet_rows(tmp_path):
    from neurocheckers.analysis.gauntlet import (
        GauntletConfig,
        equal_time_player,
        pairings,
        play_row,
        seconds_text,
    )
    from neurocheckers.rules.openings import load_openings, opening_states

    config = GauntletConfig(openings=1, batch=2, max_plies=12, ladder="american8", equal_time=True)
    opponents = [row[2] for row in pairings("timed:0.1s:agent.safetensors", config) if row[0] == "ladder"]
    assert "compiled:100000n" in opponents
    # the compiled search takes a network: the equal-time player of the american8 ladder
    assert equal_time_player("agent.safetensors", "american8") == "compiled:equal:agent.safetensors"
    assert equal_time_player("agent.safetensors", "material") == "timed:equal:agent.safetensors"
    from neurocheckers.networks.agent_file import save_agent
    from neurocheckers.networks.evaluator import EvaluatorSpec, init_params

    cnn = EvaluatorSpec.for_rules(AMERICAN8, 1, 4, architecture="cnn", cnn_channels=(2,), cnn_dense=4)
    save_agent(tmp_path / "cnn.safetensors", AMERICAN8, cnn, init_params(jax.random.key(0), cnn))
    assert equal_time_player(str(tmp_path / "cnn.safetensors"), "american8").startswith("timed:equal:")
    starts = opening_states(AMERICAN8, load_openings(AMERICAN8, 1))
    row = play_row(AMERICAN8, "ladder", "compiled:300n", "alphabeta:1", starts, config)
    assert row.games == 2 and row.player_depth >= 1 and row.opponent_depth is None
    assert seconds_text(row).split(" d ")[1].endswith(" -")


def test_the_compiled_search_in_the_equal_time_mode():
    """``compiled:equal`` gets the clock's allowance each move, as ``timed:equal`` does: our batched
    opponent then moves one game at a time, and both sides are timed."""
    from neurocheckers.match.arena import MatchOptions
    from neurocheckers.match.host import MoveClock, equal_time, parse_any_player, play_any_match

    a, b = parse_any_player("compiled:equal", SIMPLE6), parse_any_player("alphabeta:1", SIMPLE6)
    assert equal_time(a) and not equal_time(b)
    clock = MoveClock()
    records = play_any_match(SIMPLE6, a, b, MatchOptions(2, batch=2, max_plies=20), clock=clock)
    assert len(records.score) == 2
    assert clock.per_move(True) > 0 and clock.per_move(False) > 0
    assert clock.depth_per_move(True) >= 1 and clock.depth_per_move(False) is None


def test_where_a_spec_names_its_agent_file():
    from neurocheckers.players.registry import spec_agent_file, with_agent_file

    named = {
        "greedy:a.safetensors": "a.safetensors",
        "alphabeta:3:a.safetensors": "a.safetensors",
        "alphabeta:3:a.safetensors:db": "a.safetensors",
        "mcts:a.safetensors:16": "a.safetensors",
        "timed:1s:a.safetensors": "a.safetensors",
        "compiled:0.1s:a.safetensors": "a.safetensors",
    }
    for spec, file in named.items():
        assert spec_agent_file(spec) == file, spec
        assert with_agent_file(spec, "x/b.safetensors") == spec.replace("a.safetensors", "x/b.safetensors")
    for spec in (
        "random",
        "alphabeta:3",
        "alphabeta:3:heuristic",
        "timed:1s:material",
        "compiled:0.1s",
        "nope:a",
    ):
        assert spec_agent_file(spec) is None, spec
    with pytest.raises(ValueError, match="'random' names no agent file"):
        with_agent_file("random", "b.safetensors")


def test_a_registered_engine_reaches_every_door_with_no_other_edit(fake_kind, tmp_path, capsys, monkeypatch):
    """One module (tests/fake_engine.py) and one registration: ``match``, ``gauntlet``, ``play``,
    ``--help`` and the web's Play menu, whose game it then plays."""
    import io
    import warnings

    from neurocheckers.cli import main
    from neurocheckers.web.app import create_app

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    assert main(["match", "fake:1", "random", "--rules", "simple6", "--games", "2"]) == 0
    assert "seconds per move" in capsys.readouterr().out
    gauntlet = ["gauntlet", "fake:3", "--rules", "simple6", "--openings", "1", "--only", "random"]
    assert main([*gauntlet, "--out", str(tmp_path / "g")]) == 0
    assert "fake:3" in capsys.readouterr().out and (tmp_path / "g").is_dir()
    assert main(["match", "--help"]) == 0
    assert "fake:N: the N-th legal move (a test engine)" in " ".join(capsys.readouterr().out.split())
    play = ["play", "--opponent", "fake:1", "--rules", "simple6", "--human", "white"]
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # the person types nothing: the game is quit
    assert main(play) == 0  # the terminal game: the fake opens, then the input ends
    out = capsys.readouterr().out
    assert "ready (fake:1 warmed up)" in out and "agent (Black) plays" in out
    client = TestClient(create_app(tmp_path, save_games=False))
    choices = client.get("/api/info").json()["opponents"]["simple6"]
    assert {"spec": "fake:1", "label": "the fake engine, first legal move", "group": "Engines"} in choices
    game = client.post("/api/games", json={"opponent": "fake:1", "rules": "simple6", "human": "white"})
    assert game.status_code == 201, game.text
    reply = client.post(f"/api/games/{game.json()['id']}/reply").json()
    assert len(reply["turns"]) == 1 and reply["human_to_move"]
