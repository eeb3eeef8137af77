"""The game session ``play`` and the web share (``match.session.GameLine``): plies, whole turns,
undo, and american8's repetition draw seen where a game is played a ply at a time."""

from __future__ import annotations

import jax
import pytest

from neurocheckers.match.session import GameLine
from neurocheckers.rules import AMERICAN8, SIMPLE6, init
from neurocheckers.rules.notation import legal_moves, parse_fen, parse_move

SHUFFLE = ["4-8", "29-25", "8-4", "25-29"]
"""Two kings moving out and back: the start position again after four plies."""


def _play(line: GameLine, notation: str, by_human: bool) -> None:
    line.play_move(parse_move(line.rules, line.state, notation), by_human)


def test_a_threefold_repetition_draws_and_an_undo_takes_it_back():
    line = GameLine(AMERICAN8, parse_fen(AMERICAN8, "B:WK29:BK4"))
    for i, notation in enumerate(SHUFFLE * 2):
        assert not bool(line.state.terminated), i
        _play(line, notation, by_human=i % 2 == 0)
    assert bool(line.state.terminated) and int(line.state.result) == 0  # the start's third occurrence
    assert line.repetition_reason() == "draw: threefold repetition"
    assert [t.move.notation for t in line.turns()] == SHUFFLE * 2
    taken = line.undo_person()  # the person's 8-4 and the reply 25-29
    assert len(taken) == 2 and not bool(line.state.terminated) and len(line.plies) == 6
    assert line.repetition_reason() is None
    _play(line, "8-4", True)
    _play(line, "25-29", False)
    assert bool(line.state.terminated)


def test_no_repetition_rule_no_draw_and_nothing_to_undo():
    line = GameLine(SIMPLE6, jax.device_get(init(SIMPLE6)))
    with pytest.raises(ValueError, match="nothing to undo: you have not moved yet"):
        line.undo_person()
    move = legal_moves(SIMPLE6, line.state)[0]
    line.play_move(move, by_human=False)
    with pytest.raises(ValueError, match="nothing to undo"):
        line.undo_person()  # only the opponent has moved
    assert line.turns()[0].move == move and not line.turns()[0].by_human


def test_the_web_says_a_repetition_ended_the_game(tmp_path):
    from neurocheckers.web import session as web

    game = web.new_session(tmp_path, "random", "american8", "black", start=parse_fen(AMERICAN8, "B:WK29:BK4"))
    assert isinstance(game, GameLine)
    for i, notation in enumerate(SHUFFLE * 2):
        _play(game, notation, by_human=i % 2 == 0)
    assert web.outcome(game) == {"over": True, "result": "1/2-1/2", "reason": "draw: threefold repetition"}
