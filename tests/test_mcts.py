"""Tests of the compact MCTS (neurocheckers.search.mcts).

Geometry (row 0 at the top, Black moving down; square s is bit s - 1; action = direction * N + bit,
directions 0 down-left, 1 down-right, 2 up-left, 3 up-right):
  6x6: row 0: 1,2,3 at cols 1,3,5   row 1: 4,5,6 at cols 0,2,4   row 2: 7,8,9 at cols 1,3,5
       row 3: 10,11,12 at 0,2,4     row 4: 13,14,15 at 1,3,5     row 5: 16,17,18 at 0,2,4
  8x8: row r holds squares 4r+1..4r+4 at cols 1,3,5,7 (r even) or 0,2,4,6 (r odd).
Every hand-made position is also tested colour-swapped and rotated 180 degrees (White to move).
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.networks import evaluator
from neurocheckers.rules import (
    AMERICAN6,
    BLACK,
    PRESETS,
    SIMPLE6,
    WHITE,
    Rules,
    State,
    from_position,
    init,
    legal_action_slots,
    material_balance,
    random_action,
    step,
)
from neurocheckers.rules.bits import nth_legal_action
from neurocheckers.search import MCTSConfig, anytime_search, batched_search, calibrate_simulations
from neurocheckers.search.baselines import greedy_policy, rollout_value_fn
from neurocheckers.search.mcts import argmax_random_ties

TACTICS_SIMS = 64
REPEATS = 4


def _sq(*squares: int) -> int:
    """Bitboard of 1-based squares."""
    return sum(1 << (s - 1) for s in squares)


def material_value(params, state: State, key) -> jax.Array:
    """A knowledge-light leaf evaluator: sigmoid of the material balance for the side to move."""
    del params, key
    sign = jnp.where(state.color == BLACK, 1.0, -1.0)
    return jax.nn.sigmoid(0.5 * sign * material_balance(state))


def _stack(states: list[State]) -> State:
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def _rotate(bits: int, n: int) -> int:
    return sum(1 << (n - 1 - i) for i in range(n) if bits >> i & 1)


def _mirror(rules: Rules, state: State) -> State:
    """The colour-swapped position rotated 180 degrees: White to move plays what Black played."""
    n = rules.num_squares
    bm, bk, wm, wk = (
        int(x) for x in (state.black_men, state.black_kings, state.white_men, state.white_kings)
    )
    return from_position(
        rules, _rotate(wm, n), _rotate(wk, n), _rotate(bm, n), _rotate(bk, n), color=1 - int(state.color)
    )


def _mirror_action(rules: Rules, action: int) -> int:
    n = rules.num_squares
    direction, square = divmod(action, n)
    return (3 - direction) * n + (n - 1 - square)


@functools.cache
def _random_positions_fn(rules: Rules, batch: int, max_plies: int):
    def play(key):
        start = jax.tree.map(lambda x: jnp.broadcast_to(x, (batch, *x.shape)), init(rules))
        stop_key, key = jax.random.split(key)
        stop_at = jax.random.randint(stop_key, (batch,), 0, max_plies)

        def body(t, states):
            keys = jax.random.split(jax.random.fold_in(key, t), batch)
            actions = jax.vmap(functools.partial(random_action, rules))(keys, states)
            stepped = jax.vmap(functools.partial(step, rules))(states, actions)
            keep = t < stop_at

            def pick(new, old):
                return jnp.where(keep.reshape(keep.shape + (1,) * (new.ndim - 1)), new, old)

            return jax.tree.map(pick, stepped, states)

        return jax.lax.fori_loop(0, max_plies, body, start)

    return jax.jit(play)


def _drawn_by_a_ply_limit(rules: Rules) -> State:
    """A game drawn by the rules' ply limit (total or without capture) while both sides can move."""
    n = rules.num_squares
    limits = (
        {"ply": rules.max_plies}
        if rules.max_plies
        else {"plies_without_capture": rules.max_plies_without_capture}
    )
    state = from_position(rules, 0, _sq(1), 0, _sq(n), color=WHITE, **limits)
    assert bool(state.terminated) and int(state.result) == 0
    return state


def random_positions(rules: Rules, key: jax.Array, batch: int = 32, max_plies: int = 40) -> State:
    """``batch`` positions after 0 .. max_plies - 1 uniformly random plies (some games may be over)."""
    return _random_positions_fn(rules, batch, max_plies)(key)


# ---------------------------------------------------------------------------
# Helpers of the search
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PRESETS))
def test_nth_legal_action_matches_legal_action_slots(name):
    rules = PRESETS[name]
    states = random_positions(rules, jax.random.key(11))
    k = rules.max_legal_moves

    @jax.jit
    def both(states):
        slots = jax.vmap(lambda s: legal_action_slots(rules, s))(states)
        every_slot = jax.vmap(
            lambda s: jax.vmap(lambda i: nth_legal_action(rules, s.legal_bits, i))(jnp.arange(k))
        )
        return slots, every_slot(states)

    slots, derived = both(states)
    valid = np.asarray(slots) >= 0
    np.testing.assert_array_equal(np.asarray(derived)[valid], np.asarray(slots)[valid])


def testargmax_random_ties():
    scores = jnp.full((24,), -jnp.inf).at[jnp.array([2, 5, 17])].set(0.75).at[3].set(0.7499)
    salts = jax.random.bits(jax.random.key(0), (2000,), jnp.uint32) | 1
    winners = np.asarray(jax.jit(jax.vmap(argmax_random_ties, in_axes=(None, 0)))(scores, salts))
    counts = {w: int(np.sum(winners == w)) for w in (2, 5, 17)}
    assert set(np.unique(winners)) == {2, 5, 17}
    assert min(counts.values()) > 400  # roughly uniform among the tied slots
    assert int(argmax_random_ties(scores, jnp.uint32(0))) == 2  # salt 0: the lowest tied slot
    x = jax.random.normal(jax.random.key(1), (500, 48))
    np.testing.assert_array_equal(
        jax.jit(jax.vmap(argmax_random_ties))(x, salts[:500]), jnp.argmax(x, axis=-1)
    )


def test_config_validation():
    with pytest.raises(ValueError, match="num_simulations"):
        MCTSConfig(num_simulations=0)
    with pytest.raises(ValueError, match="c_puct"):
        MCTSConfig(c_puct=-1.0)
    with pytest.raises(ValueError, match="root_dirichlet_fraction"):
        MCTSConfig(root_dirichlet_fraction=1.5)


# ---------------------------------------------------------------------------
# Legal play with a randomly initialised evaluator
# ---------------------------------------------------------------------------


def _legality_setup(rules: Rules):
    """A random evaluator and the jitted batched search shared by the tests below (one compile)."""
    spec = evaluator.EvaluatorSpec.for_rules(rules, layers=5, width=8)
    # Root noise on one preset, so that path is covered without another compilation.
    config = MCTSConfig(num_simulations=8, root_dirichlet_alpha=0.3 if rules is SIMPLE6 else 0.0)
    return spec, config, batched_search(rules, config, evaluator.value_fn(spec))


@pytest.mark.parametrize("name", list(PRESETS))
def test_random_evaluator_plays_only_legal_moves(name):
    rules = PRESETS[name]
    spec, config, run = _legality_setup(rules)
    params = evaluator.init_params(jax.random.key(2), spec)
    states = random_positions(rules, jax.random.key(3))
    # Finished games for sure: Black to move with no pieces (lost), and a draw by a ply limit with
    # moves still on the board.
    over = from_position(rules, 0, 0, _sq(rules.num_squares), 0, color=BLACK)
    drawn = _drawn_by_a_ply_limit(rules)
    states = jax.tree.map(lambda xs, x, y: xs.at[0].set(x).at[1].set(y), states, over, drawn)
    keys = jax.random.split(jax.random.key(4), 32)
    out = run(params, states, keys)

    done = np.asarray(states.terminated)
    assert done[0] and done[1] and not done.all()
    action = np.asarray(out.action)
    mask = np.asarray(states.legal_action_mask)
    assert mask[~done][np.arange(int((~done).sum())), action[~done]].all()
    visits = np.asarray(out.visit_counts)
    np.testing.assert_array_equal(visits[~done].sum(axis=1), config.num_simulations)
    np.testing.assert_array_equal(visits[done], 0)
    np.testing.assert_array_equal(action[done], 0)
    np.testing.assert_array_equal(out.legal_slots, jax.vmap(lambda s: legal_action_slots(rules, s))(states))
    # Visits only on legal slots; the action is a most-visited slot.
    assert (visits[np.asarray(out.legal_slots) < 0] == 0).all()
    best = visits.max(axis=1)
    chosen = visits[np.arange(32), np.argmax(np.asarray(out.legal_slots) == action[:, None], axis=1)]
    np.testing.assert_array_equal(chosen[~done], best[~done])
    values = np.asarray(out.root_value)
    assert ((values >= 0) & (values <= 1)).all()
    assert values[0] == 0.0  # the finished game is lost for the side to move
    assert values[1] == 0.5  # the drawn one
    np.testing.assert_array_equal(np.asarray(out.legal_slots)[done], -1)  # no legal action when over


def test_rollout_search_and_network_greedy_pass_on_drawn_games():
    """``mcts-rollout`` and ``greedy:FILE`` (a network's greedy player) on games drawn by the ply
    limit: action 0, which ``step`` ignores, like every other player (the rest are checked above and
    in test_baselines.py)."""
    rules = SIMPLE6
    drawn = _stack([_drawn_by_a_ply_limit(rules), from_position(rules, _sq(8, 9), 0, _sq(14), 0, ply=61)])
    keys = jax.random.split(jax.random.key(6), 2)
    rollout_search = batched_search(rules, MCTSConfig(num_simulations=4), rollout_value_fn(rules, 20))
    out = rollout_search(None, drawn, keys)
    np.testing.assert_array_equal(out.action, 0)
    np.testing.assert_array_equal(out.visit_counts, 0)
    np.testing.assert_array_equal(out.root_value, 0.5)
    spec, _, _ = _legality_setup(rules)
    params = evaluator.init_params(jax.random.key(2), spec)
    greedy = jax.jit(jax.vmap(greedy_policy(rules, evaluator.value_fn(spec)), in_axes=(None, 0, 0)))
    np.testing.assert_array_equal(greedy(params, drawn, keys), 0)
    after = jax.vmap(functools.partial(step, rules))(drawn, out.action)
    for a, b in zip(jax.tree.leaves(drawn), jax.tree.leaves(after), strict=True):
        np.testing.assert_array_equal(a, b)


def test_same_key_same_move_and_other_keys_differ():
    spec, _, run = _legality_setup(SIMPLE6)
    # Zero weights make the network say 1/2 everywhere: every move ties, so the key decides.
    params = jax.tree.map(jnp.zeros_like, evaluator.init_params(jax.random.key(2), spec))
    states = jax.tree.map(lambda x: jnp.broadcast_to(x, (32, *x.shape)), init(SIMPLE6))
    keys = jax.random.split(jax.random.key(5), 32)
    first = np.asarray(run(params, states, keys).action)
    np.testing.assert_array_equal(first, run(params, states, keys).action)
    assert len(set(first.tolist())) > 1


# ---------------------------------------------------------------------------
# Tactics: win in one, multi-jump wins, hanging pieces
# ---------------------------------------------------------------------------


def _tactics(rules: Rules) -> list[tuple[str, State, set[int]]]:
    """(label, position, good actions): Black to move; the mirrored cases are added by the test."""
    if rules.board_size == 6:
        # Black men 8 and 9, White man 14: 8-11 and 9-12 put a man in front of 14 with the square
        # behind it empty; 8-12 is covered by 9 (the jump would land on it).
        hang = ("hang", from_position(rules, _sq(8, 9), 0, _sq(14), 0), {1 * 18 + 7})
    else:
        # Black men 10 and 11, White man 18: 10-14 and 11-15 hang; 10-15 (covered by 11) and 11-16 do not.
        hang = ("hang", from_position(rules, _sq(10, 11), 0, _sq(18), 0), {1 * 32 + 9, 1 * 32 + 10})
    if rules is SIMPLE6:
        # 8x11 (down-left from square 8) takes White's last piece; 8-12, 1-4, 1-5 do not.
        return [("win", from_position(rules, _sq(1, 8), 0, _sq(11), 0), {0 * 18 + 7}), hang]
    if rules is AMERICAN6:
        # 1x8x13 takes both White men (5, then 11) in a multi-jump by the same player; 2x7 takes only 5
        # (it cannot go on: 14 blocks the landing square) and 11 then takes back.
        double = from_position(rules, _sq(1, 2, 14), 0, _sq(5, 11), 0)
        return [("double jump", double, {1 * 18 + 0}), hang]
    # American8: 1x10x17 takes both White men (6, then 14); 2x9 takes only 6 (18 blocks the landing).
    double = from_position(rules, _sq(1, 2, 18), 0, _sq(6, 14), 0)
    return [("double jump", double, {1 * 32 + 0}), hang]


@pytest.mark.parametrize("name", list(PRESETS))
def test_finds_the_win_and_keeps_its_pieces(name):
    rules = PRESETS[name]
    cases = []
    for label, state, good in _tactics(rules):
        cases.append((label, state, good))
        cases.append((label + " (White)", _mirror(rules, state), {_mirror_action(rules, a) for a in good}))
    for label, state, good in cases:
        legal = {int(a) for a in legal_action_slots(rules, state) if a >= 0}
        assert good < legal and len(legal) >= 2, (label, legal, good)
    if rules.multi_jump:
        # The middle of the winning multi-jump: the same player moves again, and its only move ends the
        # game with a win for it, which must be valued 1 (not 0) from the root.
        (_, double, good), _ = _tactics(rules)
        first_jump = next(iter(good))
        middle = step(rules, double, first_jump)
        middle_white = step(rules, _mirror(rules, double), _mirror_action(rules, first_jump))
        assert int(middle.color) == BLACK and int(middle.continuing) != 0
        assert int(middle_white.color) == WHITE and int(middle_white.continuing) != 0
        for label, state in (("middle", middle), ("middle (White)", middle_white)):
            (only,) = [int(a) for a in legal_action_slots(rules, state) if a >= 0]
            cases.append((label, state, {only}))

    states = _stack([state for _, state, _ in cases for _ in range(REPEATS)])
    keys = jax.random.split(jax.random.key(8), len(cases) * REPEATS)
    config = MCTSConfig(num_simulations=TACTICS_SIMS)
    out = batched_search(rules, config, material_value)(None, states, keys)
    actions = np.asarray(out.action).reshape(len(cases), REPEATS)
    for (label, _, good), chosen in zip(cases, actions, strict=True):
        assert set(chosen.tolist()) <= good, (label, chosen, good)
    np.testing.assert_array_equal(np.asarray(out.visit_counts).sum(axis=1), TACTICS_SIMS)
    # The winning move is valued as a win for the side to move at the root, across the same-player
    # edge of a multi-jump too (a wrong sign there would value it near 0).
    for i, (label, _, good) in enumerate(cases):
        if "hang" in label:
            continue
        slots = np.asarray(out.legal_slots[i * REPEATS])
        win_slot = int(np.flatnonzero(slots == next(iter(good)))[0])
        assert float(out.child_values[i * REPEATS, win_slot]) > 0.9, label
        assert float(out.root_value[i * REPEATS]) > 0.8, label
        if "middle" in label:
            np.testing.assert_array_equal(out.child_values[i * REPEATS : (i + 1) * REPEATS, 0], 1.0)
            np.testing.assert_array_equal(out.visit_counts[i * REPEATS : (i + 1) * REPEATS, 0], TACTICS_SIMS)


# ---------------------------------------------------------------------------
# Budgets
# ---------------------------------------------------------------------------


def test_anytime_search_and_calibration():
    rules = SIMPLE6
    config = MCTSConfig(num_simulations=4)
    states = random_positions(rules, jax.random.key(10))
    state = jax.tree.map(lambda x: x[int(np.argmin(np.asarray(states.terminated)))], states)
    out = anytime_search(rules, config, material_value, None, state, jax.random.key(1), seconds=0.0)
    assert int(out.visit_counts.sum()) == 4  # the first chunk always completes
    assert bool(state.legal_action_mask[out.action])

    # A budget far below one simulation still gives 1 (one probe: the estimate is near the probe's 1).
    one = dataclasses.replace(config, num_simulations=1)
    assert calibrate_simulations(rules, one, material_value, None, seconds_per_move=1e-6, batch_size=4) == 1
    with pytest.raises(ValueError, match="seconds_per_move"):
        calibrate_simulations(rules, config, material_value, None, seconds_per_move=0.0, batch_size=4)


class _Clock:
    """A fake clock for ``anytime_search``: each reading returns the time, then advances it by ``tick``."""

    def __init__(self, tick: float):
        self.now, self.tick = 0.0, tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now - self.tick


def test_anytime_search_time_handling_with_an_injected_clock():
    """With a clock that ticks 1 s per reading, each compile and each run measures 1 s, and the check
    after a run reads 1 s after its end; the next (doubled) run is predicted at 2.2x the last run,
    plus the last compile when that size is not compiled yet, and started only if it ends in time."""
    rules = SIMPLE6
    config = MCTSConfig(num_simulations=1, c_puct=1.3)  # a config of its own: nothing compiled yet
    state = init(rules)
    assert int(state.num_legal_actions) > 1

    def simulations(seconds: float, tick: float, max_simulations: int = 4) -> int:
        out = anytime_search(
            rules,
            config,
            material_value,
            None,
            state,
            jax.random.key(0),
            seconds,
            max_simulations,
            _Clock(tick),
        )
        return int(out.visit_counts.sum())

    # Nothing compiled: deadline 8; compile 1-2, run 3-4, check at 5: 5 + 2.2 + 1 (compile) > 8.
    assert simulations(8.0, tick=1.0) == 1
    # A frozen clock never reaches the deadline: the count doubles up to max_simulations (compiling 2, 4).
    assert simulations(1.0, tick=0.0) == 4
    # Compiled now, the same budget allows one doubling: run 1-2, check at 3: 5.2 <= 8; run 4-5,
    # check at 6: 8.2 > 8.
    assert simulations(8.0, tick=1.0) == 2
    assert simulations(5.0, tick=1.0) == 1  # 5.2 > 5: the first run only
    assert simulations(0.0, tick=1.0) == 1  # the first run always completes
    assert simulations(9.0, tick=1.0) == 4  # 8.2 <= 9, then max_simulations stops the doubling
    assert simulations(100.0, tick=1.0, max_simulations=2) == 2
