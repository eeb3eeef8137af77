"""A match's games judged by an endgame database: "drawn by rule; the database says a win for A"."""

from __future__ import annotations

import json

import numpy as np
from cli_errors import error_line

from neurocheckers.analysis.match_report import endgame_verdicts, format_verdicts
from neurocheckers.cli import main
from neurocheckers.endgame.database import WIN, EndgameDB
from neurocheckers.endgame.probe import probe_fen, value_of_state
from neurocheckers.match.arena import final_boards
from neurocheckers.rules import AMERICAN6
from neurocheckers.rules.notation import parse_fen

# Positions of 2-3 pieces, each side to move; their values are read from the database, not assumed.
POSITIONS = ("B:WK18:BK1,K2", "W:WK18:BK1,K2", "B:W14:BK1", "W:W14:BK1", "B:W13,14:B5", "W:W13:B5,6")


def _finals(fens: list[str]) -> np.ndarray:
    return np.stack([np.asarray(final_boards(parse_fen(AMERICAN6, f))) for f in fens])


def test_verdicts_split_the_draws_by_the_databases_value_from_as_side(small_db):
    db = EndgameDB(small_db, AMERICAN6)
    held = [f for f in POSITIONS if value_of_state(db, parse_fen(AMERICAN6, f))[0] >= 0]
    assert len(held) == len(POSITIONS)
    assert any(probe_fen(db, f).value == WIN for f in held), "the positions must hold a won one"
    boards = _finals(held)
    n = len(held)
    for a_is_black in (np.ones(n, bool), np.zeros(n, bool)):
        verdicts = endgame_verdicts(db, boards, np.full(n, 0.5), np.ones(n, bool), a_is_black)
        assert verdicts["covered"] == verdicts["drawn"] == n
        for fen, a_black, value in zip(held, a_is_black, verdicts["values"], strict=True):
            answer = probe_fen(db, fen)
            mover_is_a = fen.startswith("B") == a_black
            mover_value = {0: -1, 1: 0, 2: 1}[answer.value]
            assert value == (mover_value if mover_is_a else -mover_value), (fen, a_black)
        split = verdicts["drawn_a_wins"] + verdicts["drawn_b_wins"] + verdicts["drawn_draws"]
        assert split == n and verdicts["disagree"] == 0
    line = format_verdicts(verdicts)
    assert f"draws by rule among them: {n} " in line and str(small_db) in line


def test_a_position_outside_the_database_is_not_counted(small_db):
    db = EndgameDB(small_db, AMERICAN6)
    boards = _finals(["B:W13,14,15,16:B1,2,3,4"])  # 8 pieces: outside a 3-piece database
    verdicts = endgame_verdicts(db, boards, np.array([0.5]), np.array([True]), np.array([True]))
    assert verdicts["covered"] == 0 and verdicts["values"] == [None]


def test_match_reports_the_database_in_json_and_refuses_a_folder_without_one(small_db, tmp_path, capsys):
    args = ["match", "random", "random", "--rules", "american6", "--games", "4", "--batch", "4"]
    assert main([*args, "--json", "--endgame-db", str(small_db)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["endgame"]["endgame_db"] == str(small_db)
    assert len(summary["endgame"]["values"]) == 4
    assert summary["endgame"]["covered"] <= 4
    assert main([*args, "--endgame-db", str(tmp_path)]) == 2
    error_line(capsys, "--endgame-db", str(tmp_path))
    assert main([*args[:3], "--rules", "simple6", *args[5:], "--endgame-db", str(small_db)]) == 2
    error_line(capsys, "--endgame-db", "american6")
