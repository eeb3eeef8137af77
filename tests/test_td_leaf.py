"""TDLeaf(lambda): the recorded leaf of each ply is the one whose value the search's score of the move
is, the games are those TD(lambda) plays, and the strategy's config needs alpha-beta of depth >= 2."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.experiment.config import ConfigError, load_config
from neurocheckers.learners import (
    TDLeafSettings,
    TDSettings,
    learner_rules,
    learner_spec,
    principal_leaves,
    selfplay,
)
from neurocheckers.learners.common import random_plies
from neurocheckers.learners.td_lambda import training_data
from neurocheckers.networks.evaluator import init_params, value_fn
from neurocheckers.rules.engine import init_batch
from neurocheckers.search.alphabeta import NETWORK_ROOT_MARGIN, color_sign, value_heuristic
from neurocheckers.search.fullwidth import fullwidth_search


def positions(count: int):
    """``count`` american6 positions after 0-29 random plies (some finished)."""
    rules = learner_rules(SETTINGS)
    keys = jax.random.split(jax.random.key(0), count)
    plies = jax.random.randint(jax.random.key(1), (count,), 0, 30)
    return jax.jit(lambda k, p: random_plies(rules, init_batch(rules, (count,)), k, p))(keys, plies)


SETTINGS = TDLeafSettings(
    rules="american6",
    layers=2,
    width=8,
    search="alphabeta",
    depth=2,
    selfplay_games=8,
    opening_plies=2,
    max_plies=40,
    updates_per_epoch=2,
    batch_size=16,
)


@pytest.mark.parametrize("depth", [2, 3])
def test_each_leaf_holds_the_score_of_the_move_searched(depth):
    """The network's value of the principal leaf below the best root move, seen by the root's mover,
    is the search's score of that move (a wrong ply of the descent, or a wrong side's view, breaks
    it). Leaves that end the game are left out: their score is the result, not the network's."""
    settings = dataclasses.replace(SETTINGS, depth=depth)
    rules = learner_rules(settings)
    params = init_params(jax.random.key(5), learner_spec(settings))
    heuristic = value_heuristic(value_fn(learner_spec(settings)), params, jax.random.key(0))
    states = positions(64)

    @jax.jit
    def run(params, states):
        scores, legal = fullwidth_search(rules, states, depth, heuristic, NETWORK_ROOT_MARGIN)
        best = jnp.argmax(jnp.where(legal, scores, -jnp.inf), axis=1).astype(jnp.int32)
        leaves = principal_leaves(settings, params, states, best)
        leaf_scores = color_sign(states.color) * jax.vmap(heuristic)(leaves)
        return scores[jnp.arange(best.shape[0]), best], leaf_scores, leaves.terminated

    searched, from_leaf, finished = run(params, states)
    checked = ~np.asarray(finished | states.terminated)
    assert checked.sum() >= 40
    np.testing.assert_allclose(np.asarray(from_leaf)[checked], np.asarray(searched)[checked], atol=1e-5)


def test_tdleaf_plays_td_lambdas_games_and_records_their_leaves():
    """Recording leaves changes what is learned, not how the games go: the same actions and lengths as
    TD(lambda) with the same key, and recorded positions that differ from the positions moved from in
    most plies (each is the position two plies on, or the root where the game ends within the
    horizon)."""
    plain = TDSettings(**{f.name: getattr(SETTINGS, f.name) for f in dataclasses.fields(SETTINGS)})
    params = init_params(jax.random.key(1), learner_spec(SETTINGS))
    play = jax.jit(selfplay, static_argnums=0)
    leaf_batch = play(SETTINGS, params, jax.random.key(2), 0.1)
    root_batch = play(plain, params, jax.random.key(2), 0.1)
    np.testing.assert_array_equal(leaf_batch.actions, root_batch.actions)
    np.testing.assert_array_equal(leaf_batch.length, root_batch.length)
    played = np.arange(leaf_batch.actions.shape[1])[None, :] < np.asarray(leaf_batch.length)[:, None]
    differs = np.abs(np.asarray(leaf_batch.positions - root_batch.positions)[:, :-1]).sum(-1) > 0
    assert differs[played].mean() > 0.8
    obs, targets, weights, values, _ = jax.jit(training_data, static_argnums=0)(SETTINGS, params, leaf_batch)
    assert np.all(np.isfinite(np.asarray(targets))) and float(weights.sum()) == float(played.sum())


def test_td_leaf_config_needs_alphabeta_of_depth_two(tmp_path):
    path = tmp_path / "leaf.toml"
    path.write_text('strategy = "td_leaf"\nrules = "american6"\nsearch = "alphabeta"\ndepth = 1\n')
    with pytest.raises(ConfigError, match="td_leaf.*depth = 1"):
        load_config(path)
    path.write_text('strategy = "td_leaf"\nrules = "american6"\nsearch = "alphabeta"\ndepth = 2\n')
    assert load_config(path).strategy == "td_leaf"
