"""The JAX engine under the ``american8-openspiel`` preset against OpenSpiel's ``checkers`` (English
draughts, a draw after 40 plies without a capture), action by action over seeded random games: legal
action sets, positions, the continuing piece, the no-capture counter and results."""

from __future__ import annotations

import functools
import random
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from neurocheckers.rules import AMERICAN8_OPENSPIEL, init, step

pyspiel = pytest.importorskip("pyspiel")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import openspiel_adapter as osa  # noqa: E402


def _squares(bits) -> set[int]:
    return {i + 1 for i in range(32) if int(bits) >> i & 1}


def test_random_games_agree_with_openspiel():
    game = osa.openspiel_game()
    play = jax.jit(functools.partial(step, AMERICAN8_OPENSPIEL))
    outcomes = {}
    actions_checked = 0
    for seed in range(120):
        rng = random.Random(seed)
        theirs, ours = game.new_initial_state(), jax.device_get(init(AMERICAN8_OPENSPIEL))
        while True:
            where = f"seed {seed} after {theirs.history()}"
            pos = osa.position_of(theirs)
            assert _squares(ours.black_men) == pos["black_men"], where
            assert _squares(ours.black_kings) == pos["black_kings"], where
            assert _squares(ours.white_men) == pos["white_men"], where
            assert _squares(ours.white_kings) == pos["white_kings"], where
            assert (int(ours.color) == 0) == pos["black_to_move"], where
            assert int(ours.plies_without_capture) == osa.moves_without_capture(theirs), where
            assert (int(ours.continuing) != 0) == osa.in_multi_jump(theirs), where
            assert bool(ours.terminated) == theirs.is_terminal(), where
            if theirs.is_terminal():
                assert int(ours.result) == round(theirs.returns()[0]), where
                outcomes[int(ours.result)] = outcomes.get(int(ours.result), 0) + 1
                break
            legal = osa.legal_moves_of(theirs)
            mine = set(np.flatnonzero(np.asarray(ours.legal_action_mask)).tolist())
            assert mine == set(legal), where
            action = rng.choice(sorted(mine))
            theirs.apply_action(legal[action])
            ours = jax.device_get(play(ours, action))
            actions_checked += 1
    # Random games should reach wins for both sides and draws by the no-capture limit.
    assert set(outcomes) == {-1, 0, 1}, outcomes
    assert actions_checked > 5000
