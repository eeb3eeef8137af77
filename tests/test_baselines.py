"""Checks of the baseline players and value functions (neurocheckers/search/baselines.py).

Square geometry used below (row 0 at the top, Black's men moving down; bit i = square i + 1):
  6x6: row 0: 1,2,3 at cols 1,3,5   row 1: 4,5,6 at cols 0,2,4
       row 2: 7,8,9 at cols 1,3,5   row 3: 10,11,12 at cols 0,2,4
       row 4: 13,14,15 at 1,3,5     row 5: 16,17,18 at 0,2,4
  8x8: row r holds squares 4r+1..4r+4 at cols 1,3,5,7 (r even) or 0,2,4,6 (r odd).
Actions are ``direction * N + (square - 1)``, directions 0 down-left, 1 down-right, 2 up-left,
3 up-right.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.rules import (
    AMERICAN8,
    BLACK,
    PRESETS,
    SIMPLE6,
    WHITE,
    from_position,
    init,
    random_action,
    step,
)
from neurocheckers.search.baselines import (
    WIN_SCORE,
    alphabeta_policy,
    alphabeta_search,
    greedy_policy,
    material_value_fn,
    random_policy,
    rollout_value_fn,
)


def bits(*squares: int) -> int:
    """Bitboard of American square numbers (1-based)."""
    return sum(1 << (s - 1) for s in squares)


def action_of(rules, direction: int, square: int) -> int:
    return direction * rules.num_squares + square - 1


@functools.cache
def random_positions_fn(rules, max_plies: int):
    """Jitted ``(key, n) -> State[n]``: positions after a uniform random number of random plies."""

    def one(key):
        k_len, k_play = jax.random.split(key)
        length = jax.random.randint(k_len, (), 0, max_plies + 1)

        def body(i, carry):
            s, k = carry
            k, sub = jax.random.split(k)
            nxt = step(rules, s, random_action(rules, sub, s))
            return jax.tree.map(lambda a, b: jnp.where(i < length, b, a), s, nxt), k

        s, _ = jax.lax.fori_loop(0, max_plies, body, (init(rules), k_play))
        return s

    return jax.jit(lambda key, n: jax.vmap(one)(jax.random.split(key, n)), static_argnums=1)


def _without_moves(state, hide):
    """``state`` shown as a finished game (terminated, no legal action) where ``hide`` is set."""
    return state.replace(
        terminated=state.terminated | hide,
        legal_bits=jnp.where(hide, jnp.zeros_like(state.legal_bits), state.legal_bits),
    )


def play_games(rules, policy_a, policy_b, key, num_games: int, params_a=None, params_b=None):
    """[num_games] scores of ``policy_a`` (1 win, 1/2 draw, 0 loss); it plays Black in even games.

    A tiny vmapped ``while_loop`` driver for these tests (the arena module is the real one).
    """

    def one(key, a_color):
        def cond(carry):
            return ~carry[0].terminated

        def body(carry):
            s, k = carry
            k, ka, kb = jax.random.split(k, 3)
            # Under vmap both policies run at every ply; showing each one a finished game (no legal
            # action) when it is not its turn lets a search (alpha-beta's while_loop) stop at once
            # instead of being wasted.
            a_turn = s.color == a_color
            action_a = policy_a(params_a, _without_moves(s, ~a_turn), ka)
            action_b = policy_b(params_b, _without_moves(s, a_turn), kb)
            action = jnp.where(a_turn, action_a, action_b)
            return step(rules, s, action), k

        s, _ = jax.lax.while_loop(cond, body, (init(rules), key))
        sign = jnp.where(a_color == BLACK, 1.0, -1.0)
        return 0.5 * (1.0 + sign * s.result)

    colors = jnp.arange(num_games) % 2
    return jax.jit(jax.vmap(one))(jax.random.split(key, num_games), colors)


# ---------------------------------------------------------------------------
# A plain recursive reference (no pruning, not jitted)
# ---------------------------------------------------------------------------


@functools.cache
def _jit_step(rules):
    return jax.jit(lambda s, a: step(rules, s, a))


def reference_minimax(rules, state, depth: int, distance: int = 0) -> float:
    """Black's-view minimax score with the same evaluation as ``alphabeta_policy``: plain recursion in
    Python without pruning, over the same ``step`` (jitted on its own for speed)."""
    if bool(state.terminated):
        return float(state.result) * (WIN_SCORE - distance)
    if distance == depth:
        c = jax.device_get((state.black_men, state.black_kings, state.white_men, state.white_kings))
        counts = [bin(int(x)).count("1") for x in c]
        return counts[0] + 1.5 * counts[1] - counts[2] - 1.5 * counts[3]
    actions = np.flatnonzero(np.asarray(state.legal_action_mask))
    scores = [reference_minimax(rules, _jit_step(rules)(state, int(a)), depth, distance + 1) for a in actions]
    return max(scores) if int(state.color) == BLACK else min(scores)


def reference_root_scores(rules, state, depth: int) -> dict[int, float]:
    """Mover's-view minimax score of each legal root action."""
    sign = 1.0 if int(state.color) == BLACK else -1.0
    return {
        int(a): sign * reference_minimax(rules, _jit_step(rules)(state, int(a)), depth, 1)
        for a in np.flatnonzero(np.asarray(state.legal_action_mask))
    }


# ---------------------------------------------------------------------------
# Shared jitted functions. Compiling anything that contains `step` takes seconds on CPU, so every
# check goes through a few batched functions of one fixed batch size B (single positions are tiled).
# ---------------------------------------------------------------------------

B = 64


def tile(state, n: int = B):
    return jax.tree.map(lambda x: jnp.broadcast_to(x, (n, *x.shape)), state)


def keys_of(seed: int, n: int = B):
    return jax.random.split(jax.random.key(seed), n)


@pytest.fixture(scope="module")
def batched():
    """``get(rules, name)``: a cached jitted, vmapped function over B games.

    Policies ("random", "greedy", "greedy-rollout", "alphabeta2"): ``(params, states, keys) -> actions``;
    "search3": ``states -> (scores [B, A], legal [B, A])``; "rollout": ``(params, states, keys) -> values``.
    """
    cache = {}

    def make(rules, name):
        if name == "search3":
            return jax.vmap(lambda s: alphabeta_search(rules, s, 3))
        fn = {
            "random": lambda: random_policy(rules),
            "greedy": lambda: greedy_policy(rules, material_value_fn(rules)),
            "greedy-rollout": lambda: greedy_policy(rules, rollout_value_fn(rules, max_plies=60)),
            "alphabeta2": lambda: alphabeta_policy(rules, 2),
            "rollout": lambda: rollout_value_fn(rules),
        }[name]()
        return jax.vmap(fn, in_axes=(None, 0, 0))

    def get(rules, name):
        if (rules.name, name) not in cache:
            cache[rules.name, name] = jax.jit(make(rules, name))
        return cache[rules.name, name]

    return get


def choices(batched, rules, name, state, seed: int = 0) -> set[int]:
    """The set of actions the policy ``name`` picks in ``state`` over B random keys."""
    return set(np.asarray(batched(rules, name)(None, tile(state), keys_of(seed))).tolist())


# ---------------------------------------------------------------------------
# Legality
# ---------------------------------------------------------------------------

POLICIES = {
    "simple6": ("random", "greedy", "greedy-rollout", "alphabeta2"),
    "american6": ("random", "greedy", "alphabeta2"),
    "american8": ("random", "greedy", "alphabeta2"),
}


@pytest.mark.parametrize("rules_name", list(PRESETS))
def test_policies_play_legal_moves(batched, rules_name):
    rules = PRESETS[rules_name]
    states = random_positions_fn(rules, 30)(jax.random.key(1), B)
    # The last games are replaced by finished ones: Black to move without pieces (Black lost), and a
    # draw by the rules' ply limit (total or without capture) where both sides could still move.
    lost = from_position(rules, 0, 0, 1 << (rules.num_squares - 1), 0, BLACK)
    limit = (
        {"ply": rules.max_plies}
        if rules.max_plies
        else {"plies_without_capture": rules.max_plies_without_capture}
    )
    drawn = from_position(rules, 0, bits(1), 0, bits(rules.num_squares), WHITE, **limit)
    assert bool(lost.terminated) and bool(drawn.terminated) and int(drawn.result) == 0
    states = jax.tree.map(lambda x, y, z: x.at[-1].set(y).at[-2].set(z), states, lost, drawn)
    live = ~np.asarray(states.terminated)
    assert live.sum() > B // 4
    mask = np.asarray(states.legal_action_mask)
    assert not mask[~live].any()  # a finished game has no legal action
    for name in POLICIES[rules_name]:
        actions = np.asarray(batched(rules, name)(None, states, keys_of(2)))
        assert actions.dtype == np.int32, name
        assert actions.shape == (B,), name
        legal = mask[np.arange(B), actions]
        assert legal[live].all(), (name, np.flatnonzero(live & ~legal))
        assert (actions[~live] == 0).all(), name  # the documented answer on a finished game
        # ... which ``step`` ignores: the finished games stay as they were.
        after = jax.vmap(functools.partial(step, rules))(states, jnp.asarray(actions))
        for x, y in zip(jax.tree.leaves(states), jax.tree.leaves(after), strict=True):
            np.testing.assert_array_equal(np.asarray(x)[~live], np.asarray(y)[~live])


# ---------------------------------------------------------------------------
# Alpha-beta on hand-made positions
# ---------------------------------------------------------------------------


def _free_capture_position():
    # simple6, Black to move: the man on 8 can jump 11 (down-left) to 13; Black's 6 covers 8 from
    # White's 11 x 8, and after 8x13 White's 18 cannot reach 13. Capturing is optional in simple6.
    rules = SIMPLE6
    s = from_position(rules, bits(6, 8), 0, bits(11, 18), 0, BLACK)
    return rules, s, action_of(rules, 0, 8)


def test_alphabeta_takes_free_capture(batched):
    rules, s, capture = _free_capture_position()
    assert int(s.legal_action_mask.sum()) > 1
    assert choices(batched, rules, "alphabeta2", s) == {capture}


def test_alphabeta_takes_free_capture_as_white(batched):
    # The mirror image: White's man on 11 (moving up) jumps Black's 8 to 6 (up-right); Black's 1
    # cannot take it back (it would need to stand on 2 or 3).
    rules = SIMPLE6
    s = from_position(rules, bits(8, 1), 0, bits(11, 13), 0, WHITE)
    capture = action_of(rules, 3, 11)
    assert bool(s.legal_action_mask[capture])
    assert int(s.legal_action_mask.sum()) > 1
    assert choices(batched, rules, "alphabeta2", s) == {capture}


def test_alphabeta_wins_in_one(batched):
    # simple6: Black's 8 jumps White's last piece on 11; Black's 4 and 8 have quiet moves too.
    rules = SIMPLE6
    s = from_position(rules, bits(4, 8), 0, bits(11), 0, BLACK)
    win = action_of(rules, 0, 8)
    assert int(s.legal_action_mask.sum()) > 2
    assert choices(batched, rules, "alphabeta2", s) == {win}
    # Scores are from the mover's view, a win scoring WIN_SCORE minus its distance: faster wins first.
    scores, legal = batched(rules, "search3")(tile(s))
    assert float(scores[0, win]) == WIN_SCORE - 1
    assert float(np.asarray(scores[0])[np.asarray(legal[0])].max()) == WIN_SCORE - 1


def test_alphabeta_wins_with_multi_jump(batched):
    # american8: White has men on 6 and 15. Black's 1 x 6 lands on 10 and must go on x 15 to 19,
    # winning; Black's 11 x 15 (to 18) only takes one of the two. Both are legal (forced capture).
    rules = AMERICAN8
    s = from_position(rules, bits(1, 11), 0, bits(6, 15), 0, BLACK)
    first = action_of(rules, 1, 1)
    single = action_of(rules, 0, 11)
    assert sorted(np.flatnonzero(np.asarray(s.legal_action_mask))) == sorted([first, single])
    after = step(rules, s, first)
    assert int(after.color) == BLACK and int(after.continuing) == bits(10)
    second = action_of(rules, 1, 10)
    end = step(rules, after, second)
    assert bool(end.terminated) and int(end.result) == 1
    assert choices(batched, rules, "alphabeta2", s) == {first}
    assert choices(batched, rules, "alphabeta2", after) == {second}
    scores, _ = batched(rules, "search3")(tile(s))
    assert float(scores[0, first]) == WIN_SCORE - 2
    assert float(scores[0, single]) < WIN_SCORE - 2


def test_alphabeta_random_tie_break(batched):
    # The opening of simple6 at depth 2: no capture is possible within two plies, so all moves tie.
    rules = SIMPLE6
    s = init(rules)
    assert choices(batched, rules, "alphabeta2", s) == set(np.flatnonzero(np.asarray(s.legal_action_mask)))


# ---------------------------------------------------------------------------
# Batched alpha-beta against the recursive reference
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("rules_name", "count"), [("simple6", 8), ("american6", 7), ("american8", 5)])
def test_alphabeta_matches_reference(batched, rules_name, count):
    rules = PRESETS[rules_name]
    depth = 3
    states = random_positions_fn(rules, 30)(jax.random.key(7), B)
    live = np.flatnonzero(~np.asarray(states.terminated))
    assert len(live) >= count
    scores, legal = (np.asarray(x) for x in batched(rules, "search3")(states))
    for i in live[:count]:
        s = jax.tree.map(lambda x, i=i: x[i], states)
        ref = reference_root_scores(rules, s, depth)
        assert sorted(ref) == np.flatnonzero(legal[i]).tolist()
        best = max(ref.values())
        assert scores[i][legal[i]].max() == best
        for a, v in ref.items():
            # Exact for the moves tied with the best (those the policy picks among), an upper bound
            # below the best for the others.
            if v == best:
                assert scores[i][a] == best, (i, a)
            else:
                assert v <= scores[i][a] < best, (i, a, v, scores[i][a])


# ---------------------------------------------------------------------------
# Greedy and value functions
# ---------------------------------------------------------------------------


def test_greedy_material_takes_free_piece(batched):
    rules, s, capture = _free_capture_position()
    assert choices(batched, rules, "greedy", s) == {capture}


def test_greedy_values_continuation_for_the_mover(batched):
    # american8: Black's 1 x 6 takes a White king and lands on 10, where it must go on (x 15), so that
    # child has Black to move again and its value must not be flipped; it is worth more (+1.5) than
    # 11 x 15 (+1), which hands the move to White. Flipping the continuation would pick 11 x 15.
    rules = AMERICAN8
    s = from_position(rules, bits(1, 11), 0, bits(15), bits(6), BLACK)
    assert int(s.legal_action_mask.sum()) == 2
    assert choices(batched, rules, "greedy", s) == {action_of(rules, 1, 1)}


def test_material_value_fn():
    rules = SIMPLE6
    v = jax.jit(material_value_fn(rules))
    key = jax.random.key(0)
    assert float(v(None, init(rules), key)) == pytest.approx(0.5)
    up = from_position(rules, bits(1, 2), 0, bits(16), 0, BLACK)
    down = from_position(rules, bits(1, 2), 0, bits(16), 0, WHITE)
    assert float(v(None, up, key)) > 0.5
    assert float(v(None, up, key)) + float(v(None, down, key)) == pytest.approx(1.0)
    lost = from_position(rules, 0, 0, bits(16), 0, BLACK)
    assert float(v(None, lost, key)) == 0.0


def test_rollout_value_fn(batched):
    rules = SIMPLE6
    rollout = batched(rules, "rollout")

    def values(state):
        return np.asarray(rollout(None, tile(state), keys_of(0)))

    # Terminated states return their exact outcome for the side to move in them.
    lost = from_position(rules, 0, 0, bits(16), 0, BLACK)  # Black to move, no pieces: Black lost.
    assert bool(lost.terminated) and int(lost.result) == -1
    assert (values(lost) == 0.0).all()
    # The engine never produces a finished game won by the side to move; a hand-made one rates 1.
    assert (values(lost.replace(result=jnp.int32(1))) == 1.0).all()
    drawn = from_position(rules, bits(1), 0, bits(16), 0, BLACK, ply=60)  # the 60-ply limit
    assert bool(drawn.terminated) and int(drawn.result) == 0
    assert (values(drawn) == 0.5).all()
    # Three Black men against one White man: single random games give 0, 1/2 or 1 and on average
    # clearly favour Black, rated from the view of whichever side is to move.
    strong = values(from_position(rules, bits(1, 2, 3), 0, bits(16), 0, BLACK))
    assert set(np.unique(strong).tolist()) <= {0.0, 0.5, 1.0}
    assert strong.mean() > 0.6
    assert values(from_position(rules, bits(1, 2, 3), 0, bits(16), 0, WHITE)).mean() < 0.4
    # A rollout that reaches the ply limit unfinished counts as a draw.
    v0 = jax.jit(rollout_value_fn(rules, max_plies=0))
    assert float(v0(None, init(rules), jax.random.key(0))) == 0.5


# ---------------------------------------------------------------------------
# Strength
# ---------------------------------------------------------------------------


def test_alphabeta3_beats_random_on_simple6():
    rules = SIMPLE6
    scores = play_games(rules, alphabeta_policy(rules, 3), random_policy(rules), jax.random.key(0), 200)
    assert float(scores.mean()) > 0.8
