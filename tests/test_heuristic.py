"""Checks of the hand-written evaluation (neurocheckers/search/heuristic.py) and its player spec.

Squares are American notation (bit ``s - 1``); Black's men start on 1-12 and crown on 29-32.
Turning the board half a turn maps square ``s`` to ``33 - s`` on 8x8 (``19 - s`` on 6x6).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_baselines import random_positions_fn

from neurocheckers.players.jax_players import parse_player
from neurocheckers.rules import AMERICAN6, AMERICAN8, from_position
from neurocheckers.rules.notation import parse_fen
from neurocheckers.rules.state import State
from neurocheckers.search.heuristic import (
    QUANTUM,
    heuristic_score,
    heuristic_value_fn,
    mirror,
    search_value_fn,
)


def flip(state: State) -> State:
    """The same position with the colours swapped: each side's pieces turned half a turn and given to
    the other side (bit ``i`` <-> bit ``N - 1 - i``), the other side to move, the moves mirrored
    (direction ``d`` <-> ``3 - d``) and the result negated."""
    n = state.num_squares

    def m(bits):
        return mirror(bits, n)

    return state.replace(
        black_men=m(state.white_men),
        black_kings=m(state.white_kings),
        white_men=m(state.black_men),
        white_kings=m(state.black_kings),
        color=1 - state.color,
        continuing=m(state.continuing),
        legal_bits=m(state.legal_bits[..., ::-1]),
        result=-state.result,
    )


def unfinished_positions(rules, count: int, seed: int = 0, max_plies: int = 80) -> State:
    states = random_positions_fn(rules, max_plies)(jax.random.key(seed), 4 * count)
    keep = np.flatnonzero(~np.asarray(states.terminated))[:count]
    assert len(keep) == count
    return jax.tree.map(lambda x: x[keep], states)


def test_mirror_turns_the_board():
    assert int(mirror(jnp.uint32(1), 32)) == 1 << 31  # square 1 <-> 32
    assert int(mirror(jnp.uint32(1 << 2), 32)) == 1 << 29  # square 3 <-> 30
    assert int(mirror(jnp.uint32(1), 18)) == 1 << 17  # 6x6: square 1 <-> 18
    bits = jnp.uint32(0x1234ABCD)
    assert int(mirror(mirror(bits, 32), 32)) == int(bits)


@pytest.mark.parametrize("rules", [AMERICAN8, AMERICAN6], ids=lambda r: r.name)
def test_flipping_the_colours_negates_the_score(rules):
    states = unfinished_positions(rules, 50)
    flipped = flip(states)
    # The flip is a legal position of the same game: the engine gives it the mirrored moves.
    quiet = np.asarray(states.continuing == 0)
    rebuilt = jax.vmap(
        lambda s: from_position(rules, s.black_men, s.black_kings, s.white_men, s.white_kings, s.color)
    )(flipped)
    np.testing.assert_array_equal(
        np.asarray(rebuilt.legal_bits)[quiet], np.asarray(flipped.legal_bits)[quiet]
    )
    score = jax.vmap(functools.partial(heuristic_score, rules))
    a, b = np.asarray(score(states)), np.asarray(score(flipped))
    np.testing.assert_array_equal(a, -b)
    assert np.all(np.abs(a) < 100)
    assert np.unique(a).size > 10  # the positions are told apart
    np.testing.assert_allclose(a / QUANTUM, np.round(a / QUANTUM), atol=1e-3)


def test_score_of_the_opening_and_an_extra_man():
    rules = AMERICAN8
    opening = parse_fen(rules, "B:W21-32:B1-12")
    assert float(heuristic_score(rules, opening)) == pytest.approx(0.02)  # only the side to move's bonus
    # Black a man up (11 on 12 removed for White, or 12 for Black), everything else equal.
    black_up = parse_fen(rules, "B:W22-32:B1-12")
    even = parse_fen(rules, "B:W22-32:B1-11")
    assert float(heuristic_score(rules, black_up)) > float(heuristic_score(rules, even)) + 0.9
    ending = parse_fen(rules, "W:WK27:BK5,K9")
    assert float(heuristic_score(rules, ending)) > 1.0
    assert float(heuristic_score(rules, parse_fen(rules, "W:WK27:BK5"))) == pytest.approx(0.0, abs=0.1)


def test_value_functions():
    rules = AMERICAN8
    black_up = parse_fen(rules, "W:W22-32:B1-12")  # White to move, a man down
    v = float(heuristic_value_fn(rules)(None, black_up, jax.random.key(0)))
    assert 0.0 < v < 0.5
    score = float(heuristic_score(rules, black_up))
    assert v == pytest.approx(float(jax.nn.sigmoid(-0.5 * score)))
    # The search's exact, linear value: 2 v - 1 is the mover's score in QUANTUM steps times 2^-15.
    w = float(search_value_fn(rules)(None, black_up, jax.random.key(0)))
    assert (2 * w - 1) * 2**15 == pytest.approx(-score / QUANTUM)
    lost = parse_fen(rules, "W:W:B1")  # White has no piece: the game is over
    assert bool(lost.terminated)
    assert float(heuristic_value_fn(rules)(None, lost, jax.random.key(0))) == 0.0
    assert float(search_value_fn(rules)(None, lost, jax.random.key(0))) == 0.0


def test_alphabeta_heuristic_player():
    rules = AMERICAN8
    player = parse_player("alphabeta:2:heuristic", rules)
    assert player.name == "alphabeta:2:heuristic" and player.params is None
    state = parse_fen(rules, "B:W21-32:B1-12")
    action = int(jax.jit(player.policy)(None, state, jax.random.key(0)))
    assert bool(state.legal_action_mask[action])
    with pytest.raises(ValueError, match=r"bad player spec 'alphabeta:2:nonsense'.*nonsense"):
        parse_player("alphabeta:2:nonsense", rules)
