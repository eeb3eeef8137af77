"""The play-time search: the generalised alpha-beta stack (traced depth, capture extensions, node
limit, first root move) and iterative deepening to a node or time budget (``search.timed``)."""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
from test_baselines import random_positions_fn

from neurocheckers.players.timed import material_leaf, parse_timed
from neurocheckers.rules import AMERICAN6, AMERICAN8, init
from neurocheckers.rules.notation import legal_moves, parse_fen
from neurocheckers.search.alphabeta import alphabeta_search, alphabeta_stack, color_sign
from neurocheckers.search.timed import Deepening, iteration_kernel


@functools.cache
def general_stack(rules, depth: int, levels: int, quiescence: bool):
    """Jitted ``(state, node_limit, first) -> stack`` of the generalised search."""

    def run(state, node_limit, first):
        return alphabeta_stack(
            rules, state, depth, max_levels=levels, quiescence=quiescence, node_limit=node_limit,
            first_action=first,
        )  # fmt: skip

    return jax.jit(run)


@functools.cache
def plain_search(rules, depth: int):
    return jax.jit(functools.partial(alphabeta_search, rules, depth=depth))


def mover_scores(state, stack) -> np.ndarray:
    return np.asarray(color_sign(state.color) * stack.root_scores)


def test_more_levels_and_a_first_move_keep_the_best_score():
    """A deeper stack without extensions, and any legal first root move, give the plain search's best
    score (a first move changes the order, never the value)."""
    states = jax.device_get(random_positions_fn(AMERICAN8, 20)(jax.random.key(3), 12))
    for i in range(12):
        state = jax.tree.map(lambda x, i=i: x[i], states)
        if state.terminated:
            continue
        scores, legal = plain_search(AMERICAN8, 3)(state)
        best = np.max(np.where(legal, scores, -np.inf))
        legal_actions = np.flatnonzero(legal)
        first = int(legal_actions[i % len(legal_actions)])
        stack = general_stack(AMERICAN8, 3, 8, False)(state, 2**31 - 1, first)
        assert bool(stack.complete)
        ours = mover_scores(state, stack)
        assert np.max(np.where(legal, ours, -np.inf)) == pytest.approx(best)
        assert np.asarray(stack.root_done)[legal].any()


def test_capture_extensions_see_a_piece_hang_past_the_horizon():
    """Black (men 1, 15) against White men on 23 and 24: 15-18 and 15-19 each let White jump a man.
    A plain depth-1 search rates every move 0; with capture extensions those two rate -1."""
    state = parse_fen(AMERICAN8, "B:W23,24:B1,15")
    names = {m.notation: m.actions[0] for m in legal_moves(AMERICAN8, state)}
    plain = mover_scores(state, general_stack(AMERICAN8, 1, 1, False)(state, 2**31 - 1, -1))
    quiet = mover_scores(state, general_stack(AMERICAN8, 1, 12, True)(state, 2**31 - 1, -1))
    assert {name: plain[a] for name, a in names.items()} == {"1-5": 0, "1-6": 0, "15-18": 0, "15-19": 0}
    assert {name: quiet[a] for name, a in names.items()} == {"1-5": 0, "1-6": 0, "15-18": -1, "15-19": -1}


def test_a_node_limit_stops_the_search_unfinished():
    stack = general_stack(AMERICAN8, 6, 8, True)(init(AMERICAN8), 100, -1)
    assert int(stack.iterations) == 100 and not bool(stack.complete)


@functools.cache
def material_deepening(rules) -> Deepening:
    return Deepening(iteration_kernel(rules, material_leaf(), 0.25), None)


def test_a_larger_node_budget_searches_deeper_and_is_reproducible():
    deepening = material_deepening(AMERICAN8)
    key = jax.random.key(0)
    small = deepening.search(init(AMERICAN8), key, nodes=2_000)
    large = deepening.search(init(AMERICAN8), key, nodes=60_000)
    assert large.depth > small.depth >= 2
    assert small.nodes <= 2_000 and large.nodes <= 60_000
    again = deepening.search(init(AMERICAN8), key, nodes=60_000)
    assert (again.action, again.depth, again.nodes) == (large.action, large.depth, large.nodes)


def test_deepening_stops_only_where_every_leaf_ends_the_game():
    """Every Black move here gives White a capture, so depth 2 searches the tree of depth 1 (capture
    extensions reach the same leaves): the search still goes deeper, since leaves were cut. Where
    each line ends the game (15-18 and 15-19 both lose the last man), nothing is cut."""
    state = parse_fen(AMERICAN8, "B:W20,21,22,23,25,26,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,11,19")
    one, two = (general_stack(AMERICAN8, d, 16, True)(state, 2**31 - 1, -1) for d in (1, 2))
    assert int(one.iterations) == int(two.iterations) and bool(two.cut)
    assert material_deepening(AMERICAN8).search(state, jax.random.key(0), nodes=20_000).depth >= 4
    lost = parse_fen(AMERICAN8, "B:W23,24:B15")
    final = general_stack(AMERICAN8, 1, 16, True)(lost, 2**31 - 1, -1)
    assert bool(final.complete) and not bool(final.cut)


def test_a_time_budget_is_kept_and_only_moves_are_played_at_once():
    deepening = material_deepening(AMERICAN8)
    deepening.search(init(AMERICAN8), jax.random.key(0), nodes=500)  # compiled before timing
    info = deepening.search(init(AMERICAN8), jax.random.key(1), seconds=0.2)
    assert info.depth >= 3 and info.action in set(
        np.flatnonzero(np.asarray(init(AMERICAN8).legal_action_mask))
    )
    # White must capture 15x22 with its only capture: no search.
    forced = parse_fen(AMERICAN8, "W:W19:B1,15")
    assert deepening.search(forced, jax.random.key(1), seconds=5.0).depth == 0


def test_timed_specs_parse_and_bad_budgets_name_the_value(tmp_path):
    player = parse_timed("timed:500n:material", AMERICAN6)
    assert (player.nodes, player.seconds, player.equal_time) == (500, None, False)
    assert parse_timed("timed:equal:material", AMERICAN6).equal_time
    for spec, bad in (
        ("timed:0s:material", "'0s'"),
        ("timed:x:material", "'x'"),
        ("timed:99s:material", "'99s'"),
    ):
        with pytest.raises(ValueError, match=bad):
            parse_timed(spec, AMERICAN6)
    with pytest.raises(ValueError, match="missing.safetensors"):
        parse_timed(f"timed:1s:{tmp_path / 'missing.safetensors'}", AMERICAN6)
