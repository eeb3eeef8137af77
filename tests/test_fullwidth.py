"""The batched full-width search (``search.fullwidth``) and the self-play that uses it choose exactly the
moves of the vmapped alpha-beta: every root score equal at depth 1 (material and network leaves), the
same best moves and picks deeper, the same self-play games."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.learners import common, self_play
from neurocheckers.learners.common import LearnerSettings, learner_spec, random_plies
from neurocheckers.learners.self_play import selfplay, selfplay_stages
from neurocheckers.networks.evaluator import init_params, value_fn
from neurocheckers.rules.engine import init_batch, material_balance
from neurocheckers.rules.presets import get_rules
from neurocheckers.search.alphabeta import (
    NETWORK_ROOT_MARGIN,
    ROOT_MARGIN,
    WIN_SCORE,
    alphabeta_search,
    value_heuristic,
)
from neurocheckers.search.baselines import pick_best
from neurocheckers.search.fullwidth import Grouped, fullwidth_search

POSITIONS = 256


@functools.cache
def positions(rules_name: str, count: int = POSITIONS, most_plies: int = 100):
    """``count`` positions after 0 .. most_plies - 1 random plies (some finished)."""
    rules = get_rules(rules_name)
    keys = jax.random.split(jax.random.key(0), count)
    plies = jax.random.randint(jax.random.key(1), (count,), 0, most_plies)
    return jax.jit(lambda k, p: random_plies(rules, init_batch(rules, (count,)), k, p))(keys, plies)


def searches(rules_name: str, depth: int, leaf: str, nodes_per_root: int = 128, states=None):
    """(alpha-beta's and full-width's (scores, legal)) on ``states`` (``positions(rules_name)``)."""
    rules = get_rules(rules_name)
    spec = learner_spec(LearnerSettings(rules=rules_name, layers=2, width=8))
    params = init_params(jax.random.key(2), spec)

    def heuristic(p):
        return (
            value_heuristic(value_fn(spec), p, jax.random.key(3)) if leaf == "network" else material_balance
        )

    margin = NETWORK_ROOT_MARGIN if leaf == "network" else ROOT_MARGIN
    vmapped = jax.vmap(
        lambda p, s: alphabeta_search(rules, s, depth, heuristic(p), margin), in_axes=(None, 0)
    )

    def batched(p, s):
        return fullwidth_search(rules, s, depth, heuristic(p), margin, nodes_per_root=nodes_per_root)

    states = positions(rules_name) if states is None else states
    return jax.jit(vmapped)(params, states), jax.jit(batched)(params, states)


def best_moves(scores, legal):
    values = jnp.where(legal, scores, -jnp.inf)
    return legal & (values >= jnp.max(values, axis=1, keepdims=True))


def picks(scores, legal):
    keys = jax.random.split(jax.random.key(4), scores.shape[0])
    return jax.vmap(pick_best)(keys, scores, legal)


@pytest.mark.parametrize("leaf", ["material", "network"])
@pytest.mark.parametrize("rules_name", ["simple6", "american8"])
def test_depth_one_scores_every_move_as_alphabeta_does(rules_name, leaf):
    (ab_scores, ab_legal), (fw_scores, fw_legal) = searches(rules_name, 1, leaf)
    assert bool(jnp.all(ab_legal == fw_legal)) and int(jnp.sum(jnp.any(ab_legal, axis=1))) > POSITIONS // 2
    # Bit for bit: the network on one position per game (alpha-beta's loop) and on chunks of children.
    assert bool(jnp.all(jnp.where(ab_legal, ab_scores == fw_scores, True)))
    assert bool(jnp.all(picks(ab_scores, ab_legal) == picks(fw_scores, fw_legal)))


@pytest.mark.parametrize(
    "rules_name,depth,leaf,nodes_per_root",
    [
        ("simple6", 2, "network", 128),
        ("simple6", 3, "material", 128),
        ("american8", 2, "material", 128),
        ("american8", 3, "network", 128),
        ("american8", 3, "network", 1),  # too little room: the vmapped alpha-beta's fallback
    ],
)
def test_deeper_searches_pick_alphabetas_best_moves(rules_name, depth, leaf, nodes_per_root):
    (ab_scores, ab_legal), (fw_scores, fw_legal) = searches(rules_name, depth, leaf, nodes_per_root)
    assert bool(jnp.all(ab_legal == fw_legal))
    ab_best, fw_best = best_moves(ab_scores, ab_legal), best_moves(fw_scores, fw_legal)
    assert bool(jnp.all(ab_best == fw_best))
    assert bool(jnp.all(jnp.where(ab_best, ab_scores == fw_scores, True)))
    assert bool(jnp.all(picks(ab_scores, ab_legal) == picks(fw_scores, fw_legal)))
    # Full-width scores are exact: no move of alpha-beta's best is scored below them.
    assert bool(jnp.all(jnp.where(fw_legal & ~fw_best, fw_scores <= ab_scores, True)))


def test_a_won_best_score_ties_only_with_winning_moves():
    """Alpha-beta's root window stays strictly below a won best score, even with the network's 1e-6
    margin (below float32's spacing near WIN_SCORE): with the window at the best score itself, a
    worse move's fail-low bound could equal a win and tie with it (2 of these 512 positions, at
    depth 3 with a leaf score on the network's scale)."""
    rules = get_rules("american8")
    states = positions("american8", 512, 100)

    def heuristic(state):
        return 0.01 * material_balance(state)

    search = jax.vmap(lambda s: alphabeta_search(rules, s, 3, heuristic, NETWORK_ROOT_MARGIN))
    ab_scores, ab_legal = jax.jit(search)(states)
    fw_scores, fw_legal = jax.jit(lambda s: fullwidth_search(rules, s, 3, heuristic, NETWORK_ROOT_MARGIN))(
        states
    )
    fw_best = best_moves(fw_scores, fw_legal)
    won = jnp.any(fw_best & (fw_scores > WIN_SCORE - 4), axis=1) & jnp.any(fw_legal & ~fw_best, axis=1)
    assert int(jnp.sum(won)) >= 2
    assert bool(jnp.all(best_moves(ab_scores, ab_legal) == fw_best))


def selfplay_batches(settings, vmapped: bool = True):
    """(self-play with ``choose_actions``, self-play with the vmapped ``choose_action`` or None)."""
    params = init_params(jax.random.key(5), learner_spec(settings))
    play = functools.partial(selfplay, settings, params, jax.random.key(6), jnp.float32(0.2))
    batched = jax.jit(play)()
    if not vmapped:
        return batched, None
    original = common.searches_full_width
    common.searches_full_width = lambda settings: False
    try:
        vmapped = jax.jit(lambda: play())()
    finally:
        common.searches_full_width = original
    return batched, vmapped


# Each case compiles self-play three times (20-38 s on the 2-core machine). Together they cover depth
# 1 (staged batches) and 2 (one batch), softmax and epsilon's tie-breaking, both board sizes. A depth-1
# american8 epsilon case added nothing: depth-1 scores are checked on both boards above, epsilon's ties
# here at depth 2, and staged epsilon self-play at depth 1 in the shrinking-batches test below.
@pytest.mark.parametrize(
    "rules_name,depth,exploration", [("simple6", 1, "softmax"), ("american8", 2, "epsilon")]
)
def test_selfplay_plays_the_same_games_with_the_batched_search(rules_name, depth, exploration, monkeypatch):
    settings = LearnerSettings(
        rules=rules_name, layers=2, width=8, search="alphabeta", depth=depth, selfplay_games=32,
        opening_plies=2, max_plies=60, exploration=exploration, exploration_rate=0.2,
    )  # fmt: skip
    assert common.searches_full_width(settings)
    batched, vmapped = selfplay_batches(settings)
    assert int(batched.length.sum()) > 0
    for a, b in zip(jax.tree.leaves(batched), jax.tree.leaves(vmapped), strict=True):
        assert bool(jnp.all(a == b))
    # Ties broken for every game of the batch at once (more tied games than TIED_GAMES).
    monkeypatch.setattr(common, "TIED_GAMES", 0)
    again, _ = selfplay_batches(settings, vmapped=False)  # the vmapped search has no ties to break
    for a, b in zip(jax.tree.leaves(again), jax.tree.leaves(vmapped), strict=True):
        assert bool(jnp.all(a == b))


@pytest.mark.parametrize("search", ["alphabeta", "mcts"])
def test_selfplay_in_shrinking_batches_plays_the_same_games(search, monkeypatch):
    """Finished games leave the batch (stages of 64, 32 and 16 games here): the same games as one
    batch of 64 to the end."""
    settings = LearnerSettings(
        rules="american6", layers=2, width=8, search=search, depth=1, simulations=4, selfplay_games=64,
        opening_plies=2, max_plies=80, exploration_rate=0.2,
    )  # fmt: skip
    assert selfplay_stages(settings, 64) == [64, 32, 16]
    params = init_params(jax.random.key(7), learner_spec(settings))
    play = functools.partial(selfplay, settings, params, jax.random.key(8), jnp.float32(0.2))
    staged = jax.jit(play)()
    monkeypatch.setattr(self_play, "SELFPLAY_STAGES", 1)
    whole = jax.jit(lambda: play())()
    assert int(staged.length.max()) > int(staged.length.min())  # games of different lengths
    for a, b in zip(jax.tree.leaves(staged), jax.tree.leaves(whole), strict=True):
        assert bool(jnp.all(a == b))


@pytest.mark.parametrize("nodes_per_root", [128, 2])  # 2: the levels overflow, the fallback searches
def test_grouped_leaves_are_scored_by_each_games_own_network(nodes_per_root):
    """Several networks' games in one batch (``Grouped``: PBT's members) get the scores of each
    network's own search of its games, finished games among them."""
    rules, groups, depth = get_rules("simple6"), 4, 2
    spec = learner_spec(LearnerSettings(rules="simple6", layers=2, width=8))
    params = jax.vmap(lambda k: init_params(k, spec))(jax.random.split(jax.random.key(5), groups))
    states, key = positions("simple6"), jax.random.key(3)
    size = POSITIONS // groups

    search = functools.partial(fullwidth_search, rules, depth=depth, nodes_per_root=nodes_per_root)

    def own(p, s):
        return search(s, heuristic=value_heuristic(value_fn(spec), p, key), root_margin=NETWORK_ROOT_MARGIN)

    def together(ps, s):
        group = jnp.arange(POSITIONS) // size
        heuristic_of = lambda g: value_heuristic(value_fn(spec), jax.tree.map(lambda x: x[g], ps), key)  # noqa: E731
        return search(s, heuristic=Grouped(heuristic_of, group, groups), root_margin=NETWORK_ROOT_MARGIN)

    split = jax.tree.map(lambda x: x.reshape(groups, size, *x.shape[1:]), states)
    each, each_legal = jax.jit(jax.vmap(own))(params, split)
    scores, legal = jax.jit(together)(params, states)
    each, each_legal = each.reshape(scores.shape), each_legal.reshape(legal.shape)
    assert bool(jnp.all(legal == each_legal)) and bool(jnp.any(states.terminated))
    np.testing.assert_allclose(np.where(legal, scores, 0), np.where(legal, each, 0), atol=1e-6)
    assert bool(jnp.all(best_moves(scores, legal) == best_moves(each, legal)))
    # The groups' networks differ: scored by group 0's network alone, the batch would differ.
    alone, _ = jax.jit(lambda s: own(jax.tree.map(lambda x: x[0], params), s))(states)
    assert not np.allclose(np.where(legal, alone, 0), np.where(legal, scores, 0), atol=1e-6)
