"""Tests of batched random playouts (neurocheckers/rules/playout.py) and the host-device helper."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.devices import use_host_devices
from neurocheckers.rules import get_rules, init, piece_counts, step
from neurocheckers.rules.playout import (
    PlayoutStats,
    action_from_bits,
    default_max_plies,
    game_bits,
    ply_seed,
    random_playouts,
)

PRESETS = ("simple6", "american6", "american8")
BATCH = 32
CAP = 400


@functools.cache
def _playouts(name: str, seed: int) -> PlayoutStats:
    """One small batch per (preset, seed), shared by the tests (one compilation per preset)."""
    stats = random_playouts(get_rules(name), jax.random.key(seed), BATCH, max_plies=CAP, devices=1)
    return jax.tree.map(np.asarray, stats)


@pytest.mark.parametrize("name", PRESETS)
def test_every_game_ends(name):
    stats = _playouts(name, 0)
    assert stats.result.shape == stats.length.shape == stats.terminated.shape == (BATCH,)
    assert stats.material.shape == (BATCH, 4)
    assert stats.terminated.all()
    assert ((stats.length > 0) & (stats.length <= CAP)).all()
    rules = get_rules(name)
    if rules.max_plies:
        assert (stats.length <= rules.max_plies).all()


@pytest.mark.parametrize("name", PRESETS)
def test_results_agree_with_material(name):
    rules = get_rules(name)
    stats = _playouts(name, 0)
    result = stats.result
    black = stats.material[:, 0] + stats.material[:, 1]
    white = stats.material[:, 2] + stats.material[:, 3]
    assert set(np.unique(result)) <= {-1, 0, 1}
    assert ((black <= rules.men_per_side) & (white <= rules.men_per_side)).all()
    # A side with no pieces has lost, and the winner always has pieces.
    assert (result[black == 0] == -1).all()
    assert (result[white == 0] == 1).all()
    assert (black[result == 1] > 0).all() and (white[result == -1] > 0).all()
    # A draw leaves pieces on both sides.
    assert ((black > 0) & (white > 0))[result == 0].all()
    if not rules.stuck_loses:  # simple6: a stuck side draws, so a game is won only by taking every piece
        assert (white[result == 1] == 0).all() and (black[result == -1] == 0).all()
    if name != "simple6":  # random American games are mostly decisive: the checks above were not vacuous
        assert (result != 0).sum() >= BATCH // 2


@pytest.mark.parametrize("name", PRESETS)
def test_same_key_same_games(name):
    again = jax.tree.map(
        np.asarray, random_playouts(get_rules(name), jax.random.key(0), BATCH, max_plies=CAP, devices=1)
    )
    first = _playouts(name, 0)
    for a, b in zip(jax.tree.leaves(first), jax.tree.leaves(again), strict=True):
        np.testing.assert_array_equal(a, b)
    other = _playouts(name, 1)
    assert not np.array_equal(first.length, other.length) or not np.array_equal(
        first.material, other.material
    )


@functools.cache
def _single_ply(name: str):
    """One ply of one game, jitted: (state, key, ply, game) -> (next state, chosen action was legal)."""
    rules = get_rules(name)

    @jax.jit
    def ply_fn(state, key, ply, game):
        bits = game_bits(ply_seed(key, ply), game[None])[0]
        action = action_from_bits(rules, bits, state.legal_bits)
        return step(rules, state, action), state.legal_action_mask[action]

    return ply_fn


def _play_one(name: str, key: jax.Array, game: int, cap: int):
    """Game ``game`` of a batch, played alone by an explicit loop with the same random draws."""
    ply_fn = _single_ply(name)
    state = init(get_rules(name))
    ply = 0
    while not bool(state.terminated) and ply < cap:
        state, legal = ply_fn(state, key, jnp.int32(ply), jnp.uint32(game))
        assert bool(legal), (name, game, ply)
        ply += 1
    return int(state.result), int(state.ply), np.asarray(piece_counts(state)), bool(state.terminated)


@pytest.mark.parametrize("name", PRESETS)
def test_batch_matches_games_played_one_at_a_time(name):
    stats = _playouts(name, 0)
    key = jax.random.key(0)
    for game in (0, 5, BATCH - 1):
        result, length, material, terminated = _play_one(name, key, game, CAP)
        assert result == stats.result[game]
        assert length == stats.length[game]
        np.testing.assert_array_equal(material, stats.material[game])
        assert terminated == stats.terminated[game]


def test_cap_cuts_games_off():
    rules = get_rules("american6")
    stats = random_playouts(rules, jax.random.PRNGKey(3), 4, max_plies=5, devices=1)  # a raw key works too
    assert (np.asarray(stats.length) == 5).all()
    assert not np.asarray(stats.terminated).any()
    assert (np.asarray(stats.result) == 0).all()


def test_action_choice_is_uniform_over_legal_actions():
    rules = get_rules("american8")
    state = init(rules)
    legal = np.flatnonzero(np.asarray(state.legal_action_mask))
    n = len(legal)
    bits = jnp.arange(0, 2**32, 2**20, dtype=jnp.uint32)  # 4096 evenly spread draws
    actions = np.asarray(jax.vmap(lambda b: action_from_bits(rules, b, state.legal_bits))(bits))
    assert set(actions) == set(legal)
    counts = np.array([(actions == a).sum() for a in legal])
    assert counts.max() - counts.min() <= 1, counts  # 4096 draws split as evenly as they can be
    assert counts.sum() == len(bits) and n == 7


@pytest.mark.parametrize("name", PRESETS)
def test_default_cap_bounds_every_game(name):
    """Games played with four times the default cap all end by the rules within the default cap."""
    rules = get_rules(name)
    cap = default_max_plies(rules)
    stats = random_playouts(rules, jax.random.key(11), 256, max_plies=4 * cap, devices=1)
    length = np.asarray(stats.length)
    assert np.asarray(stats.terminated).all()
    assert length.max() <= cap, (name, int(length.max()), cap)
    if rules.max_plies:  # a game drawn by the ply limit runs exactly to it: the cap is attained
        assert length.max() == cap


def test_bad_arguments():
    rules = get_rules("simple6")
    with pytest.raises(ValueError):
        random_playouts(rules, jax.random.key(0), 0)
    with pytest.raises(ValueError):
        random_playouts(rules, jax.random.key(0), 4, max_plies=-1)


def test_use_host_devices_after_backend_start():
    have = jax.local_device_count()
    assert use_host_devices(have) == have  # already in force: harmless
    with pytest.raises(RuntimeError, match="before any JAX computation"):
        use_host_devices(have + 1)


def test_two_host_devices_give_the_same_games():
    """In a fresh process: two host devices split the batch (shard_map) without changing a game."""
    code = textwrap.dedent(
        """
        from neurocheckers.devices import use_host_devices
        use_host_devices(2)
        import jax, numpy as np
        from neurocheckers.rules import get_rules
        from neurocheckers.rules.playout import playout_devices, random_playouts
        assert jax.local_device_count() == 2, jax.devices()
        assert playout_devices(8) == 2 and playout_devices(7) == 1 and playout_devices(8, devices=1) == 1
        rules = get_rules("simple6")
        one = random_playouts(rules, jax.random.key(7), 8, devices=1)
        two = random_playouts(rules, jax.random.key(7), 8)
        assert len(two.length.sharding.device_set) == 2
        for a, b in zip(jax.tree.leaves(one), jax.tree.leaves(two)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        print("ok")
        """
    )
    env = dict(os.environ)
    # The parent's other XLA flags (the tests' optimisation level, tests/conftest.py) stay; its device
    # count goes: the script sets its own.
    env["XLA_FLAGS"] = re.sub(r"--xla_force_host_platform_device_count=\S*", "", env.get("XLA_FLAGS", ""))
    env["JAX_PLATFORMS"] = "cpu"  # host devices, even where a GPU is the default backend
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")
