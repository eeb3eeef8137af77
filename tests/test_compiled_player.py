"""The compiled search's game record (draw rules) and its player for matches (``compiled:``)."""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest

from neurocheckers.compiled.board import Position, SearchRules, game_rule
from neurocheckers.compiled.game import Game
from neurocheckers.players.compiled import parse_compiled
from neurocheckers.rules.engine import init, step
from neurocheckers.rules.presets import AMERICAN6, AMERICAN8, AMERICAN8_OPENSPIEL
from neurocheckers.rules.tables import tables


@pytest.mark.parametrize("budget", ["abc", "0s", "-1s", "0n", "61s", ""])
def test_bad_budget_is_one_line(budget):
    with pytest.raises(ValueError, match=f"budget {budget!r}") as info:
        parse_compiled(f"compiled:{budget}", AMERICAN8)
    assert "\n" not in str(info.value)


def test_bad_spec_names_it():
    with pytest.raises(ValueError, match="compiled:1s:x"):
        parse_compiled("compiled:1s:x", AMERICAN8)


def _row(game: Game, source: int, dest: int):
    (row,) = [r for r in game.legal() if r[0] == source and r[1] == dest]
    return row


def test_threefold_repetition_draws_under_the_games_rule():
    t = tables(8)
    a1, b1, man = 9, 26, 28
    a2, b2 = int(t.neighbor[1, a1]), int(t.neighbor[2, b1])
    game = Game(game_rule(AMERICAN8), Position(0, 1 << a1, 1 << man, 1 << b1, 0))
    shuffle = [(a1, a2), (b1, b2), (a2, a1), (b2, b1)]
    for k in range(8):
        assert game.result is None
        game.play(_row(game, *shuffle[k % 4]))
    assert game.result == 0 and game.reason == "threefold repetition"
    plain = Game(SearchRules(AMERICAN8, quiet_limit=0), Position(0, 1 << a1, 1 << man, 1 << b1, 0))
    for k in range(8):
        plain.play(_row(plain, *shuffle[k % 4]))
    assert plain.result is None  # no repetition rule, no quiet limit


def test_quiet_limits():
    t = tables(8)
    a1, b1, man = 9, 26, 28
    a2, b2 = int(t.neighbor[1, a1]), int(t.neighbor[2, b1])
    shuffle = [(a1, a2), (b1, b2), (a2, a1), (b2, b1)]
    preset = Game(SearchRules(AMERICAN8_OPENSPIEL), Position(0, 1 << a1, 1 << man, 1 << b1, 0))
    for k in range(40):
        preset.play(_row(preset, *shuffle[k % 4]))
    assert preset.result == 0 and "40 plies" in preset.reason
    own = Game(
        SearchRules(AMERICAN8, quiet_limit=80, man_moves_reset=True),
        Position(0, 1 << a1, 1 << man, 1 << b1, 0),
    )
    for k in range(79):
        own.play(_row(own, *shuffle[k % 4]))
    assert own.result is None
    own.play(_row(own, *shuffle[79 % 4]))
    assert own.result == 0 and "80 plies" in own.reason


@functools.cache
def _step(rules):
    return jax.jit(functools.partial(step, rules))


def test_player_plays_a_whole_game_of_legal_moves():
    rules = AMERICAN6
    player = parse_compiled("compiled:3000n", rules)
    player.warm_up()
    mover = player.new_game(0)
    rng = np.random.default_rng(0)
    state = init(rules)
    while not bool(state.terminated):
        legal = np.flatnonzero(np.asarray(state.legal_action_mask))
        if int(state.color) == 0:  # Black: the compiled search
            action = mover(state)
            assert action in legal
        else:
            action = int(rng.choice(legal))
        state = _step(rules)(state, action)
    assert int(state.result) == 1  # material search beats random moves
    assert mover.infos and all(info.nodes <= 3000 + 1024 for info in mover.infos)


def test_player_plays_a_double_jump_in_two_calls():
    # Black man on 1 must jump 6 and 14 (8x8): 1x10x19, actions 1*32+0 then 1*32+9.
    from neurocheckers.rules.engine import from_position

    player = parse_compiled("compiled:500n", AMERICAN8)
    mover = player.new_game(0)
    state = from_position(AMERICAN8, 1 << 0, 0, (1 << 5) | (1 << 14) | (1 << 30), 0, 0)
    first = mover(state)
    assert first == 32 + 0
    state = _step(AMERICAN8)(state, first)
    assert int(state.continuing) != 0
    second = mover(state)
    assert second == 32 + 9
    state = _step(AMERICAN8)(state, second)
    assert int(state.color) == 1 and int(state.white_men) == 1 << 30
