"""Tests for the OpenSpiel checkers adapter (skipped without pyspiel)."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("pyspiel")

import openspiel_adapter as osa  # noqa: E402

OPENING_MOVES = {(9, 13), (9, 14), (10, 14), (10, 15), (11, 15), (11, 16), (12, 16)}


def _random_states(num_games: int, seed: int):
    """Yield every state (terminal ones included) of a few random games."""
    rng = random.Random(seed)
    game = osa.openspiel_game()
    for _ in range(num_games):
        state = game.new_initial_state()
        yield state
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
            yield state


# --- a tiny independent English-draughts move generator in OUR coordinates ---


def _reference_moves(pos: dict, jumper: int | None = None) -> dict[int, tuple]:
    """our action -> (from, to, is_jump) for the side to move."""
    black = pos["black_to_move"]
    men = pos["black_men"] if black else pos["white_men"]
    kings = pos["black_kings"] if black else pos["white_kings"]
    opp = pos["white_men"] | pos["white_kings"] if black else pos["black_men"] | pos["black_kings"]
    occupied = men | kings | opp
    steps, jumps = {}, {}
    for sq in men | kings:
        r, c = osa.rc_of(sq)
        for d, (dr, dc) in enumerate(osa.OUR_DIR_OFFSETS):
            if sq in men and (dr < 0 if black else dr > 0):
                continue
            if not (0 <= r + dr < 8 and 0 <= c + dc < 8):
                continue
            t1 = osa.square_of(r + dr, c + dc)
            action = d * 32 + sq - 1
            if t1 not in occupied:
                steps[action] = (sq, t1, False)
            elif t1 in opp and 0 <= r + 2 * dr < 8 and 0 <= c + 2 * dc < 8:
                t2 = osa.square_of(r + 2 * dr, c + 2 * dc)
                if t2 not in occupied:
                    jumps[action] = (sq, t2, True)
    if jumper is not None:
        return {a: m for a, m in jumps.items() if m[0] == jumper}
    return jumps or steps


# ------------------------------------------------------------------------------


def test_square_coordinates_roundtrip():
    for sq in range(1, 33):
        r, c = osa.rc_of(sq)
        assert (r + c) % 2 == 1
        assert osa.square_of(r, c) == sq
        row, col = osa.square_to_os_cell(sq)
        assert (row + col) % 2 == 1  # OpenSpiel dark squares map to ours
        assert osa.os_cell_to_square(row, col) == sq
    assert osa.os_cell_to_algebraic(*osa.square_to_os_cell(1)) == "g1"
    assert osa.os_cell_to_algebraic(*osa.square_to_os_cell(32)) == "b8"


def test_start_position():
    game = osa.openspiel_game()
    assert game.get_parameters()["rows"] == 8
    assert game.get_parameters()["columns"] == 8
    state = game.new_initial_state()
    assert state.current_player() == 0
    assert osa.position_of(state) == {
        "black_men": set(range(1, 13)),
        "black_kings": set(),
        "white_men": set(range(21, 33)),
        "white_kings": set(),
        "black_to_move": True,
    }
    assert osa.moves_without_capture(state) == 0
    assert not osa.in_multi_jump(state)


def test_opening_moves():
    state = osa.openspiel_game().new_initial_state()
    legal = osa.legal_moves_of(state)
    pairs = {osa.openspiel_action_to_squares(a) for a in legal.values()}
    assert pairs == OPENING_MOVES
    assert len(legal) == 7
    # 9-13 is direction 0 (+1, -1) from square 9; 9-14 is direction 1 (+1, +1).
    assert osa.openspiel_action_to_squares(legal[0 * 32 + 8]) == (9, 13)
    assert osa.openspiel_action_to_squares(legal[1 * 32 + 8]) == (9, 14)
    assert state.action_to_string(legal[0 * 32 + 8]) == "g3h4"
    for ours, os_action in legal.items():
        assert osa.our_action_to_openspiel(state, ours) == os_action
        assert osa.our_action_to_squares(ours, is_jump=False) == (osa.openspiel_action_to_squares(os_action))


def test_random_games_actions_map_to_valid_moves():
    for state in _random_states(num_games=20, seed=0):
        if state.is_terminal():
            assert state.legal_actions() == []
            continue
        pos = osa.position_of(state)
        own = (
            pos["black_men"] | pos["black_kings"]
            if pos["black_to_move"]
            else pos["white_men"] | pos["white_kings"]
        )
        legal = osa.legal_moves_of(state)
        assert len(legal) == len(state.legal_actions())
        for ours, os_action in legal.items():
            src, dst = osa.openspiel_action_to_squares(os_action)
            assert src in own and 1 <= dst <= 32
            (r0, c0), (r1, c1) = osa.rc_of(src), osa.rc_of(dst)
            dist = abs(r1 - r0)
            assert dist in (1, 2) and abs(c1 - c0) == dist
            assert (dist == 2) == osa.openspiel_action_is_capture(os_action)
            assert osa.our_action_to_openspiel(state, ours) == os_action
            assert osa.our_action_to_squares(ours, dist == 2) == (src, dst)


def test_random_games_match_reference_rules():
    """Legal sets, multi-jump continuation, counter and results match the rules
    we implement (so the coordinate mapping needs no mirror)."""
    seen_continuation = seen_draw = seen_win = False
    for state in _random_states(num_games=40, seed=1):
        pos = osa.position_of(state)
        counter = osa.moves_without_capture(state)
        hist = state.full_history()
        jumper = None
        if osa.in_multi_jump(state):
            seen_continuation = True
            jumper = osa.openspiel_action_to_squares(hist[-1].action)[1]
        ref = _reference_moves(pos, jumper) if counter < 40 else {}
        if state.is_terminal():
            assert state.current_player() == -4
            if counter >= osa.NO_CAPTURE_DRAW_PLIES:
                assert counter == osa.NO_CAPTURE_DRAW_PLIES
                assert state.returns() == [0.0, 0.0]
                seen_draw = True
            else:
                assert ref == {}  # side to move is stuck (or has no pieces): loses
                loser = 0 if pos["black_to_move"] else 1
                assert state.returns()[loser] == -1.0
                assert state.returns()[1 - loser] == 1.0
                seen_win = True
            continue
        assert counter < osa.NO_CAPTURE_DRAW_PLIES
        assert state.returns() == [0.0, 0.0]
        assert state.current_player() == (0 if pos["black_to_move"] else 1)
        legal = osa.legal_moves_of(state)
        assert set(legal) == set(ref)
        for ours, os_action in legal.items():
            assert osa.openspiel_action_to_squares(os_action) == ref[ours][:2]
    assert seen_continuation and seen_draw and seen_win
