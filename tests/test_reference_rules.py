"""Checks of the pure-Python reference rules (tests/reference_rules.py).

The perft counts come from the published table vendored in tests/data/perft.json; the hand-made
positions were worked out on the board (see the comments for the geometry).

Square geometry used below (row 0 at the top, Black moving down):
  6x6: row 0: 1,2,3 at cols 1,3,5   row 1: 4,5,6 at cols 0,2,4
       row 2: 7,8,9 at cols 1,3,5   row 3: 10,11,12 at cols 0,2,4
       row 4: 13,14,15 at 1,3,5     row 5: 16,17,18 at 0,2,4
  8x8: row r holds squares 4r+1..4r+4 at cols 1,3,5,7 (r even) or 0,2,4,6 (r odd).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reference_rules as R  # noqa: E402

PERFT_PATH = Path(__file__).resolve().parent / "data" / "perft.json"

SIMPLE6 = R.REF_PRESETS["simple6"]
AMERICAN6 = R.REF_PRESETS["american6"]
AMERICAN8 = R.REF_PRESETS["american8"]


def _perft_table() -> dict:
    return json.loads(PERFT_PATH.read_text())


def _names(rules: R.RefRules, fen: str) -> list[str]:
    return sorted(m.notation() for m in R.legal_moves(rules, R.position_from_fen(fen)))


def _move(rules: R.RefRules, pos: R.RefPosition, notation: str) -> R.RefMove:
    matches = [m for m in R.legal_moves(rules, pos) if m.notation() == notation]
    assert len(matches) == 1, (notation, [m.notation() for m in R.legal_moves(rules, pos)])
    return matches[0]


# ---------------------------------------------------------------------------
# Presets and geometry
# ---------------------------------------------------------------------------


def test_presets():
    assert set(R.REF_PRESETS) == {"simple6", "american6", "american8", "american8-openspiel"}
    assert R.REF_PRESETS["simple6"] == R.RefRules("simple6", 6, 2, False, False, False, 60, 0)
    assert R.REF_PRESETS["american6"] == R.RefRules("american6", 6, 2, True, True, True, 0, 50)
    assert R.REF_PRESETS["american8"] == R.RefRules("american8", 8, 3, True, True, True, 0, 80, True)
    assert R.REF_PRESETS["american8-openspiel"] == R.RefRules(
        "american8-openspiel", 8, 3, True, True, True, 0, 40
    )


def test_square_numbering():
    assert R.square_to_rc(8, 1) == (0, 1)
    assert R.square_to_rc(8, 5) == (1, 0)
    assert R.square_to_rc(8, 32) == (7, 6)
    assert R.square_to_rc(6, 1) == (0, 1)
    assert R.square_to_rc(6, 4) == (1, 0)
    assert R.square_to_rc(6, 18) == (5, 4)
    for size in (6, 8):
        for square in range(1, size * size // 2 + 1):
            row, col = R.square_to_rc(size, square)
            assert (row + col) % 2 == 1
            assert R.rc_to_square(size, row, col) == square


def test_initial_positions():
    pos8 = R.initial_position(AMERICAN8)
    assert pos8.black_men == frozenset(range(1, 13))
    assert pos8.white_men == frozenset(range(21, 33))
    assert not pos8.black_kings and not pos8.white_kings and pos8.black_to_move
    pos6 = R.initial_position(SIMPLE6)
    assert pos6 == R.initial_position(AMERICAN6)
    assert pos6.black_men == frozenset(range(1, 7))
    assert pos6.white_men == frozenset(range(13, 19))
    # Black men on row 2 step down to row 3.
    assert _names(AMERICAN8, "B:W21-32:B1-12") == [
        "10-14", "10-15", "11-15", "11-16", "12-16", "9-13", "9-14",
    ]  # fmt: skip
    # On 6x6 the men of row 1 (4,5,6) step to row 2 (7,8,9).
    assert _names(SIMPLE6, "B:W13-18:B1-6") == ["4-7", "5-7", "5-8", "6-8", "6-9"]
    # White's first replies on 6x6: men of row 4 (13,14,15) step up to row 3.
    white = R.position_from_fen("W:W13-18:B1-6")
    assert sorted(m.notation() for m in R.legal_moves(AMERICAN6, white)) == [
        "13-10", "13-11", "14-11", "14-12", "15-12",
    ]  # fmt: skip


# ---------------------------------------------------------------------------
# FEN
# ---------------------------------------------------------------------------


def test_fen_parsing_and_round_trip():
    pos = R.position_from_fen("B:W21,22,K30:B1,2,K9")
    assert pos == R.RefPosition(
        black_men=frozenset({1, 2}),
        black_kings=frozenset({9}),
        white_men=frozenset({21, 22}),
        white_kings=frozenset({30}),
        black_to_move=True,
    )
    assert R.position_to_fen(pos) == "B:W21,22,K30:B1,2,K9"
    assert R.position_from_fen(R.position_to_fen(pos)) == pos
    # Ranges, trailing dot, colour sections in either order.
    assert R.position_from_fen("B:W21-32:B1-12.") == R.initial_position(AMERICAN8)
    assert R.position_from_fen("B:B1-6:W13-18") == R.initial_position(AMERICAN6)
    side_w = R.position_from_fen("W:WK3,5:B1-2,K9")
    assert not side_w.black_to_move
    assert side_w.white_kings == {3} and side_w.white_men == {5}
    assert side_w.black_men == {1, 2} and side_w.black_kings == {9}
    # An empty side.
    empty = R.position_from_fen("W:W:BK24")
    assert empty.white_men == frozenset() and empty.white_kings == frozenset()
    assert R.position_to_fen(empty) == "W:W:BK24"
    with pytest.raises(ValueError):
        R.position_from_fen("B:W1,2:B2,3")  # square 2 twice
    with pytest.raises(ValueError):
        R.position_from_fen("X:W1:B2")


def test_notation():
    assert R.RefMove((9, 14), ()).notation() == "9-14"
    assert R.RefMove((9, 18), (14,)).notation() == "9x18"
    assert R.RefMove((1, 10, 19), (6, 15)).notation() == "1x10x19"


# ---------------------------------------------------------------------------
# Perft against the published table
# ---------------------------------------------------------------------------

PERFT_DEPTHS = {"simple6": 6, "american6": 7, "american8": 6}


@pytest.mark.parametrize("name", sorted(PERFT_DEPTHS))
def test_perft_matches_table(name):
    table = _perft_table()[name]["perft"]
    rules = R.REF_PRESETS[name]
    pos = R.initial_position(rules)
    assert R.perft(rules, pos, 0) == 1
    for depth in range(1, PERFT_DEPTHS[name] + 1):
        assert R.perft(rules, pos, depth) == table[depth - 1], (name, depth)


# ---------------------------------------------------------------------------
# Hand-made positions
# ---------------------------------------------------------------------------


def test_forced_capture_american_vs_optional_simple6():
    # Black man 7 (r2,c1) can jump white 11 (r3,c2) to 14; it could also step
    # to 10, and black man 3 (r0,c5) can step to 6.
    fen = "B:W11:B3,7"
    assert _names(AMERICAN6, fen) == ["7x14"]
    assert _names(SIMPLE6, fen) == ["3-6", "7-10", "7x14"]
    # No capture available: the steps are the moves under both rules.
    assert _names(AMERICAN6, "B:W17:B3,7") == ["3-6", "7-10", "7-11"]
    assert _names(SIMPLE6, "B:W17:B3,7") == ["3-6", "7-10", "7-11"]


def test_multi_jump_6x6_american_vs_single_jump_simple6():
    # 1 jumps 5 to 8, then 12 to 15.
    fen = "B:W5,12:B1"
    assert _names(AMERICAN6, fen) == ["1x8x15"]
    assert _names(SIMPLE6, fen) == ["1-4", "1x8"]
    pos = R.position_from_fen(fen)
    after = R.apply_move(AMERICAN6, pos, _move(AMERICAN6, pos, "1x8x15"))
    assert R.position_to_fen(after) == "W:W:B15"
    move = _move(AMERICAN6, pos, "1x8x15")
    assert move.path == (1, 8, 15) and move.captures == (5, 12)


def test_multi_jump_8x8_branching_paths():
    # 1 jumps 6 to 10; from 10 it may jump 15 (to 19) or 14 (to 17).
    fen = "B:W6,14,15:B1"
    assert _names(AMERICAN8, fen) == ["1x10x17", "1x10x19"]
    pos = R.position_from_fen(fen)
    move = _move(AMERICAN8, pos, "1x10x19")
    assert move.path == (1, 10, 19) and move.captures == (6, 15)
    assert R.position_to_fen(R.apply_move(AMERICAN8, pos, move)) == "W:W14:B19"
    # The plain 1x10x19 case from the brief: the only move.
    assert _names(AMERICAN8, "B:W6,15:B1") == ["1x10x19"]


def test_crowning_ends_a_capture():
    # Black man 22 (r5,c2) jumps 26 and lands on 31, the last row: crowned,
    # the move ends although a king on 31 could go on over 27 to 24.
    fen_man = "B:W26,27:B22"
    assert _names(AMERICAN8, fen_man) == ["22x31"]
    pos = R.position_from_fen(fen_man)
    after = R.apply_move(AMERICAN8, pos, _move(AMERICAN8, pos, "22x31"))
    assert R.position_to_fen(after) == "W:W27:BK31"
    # A king on 22 continues.
    fen_king = "B:W26,27:BK22"
    assert _names(AMERICAN8, fen_king) == ["22x31x24"]
    pos = R.position_from_fen(fen_king)
    after = R.apply_move(AMERICAN8, pos, _move(AMERICAN8, pos, "22x31x24"))
    assert R.position_to_fen(after) == "W:W:BK24"

    # White on 6x6: man 9 (r2,c5) jumps 6 to 2 (row 0) and is crowned there;
    # a king on 9 goes on over 5 to 7.
    assert _names(AMERICAN6, "W:W9:B5,6") == ["9x2"]
    assert _names(SIMPLE6, "W:W9:B5,6") == ["9x2"]
    pos = R.position_from_fen("W:W9:B5,6")
    after = R.apply_move(AMERICAN6, pos, _move(AMERICAN6, pos, "9x2"))
    assert R.position_to_fen(after) == "B:WK2:B5"
    assert _names(AMERICAN6, "W:WK9:B5,6") == ["9x2x7"]


def test_step_to_last_row_crowns():
    pos = R.position_from_fen("B:WK4:B25")  # black man 25 (r6,c1)
    assert sorted(m.notation() for m in R.legal_moves(AMERICAN8, pos)) == ["25-29", "25-30"]
    after = R.apply_move(AMERICAN8, pos, _move(AMERICAN8, pos, "25-30"))
    assert after.black_kings == {30} and not after.black_men
    pos = R.position_from_fen("W:W5:BK32")  # white man 5 (r1,c0) -> 1
    after = R.apply_move(AMERICAN8, pos, _move(AMERICAN8, pos, "5-1"))
    assert after.white_kings == {1} and not after.white_men
    # 6x6: black man 13 (r4,c1) steps to row 5.
    pos = R.position_from_fen("B:WK3:B13")
    after = R.apply_move(SIMPLE6, pos, _move(SIMPLE6, pos, "13-17"))
    assert after.black_kings == {17}


def test_king_captures_backwards_man_does_not():
    # Black piece on 14 (r3,c2), white man on 10 (r2,c3) behind it.
    assert _names(AMERICAN8, "B:W10:B14") == ["14-17", "14-18"]
    assert _names(AMERICAN8, "B:W10:BK14") == ["14x7"]
    # White king capturing downwards (backwards for White): 6x6 king on 5
    # (r1,c2) over black 8 (r2,c3) to 12 (r3,c4).
    assert _names(AMERICAN6, "W:WK5:B8") == ["5x12"]
    assert _names(SIMPLE6, "W:WK5:B8") == ["5-1", "5-2", "5-7", "5x12"]
    assert _names(AMERICAN6, "W:W5:B8") == ["5-1", "5-2"]


def test_circular_king_capture_paths_are_distinct_moves():
    # King 14 (r3,c2) around the diamond of white men 10, 11, 19, 18:
    # 14x7x16x23x14 clockwise and 14x23x16x7x14 the other way round.
    fen = "B:W10,11,18,19:BK14"
    assert _names(AMERICAN8, fen) == ["14x23x16x7x14", "14x7x16x23x14"]
    pos = R.position_from_fen(fen)
    results = {R.position_to_fen(R.apply_move(AMERICAN8, pos, m)) for m in R.legal_moves(AMERICAN8, pos)}
    assert results == {"W:W:BK14"}


def test_stuck_side_loses_in_american_draws_in_simple6():
    # Black king 5 steps to 1; white man 4 (r1,c0) then has no move
    # (1 is occupied and the jump would land off the board).
    pos = R.position_from_fen("B:W4:BK5")
    for rules, result in ((AMERICAN6, 1), (SIMPLE6, 0)):
        game = R.new_game(rules, pos)
        assert not game.terminated
        game = R.play(rules, game, _move(rules, pos, "5-1"))
        assert R.legal_moves(rules, game.position) == []
        assert game.terminated and game.result == result
        assert game.ply == 1 and game.plies_without_capture == 1
    # Judged at game start too.
    stuck = R.position_from_fen("W:W4:BK1")
    assert R.new_game(AMERICAN6, stuck).terminated and R.new_game(AMERICAN6, stuck).result == 1
    assert R.new_game(SIMPLE6, stuck).terminated and R.new_game(SIMPLE6, stuck).result == 0
    # Stuck Black: man 4 (r1,c0) faces white 7 (r2,c1) and the landing
    # square 11 (r3,c2) is taken. White wins in american, draw in simple6.
    blocked = R.position_from_fen("B:W7,11:B4")
    assert R.legal_moves(AMERICAN6, blocked) == []
    assert R.new_game(AMERICAN6, blocked).result == -1
    assert R.new_game(SIMPLE6, blocked).result == 0
    assert R.new_game(SIMPLE6, blocked).terminated


def test_no_pieces_loses_under_all_presets():
    for rules in (AMERICAN6, SIMPLE6):
        pos = R.position_from_fen("B:W11:B7")
        game = R.play(rules, R.new_game(rules, pos), _move(rules, pos, "7x14"))
        assert game.terminated and game.result == 1
        assert game.plies_without_capture == 0
        # White man 15 (r4,c5) jumps 12 (r3,c4) to 8.
        pos = R.position_from_fen("W:W15:B12")
        game = R.play(rules, R.new_game(rules, pos), _move(rules, pos, "15x8"))
        assert game.terminated and game.result == -1
    pos = R.position_from_fen("B:W26,27:BK22")
    game = R.play(AMERICAN8, R.new_game(AMERICAN8, pos), _move(AMERICAN8, pos, "22x31x24"))
    assert game.terminated and game.result == 1


def _shuffle(rules, fen, black_squares, white_squares, plies):
    """Kings stepping back and forth between two squares each; returns the games."""
    game = R.new_game(rules, R.position_from_fen(fen))
    games = [game]
    for ply in range(plies):
        turn = ply // 2
        squares = black_squares if ply % 2 == 0 else white_squares
        src, dst = (squares[0], squares[1]) if turn % 2 == 0 else (squares[1], squares[0])
        game = R.play(rules, game, R.RefMove((src, dst), ()))
        games.append(game)
    return games


@pytest.mark.parametrize(
    "rules, fen, black_squares, white_squares, limit",
    [
        (AMERICAN6, "B:WK18:BK1", (1, 4), (18, 15), 50),
        (AMERICAN8, "B:WK32:BK1", (1, 5), (32, 28), 80),
        (R.REF_PRESETS["american8-openspiel"], "B:WK32:BK1", (1, 5), (32, 28), 40),
        (SIMPLE6, "B:WK18:BK1", (1, 4), (18, 15), 60),
    ],
)
def test_draw_limits_by_king_shuffles(rules, fen, black_squares, white_squares, limit):
    games = _shuffle(rules, fen, black_squares, white_squares, limit)
    for ply, game in enumerate(games):
        assert game.ply == ply
        assert game.plies_without_capture == ply
        assert game.terminated == (ply == limit)
        assert game.result == 0
    with pytest.raises(ValueError):
        R.play(rules, games[-1], R.legal_moves(rules, games[-1].position)[0])


def test_a_mans_move_resets_the_quiet_count_in_american8_only():
    pos = R.position_from_fen("B:WK32:BK1,9")
    for name, expected in (("american8", 0), ("american8-openspiel", 31)):
        rules = R.REF_PRESETS[name]
        game = R.RefGame(pos, ply=40, plies_without_capture=30, terminated=False, result=0)
        assert R.play(rules, game, _move(rules, pos, "9-13")).plies_without_capture == expected
        assert R.play(rules, game, _move(rules, pos, "1-6")).plies_without_capture == 31


def test_simple6_ignores_capture_free_streaks_and_american_resets_on_capture():
    # simple6 has no no-capture limit: 50 quiet plies do not end it.
    games = _shuffle(SIMPLE6, "B:WK18:BK1", (1, 4), (18, 15), 59)
    assert not any(g.terminated for g in games)
    # american6: a capture at 49 quiet plies resets the count.
    pos = R.position_from_fen("B:W11,K16:B7,K1")
    game = R.RefGame(pos, ply=10, plies_without_capture=49, terminated=False, result=0)
    after = R.play(AMERICAN6, game, _move(AMERICAN6, pos, "7x14"))
    assert after.ply == 11 and after.plies_without_capture == 0 and not after.terminated
    # ... while a quiet move at 49 reaches 50 and draws.
    pos = R.position_from_fen("B:WK16:BK1")
    game = R.RefGame(pos, ply=10, plies_without_capture=49, terminated=False, result=0)
    after = R.play(AMERICAN6, game, _move(AMERICAN6, pos, "1-4"))
    assert after.plies_without_capture == 50 and after.terminated and after.result == 0
    # Blocking the last white piece on the 50th quiet ply draws (the limit is checked first, as in
    # OpenSpiel); one ply earlier it wins. Black king 5 -> 1 leaves white man 4 stuck.
    pos = R.position_from_fen("B:W4:BK5")
    game = R.RefGame(pos, ply=70, plies_without_capture=49, terminated=False, result=0)
    after = R.play(AMERICAN6, game, _move(AMERICAN6, pos, "5-1"))
    assert after.terminated and after.result == 0
    game = R.RefGame(pos, ply=70, plies_without_capture=48, terminated=False, result=0)
    after = R.play(AMERICAN6, game, _move(AMERICAN6, pos, "5-1"))
    assert after.terminated and after.result == 1


def test_illegal_move_rejected():
    pos = R.initial_position(AMERICAN8)
    with pytest.raises(ValueError):
        R.play(AMERICAN8, R.new_game(AMERICAN8), R.RefMove((9, 18), (13,)))
    with pytest.raises(ValueError):
        R.legal_moves(SIMPLE6, pos)  # squares beyond 18 on a 6x6 board


# ---------------------------------------------------------------------------
# Random games
# ---------------------------------------------------------------------------


def _count(pos: R.RefPosition) -> int:
    return len(pos.black_men) + len(pos.black_kings) + len(pos.white_men) + len(pos.white_kings)


@pytest.mark.parametrize("name", ["simple6", "american6", "american8", "american8-openspiel"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_random_game_is_consistent(name, seed):
    rules = R.REF_PRESETS[name]
    history = R.random_game(rules, seed)
    assert history == R.random_game(rules, seed)  # deterministic
    assert history[0][0] == R.new_game(rules)
    for (game, moves, move), (next_game, _, _) in zip(history[:-1], history[1:], strict=True):
        assert not game.terminated
        assert moves == sorted(R.legal_moves(rules, game.position), key=lambda m: m.notation())
        assert len({m.notation() for m in moves}) == len(moves)
        assert move in moves
        if rules.forced_capture and any(m.captures for m in moves):
            assert all(m.captures for m in moves)
        if not rules.multi_jump:
            assert all(len(m.captures) <= 1 for m in moves)
        assert next_game == R.play(rules, game, move)
        assert next_game.ply == game.ply + 1
        assert next_game.position.black_to_move != game.position.black_to_move
        assert _count(next_game.position) == _count(game.position) - len(move.captures)
        men = game.position.black_men if game.position.black_to_move else game.position.white_men
        resets = move.captures or (rules.man_moves_reset and move.path[0] in men)
        expected = 0 if resets else game.plies_without_capture + 1
        assert next_game.plies_without_capture == expected
    final, final_moves, last = history[-1]
    assert last is None
    assert final.terminated
    assert final.result in (-1, 0, 1)
    to_move_black = final.position.black_to_move
    loser = -1 if to_move_black else 1
    if not final_moves:
        has_pieces = R._has_pieces(final.position, to_move_black)
        if rules.stuck_loses or not has_pieces:
            assert final.result == loser
        else:
            assert final.result == 0
    else:
        assert final.result == 0
        if rules.max_plies:
            assert final.ply == rules.max_plies
        else:
            assert final.plies_without_capture == rules.max_plies_without_capture
