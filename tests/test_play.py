"""Tests of ``neurocheckers play``: the game loop driven through scripted input, and its CLI errors.

The agent is a 1 x 8 MLP. With MCTS (``FAST``) it searches 16 simulations (``max_simulations=16``),
so one search size is compiled for the whole file; with the timed alpha-beta search (the default) it
thinks 0.05 s a move. No test asserts how long anything took.
"""

from __future__ import annotations

import io
import re
import sys

import jax
import pytest

from neurocheckers import play
from neurocheckers.analysis.games import load_games, save_games
from neurocheckers.cli import main
from neurocheckers.match import turns as play_turns
from neurocheckers.networks.agent_file import load_agent, save_agent
from neurocheckers.networks.evaluator import EvaluatorSpec, init_params
from neurocheckers.players import anytime
from neurocheckers.players.timed import agent_player
from neurocheckers.rules import AMERICAN6, SIMPLE6, init
from neurocheckers.rules.notation import apply_move, legal_moves, parse_fen
from neurocheckers.search.timed import SearchInfo

FAST = {"seconds": 0.05, "max_simulations": 16, "search": "mcts"}


def _agent_file(folder, rules) -> str:
    spec = EvaluatorSpec.for_rules(rules, layers=1, width=8)
    path = folder / f"{rules.name}.safetensors"
    save_agent(path, rules, spec, init_params(jax.random.key(1), spec))
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("agents")
    return {rules.name: _agent_file(folder, rules) for rules in (SIMPLE6, AMERICAN6)}


class Script:
    """``read_line`` that answers prompts from a list, then raises ``EOFError``; ``write`` collects."""

    def __init__(self, lines):
        self.lines = list(lines)
        self.out: list[str] = []
        self.prompts: list[str] = []

    def read_line(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)

    def write(self, text: str) -> None:
        self.out.append(str(text))

    @property
    def text(self) -> str:
        return "\n".join(self.out)


def test_bad_moves_are_answered_and_undo_takes_back_a_pair(files):
    rules = AMERICAN6
    agent = load_agent(files[rules.name], rules)
    start = jax.device_get(init(rules))
    first = legal_moves(rules, start)[0].notation
    listing = ", ".join(m.notation for m in legal_moves(rules, start))
    script = Script(["", "hello there", "1-2", "99-100", first, "undo", "moves", "help", first, "quit"])
    game = play.play_game(
        agent, rules, human_color="black", read_line=script.read_line, write=script.write, **FAST
    )
    text = script.text
    assert text.startswith("preparing the agent...")
    assert f"malformed move 'hello there'; legal moves: {listing}" in text
    assert f"illegal move '1-2'; legal moves: {listing}" in text
    assert f"illegal move '99-100'; legal moves: {listing}" in text
    assert text.count(f"you play {first}") == 2
    assert text.count("agent (White) plays") == 2
    assert "took back " + first in text
    assert f"legal moves: {listing}" in script.out  # the 'moves' command, after the undo
    assert play.HELP in script.out
    assert "you quit; the game is abandoned." in text
    # The board advanced: the human's move and the agent's reply, once (the undone pair is gone).
    assert game["moves"][0] == first and len(game["moves"]) == 2
    assert game["result"] == "*" and game["black"] == "human" and game["white"] == "agent"
    after = apply_move(rules, apply_move(rules, start, game["moves"][0]), game["moves"][1])
    assert int(after.color) == int(start.color)
    assert game["plies"] == int(after.ply)


def test_undo_before_moving_and_end_of_input(files):
    rules = SIMPLE6
    agent = load_agent(files[rules.name], rules)
    script = Script(["undo"])
    game = play.play_game(
        agent, rules, human_color="white", read_line=script.read_line, write=script.write, **FAST
    )
    assert "agent (Black) plays" in script.text  # the agent opens when the human is White
    assert "nothing to undo" in script.text
    assert "no more input: quitting." in script.text
    assert len(game["moves"]) == 1 and game["result"] == "*"
    assert script.prompts[0] == "your move (White): "


def test_full_game_is_announced(files, tmp_path):
    """A scripted human asks for the moves and plays the first one, until the game ends."""
    rules = SIMPLE6
    agent = load_agent(files[rules.name], rules)
    out: list[str] = []

    def read_line(prompt: str) -> str:
        last = out[-1] if out else ""
        if last.startswith("legal moves: "):
            return last.removeprefix("legal moves: ").split(", ")[0]
        return "moves"

    game = play.play_game(agent, rules, human_color="black", read_line=read_line, write=out.append, **FAST)
    assert game["result"] in ("1-0", "0-1", "1/2-1/2")
    end = {"1-0": "you win!", "0-1": "the agent wins.", "1/2-1/2": "it is a draw."}[game["result"]]
    assert out[-1] == end
    assert "game over" in out[-2]
    assert not any(line.startswith(("malformed", "illegal")) for line in out)
    # The returned game is a valid game file entry: its moves replay to its result.
    path = save_games(tmp_path / "game.json", rules, [game])
    assert load_games(path).games[0]["moves"] == game["moves"]


def test_play_game_refuses_bad_settings(files):
    agent = load_agent(files["simple6"])
    with pytest.raises(ValueError, match="black or white, got 'purple'"):
        play.play_game(agent, SIMPLE6, human_color="purple")
    with pytest.raises(ValueError, match="seconds must be > 0"):
        play.play_game(agent, SIMPLE6, seconds=0)
    with pytest.raises(ValueError, match="plays 'simple6', not 'american6'"):
        play.play_game(agent, AMERICAN6)
    with pytest.raises(ValueError, match="search must be one of compiled, alphabeta, mcts, got 'minimax'"):
        play.play_game(agent, SIMPLE6, search="minimax")
    with pytest.raises(ValueError, match="at most 60 for the alphabeta search"):
        play.play_game(agent, SIMPLE6, seconds=61)


def test_cli_errors_are_one_line(files, capsys, tmp_path):
    cases = [
        (["--agent", files["simple6"], "--rules", "american6"], "agent plays 'simple6', but 'american6'"),
        (["--agent", files["simple6"], "--human", "purple"], "--human must be black or white, got 'purple'"),
        (["--agent", files["simple6"], "--seconds", "0"], "--seconds must be a positive number, got 0.0"),
        (["--agent", str(tmp_path / "none.safetensors")], "no agent file"),
        (["--agent", files["simple6"], "--rules", "chess"], "unknown rules preset 'chess'"),
        (
            ["--agent", files["simple6"], "--search", "minimax"],
            "--search must be one of compiled, alphabeta, mcts",
        ),
        (["--agent", files["simple6"], "--seconds", "90"], "--seconds must be at most 60, got 90"),
        (
            ["--agent", files["simple6"], "--seconds", "1e9", "--search", "mcts"],
            "--seconds must be at most 60",
        ),
    ]
    for args, message in cases:
        assert main(["play", *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("neurocheckers: error: ") and message in err
        assert err.count("\n") == 1


def test_cli_play_reads_stdin_and_saves(files, capsys, tmp_path, monkeypatch):
    first = legal_moves(AMERICAN6, jax.device_get(init(AMERICAN6)))[0].notation
    monkeypatch.setattr(sys, "stdin", io.StringIO(f"nonsense\n{first}\nquit\n"))
    # One compiled size, as in the other tests: the CLI's warm-up would otherwise grow the search.
    monkeypatch.setattr(anytime, "prepare_agent", lambda *args, **kwargs: 16)
    monkeypatch.setattr(anytime, "_WARMED", {})
    saved = tmp_path / "played.json"
    code = main(
        ["play", "--agent", files["american6"], "--seconds", "0.05", "--search", "mcts", "--save", str(saved)]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "malformed move 'nonsense'" in out and f"you play {first}" in out
    assert "agent (White) plays" in out and "simulations in" in out and f"game saved to {saved}" in out
    game = load_games(saved).games[0]
    assert game["moves"][0] == first and game["result"] == "*" and game["white"] == "american6.safetensors"


def test_the_agent_answers_with_the_timed_alphabeta_search(files):
    """The default search: each agent move names the depth and nodes of its iterative deepening."""
    rules = AMERICAN6
    agent = load_agent(files[rules.name], rules)
    start = jax.device_get(init(rules))
    first = legal_moves(rules, start)[0].notation
    script = Script([first, "quit"])
    game = play.play_game(agent, rules, seconds=0.05, read_line=script.read_line, write=script.write)
    text = script.text
    assert "ready (alpha-beta warmed up)" in text
    replies = [line for line in script.out if line.startswith("agent (White) plays")]
    assert len(replies) == 1 and len(game["moves"]) == 2
    assert re.search(
        r"\(alpha-beta to depth [1-9]\d* \([\d,]+ nodes in [\d.]+ s\), win chance \d+%\)$", replies[0]
    )


def test_cli_play_thinks_with_alphabeta_by_default(files, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    code = main(["play", "--agent", files["simple6"], "--seconds", "0.05", "--human", "white"])
    out = capsys.readouterr().out
    assert code == 0 and "agent (Black) plays" in out and "alpha-beta to depth" in out


def test_timed_turns_a_multi_jump_and_the_outlook_in_words(files):
    """A node budget is deterministic; a multi-jump is one turn; proven results are named."""
    rules = AMERICAN6
    agent = load_agent(files[rules.name], rules)
    player = agent_player(agent, rules, nodes=500)
    # White's man on 5 and 11 can be jumped by the black man on 1: 1x8x13, the only move (forced).
    forced = play_turns.player_turn(player, player.new_game(0), rules, parse_fen(rules, "B:W5,11:B1"))
    assert forced.move.notation == "1x8x13" and forced.info is None and forced.nodes == 0
    assert play_turns.search_text(forced) == "forced"
    searched = play_turns.player_turn(player, player.new_game(0), rules, jax.device_get(init(rules)))
    assert searched.info.depth >= 1 and 0 < searched.nodes <= 500
    assert searched.move in legal_moves(rules, jax.device_get(init(rules)))
    assert play_turns.search_text(searched).startswith(f"alpha-beta to depth {searched.info.depth:g} (")
    win, loss = SearchInfo(0, 3, 10, 0.1, 998.0), SearchInfo(0, 3, 10, 0.1, -997.0)
    assert play_turns.chance_text(win) == "a proven win" and play_turns.chance_text(loss) == "a proven loss"
    assert play_turns.timed_win_chance(win) == 1.0 and play_turns.timed_win_chance(loss) == 0.0
    even = SearchInfo(0, 3, 10, 0.1, 0.26)
    assert play_turns.chance_text(even) == "win chance 63%" and play_turns.timed_win_chance(
        even
    ) == pytest.approx(0.63)
    assert play_turns.timed_win_chance(even, network=False) is None
    assert play_turns.chance_text(even, network=False) == "score +0.26"


@pytest.fixture(scope="module")
def american8_file(tmp_path_factory):
    from neurocheckers.rules import AMERICAN8

    return _agent_file(tmp_path_factory.mktemp("agents8"), AMERICAN8)


def test_8x8_plays_the_compiled_search_by_default_and_says_its_depth(american8_file):
    """On 8x8 an MLP agent thinks with the compiled search, its network at the leaves; each reply
    names the depth reached; an undo starts the search's game again from the position taken back to."""
    from neurocheckers.rules import AMERICAN8

    agent = load_agent(american8_file, AMERICAN8)
    assert play_turns.default_search(AMERICAN8, american8_file, 0.05) == "compiled"
    assert play_turns.default_search(AMERICAN6, american8_file, 0.05) == "alphabeta"
    first = legal_moves(AMERICAN8, jax.device_get(init(AMERICAN8)))[0].notation
    script = Script([first, "undo", first, "quit"])
    game = play.play_game(agent, AMERICAN8, seconds=0.05, read_line=script.read_line, write=script.write,
                          agent_path=american8_file)  # fmt: skip
    assert "ready (compiled search warmed up)" in script.text
    replies = [line for line in script.out if line.startswith("agent (White) plays")]
    assert len(replies) == 2 and len(game["moves"]) == 2
    for reply in replies:
        assert re.search(
            r"\(compiled search to depth [1-9]\d* \([\d,]+ nodes in [\d.]+ s\), win chance \d+%\)$", reply
        )
    with pytest.raises(ValueError, match="needs the agent's file"):
        play.play_game(agent, AMERICAN8, seconds=0.05, search="compiled")


def test_cli_play_on_8x8_thinks_with_the_compiled_search(american8_file, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    code = main(["play", "--agent", american8_file, "--seconds", "0.05", "--human", "white"])
    out = capsys.readouterr().out
    assert code == 0 and "agent (Black) plays" in out and "compiled search to depth" in out
