"""Endgame databases: the index, the retrograde build, its checks, resuming, and probing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import reference_endgame
import reference_rules

from neurocheckers.cli import main
from neurocheckers.endgame.database import DRAW, LOSS, OUTSIDE, WIN, EndgameDB
from neurocheckers.endgame.index import (
    Slice,
    SliceIndex,
    board_masks,
    families,
    slice_of,
    solve_order,
    to_mover_view,
)
from neurocheckers.endgame.probe import probe_fen
from neurocheckers.endgame.solve import build
from neurocheckers.endgame.verify import check_slice
from neurocheckers.rules import AMERICAN6, AMERICAN8

COUNTS = Path(__file__).parent / "data" / "endgame_counts.json"
"""Per rules and slice: positions, wins, draws, losses and the longest distance, from the full
builds (american6 up to 6 pieces, american8 up to 5), made by ``scripts/endgame_counts.py``."""


def _round_trip(rules, s: Slice, sample: int | None) -> None:
    index = SliceIndex(rules, s)
    rows = (
        np.arange(index.size) if sample is None else np.random.default_rng(0).integers(0, index.size, sample)
    )
    boards = index.unrank(rows)
    np.testing.assert_array_equal(index.rank(boards), rows)
    np.testing.assert_array_equal(slice_of(boards), np.tile(s.counts, (len(rows), 1)))
    every, mover_men, opp_men = board_masks(rules)
    union = np.bitwise_or.reduce(boards, axis=1)
    assert np.all(slice_of(union[:, None])[:, 0] == s.pieces), "two pieces on one square"
    assert np.all(boards[:, 0] & ~np.uint32(mover_men) == 0) and np.all(
        boards[:, 2] & ~np.uint32(opp_men) == 0
    )
    assert np.all(union & ~np.uint32(every) == 0)


@pytest.mark.parametrize(("rules", "pieces", "sample"), [(AMERICAN6, 4, None), (AMERICAN8, 4, 4000)])
def test_the_index_round_trips_on_every_slice(rules, pieces, sample):
    for s in solve_order(pieces):
        _round_trip(rules, s, sample if sample and SliceIndex(rules, s).size > sample else None)


def test_slice_sizes_equal_the_committed_counts():
    committed = json.loads(COUNTS.read_text())
    for rules, pieces in ((AMERICAN6, 6), (AMERICAN8, 5)):
        slices = committed[rules.name]
        assert sorted(slices) == sorted(s.name for s in solve_order(pieces))
        for s in solve_order(pieces):
            assert SliceIndex(rules, s).size == slices[s.name]["positions"], s.name


def test_every_capture_and_crowning_leads_to_an_earlier_family():
    for pieces in (4, 6):
        seen: set[Slice] = set()
        for family in families(pieces):
            for s in family:
                for t in _reachable_slices(s):
                    assert t in seen or t in family or t.men + t.kings == 0, (s, t)
            seen.update(family)


def _reachable_slices(s: Slice) -> set[Slice]:
    """Slices a move from ``s`` can reach (seen from the next mover): quiet, crowning, captures."""
    out = {s.flipped}
    if s.men:
        out.add(Slice(s.opp_men, s.opp_kings, s.men - 1, s.kings + 1))
    for men_taken in range(s.opp_men + 1):
        for kings_taken in range(s.opp_kings + 1):
            if men_taken + kings_taken:
                after = Slice(s.opp_men - men_taken, s.opp_kings - kings_taken, s.men, s.kings)
                out |= {after, Slice(after.men, after.kings, s.men - 1, s.kings + 1)} if s.men else {after}
    return {t for t in out if min(t.counts) >= 0}


def test_the_database_agrees_with_an_independent_solver(small_db):
    """Every position of up to 3 pieces, value and distance, against a plain solver over the
    pure-Python reference rules (no shared code)."""
    db = EndgameDB(small_db)
    reference = reference_endgame.solve(reference_rules.REF_PRESETS["american6"], 3)
    boards, black_to_move, expected = reference_endgame.as_arrays(reference)
    values, distances = db.lookup(to_mover_view(boards, black_to_move, 18))
    assert len(expected) > 50_000
    np.testing.assert_array_equal(values, expected[:, 0])
    np.testing.assert_array_equal(distances, expected[:, 1])
    committed = json.loads(COUNTS.read_text())["american6"]
    for s in db.slices:
        entry = db.manifest["slices"][s.name]
        assert {k: entry[k] for k in ("wins", "draws", "losses")} == {
            k: committed[s.name][k] for k in ("wins", "draws", "losses")
        }


def test_the_consistency_check_passes_and_catches_a_wrong_value(small_db, tmp_path):
    db = EndgameDB(small_db)
    for s in db.slices:
        assert check_slice(db, s)[1] == 0, s.name
    broken_folder = tmp_path / "broken"
    shutil.copytree(small_db, broken_folder)
    broken = EndgameDB(broken_folder)
    s = Slice(0, 2, 0, 1)
    values, distances = (a.copy() for a in broken.load(s))
    values[np.flatnonzero(values == WIN)[:3]] = DRAW
    broken.write(s, values, distances, {})
    checked, wrong = check_slice(EndgameDB(broken_folder), s)
    assert checked == SliceIndex(AMERICAN6, s).size and wrong >= 3


def test_an_interrupted_build_resumes_and_matches(small_db, tmp_path):
    folder = tmp_path / "resumed"
    seen: list[str] = []

    def stop_at_the_sixth_slice(name: str, done: int, total: int) -> None:
        seen.append(name)
        if len(set(seen)) > 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build(AMERICAN6, 3, folder, stop_at_the_sixth_slice)
    partial = EndgameDB(folder).slices
    assert 0 < len(partial) < len(solve_order(3))
    build(AMERICAN6, 3, folder)
    resumed, whole = EndgameDB(folder).manifest["slices"], EndgameDB(small_db).manifest["slices"]
    assert sorted(resumed) == sorted(whole)
    for name in whole:
        assert resumed[name]["wdl_sha256"] == whole[name]["wdl_sha256"], name
        assert resumed[name]["dist_sha256"] == whole[name]["dist_sha256"], name


def test_hand_worked_positions(small_db):
    """6x6 squares: row 0 holds 1-3, row 1 4-6 and so on; Black moves down the board."""
    db = EndgameDB(small_db)
    # Black's king on 5 jumps White's last piece on 8, landing on 12.
    answer = probe_fen(db, "B:WK8:BK5")
    assert (answer.value, answer.distance, answer.best_moves) == (WIN, 1, ("5x12",))
    # Black's man on 15 is blocked by the king on 18 and cannot jump off the board: stuck, lost.
    answer = probe_fen(db, "B:WK18:B15")
    assert (answer.value, answer.distance, answer.best_moves) == (LOSS, 0, ())
    # Lone kings in mid-board: neither can force anything.
    assert probe_fen(db, "B:WK12:BK1").value == DRAW
    assert db.lookup(np.zeros((1, 4), np.uint32))[0][0] == LOSS  # no pieces to move: lost
    assert db.lookup(np.array([[7, 0, 7 << 12, 0]], np.uint32))[0][0] == OUTSIDE


def test_probe_prints_one_line_per_position_and_one_line_errors(small_db, tmp_path, capsys):
    listing = tmp_path / "positions.txt"
    listing.write_text("B:WK18:B15\n\nB:WK12:BK1\n")
    assert main(["endgame", "probe", "--db", str(small_db), "B:WK8:BK5", "--file", str(listing)]) == 0
    assert capsys.readouterr().out.splitlines() == ["win 1 5x12", "loss 0 -", "draw 0 1-4 1-5"]
    for fen, message in (
        ("B:W18:B99", "square 99 is off"),
        ("B:W13,14,15,16:B1", "it has 5 pieces and the database holds at most 3"),
        ("B:W:B1", "no pieces"),
    ):
        assert main(["endgame", "probe", "--db", str(small_db), fen]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1, err
    assert main(["endgame", "probe", "--db", str(tmp_path), "B:WK8:BK5"]) == 2
    assert "holds no endgame database" in capsys.readouterr().err
    assert main(["endgame", "build", "--rules", "simple6", "--out", str(tmp_path / "x")]) == 2
    assert "american6 and american8" in capsys.readouterr().err


def test_two_kings_against_one_on_8x8(tmp_path_factory):
    """Two kings nearly always beat one: the lone king to move never wins and, unless it can capture
    at once, draws only in a few fortresses near a corner (the reference solver agrees on each of
    the 399,040 positions of up to 3 pieces; see tests/data/endgame_counts.json)."""
    db = build(AMERICAN8, 3, tmp_path_factory.mktemp("endgame8"))
    lone = Slice(0, 1, 0, 2)
    values, _ = db.load(lone)
    boards = SliceIndex(AMERICAN8, lone).unrank(np.arange(len(values)))
    from neurocheckers.endgame.moves import successors

    parent, after = successors(AMERICAN8, boards)
    can_capture = np.zeros(len(boards), bool)
    can_capture[parent[slice_of(after).sum(axis=1) < 3]] = True
    quiet = np.bincount(values[~can_capture], minlength=3)
    assert quiet[WIN] == 0 and quiet[DRAW] == 66 and quiet[LOSS] == 12_790
    assert probe_fen(db, "W:WK7:BK4,K8").line() == "loss 32 7-2 7-10"
    # The same kings one square apart: White's king holds them in the corner.
    assert probe_fen(db, "W:WK7:BK4,K12").value == DRAW
    committed = json.loads(COUNTS.read_text())["american8"]
    for s in db.slices:
        entry = db.manifest["slices"][s.name]
        assert all(entry[k] == committed[s.name][k] for k in ("wins", "draws", "losses", "max_distance"))


def _a_win_with_a_losing_move(db: EndgameDB):
    """A FEN won for Black to move, its best move and a move that lets the win go."""
    from neurocheckers.rules.notation import apply_move, legal_moves, parse_fen, to_fen

    s = Slice(0, 2, 0, 1)
    values, _ = db.load(s)
    for row in np.flatnonzero(values == WIN)[::7]:
        mm, mk, om, ok = (int(x) for x in SliceIndex(AMERICAN6, s).unrank(np.array([row]))[0])
        state = parse_fen(AMERICAN6, to_fen_of(mk, ok))
        fen = to_fen(state)
        best = probe_fen(db, fen).best_moves[0]
        for move in legal_moves(AMERICAN6, state):
            after = probe_fen(db, to_fen(apply_move(AMERICAN6, state, move)))
            if after.value != LOSS:
                return fen, best, move.notation
    raise AssertionError("no such position")


def to_fen_of(black_kings: int, white_kings: int) -> str:
    def listing(bits: int) -> str:
        return ",".join(f"K{i + 1}" for i in range(18) if bits >> i & 1)

    return f"B:W{listing(white_kings)}:B{listing(black_kings)}"


def test_move_accuracy_counts_the_moves_that_drop_a_win(small_db):
    import jax

    from neurocheckers.endgame.accuracy import Accuracy, move_accuracy
    from neurocheckers.rules.notation import apply_move, legal_moves, parse_fen, to_fen

    db = EndgameDB(small_db)
    fen, best, bad = _a_win_with_a_losing_move(db)
    start = parse_fen(AMERICAN6, fen)
    games, answered = [], 0
    for first in (best, bad):  # A (Black) moves, then B answers with its best move
        after = apply_move(AMERICAN6, start, first)
        answer = probe_fen(db, to_fen(after)).best_moves
        moves = [first] + list(answer[:1])
        answered += bool(answer)
        actions, state = [], start
        for text in moves:
            move = next(m for m in legal_moves(AMERICAN6, state) if m.notation == text)
            actions += list(move.actions)
            state = apply_move(AMERICAN6, state, move)
        games.append(actions)
    width = max(len(g) for g in games) + 2
    actions = np.array([g + [-1] * (width - len(g)) for g in games], dtype=np.int32)
    starts = jax.tree.map(lambda x: np.stack([np.asarray(x)] * 2), start)
    mine, theirs = move_accuracy(db, starts, actions, np.array([True, True]))
    assert mine == Accuracy(positions=2, blunders=1, wins_dropped=1)
    assert theirs == Accuracy(positions=answered, blunders=0, wins_dropped=0)
    assert Accuracy(1000, 10).per_thousand()[1] < 10 < Accuracy(1000, 10).per_thousand()[2]


def test_the_gauntlet_reports_blunders_in_database_positions(small_db, tmp_path, capsys):
    out = tmp_path / "g"
    args = ["gauntlet", "alphabeta:1", "--rules", "american6", "--openings", "2", "--depth", "1"]
    assert (
        main([*args, "--only", "random", "--kinds", "ladder", "--endgame", str(small_db), "--out", str(out)])
        == 0
    )
    printed = capsys.readouterr().out
    assert "blunders per 1,000 endgame-database positions" in printed
    (row,) = json.loads((out / "gauntlet.json").read_text())["rows"]
    # (whether these games reach 3 pieces is up to them: move_accuracy's own test counts blunders)
    assert row["player_db_positions"] >= row["player_blunders"] >= 0
    assert row["opponent_db_positions"] >= row["opponent_blunders"] >= 0
    assert "player_blunders" in (out / "gauntlet.csv").read_text().splitlines()[0]
    assert main([*args, "--endgame", str(tmp_path / "none"), "--out", str(out)]) == 2
    assert "holds no endgame database" in capsys.readouterr().err


def test_a_search_that_reads_the_database_plays_its_best_moves(small_db):
    """``alphabeta:1:FILE:DB``: every move is scored from the database, so the search picks one of
    the moves ``probe`` calls best (the quickest win, a draw, the slowest loss), whatever the net."""
    import jax

    from neurocheckers.players.jax_players import parse_player
    from neurocheckers.rules.notation import legal_moves, parse_fen, to_fen

    player = parse_player(f"alphabeta:1:results/best_american6.safetensors:{small_db}", AMERICAN6)
    db = EndgameDB(small_db)
    values, _ = db.load(Slice(0, 2, 0, 1))
    checked = 0
    for row in np.flatnonzero(values == WIN)[::97][:12]:
        mm, mk, om, ok = (int(x) for x in SliceIndex(AMERICAN6, Slice(0, 2, 0, 1)).unrank(np.array([row]))[0])
        state = parse_fen(AMERICAN6, to_fen_of(mk, ok))
        action = int(player.policy(player.params, state, jax.random.key(0)))
        chosen = {m.notation for m in legal_moves(AMERICAN6, state) if m.actions[0] == action}
        assert chosen & set(probe_fen(db, to_fen(state)).best_moves), to_fen(state)
        checked += 1
    assert checked == 12
    with pytest.raises(ValueError, match="holds no endgame database"):
        parse_player("alphabeta:1:results/best_american6.safetensors:nowhere", AMERICAN6)
