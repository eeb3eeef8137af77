"""The DQN learner: its replay buffer, its afterstate targets on hand-made positions, its updates, and
one tiny jitted epoch (finite metrics, the same result from the same seed)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from neurocheckers.learners import dqn, replay
from neurocheckers.networks.evaluator import init_params, value
from neurocheckers.rules import AMERICAN6, step
from neurocheckers.rules.notation import legal_actions, parse_fen

TINY = dqn.DQNSettings(
    rules="american6",
    layers=1,
    width=8,
    envs=4,
    buffer_size=32,
    batch_size=8,
    steps_per_epoch=4,
    updates_per_epoch=2,
    epsilon_decay_epochs=2,
    target_update_every=3,
)
"""4 games, 4 moves each per epoch, a 32-transition buffer, 2 updates of 8 per epoch."""

POSITIONS = (
    "B:W5,6,11:B2,3",  # three captures: 2x7 goes on jumping (same mover), 2x9 and 3x8 do not
    "B:W14,15,17:B5,6,K9",  # four quiet moves
    "W:W14,15,17:B5,6,K9",  # the same with White to move (the rotated encoding)
    "B:W8:B4,5",  # 5x12 takes White's last piece: the move wins outright
)


_step = jax.jit(step, static_argnums=0)
_value = jax.jit(value, static_argnums=0)
_targets = jax.jit(dqn.targets, static_argnums=0)


def _reference_max_q(params, state) -> float:
    """max over legal actions of Q, computed one child at a time in plain Python."""
    best = -np.inf
    for action in legal_actions(state):
        child = _step(AMERICAN6, state, action)
        if bool(child.terminated):
            q = 0.5 + 0.5 * int(child.result) * (1 if int(state.color) == 0 else -1)
        else:
            v = float(_value(TINY.spec, params, child))
            q = v if int(child.color) == int(state.color) else 1.0 - v
        best = max(best, q)
    return best


def _stack(states):
    return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


@pytest.fixture(scope="module")
def tiny_run():
    """TINY after init and two epochs against random, with each epoch's metrics."""
    state = dqn.init(TINY, jax.random.key(0))
    metrics = []
    for e in range(2):
        state, m = dqn.epoch(TINY, state, jax.random.key(e))
        metrics.append(jax.device_get(m))
    return state, metrics


# --- the replay buffer ------------------------------------------------------------------------------


def _items(values):
    values = jnp.asarray(values, jnp.int32)
    return {"x": values, "pair": jnp.stack([values, -values], axis=1)}


def test_replay_buffer_keeps_what_it_was_given_and_wraps_around():
    buffer = replay.init({"x": jnp.int32(0), "pair": jnp.zeros(2, jnp.int32)}, 5)
    assert buffer.capacity == 5 and int(buffer.size) == 0
    buffer = replay.add(buffer, _items([10, 11, 12]))
    assert (int(buffer.position), int(buffer.size)) == (3, 3)
    drawn = replay.sample(buffer, jax.random.key(0), 200)
    assert set(np.asarray(drawn["x"]).tolist()) == {10, 11, 12}  # only what was added, all of it
    np.testing.assert_array_equal(drawn["pair"][:, 1], -drawn["x"])  # leaves stay together
    buffer = replay.add(buffer, _items([13, 14, 15, 16]))  # two past the end: overwrite the oldest
    np.testing.assert_array_equal(buffer.data["x"], [15, 16, 12, 13, 14])
    assert (int(buffer.position), int(buffer.size)) == (2, 5)
    drawn = replay.sample(buffer, jax.random.key(1), 300)
    assert set(np.asarray(drawn["x"]).tolist()) == {12, 13, 14, 15, 16}
    with pytest.raises(ValueError, match="cannot add 6 transitions at once to a buffer of 5"):
        replay.add(buffer, _items(range(6)))


# --- targets, rewards, the policy ----------------------------------------------------------------------


def _transitions(states, rewards, done):
    n = len(rewards)
    return dqn.Transition(
        afterstate=jnp.zeros((n, TINY.spec.input_size), jnp.int8),
        same_mover=jnp.zeros(n, bool),
        reward=jnp.asarray(rewards, jnp.float32),
        done=jnp.asarray(done),
        next_state=_stack(states),
    )


def test_target_is_the_best_afterstate_q_and_does_not_bootstrap_at_the_end():
    params = init_params(jax.random.key(3), TINY.spec)
    states = [parse_fen(AMERICAN6, fen) for fen in POSITIONS]
    rewards = [0.0, 0.1, 0.0, 0.0]
    y = _targets(TINY, params, _transitions(states, rewards, [False] * 4))
    expected = [
        min(r + TINY.gamma * _reference_max_q(params, s), 1.0) for r, s in zip(rewards, states, strict=True)
    ]
    np.testing.assert_allclose(y, expected, rtol=1e-5)
    assert float(y[3]) == pytest.approx(TINY.gamma)  # the winning capture counts as exactly 1
    # A finished game: the target is the reward alone, whatever the position holds.
    y = _targets(TINY, params, _transitions(states, [0.0, 0.5, 1.0, 0.25], [True] * 4))
    np.testing.assert_allclose(y, [0.0, 0.5, 1.0, 0.25])


@jax.jit
def _q_and_greedy_move(params, states, key):
    """Afterstate Q and the learner's move with epsilon 0 on each of [S] positions."""
    q, valid = jax.vmap(dqn.afterstate_q, in_axes=(None, None, None, 0))(AMERICAN6, TINY.spec, params, states)
    policy = dqn.learner_policy(AMERICAN6, TINY.spec)
    keys = jax.random.split(key, q.shape[0])
    return q, valid, jax.vmap(policy, in_axes=(None, 0, 0))((params, 0.0), states, keys)


def test_greedy_move_is_the_argmax_of_afterstate_q():
    params = init_params(jax.random.key(4), TINY.spec)
    states = [parse_fen(AMERICAN6, fen) for fen in POSITIONS[:3]]
    q, valid, moves = _q_and_greedy_move(params, _stack(states), jax.random.key(0))
    for state, q_row, valid_row, move in zip(states, q, valid, moves, strict=True):
        slots = np.nonzero(np.asarray(state.legal_action_mask))[0]
        assert int(valid_row.sum()) == len(slots) >= 3
        assert int(move) == slots[int(jnp.argmax(jnp.where(valid_row, q_row, -1.0)))]


def test_shaped_reward_counts_captures_crownings_and_losses():
    settings = dataclasses.replace(TINY, capture_reward=0.1, crown_reward=0.2, piece_lost_penalty=0.05)
    before = parse_fen(AMERICAN6, "B:W5,6,11:B2,3")
    after = step(AMERICAN6, before, 1)  # 2x7, which must go on: still Black's move, no reply
    assert int(after.color) == 0
    r = dqn.reward(settings, before, after, after, jnp.bool_(True))
    assert float(r) == pytest.approx(0.1)
    # Black's man on 13 is crowned; White's reply 12x5 takes Black's man on 8.
    before = parse_fen(AMERICAN6, "B:W12,15:B8,13")
    crowning = [a for a in legal_actions(before) if a % AMERICAN6.num_squares == 12]
    after = step(AMERICAN6, before, crowning[0])
    assert int(after.black_kings) != 0 and int(after.color) == 1
    assert len(legal_actions(after)) == 1  # the forced capture
    reply = step(AMERICAN6, after, legal_actions(after)[0])
    assert int(reply.black_men) == 0 and int(reply.color) == 0
    r = dqn.reward(settings, before, after, reply, jnp.bool_(True))
    assert float(r) == pytest.approx(0.2 - 0.05)


# --- learning ---------------------------------------------------------------------------------------


def test_updates_on_a_fixed_batch_lower_the_loss(tiny_run):
    state, _ = tiny_run
    batch = replay.sample(state.buffer, jax.random.key(7), TINY.batch_size)
    y = _targets(TINY, state.target_params, batch)
    optimizer = optax.adam(0.01)

    @jax.jit
    def update(params, opt_state):
        loss, grads = jax.value_and_grad(lambda p: dqn.loss(TINY.spec, p, batch, y))(params)
        changes, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, changes), opt_state, loss

    params, opt_state = state.params, optimizer.init(state.params)
    losses = []
    for _ in range(40):
        params, opt_state, loss = update(params, opt_state)
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]


def test_a_tiny_epoch_runs_with_finite_metrics(tiny_run):
    state, metrics = tiny_run
    assert int(state.epoch) == 2
    assert int(state.buffer.size) == TINY.envs * TINY.steps_per_epoch * 2
    assert int(state.updates) == 4  # the buffer held a batch from the first epoch on
    # Every game waits for the learner's move.
    np.testing.assert_array_equal(state.games.color == 0, state.learner_black)
    assert not bool(jnp.any(state.games.terminated))
    for m in metrics:
        assert all(np.isfinite(np.asarray(v)).all() for v in m.values())
        assert m["plies"] >= TINY.envs * TINY.steps_per_epoch
        assert m["wins"] + m["draws"] + m["losses"] == m["games_finished"]
    assert metrics[0]["epsilon"] == pytest.approx(1.0) and metrics[1]["epsilon"] == pytest.approx(0.525)
    changed = jax.tree.map(
        lambda a, b: bool(jnp.any(a != b)), state.params, dqn.init(TINY, jax.random.key(0)).params
    )
    assert any(jax.tree.leaves(changed))
    # After 4 updates with a copy every 3, the target network is the online one of update 3.
    assert any(
        jax.tree.leaves(jax.tree.map(lambda a, b: bool(jnp.any(a != b)), state.params, state.target_params))
    )


def test_same_seed_same_result(tiny_run):
    first, first_metrics = tiny_run
    state = dqn.init(TINY, jax.random.key(0))
    for e in range(2):
        state, m = dqn.epoch(TINY, state, jax.random.key(e))
    for a, b in zip(jax.tree.leaves(first), jax.tree.leaves(state), strict=True):
        np.testing.assert_array_equal(a, b)
    for name, v in jax.device_get(m).items():
        np.testing.assert_array_equal(v, first_metrics[1][name])


def test_opponents_self_and_given_and_bad_settings():
    one = dataclasses.replace(TINY, opponent="self")
    state, m = dqn.epoch(one, dqn.init(one, jax.random.key(0)), jax.random.key(0))
    assert int(m["plies"]) > 0 and int(state.buffer.size) == TINY.envs * TINY.steps_per_epoch
    given = dataclasses.replace(TINY, opponent="random-by-hand")
    pair = (dqn.random_opponent(AMERICAN6), None)  # shares TINY's compiled epoch
    state, m = dqn.epoch(given, dqn.init(given, jax.random.key(0), pair), jax.random.key(0), pair)
    assert int(m["plies"]) > 0
    with pytest.raises(ValueError, match="needs its \\(policy, params\\) pair"):
        dqn.init(given, jax.random.key(0))
    with pytest.raises(ValueError, match="is built by the learner"):
        dqn.init(TINY, jax.random.key(0), pair)
    with pytest.raises(ValueError, match="DQNSettings.gamma must be in \\[0, 1\\], got 1.5"):
        dataclasses.replace(TINY, gamma=1.5)
    with pytest.raises(ValueError, match="DQNSettings.buffer_size must be >= envs"):
        dataclasses.replace(TINY, buffer_size=2)
    with pytest.raises(ValueError, match="DQNSettings.envs must be int, got '4'"):
        dataclasses.replace(TINY, envs="4")
