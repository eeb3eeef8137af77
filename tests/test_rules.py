"""The JAX rules engine: perft against the shared table, every special rule from FEN positions,
and batched play equal to one-at-a-time play."""

from __future__ import annotations

import functools
import re
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.rules import (
    AMERICAN6,
    AMERICAN8,
    AMERICAN8_OPENSPIEL,
    PRESETS,
    SIMPLE6,
    bits,
    from_position,
    init,
    init_batch,
    legal_action_slots,
    random_action,
    step,
)
from neurocheckers.rules.fen import read_fen
from neurocheckers.rules.notation import apply_move, legal_moves, parse_fen, to_fen
from neurocheckers.rules.perft import perft
from neurocheckers.rules.tables import tables

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


@pytest.mark.parametrize("rules", [AMERICAN6, AMERICAN8, AMERICAN8_OPENSPIEL], ids=lambda r: r.name)
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


# ---------------------------------------------------------------------------
# Terminal states and illegal actions
# ---------------------------------------------------------------------------


def _assert_no_legal_action(state):
    assert bool(state.terminated)
    assert not np.asarray(state.legal_bits).any()
    assert not np.asarray(state.legal_action_mask).any()
    assert int(state.num_legal_actions) == 0


def _drawn_by_limit(rules):
    """A game drawn by a ply limit in a position where both sides still have moves."""
    fen = "B:WK18:BK1" if rules.board_size == 6 else "B:WK32:BK1"
    if rules.max_plies:
        return parse_fen(rules, fen, ply=rules.max_plies)
    return parse_fen(rules, fen, plies_without_capture=rules.max_plies_without_capture)


@pytest.mark.parametrize("rules", [SIMPLE6, AMERICAN6, AMERICAN8], ids=lambda r: r.name)
def test_a_draw_by_a_ply_limit_has_no_legal_action(rules):
    drawn = _drawn_by_limit(rules)
    assert int(drawn.result) == 0
    _assert_no_legal_action(drawn)
    assert legal_moves(rules, drawn) == []
    assert int(legal_action_slots(rules, drawn).max()) == -1
    assert int(random_action(rules, jax.random.key(0), drawn)) == 0
    # Reached by a move, too: the last quiet ply before the limit.
    fen = "B:WK18:BK1" if rules.board_size == 6 else "B:WK32:BK1"
    limit = rules.max_plies or rules.max_plies_without_capture
    counter = {"ply": limit - 1} if rules.max_plies else {"plies_without_capture": limit - 1}
    before = parse_fen(rules, fen, **counter)
    assert int(before.num_legal_actions) > 0
    _assert_no_legal_action(apply_move(rules, before, legal_moves(rules, before)[0]))


def _leaves(state):
    return [np.asarray(x) for x in jax.tree.leaves(state)]


@pytest.mark.parametrize("color", ["B", "W"])
def test_an_illegal_action_forfeits_the_game(color):
    rules = AMERICAN6
    state = parse_fen(rules, f"{color}:W14,K8:B4,9")
    legal = set(np.flatnonzero(np.asarray(state.legal_action_mask)).tolist())
    illegal = [a for a in range(rules.num_actions) if a not in legal][::7] + [-1, rules.num_actions, 10**6]
    mover_loses = -1 if color == "B" else 1
    batch = jax.tree.map(lambda x: np.broadcast_to(x, (len(illegal), *np.shape(x))), state)
    after = jax.device_get(jax.jit(jax.vmap(functools.partial(step, rules)))(batch, jnp.asarray(illegal)))
    for i, action in enumerate(illegal):
        one = jax.tree.map(lambda x, i=i: x[i], after)
        _assert_no_legal_action(one)
        assert int(one.result) == mover_loses, action
        # The position and its counters stay as they were.
        for field in ("black_men", "black_kings", "white_men", "white_kings", "color", "ply", "continuing"):
            assert int(getattr(one, field)) == int(getattr(state, field)), (action, field)
    # A legal action in the same batch is played as usual.
    played = jax.device_get(step(rules, state, min(legal)))
    assert not bool(played.terminated) and int(played.ply) == 1


def test_a_finished_game_ignores_every_action():
    state = parse_fen(AMERICAN6, "B:W16,17:B13")  # Black is stuck: lost
    drawn = _drawn_by_limit(AMERICAN6)
    for finished in (state, drawn):
        for action in (-1, 0, 5, AMERICAN6.num_actions):
            after = step(AMERICAN6, finished, action)
            for a, b in zip(_leaves(finished), _leaves(after), strict=True):
                np.testing.assert_array_equal(a, b)


def test_init_batch_repeats_the_opening():
    batch = init_batch(AMERICAN8, (2, 3))
    one = init(AMERICAN8)
    for a, b in zip(_leaves(one), _leaves(batch), strict=True):
        assert b.shape == (2, 3, *a.shape)
        np.testing.assert_array_equal(b, np.broadcast_to(a, b.shape))
    assert batch.legal_action_mask.shape == (2, 3, AMERICAN8.num_actions)
    assert jax.tree.leaves(init_batch(AMERICAN8, 4))[0].shape[0] == 4


# ---------------------------------------------------------------------------
# Validated positions
# ---------------------------------------------------------------------------


def _sq(*squares: int) -> int:
    return sum(1 << (s - 1) for s in squares)


BAD_POSITIONS = [
    # (black_men, black_kings, white_men, white_kings, other arguments, message naming the bad value)
    (_sq(1), 0, _sq(33), 0, {}, "square 33 is off a 8x8 board"),
    (_sq(5), _sq(5), _sq(20), 0, {}, "square 5 is given twice"),
    (_sq(5), 0, 0, _sq(5), {}, "square 5 is given twice"),
    (_sq(29), 0, _sq(20), 0, {}, "Black man on 29"),
    (_sq(5), 0, _sq(4), 0, {}, "White man on 4"),
    (_sq(*range(5, 18)), 0, _sq(20), 0, {}, "Black has 13 pieces"),
    (_sq(5), 0, _sq(*range(9, 21)), _sq(1), {}, "White has 13 pieces"),
    (-1, 0, _sq(20), 0, {}, "negative: -1"),
    (_sq(5), 0, _sq(20), 0, {"color": 2}, "got 2"),
    (_sq(5), 0, _sq(20), 0, {"ply": -3}, "got -3"),
]


@pytest.mark.parametrize(("bm", "bk", "wm", "wk", "extra", "message"), BAD_POSITIONS)
def test_from_position_rejects_impossible_positions(bm, bk, wm, wk, extra, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        from_position(AMERICAN8, bm, bk, wm, wk, **extra)
    # NumPy values are checked as well.
    with pytest.raises(ValueError, match=re.escape(message)):
        from_position(AMERICAN8, *(np.int64(x) for x in (bm, bk, wm, wk)), **extra)


def test_from_position_takes_traced_values_unchecked():
    # Under jit the values cannot be inspected: the (impossible) position is built as given.
    state = jax.jit(functools.partial(from_position, AMERICAN8))(np.uint32(_sq(29)), 0, np.uint32(_sq(20)), 0)
    assert int(state.black_men) == _sq(29)


BAD_FENS = [
    ("B:W13,,14:B1", "empty item"),
    ("B:W13,14,:B1", "empty item"),
    ("B:W13::B1", "empty piece list"),
    ("B:W13:B1:", "empty piece list"),
    ("X:W13:B1", "side to move"),
    ("B:W13:W14", "repeated piece list"),
    ("B:W13:B13", "square 13 is given twice"),
    ("B:W13,K13:B1", "square 13 is given twice"),
    ("B:W13:B99", "square 99 is off a 6x6 board"),
    ("B:W13:B0", "square 0 is off"),
    ("B:W13:B16", "Black man on 16"),
    ("B:W2:B5", "White man on 2"),
    ("B:W13-18:B1-6,K7", "Black has 7 pieces"),
    ("B:W14-12:B1", "runs backwards"),
    ("B:W13-K15:B1", "mixes men and kings"),
    ("B:W13x:B1", "bad square '13x'"),
]


@pytest.mark.parametrize(("fen", "message"), BAD_FENS)
def test_both_fen_readers_reject_bad_fens(fen, message):
    from neurocheckers.networks.numpy_agent import encode_fen

    for read in (lambda: parse_fen(SIMPLE6, fen), lambda: encode_fen(fen, 6)):
        with pytest.raises(ValueError, match=re.escape(message)) as error:
            read()
        assert str(error.value).startswith(f"malformed FEN {fen!r}: ")
        assert "\n" not in str(error.value)


def test_fen_reader_accepts_ranges_kings_and_the_pdn_tag():
    position = read_fen('[FEN "W:WK13-15,16:B1-3,K5."]', 6)
    assert not position.black_to_move
    assert (position.black_men, position.black_kings) == (_sq(1, 2, 3), _sq(5))
    assert (position.white_men, position.white_kings) == (_sq(16), _sq(13, 14, 15))
    assert read_fen("W:W:BK1", 6).white_men == 0
    state = parse_fen(SIMPLE6, "W:WK13-15,16:B1-3,K5")
    assert to_fen(state) == "W:WK13,K14,K15,16:B1,2,3,K5"


def test_fen_reading_does_not_import_jax():
    code = (
        "import sys\n"
        "from neurocheckers.networks.numpy_agent import encode_fen\n"
        "assert encode_fen('B:W13,14:B1', 6).shape == (36,)\n"
        "assert 'jax' not in sys.modules, sorted(m for m in sys.modules if 'jax' in m)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


# ---------------------------------------------------------------------------
# The bound on legal actions behind legal_action_slots
# ---------------------------------------------------------------------------


def _random_positions(rules, rng, count: int):
    """``count`` random legal positions as bitboard arrays: up to ``men_per_side`` pieces a side, many
    of them kings (the most mobile), men off their crowning rows; either side to move."""
    n, half = rules.num_squares, rules.board_size // 2
    boards = np.zeros((count, 4), np.uint32)
    colors = rng.integers(0, 2, count)
    for i in range(count):
        own = rng.integers(1, rules.men_per_side + 1)
        other = rng.integers(0, rules.men_per_side + 1 - own // 2)
        squares = rng.permutation(n)[: own + other]
        for side, chosen in ((0, squares[:own]), (1, squares[own:])):
            men_allowed = (chosen < n - half) if side == 0 else (chosen >= half)
            kings = ~men_allowed | (rng.random(len(chosen)) < 0.7)
            boards[i, 2 * side] = sum(1 << int(s) for s in chosen[~kings])
            boards[i, 2 * side + 1] = sum(1 << int(s) for s in chosen[kings])
    return boards, colors


@pytest.mark.parametrize("rules", [SIMPLE6, AMERICAN6, AMERICAN8], ids=lambda r: r.name)
def test_legal_actions_stay_within_the_slots_bound(rules):
    rng = np.random.default_rng(0)
    boards, colors = _random_positions(rules, rng, 2000)
    # Every side's pieces fit the rules (from_position would refuse them otherwise): check a few.
    for i in range(0, 2000, 250):
        from_position(rules, *(int(b) for b in boards[i]), color=int(colors[i]))

    @jax.jit
    def counts(boards, colors):
        states = jax.vmap(lambda b, c: from_position(rules, b[0], b[1], b[2], b[3], c))(boards, colors)
        slots = jax.vmap(lambda s: legal_action_slots(rules, s))(states)
        return states.num_legal_actions, jnp.sum(slots >= 0, axis=-1)

    legal, listed = (np.asarray(x) for x in counts(jnp.asarray(boards), jnp.asarray(colors)))
    own = np.where(colors == 0, boards[:, 0] | boards[:, 1], boards[:, 2] | boards[:, 3])
    own_pieces = np.array([bin(int(x)).count("1") for x in own])
    # At most one action per piece and direction (the bound's argument), so never past the slots.
    assert (legal <= 4 * own_pieces).all()
    assert legal.max() <= rules.max_legal_moves
    np.testing.assert_array_equal(listed, legal)  # legal_action_slots lists every legal action
    assert legal.max() > 2 * rules.men_per_side  # kings-heavy positions did test the 4-per-piece room
    with pytest.raises(ValueError, match="below rules.max_legal_moves"):
        legal_action_slots(rules, init(rules), size=rules.max_legal_moves - 1)


# ---------------------------------------------------------------------------
# Bit helpers (neurocheckers/rules/bits.py)
# ---------------------------------------------------------------------------


def test_bit_helpers_agree_with_plain_python():
    rng = np.random.default_rng(1)
    words = rng.integers(1, 2**32, 200, dtype=np.uint64).astype(np.uint32)
    set_bits = [[i for i in range(32) if int(w) >> i & 1] for w in words]
    ranks = np.array([rng.integers(0, len(b)) for b in set_bits], np.int32)
    selected = jax.jit(jax.vmap(bits.select_bit))(words, ranks)
    np.testing.assert_array_equal(selected, [b[r] for b, r in zip(set_bits, ranks, strict=True)])
    np.testing.assert_array_equal(jax.jit(jax.vmap(bits.lowest_bit))(words), [b[0] for b in set_bits])

    t = tables(8)
    for direction in range(4):
        shifted = int(bits.neighbors(t, direction, jnp.uint32(int(words[0]) & t.all_squares)))
        expected = {int(t.neighbor[direction, s]) for s in set_bits[0] if t.neighbor[direction, s] >= 0}
        assert shifted == sum(1 << s for s in expected)

    # Legality of every action, in range or not, against the mask of the same legal_bits.
    rules = AMERICAN8
    legal_bits = jnp.asarray(words[:4] & np.uint32(t.all_squares))
    actions = jnp.arange(-3, rules.num_actions + 3)
    allowed = jax.vmap(lambda a: bits.is_legal_action(rules, legal_bits, a))(actions)
    mask = np.asarray(bits.legal_mask(legal_bits, rules.num_squares))
    np.testing.assert_array_equal(np.asarray(allowed)[3:-3], mask)
    assert not np.asarray(allowed)[:3].any() and not np.asarray(allowed)[-3:].any()
    order = jax.vmap(lambda k: bits.nth_legal_action(rules, legal_bits, k))(jnp.arange(int(mask.sum())))
    np.testing.assert_array_equal(order, np.flatnonzero(mask))

    # Seeded hashes: distinct counters give distinct values under one seed, and seeds differ.
    counters = jnp.arange(4096, dtype=jnp.uint32)
    for finaliser in (bits.mix32, bits.lowbias32):
        hashed = np.asarray(bits.hash32(jnp.uint32(12345), counters, finaliser))
        assert len(np.unique(hashed)) == len(hashed)
        assert not np.array_equal(hashed, np.asarray(bits.hash32(jnp.uint32(54321), counters, finaliser)))
