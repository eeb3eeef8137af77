"""Issue 30's command-line defects: one seed range, damaged files and databases as one line (exit 2),
honest numbers (intervals in [0, 1], Elo islands, lineage epochs that exist), help examples that fit
their board, one missing-folder rule for every output, and docs whose commands run in order."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from neurocheckers.analysis.elo import RoundRobin, format_elo
from neurocheckers.analysis.gauntlet import GauntletConfig, GauntletResult, Row, format_gauntlet, rate
from neurocheckers.analysis.lineage import LineageEntry
from neurocheckers.analysis.match_report import format_table, summarize
from neurocheckers.cli import main
from neurocheckers.experiment.config import ConfigError, load_config
from neurocheckers.stats import SEED_LIMIT, check_seed

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_errors import error_line  # noqa: E402
from tiny import TINY_RUN  # noqa: E402

BIG = str(2**63)


@pytest.mark.parametrize(
    "args, option",
    [
        (["match", "random", "random", "--games", "2", "--seed", BIG], "--seed"),
        (["match", "random", "random", "--games", "2", "--seed", "-1"], "--seed"),
        (["gauntlet", "random", "--seed", BIG, "--out", "{tmp}/g"], "--seed"),
        (["evolve", "experiments/quick.toml", "--seed", BIG, "--out", "{tmp}/r"], "--seed"),
        (["evolve", "experiments/quick.toml", "--seed", "-1", "--out", "{tmp}/r"], "--seed"),
        (["evolve", "experiments/quick.toml", "--seeds", f"0,{2**32}", "--out", "{tmp}/r"], "--seeds"),
        (["evolve", "experiments/quick.toml", "--set", f"seed={2**32}", "--out", "{tmp}/r"], "seed"),
        (["lineage", "{tmp}/no-run", "--seed", "-1"], "--seed"),
        (["compare", "{tmp}/a", "{tmp}/b", "--seed", BIG], "--seed"),
        (["endgame", "check", "--db", "{tmp}/db", "--seed", "-1"], "--seed"),
        (["play", "--agent", "{tmp}/x.safetensors", "--seed", BIG], "--seed"),
    ],
)
def test_a_seed_outside_0_to_2_32_is_one_line_and_makes_no_folder(
    args, option, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(REPO)
    assert main([a.replace("{tmp}", str(tmp_path)) for a in args]) == 2
    error_line(capsys, option, f"0..{SEED_LIMIT - 1}")
    assert list(tmp_path.iterdir()) == []  # no run, gauntlet or database folder left behind


def test_one_seed_range_for_configs_and_the_library():
    assert check_seed(0) == 0 and check_seed(SEED_LIMIT - 1) == SEED_LIMIT - 1
    for bad in (-1, SEED_LIMIT, 2**63, True, 1.0, "3"):
        with pytest.raises(ValueError, match=f"seed must be an integer in 0..{SEED_LIMIT - 1}"):
            check_seed(bad)
    with pytest.raises(ConfigError, match="seed must be"):
        load_config(None, [*TINY_RUN, f"seed={SEED_LIMIT}"])
    with pytest.raises(ValueError, match="seed must be"):
        GauntletConfig(seed=-1)


def test_a_run_whose_metrics_are_not_text_is_named_in_words(tmp_path, capsys):
    from neurocheckers.experiment.folder import RunError, run_status
    from neurocheckers.experiment.run import create_run
    from neurocheckers.web.folder import run_row

    run_dir = create_run(load_config(None, [*TINY_RUN, "epochs=1", "name=binary"]), tmp_path)
    (run_dir / "metrics.csv").write_bytes(bytes(range(128, 256)) * 4)
    assert main(["evolve", "--resume", str(run_dir)]) == 2
    error_line(capsys, "metrics.csv is not UTF-8 text")
    with pytest.raises(RunError, match="metrics.csv is not UTF-8 text"):
        run_status(run_dir)
    reason = run_row(tmp_path, run_dir)["stop_reason"]
    assert "metrics.csv is not UTF-8 text" in reason and not reason.endswith("utf-8"), reason


def test_endgame_check_of_a_damaged_slice_is_one_line(small_db, tmp_path, capsys):
    db = tmp_path / "db"
    shutil.copytree(small_db, db)
    damaged = sorted(db.glob("*.wdl"))[-1]
    data = bytearray(damaged.read_bytes())
    data[0] ^= 0xFF
    damaged.write_bytes(bytes(data))
    assert main(["endgame", "check", "--db", str(db), "--sample", "5"]) == 2
    error_line(capsys, damaged.stem, "does not match its checksum", printed=True)


@pytest.mark.parametrize("scores", [[1, 1, 1, 0.5], [0, 0, 0.5, 0], [1, 0.5], [0.5, 1, 1, 1, 1, 1]])
def test_a_match_interval_stays_within_0_and_1(scores):
    n = len(scores)
    summary = summarize(np.array(scores, float), np.ones(n), np.zeros(n), np.ones(n, bool))
    low, high = summary["score_ci95"]
    assert 0.0 <= low <= summary["score"] <= high <= 1.0
    table = format_table("a", "b", "simple6", summary)
    shown = [float(x) for x in re.search(r"CI (\S+) \.\. (\S+);", table).groups()]
    assert all(0.0 <= x <= 1.0 for x in shown), table


def _row(player: str, opponent: str, score: float, kind: str = "equal-depth") -> Row:
    return Row(kind, player, opponent, 10, int(score * 10), 0, 10 - int(score * 10), 0, score, 0.1, 0.9)


def test_an_equal_depth_gauntlet_anchors_on_a_player_that_played_and_names_its_islands():
    rows = tuple(_row(f"alphabeta:{d}:net.safetensors", f"alphabeta:{d}", 0.7) for d in (1, 2, 3))
    result = GauntletResult("simple6", "net.safetensors", GauntletConfig(), rows, rate(rows))
    text = format_gauntlet(result)
    assert "random = 0" not in text
    assert "ratings (Elo, alphabeta:1 = 0" in text
    assert {r.player for r in result.ratings} == {"alphabeta:1", "alphabeta:1:net.safetensors"}
    assert result.rating_of("alphabeta:1").elo == 0.0
    assert result.rating_of("alphabeta:1:net.safetensors").elo > 0
    unrated = next(line for line in text.splitlines() if line.startswith("not rated"))
    for d in (2, 3):
        assert f"alphabeta:{d}:net.safetensors + alphabeta:{d}" in unrated
    # With random in the games, random is the anchor and every player joined to it is rated.
    joined = (
        *rows,
        _row("alphabeta:1", "random", 0.9, "calibration"),
        _row("alphabeta:2", "alphabeta:1", 0.6),
    )
    ratings = {r.player: r.elo for r in rate(joined)}
    assert ratings["random"] == 0.0 and len(ratings) == 5
    text = format_gauntlet(GauntletResult("simple6", "net", GauntletConfig(), joined, rate(joined)))
    assert "random = 0" in text and "alphabeta:3:net.safetensors + alphabeta:3" in text


def test_the_lineage_ratings_show_epochs_that_exist(tmp_path):
    entries = (LineageEntry(0, -1, float("nan"), tmp_path / "a"), LineageEntry(1, 2, 3.0, tmp_path / "b"))
    text = format_elo(RoundRobin(entries, np.array([[0.5, 0.3], [0.7, 0.5]]), 10))
    assert "-1" not in text
    by_boss = {line.split()[0]: line.split()[1] for line in text.splitlines()[1:]}
    assert by_boss == {"#0": "0", "#1": "3"}  # first epoch as the boss: 0 and the one after 2


def test_play_help_examples_are_moves_of_the_boards_they_name(capsys):
    from neurocheckers import play
    from neurocheckers.rules import get_rules, init
    from neurocheckers.rules.notation import legal_moves, parse_fen

    assert main(["play", "--help"]) == 0
    cli_help = " ".join(capsys.readouterr().out.split())
    legal = {
        ("simple6", None, "5-8"),
        ("simple6", "B:W5:B1", "1x8"),
        ("american6", "B:W5,12:B1", "1x8x15"),
        ("american8", None, "9-14"),
        ("american8", "B:W14:B9", "9x18"),
        ("american8", "B:W6,15:B1", "1x10x19"),
    }
    for name, fen, move in legal:
        rules = get_rules(name)
        state = init(rules) if fen is None else parse_fen(rules, fen)
        assert move in [m.notation for m in legal_moves(rules, state)], (name, move)
    for text in (cli_help, " ".join(play.HELP.split())):
        assert "6x6" in text and "8x8" in text
        assert text.index("6x6") < text.index("5-8") < text.index("8x8") < text.index("9x18")  # by board


def test_every_output_creates_its_missing_folders(tmp_path, capsys):
    from neurocheckers.analysis.games import save_games
    from neurocheckers.rules import SIMPLE6, init
    from neurocheckers.rules.notation import to_fen

    game = {"black": "a", "white": "b", "start_fen": to_fen(init(SIMPLE6)), "moves": ["5-8"]}
    games = save_games(tmp_path / "games.json", SIMPLE6, [{**game, "result": "*", "plies": 1}])
    gif = tmp_path / "new" / "dir" / "x.gif"
    assert main(["show", str(games), "--out", str(gif)]) == 0
    assert gif.stat().st_size > 0
    svgs = tmp_path / "other" / "svgs"
    assert main(["show", str(games), "--svg-dir", str(svgs)]) == 0
    assert len(list(svgs.glob("*.svg"))) == 2
    capsys.readouterr()
    assert main(["show", str(games), "--svg-dir", str(games)]) == 2
    error_line(capsys, "--svg-dir", "is a file")


def test_the_endgame_doc_makes_its_positions_file_before_probing_it(tmp_path):
    from neurocheckers.rules import get_rules
    from neurocheckers.rules.notation import parse_fen

    lines = (REPO / "docs" / "endgame.md").read_text().splitlines()
    uses = next(i for i, line in enumerate(lines) if "--file positions.txt" in line)
    makes = [i for i, line in enumerate(lines) if "> positions.txt" in line]
    assert makes and makes[0] < uses
    command = lines[makes[0]].split("#")[0]
    subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True, timeout=30)
    fens = (tmp_path / "positions.txt").read_text().split()
    assert len(fens) >= 1
    for fen in fens:
        parse_fen(get_rules("american8"), fen)
