"""An external engine over the line protocol (``external_engine``), played by the project's own fake
engine (tests/protocol_engine.py) through the match loop the CLI uses."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from neurocheckers.compiled.board import Position
from neurocheckers.match.arena import MatchOptions
from neurocheckers.match.host import MoveClock, play_any_match
from neurocheckers.players import external as external_engine
from neurocheckers.players.external import (
    EngineError,
    ExternalEnginePlayer,
    parse_external,
    parse_reply,
    reply_actions,
)
from neurocheckers.players.jax_players import parse_player
from neurocheckers.players.registry import parse_spec
from neurocheckers.rules.presets import AMERICAN6, AMERICAN8

FAKE = str(Path(__file__).resolve().parent / "protocol_engine.py")
START = Position(0xFFF, 0, 0xFFF << 20, 0, 0)


def fake(rules, *args: str, seconds: float | None = 0.01) -> ExternalEnginePlayer:
    command = (sys.executable, FAKE, "--rules", rules.name, *args)
    return ExternalEnginePlayer("fake", command, rules, seconds)


def test_reply_lines():
    reply = parse_reply("bestmove 9x27 captured 14,23 depth 13 nodes 5000 score -12")
    assert reply.squares == (9, 27) and reply.capture and reply.captured == {14, 23}
    assert reply.info == {"depth": 13, "nodes": 5000, "score": -12}
    assert parse_reply("bestmove 11-15").squares == (11, 15)
    for bad in ["garbage!", "bestmove", "bestmove 11-15-19", "bestmove a-b", "bestmove 9x18 depth"]:
        with pytest.raises(ValueError):
            parse_reply(bad)


def test_moves_map_to_our_actions():
    (action,) = reply_actions(AMERICAN8, START, parse_reply("bestmove 11-15"))
    assert action % 32 == 10  # from square 11
    with pytest.raises(ValueError, match=r"not legal here \(legal: .*11-15"):
        reply_actions(AMERICAN8, START, parse_reply("bestmove 11-17"))
    # a double jump: Black's man on 1 over 6 and 15 (White moves up, so these are White's men)
    double = Position(1, 0, (1 << 5) | (1 << 14), 0, 0)
    assert len(reply_actions(AMERICAN8, double, parse_reply("bestmove 1x10x19"))) == 2
    assert len(reply_actions(AMERICAN8, double, parse_reply("bestmove 1x19 captured 6,15"))) == 2
    with pytest.raises(ValueError, match="not legal"):
        reply_actions(AMERICAN8, double, parse_reply("bestmove 1x19 captured 6"))


@pytest.mark.parametrize("short", [False, True])
def test_a_whole_match_plays(short):
    engine = fake(AMERICAN6, *(["--short"] if short else []))
    clock = MoveClock()
    options = MatchOptions(games=2, batch=2, seed=1)
    try:
        records = play_any_match(AMERICAN6, engine, parse_player("random", AMERICAN6), options, clock=clock)
    finally:
        process = engine._process.process
        engine.close()
    assert process.poll() is not None  # closed
    assert np.asarray(records.finished).all() and len(records.score) == 2
    assert clock.moves[True] > 0 and clock.moves[False] > 0
    assert clock.depth_per_move(True) == 1 and clock.searches[True] <= clock.moves[True]


@pytest.mark.parametrize(
    ("fail", "message"),
    [
        ("crash", "exited .code 1. before answering 'go .*its last words: 'fake engine: crashed on purpose'"),
        ("silent", "no reply to 'go .* within"),
        ("garbage", "answered 'garbage!' in .*expected 'bestmove MOVE'"),
        ("illegal", "answered 'bestmove 1-32 depth 1' in .*not legal here"),
    ],
)
def test_a_failing_engine_gives_one_line(monkeypatch, fail, message):
    monkeypatch.setattr(external_engine, "REPLY_GRACE", 1.0)
    engine = fake(AMERICAN8, "--fail", fail)
    clock = MoveClock()
    options = MatchOptions(games=1, batch=1)
    with pytest.raises(EngineError, match=f"^engine fake: {message}") as info:
        play_any_match(AMERICAN8, engine, parse_player("random", AMERICAN8), options, clock=clock)
    assert "\n" not in str(info.value)
    assert engine._process.process.poll() is not None  # killed, not left behind


def test_an_engine_that_never_gets_ready(monkeypatch):
    monkeypatch.setattr(external_engine, "START_TIMEOUT", 1.0)
    engine = fake(AMERICAN8, "--fail", "no-ready")
    with pytest.raises(EngineError, match="^engine fake: no reply to start within 1 s$"):
        engine.new_game()


def test_specs(tmp_path, monkeypatch):
    wrapper = tmp_path / "fake.sh"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} "$@"\n')
    wrapper.chmod(0o755)
    player = parse_spec(f"engine:{wrapper}:0.2", AMERICAN8)  # through the registry
    assert player.seconds == 0.2 and player.command == (str(wrapper),)
    assert parse_external(f"engine:{wrapper}:equal", AMERICAN8).equal_time
    for bad, what in [(f"engine:{wrapper}:0", "time '0'"), (f"engine:{wrapper}:x", "time 'x'"),
                      ("engine:/no/such/engine:1", "no executable '/no/such/engine'"),
                      ("engine::1", "expected one of")]:  # fmt: skip
        with pytest.raises(ValueError, match=what) as info:
            parse_external(bad, AMERICAN8)
        assert "\n" not in str(info.value)
    monkeypatch.setenv(external_engine.DARKHORSE_ENV, str(wrapper))
    assert external_engine.darkhorse_built()
    assert parse_external("darkhorse:0.1", AMERICAN8).command == (str(wrapper),)
    with pytest.raises(ValueError, match="american8 only"):
        parse_spec("darkhorse:0.1", AMERICAN6)
    monkeypatch.setenv(external_engine.DARKHORSE_ENV, str(tmp_path / "none"))
    assert not external_engine.darkhorse_built()
    with pytest.raises(ValueError, match="build it with scripts/build_darkhorse.sh"):
        parse_external("darkhorse:0.1", AMERICAN8)


def test_the_match_command_says_one_line(tmp_path, capsys):
    from neurocheckers.cli.main import main

    wrapper = tmp_path / "crash.sh"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} --fail crash "$@"\n')
    wrapper.chmod(0o755)
    spec = f"engine:{wrapper}:0.1"
    assert main(["match", spec, "random", "--rules", "american8", "--games", "1", "--json"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"neurocheckers: error: engine {spec}: exited (code 1)")


def _host_move(state, source: int, dest: int) -> int:
    """Our action moving the piece on ``source`` to ``dest`` (1-based squares)."""
    from neurocheckers.rules.notation import action_squares

    legal = np.flatnonzero(np.asarray(state.legal_action_mask))
    return int(next(a for a in legal if action_squares(AMERICAN8, state, int(a))[:2] == (source, dest)))


def test_an_engine_that_asks_gets_the_positions_since_the_last_mans_move():
    """The fake engine, with ``--history``, answers with the number of earlier positions it got: none
    at first, none after White's man moves, then two more each turn while only kings move."""
    from neurocheckers.rules.engine import from_position, step

    engine = fake(AMERICAN8, "--history", seconds=0.01)
    # Black: a king on 1; White: a king on 32 and a man on 29. White's replies: the man, then the
    # king back and forth. Black's king cannot reach a capture in four moves.
    state = from_position(AMERICAN8, 0, 1 << 0, 1 << 28, 1 << 31)
    replies = [(29, 25), (32, 27), (27, 32), (32, 27)]
    game = engine.new_game()
    try:
        for reply in replies:
            state = step(AMERICAN8, state, game(state))
            state = step(AMERICAN8, state, _host_move(state, *reply))
    finally:
        engine.close()
    assert [info.score for info in game.infos] == [0, 0, 2, 4]
