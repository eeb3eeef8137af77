"""Move accuracy against perfect play (``analysis.perfect_play``): the verdicts agree with an endgame
database's values, the gauntlet reports them (``--perfect-play``), and a run's accuracy over its
epochs is plotted (``analysis.perfect_epochs``, the ``accuracy`` command)."""

from __future__ import annotations

import csv
import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from neurocheckers.analysis import perfect_play
from neurocheckers.analysis.perfect_play import PerfectAccuracy, grade_games, grade_move, load_oracle
from neurocheckers.cli import app, main
from neurocheckers.compiled.board import Position
from neurocheckers.endgame.database import DRAW, LOSS, WIN, EndgameDB
from neurocheckers.endgame.index import board_masks, to_mover_view
from neurocheckers.rules import AMERICAN6, SIMPLE6

REPO = Path(__file__).resolve().parents[1]
AGENT6 = str(REPO / "results" / "best_american6.safetensors")
SMALL_LIMIT = 20_000
"""Proof nodes a question in these tests: the 4-piece database settles positions near it at once,
and the openings' positions far from it are left unsolved fast."""


@pytest.fixture(scope="module")
def db4(four_piece_db) -> Path:
    return four_piece_db


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setattr(perfect_play, "NODE_LIMIT", SMALL_LIMIT)


def _random_positions(count: int, seed: int = 0) -> list[Position]:
    """Positions of two pieces a side on distinct squares, men where men may stand, either to move."""
    all_squares, black_men_ok, white_men_ok = board_masks(AMERICAN6)
    squares = [s for s in range(AMERICAN6.num_squares)]
    rng, out = random.Random(seed), []
    while len(out) < count:
        chosen = rng.sample(squares, 4)
        boards = [0, 0, 0, 0]  # black men, black kings, white men, white kings
        for i, square in enumerate(chosen):
            white, king = i >= 2, rng.random() < 0.4
            allowed = white_men_ok if white else black_men_ok
            king = king or not (allowed >> square) & 1
            boards[2 * white + king] |= 1 << square
        out.append(Position(*boards, rng.randrange(2)))
    return out


def _db_value(db: EndgameDB, position: Position) -> int:
    board = np.array([[position.black_men, position.black_kings, position.white_men, position.white_kings]])
    values, _ = db.lookup(to_mover_view(board, np.array([position.color == 0]), AMERICAN6.num_squares))
    return int(values[0])


def test_verdicts_agree_with_the_database(db4, small_limit):
    """Every move of random 4-piece positions is kept exactly when the database's value of the
    position after it is the mover's value turned round; each thrown move is counted by its kind."""
    oracle, db = load_oracle(db4, AMERICAN6), EndgameDB(db4, AMERICAN6)
    total, seen = PerfectAccuracy(), set()
    for before in _random_positions(40):
        value = _db_value(db, before)
        assert oracle.value(before) == value
        for after in oracle.successors(before):
            graded = grade_move(oracle, before, after)
            after_value = 2 - _db_value(db, after)
            assert graded.graded == 1 and graded.kept == int(after_value == value)
            assert graded.win_to_draw == int(value == WIN and after_value == DRAW)
            assert graded.win_to_loss == int(value == WIN and after_value == LOSS)
            assert graded.draw_to_loss == int(value == DRAW and after_value == LOSS)
            total += graded
            seen.add((value, after_value))
    assert total.graded == total.kept + total.thrown and total.unsolved == 0
    assert {(WIN, WIN), (WIN, DRAW), (WIN, LOSS), (DRAW, DRAW), (DRAW, LOSS), (LOSS, LOSS)} <= seen
    low, high = total.rate()[1:]
    assert 0 < low < total.kept / total.graded < high < 1


def test_games_are_graded_by_side(db4, small_limit):
    """A game of positions: each side's moves go to the player that had that colour in the game."""
    oracle, db = load_oracle(db4, AMERICAN6), EndgameDB(db4, AMERICAN6)
    won, bad = next(
        (p, q)
        for p in _random_positions(200, seed=1)
        if _db_value(db, p) == WIN
        for q in oracle.successors(p)
        if 2 - _db_value(db, q) != WIN
    )
    good = oracle.best_successors(won)[0]
    games = [[won, bad], [won, good]]
    mover_is_black = won.color == 0
    a, b = grade_games(oracle, games, [mover_is_black, not mover_is_black])
    assert (a.graded, a.kept, a.thrown) == (1, 0, 1)  # A moved in game 1: threw the win away
    assert (b.graded, b.kept, b.thrown) == (1, 1, 0)  # B moved in game 2: kept it
    assert a.win_to_draw + a.win_to_loss == 1 and "w>" in a.text()
    assert PerfectAccuracy().rate() is None and PerfectAccuracy().text() == "-"


def test_unsettled_positions_are_counted_apart(db4, small_limit):
    """The start (12 pieces) is far from a 4-piece database: not graded within the node limit."""
    oracle = load_oracle(db4, AMERICAN6)
    start = Position.start(AMERICAN6)
    graded = grade_move(oracle, start, oracle.successors(start)[0])
    assert graded == PerfectAccuracy(unsolved=1) and graded.text() == "-, 1 unsolved"
    with pytest.raises(ValueError, match="american6"):
        load_oracle(db4, SIMPLE6)


def test_the_gauntlet_reports_accuracy_against_perfect_play(db4, small_limit, tmp_path, capsys):
    out = tmp_path / "g"
    args = ["gauntlet", f"alphabeta:2:{AGENT6}", "--rules", "american6", "--openings", "1"]
    args += ["--only", "random", "--kinds", "ladder"]
    assert main([*args, "--perfect-play", str(db4), "--out", str(out)]) == 0
    assert "kept the value under perfect play" in capsys.readouterr().out
    (row,) = json.loads((out / "gauntlet.json").read_text())["rows"]
    for side in ("player", "opponent"):
        graded, kept = row[f"{side}_perfect_graded"], row[f"{side}_perfect_kept"]
        thrown = sum(row[f"{side}_{kind}"] for kind in ("win_to_draw", "win_to_loss", "draw_to_loss"))
        assert graded == kept + thrown and graded + row[f"{side}_perfect_unsolved"] > 0
    header = (out / "gauntlet.csv").read_text().splitlines()[0].split(",")
    assert {"player_perfect_kept", "opponent_draw_to_loss", "player_perfect_unsolved"} <= set(header)
    assert main([*args, "--rules", "simple6", "--perfect-play", str(db4), "--out", str(out)]) == 2
    assert "american6" in capsys.readouterr().err


def _run_with_bosses(root: Path) -> Path:
    """An american6 run folder with 4 epochs of metrics and two bosses (copies of the committed
    agent): the first from the start, the second promoted after epoch 1."""
    from neurocheckers.experiment.config import load_config
    from neurocheckers.experiment.run import create_run
    from neurocheckers.formats import LINEAGE_DIR, LINEAGE_FILE, METRIC_COLUMNS, METRICS_FILE

    path = create_run(load_config(None, ["rules=american6", "population=8", "games_per_epoch=4"]), root)
    with open(path / METRICS_FILE, "a", newline="") as f:
        for epoch in range(4):
            row = dict.fromkeys(METRIC_COLUMNS, "0")
            row.update(
                epoch=str(epoch), fitness_mean="2.0", best_points="3.0", boss_changed=str(int(epoch == 1))
            )
            csv.writer(f).writerow([row[c] for c in METRIC_COLUMNS])
    with open(path / LINEAGE_FILE, "a", newline="") as f:
        for boss_id, epoch in ((0, -1), (1, 1)):
            shutil.copy(AGENT6, path / LINEAGE_DIR / f"boss_{boss_id}.safetensors")
            csv.writer(f).writerow([boss_id, epoch, 4.0, f"boss_{boss_id}.safetensors"])
    return path


def test_a_runs_accuracy_is_plotted_over_its_epochs(db4, small_limit, tmp_path, capsys):
    run = _run_with_bosses(tmp_path)
    png = tmp_path / "plot" / "accuracy.png"
    args = ["accuracy", str(run), "--db", str(db4), "--opponent", "random", "--openings", "1"]
    assert main([*args, "--every", "2", "--out", str(png)]) == 0
    printed = capsys.readouterr().out
    assert "epoch     0 boss #0" in printed and "epoch     3 boss #1" in printed
    assert png.stat().st_size > 10_000
    rows = list(csv.DictReader(png.with_suffix(".csv").open()))
    assert [r["epoch"] for r in rows] == ["0", "2", "3"] and [r["boss_id"] for r in rows] == ["0", "1", "1"]
    assert rows[1]["graded"] == rows[2]["graded"]  # one boss, played once
    assert main([*args, "--db", str(tmp_path / "none"), "--out", str(png)]) == 2


def test_parts_of_a_row_pool_their_move_counts():
    """``merge_gauntlets``' pooled row sums both sides' perfect-play counts over the parts."""
    import dataclasses

    from neurocheckers.analysis.gauntlet_merge import pooled_row
    from neurocheckers.analysis.gauntlet_rows import Row
    from neurocheckers.analysis.perfect_play import from_row, row_fields

    def part(kept: int) -> Row:
        row = Row("ladder", "a", "b", 2, 1, 0, 1, 0, 0.5, 0.0, 1.0, pair_points=(0.5,))
        mine, theirs = PerfectAccuracy(10, kept, 1, 0, 10 - kept - 1), PerfectAccuracy(8, 8, unsolved=1)
        return dataclasses.replace(row, **row_fields("player", mine), **row_fields("opponent", theirs))

    pooled = pooled_row([part(7), part(9)])
    assert from_row(pooled, "player") == PerfectAccuracy(20, 16, 2, 0, 2)
    assert from_row(pooled, "opponent") == PerfectAccuracy(16, 16, unsolved=2)
    assert from_row(Row("ladder", "a", "b", 2, 1, 0, 1, 0, 0.5, 0.0, 1.0), "player") is None


def test_the_accuracy_command_has_an_example():
    from typer.testing import CliRunner

    text = CliRunner().invoke(app, ["accuracy", "--help"]).output
    assert "Example:" in text and "neurocheckers accuracy " in text and "--db DIR" in text


def test_verdicts_judges_every_move_of_a_saved_game_against_perfect_play(db4, tmp_path, capsys):
    """A 3-piece game whose first move throws a win away (Black's 7-10 lets White's king take):
    Black keeps 1 of 2 moves (win to loss once), White both of its own."""
    import json

    from neurocheckers.analysis.games import save_games
    from neurocheckers.cli import main

    moves = ["7-10", "16x11", "10-13", "11x16"]
    game = {
        "black": "a",
        "white": "b",
        "start_fen": "B:WK16:BK13,7",
        "moves": moves,
        "result": "0-1",
        "plies": 4,
    }
    path = save_games(tmp_path / "games.json", AMERICAN6, [game])
    assert main(["verdicts", str(path), "--endgame-db", str(db4), "--perfect-play", "--json"]) == 0
    graded = json.loads(capsys.readouterr().out)["perfect_play"]
    assert graded["player_a"] == "a" and graded["a"]["graded"] == 2 and graded["a"]["kept"] == 1
    assert graded["a"]["win_to_loss"] == 1
    assert graded["b"]["graded"] == 2 and graded["b"]["kept"] == 2
    assert main(["verdicts", str(path), "--endgame-db", str(db4), "--perfect-play"]) == 0
    assert "against perfect play, a: 0.500" in capsys.readouterr().out
