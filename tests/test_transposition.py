"""The transposition table of the alpha-beta stack: it keeps the search's best scores, spares a repeated
search almost all its nodes, tells positions apart by every field their value depends on, and rides
along a timed game from move to move."""

from __future__ import annotations

import functools

import jax
import numpy as np
from test_baselines import random_positions_fn

from neurocheckers.players.timed import parse_timed
from neurocheckers.rules import AMERICAN8, init
from neurocheckers.search.alphabeta import alphabeta_stack, color_sign
from neurocheckers.search.transposition import empty_table, position_key

DEPTH = 5


@functools.cache
def searches():
    """Jitted ``state -> (scores, nodes)`` without a table and ``(state, table) -> (scores, nodes,
    table)`` with one: material leaves, capture extensions, depth ``DEPTH``."""

    def run(state, table):
        final = alphabeta_stack(
            AMERICAN8, state, DEPTH, None, 0.25, max_levels=DEPTH + 8, quiescence=True, table=table
        )
        return color_sign(state.color) * final.root_scores, final.iterations, final.table

    return jax.jit(lambda s: run(s, None)[:2]), jax.jit(run)


def test_the_table_keeps_the_best_scores_and_spares_a_repeated_search():
    plain, with_table = searches()
    states = random_positions_fn(AMERICAN8, 40)(jax.random.key(7), 16)
    checked, saved = 0, []
    for i in range(16):
        state = jax.tree.map(lambda x, i=i: x[i], states)
        legal = np.asarray(state.legal_action_mask)
        if bool(state.terminated) or legal.sum() < 2:
            continue
        scores, nodes = plain(state)
        table_scores, table_nodes, table = with_table(state, empty_table(12))
        again_scores, again_nodes, _ = with_table(state, table)
        best = np.asarray(scores)[legal].max()
        assert np.asarray(table_scores)[legal].max() == best
        assert np.asarray(again_scores)[legal].max() == best
        assert int(again_nodes) * 5 <= int(table_nodes) <= int(nodes)
        saved.append(int(table_nodes) / int(nodes))
        checked += 1
    assert checked >= 8 and np.mean(saved) < 0.95


def test_positions_differ_by_every_field_their_value_depends_on():
    start = init(AMERICAN8)
    key = np.asarray(position_key(start))
    assert np.array_equal(key, np.asarray(position_key(init(AMERICAN8))))
    for changed in (
        start.replace(color=1 - start.color),
        start.replace(plies_without_capture=start.plies_without_capture + 1),
        start.replace(ply=start.ply + 2),
        start.replace(black_men=start.black_men ^ 1),
        start.replace(continuing=start.continuing | 1),
    ):
        other = np.asarray(position_key(changed))
        assert other[0] != key[0] and other[1] != key[1]


def test_a_timed_game_passes_its_table_from_move_to_move():
    player = parse_timed("timed:400n:material", AMERICAN8, table_bits=10)
    game = player.new_game(seed=0)
    state = init(AMERICAN8)
    first = game(state)
    assert first in np.flatnonzero(np.asarray(state.legal_action_mask))
    assert game.table is not None and int((np.asarray(game.table.rows)[:, 1] > 0).sum()) > 0
    assert game.infos[-1].table is None  # kept once, by the game
