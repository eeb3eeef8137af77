"""Bad input to the player kinds and the commands that play them, as one line naming the bad value
(issue 55, item 7): a gauntlet selection that selects nothing, two equal-time players, a folder where
an agent file goes, and ``--rules`` help that names every preset the commands accept."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from neurocheckers.cli import main
from neurocheckers.match.arena import MatchOptions
from neurocheckers.match.host import play_any_match
from neurocheckers.players.compiled import parse_compiled
from neurocheckers.players.registry import parse_spec
from neurocheckers.rules.presets import AMERICAN8, NAMED_RULES

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_errors import error_line  # noqa: E402


def test_a_gauntlet_selecting_no_match_is_one_line_and_makes_no_folder(tmp_path, capsys):
    out = tmp_path / "g"
    args = ["gauntlet", "random", "--rules", "american8", "--openings", "2", "--out", str(out)]
    assert main([*args, "--only", "nosuchplayer"]) == 2
    line = error_line(capsys, "--only nosuchplayer", "selects no match", "greedy-material")
    assert "alphabeta:1" in line
    assert main([*args, "--kinds", "equal-depth"]) == 2  # a player without an agent file has none
    error_line(capsys, "--kinds equal-depth", "kinds: ladder, calibration")
    assert not out.exists()


def test_two_equal_time_players_are_refused(capsys):
    a, b = parse_spec("compiled:equal", AMERICAN8), parse_spec("compiled:equal", AMERICAN8)
    with pytest.raises(ValueError, match="both play 'equal'"):
        play_any_match(AMERICAN8, a, b, MatchOptions(games=2, batch=2))
    assert main(["match", "compiled:equal", "compiled:equal", "--rules", "american8", "--games", "2"]) == 2
    error_line(capsys, "'compiled:equal'", "both play 'equal'", "0.1s")


def test_a_folder_where_an_agent_file_goes(tmp_path, capsys):
    with pytest.raises(ValueError, match="is a folder, not an agent file") as info:
        parse_compiled(f"compiled:0.05s:{tmp_path}", AMERICAN8)
    assert "os error" not in str(info.value) and str(tmp_path) in str(info.value)
    for spec in (f"alphabeta:2:{tmp_path}", f"timed:0.1s:{tmp_path}"):
        with pytest.raises(ValueError, match="is a folder, not an agent file"):
            parse_spec(spec, AMERICAN8)
    args = ["match", f"compiled:0.05s:{tmp_path}", "random", "--rules", "american8", "--games", "2"]
    assert main(args) == 2
    error_line(capsys, str(tmp_path), "is a folder")


@pytest.mark.parametrize("command", ["match", "gauntlet", "endgame build"])
def test_rules_help_names_every_preset(command, capsys):
    assert main([*command.split(), "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for name in NAMED_RULES:
        assert name in text, name


@pytest.mark.parametrize(
    "args, words",
    [
        ([], ["--agent PATH or --opponent SPEC"]),
        (["--agent", "x.safetensors", "--opponent", "random"], ["--agent PATH or --opponent SPEC"]),
        (["--opponent", "random", "--search", "mcts"], ["--search and --endgame-db go with --agent"]),
        (["--opponent", "nosuch:1"], ["bad player spec 'nosuch:1'"]),
        (["--opponent", "openspiel:mcts:10", "--rules", "american8"], ["OpenSpiel's bots cannot play"]),
    ],
)
def test_play_takes_an_agent_file_or_any_player_spec(args, words, capsys):
    assert main(["play", *args]) == 2
    error_line(capsys, *words)
