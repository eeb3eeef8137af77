"""The population arena's one-network-per-search path (``population.play_population`` on rules
without multi-jumps) plays exactly the games of the reference path that evaluates both networks at
every leaf and keeps the mover's (``member_or_boss_policy`` with a per-game flag)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from neurocheckers.match.arena import play_games
from neurocheckers.networks.evaluator import EvaluatorSpec, init_params, init_population
from neurocheckers.population import member_or_boss_policy, play_population
from neurocheckers.rules import SIMPLE6
from neurocheckers.rules.openings import load_openings, opening_states
from neurocheckers.search.mcts import MCTSConfig

MEMBERS, GAMES, PLIES = 3, 4, 60


def both_networks_games(spec, search, population, boss, key, opening_plies, paired):
    """The games as the arena played them before the split: both networks at every leaf, every game
    of a member in one batch; member first in games 0 .. G/2 - 1, or paired openings."""
    policy = member_or_boss_policy(SIMPLE6, spec, search)
    game_ids = np.arange(MEMBERS)[:, None] * GAMES + np.arange(GAMES)
    if paired:
        openings = opening_states(SIMPLE6, load_openings(SIMPLE6))
        numbers = np.broadcast_to(np.arange(GAMES), (MEMBERS, GAMES))
        a_is_black = numbers % 2 == 0
        starts = jax.tree.map(lambda x: x[(numbers // 2) % x.shape[0]], openings)
    else:
        a_is_black = np.broadcast_to(np.arange(GAMES) < GAMES // 2, (MEMBERS, GAMES))
        openings = starts = None

    def member_games(member, states, use_member, keys):
        return jax.vmap(policy, in_axes=((None, None, 0), 0, 0))((member, boss, use_member), states, keys)

    def choose(states, a_to_move, keys):
        return jax.vmap(member_games)(population, states, a_to_move, keys)

    records = play_games(
        SIMPLE6, choose, np.asarray(a_is_black), game_ids, key, PLIES, opening_plies, True, starts=starts
    )
    return records, openings


@pytest.mark.parametrize("opening_plies, paired", [(0, False), (2, False), (0, True)])
def test_one_network_per_search_plays_the_both_networks_games(opening_plies, paired):
    spec = EvaluatorSpec.for_rules(SIMPLE6, layers=2, width=8)
    population = init_population(jax.random.key(1), spec, MEMBERS)
    boss = init_params(jax.random.key(2), spec)
    search = MCTSConfig(num_simulations=6)
    key = jax.random.key(7)
    reference, openings = both_networks_games(spec, search, population, boss, key, opening_plies, paired)
    records = play_population(
        SIMPLE6, spec, search, population, boss, key, GAMES, PLIES, opening_plies, record=True,
        openings=openings,
    )  # fmt: skip
    for name in ("positions", "a_to_move", "recorded", "length", "score", "result", "final_boards"):
        np.testing.assert_array_equal(getattr(records, name), getattr(reference, name), err_msg=name)
    length = np.asarray(records.length)
    assert length.min() < length.max()  # games end at different plies: finished games mix in
    assert len({bytes(np.asarray(records.positions[m, 0])) for m in range(MEMBERS)}) > 1  # members differ
