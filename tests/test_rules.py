"""The JAX rules engine: perft against the shared table, every special rule from FEN positions,
and batched play equal to one-at-a-time play."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.rules import AMERICAN6, AMERICAN8, PRESETS, SIMPLE6, init, random_action, step
from neurocheckers.rules.notation import apply_move, legal_moves, parse_fen, to_fen
from neurocheckers.rules.perft import perft

# Depths that keep the suite fast; scripts/bench_rules.py goes deeper.
PERFT_DEPTHS = {"simple6": 8, "american6": 9, "american8": 8}


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_perft_matches_shared_table(name, perft_table):
    rules = PRESETS[name]
    depth = PERFT_DEPTHS[name]
    assert perft(rules, init(rules), depth) == perft_table[name]["perft"][:depth]


def moves(rules, fen):
    return [m.notation for m in legal_moves(rules, parse_fen(rules, fen))]


def test_forced_capture_only_in_american_rules():
    fen = "B:W8:B3,5"
    assert moves(AMERICAN6, fen) == ["5x12"]
    assert moves(SIMPLE6, fen) == ["3-6", "5-7", "5x12"]


def test_multi_jump_paths_are_separate_moves_and_must_be_completed():
    fen = "B:W6,14,15,23:BK1,10"
    assert moves(AMERICAN8, fen) == ["10x17", "10x19x26"]
    state = parse_fen(AMERICAN8, fen)
    # After the first jump of 10x19x26 the same player must go on with the same piece.
    first = legal_moves(AMERICAN8, state)[1].actions[0]
    mid = jax.device_get(step(AMERICAN8, state, first))
    assert int(mid.color) == 0 and int(mid.continuing) == 1 << (19 - 1)
    assert int(mid.legal_action_mask.sum()) == 1
    after = apply_move(AMERICAN8, state, "10x19x26")
    assert to_fen(after) == "W:W6,14:BK1,26"


def test_simple6_allows_one_jump_per_move():
    # A double jump is available under American rules but simple6 stops after one jump.
    fen = "B:W8,14:B5"
    assert moves(AMERICAN6, fen) == ["5x12x17"]
    assert moves(SIMPLE6, fen) == ["5-7", "5x12"]
    after = apply_move(SIMPLE6, parse_fen(SIMPLE6, fen), "5x12")
    assert int(after.color) == 1 and to_fen(after) == "W:W14:B12"


def test_crowning_ends_a_capture():
    fen = "B:W25,26:B23"
    assert moves(AMERICAN8, fen) == ["23x30"]
    after = apply_move(AMERICAN8, parse_fen(AMERICAN8, fen), "23x30")
    assert to_fen(after) == "W:W25:BK30"
    # The same jump by a king goes on backwards over 25.
    assert moves(AMERICAN8, "B:W25,26:BK23") == ["23x30x21"]


def test_kings_capture_backwards_and_men_do_not():
    assert moves(AMERICAN8, "B:W10:BK14") == ["14x7"]
    assert moves(AMERICAN8, "B:W10:B14") == ["14-17", "14-18"]
    assert moves(AMERICAN8, "W:WK10:B14") == ["10x17"]


def test_stuck_side_draws_in_simple6_and_loses_in_american6():
    fen = "B:W16,17:B13"
    simple = parse_fen(SIMPLE6, fen)
    assert bool(simple.terminated) and int(simple.result) == 0
    american = parse_fen(AMERICAN6, fen)
    assert bool(american.terminated) and int(american.result) == -1


@pytest.mark.parametrize("rules", [SIMPLE6, AMERICAN6, AMERICAN8], ids=lambda r: r.name)
def test_capturing_the_last_piece_wins(rules):
    fen = "B:W8:B5" if rules.board_size == 6 else "B:W14:B10"
    state = parse_fen(rules, fen)
    assert not bool(state.terminated)
    after = apply_move(rules, state, moves(rules, fen)[-1])
    assert bool(after.terminated) and int(after.result) == 1
    # White to move with no pieces at all loses under every preset.
    empty = parse_fen(rules, "W:W:BK1")
    assert bool(empty.terminated) and int(empty.result) == 1


def test_simple6_draws_after_60_plies_in_total():
    fen = "B:WK18:BK1"
    before = parse_fen(SIMPLE6, fen, ply=58)
    after = apply_move(SIMPLE6, before, moves(SIMPLE6, fen)[0])
    assert not bool(after.terminated) and int(after.ply) == 59
    last = apply_move(SIMPLE6, after, legal_moves(SIMPLE6, after)[0])
    assert bool(last.terminated) and int(last.result) == 0 and int(last.ply) == 60


@pytest.mark.parametrize("rules", [AMERICAN6, AMERICAN8], ids=lambda r: r.name)
def test_american_draw_after_plies_without_capture(rules):
    limit = rules.max_plies_without_capture
    quiet = "B:WK18:BK1" if rules.board_size == 6 else "B:WK32:BK1"
    state = parse_fen(rules, quiet, plies_without_capture=limit - 2)
    state = apply_move(rules, state, legal_moves(rules, state)[0])
    assert not bool(state.terminated)
    state = apply_move(rules, state, legal_moves(rules, state)[0])
    assert bool(state.terminated) and int(state.result) == 0
    # A capture on the last allowed ply resets the count instead.
    fen = "B:W8,18:B5" if rules.board_size == 6 else "B:W14,32:B10"
    capture = parse_fen(rules, fen, plies_without_capture=limit - 1)
    after = apply_move(rules, capture, legal_moves(rules, capture)[0])
    assert not bool(after.terminated) and int(after.plies_without_capture) == 0


def test_no_capture_limit_is_checked_before_a_stuck_side_loses():
    # Black king 5 -> 1 leaves White's man on 4 without a move: a win, unless that quiet ply
    # reaches the no-capture limit, which draws first (OpenSpiel's order).
    for count, result in ((48, 1), (49, 0)):
        state = parse_fen(AMERICAN6, "B:W4:BK5", plies_without_capture=count)
        after = apply_move(AMERICAN6, state, "5-1")
        assert bool(after.terminated) and int(after.result) == result


def test_terminated_state_is_unchanged_by_step():
    state = parse_fen(AMERICAN6, "B:W16,17:B13")
    after = step(AMERICAN6, state, 0)
    for a, b in zip(jax.tree.leaves(state), jax.tree.leaves(after), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _play_one(rules, key, max_plies):
    def body(carry):
        state, key, n = carry
        key, sub = jax.random.split(key)
        return step(rules, state, random_action(rules, sub, state)), key, n + 1

    def cond(carry):
        return ~carry[0].terminated & (carry[2] < max_plies)

    state, _, _ = jax.lax.while_loop(cond, body, (init(rules), key, 0))
    return state


@functools.cache
def _batched_games(rules):
    return jax.jit(jax.vmap(functools.partial(_play_one, rules, max_plies=400)))


@functools.cache
def _single_game(rules):
    return jax.jit(functools.partial(_play_one, rules, max_plies=400))


@pytest.mark.parametrize("rules", [SIMPLE6, AMERICAN6], ids=lambda r: r.name)
def test_vmapped_games_equal_games_played_one_at_a_time(rules):
    keys = jax.random.split(jax.random.key(7), 6)
    batched = jax.device_get(_batched_games(rules)(keys))
    assert np.all(batched.terminated)
    for i in range(len(keys)):
        single = jax.device_get(_single_game(rules)(keys[i]))
        for a, b in zip(jax.tree.leaves(single), jax.tree.leaves(batched), strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b)[i])


def test_random_action_is_uniform_over_legal_moves():
    state = init(AMERICAN8)
    keys = jax.random.split(jax.random.key(0), 7000)
    actions = np.asarray(jax.jit(jax.vmap(lambda k: random_action(AMERICAN8, k, state)))(keys))
    legal = np.flatnonzero(np.asarray(state.legal_action_mask))
    counts = np.array([(actions == a).sum() for a in legal])
    assert counts.sum() == len(actions)
    assert counts.min() > 850 and counts.max() < 1150  # each of 7 moves ~1000 times
    assert jnp.all(state.legal_action_mask[actions])
