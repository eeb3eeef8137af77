"""The JAX engine against the plain-Python reference (tests/reference_rules.py), move by move over
seeded random games of every preset: legal move sets, successor positions, counters and results."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from neurocheckers.rules import get_rules, init
from neurocheckers.rules.notation import apply_move, legal_moves, parse_fen, to_fen

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reference_rules as ref  # noqa: E402

GAMES = {"simple6": 40, "american6": 40, "american8": 15, "american8-openspiel": 8}
# Every way a game of each preset can end that the seeded games below reach (american6's random games
# are all decisive: no 50-ply capture-free streak in 40 games; nor, in 15, american8's 80 plies without a
# capture or a man's move).
ENDINGS = {
    "simple6": {"Black wins", "White wins", "draw: ply limit", "draw: side to move is stuck"},
    "american6": {"Black wins", "White wins"},
    "american8": {"Black wins", "White wins"},  # 80 quiet plies: random games end sooner
    "american8-openspiel": {"Black wins", "White wins", "draw: plies without capture"},
}


def _ending(ref_rules, game) -> str:
    """How a finished reference game ended."""
    if game.result:
        return "Black wins" if game.result > 0 else "White wins"
    if ref_rules.max_plies and game.ply >= ref_rules.max_plies:
        return "draw: ply limit"
    if (
        ref_rules.max_plies_without_capture
        and game.plies_without_capture >= ref_rules.max_plies_without_capture
    ):
        return "draw: plies without capture"
    assert not ref.legal_moves(ref_rules, game.position), "a draw with moves left and no limit reached"
    return "draw: side to move is stuck"


def _check_same(name, engine_state, game, where):
    rules = get_rules(name)
    assert to_fen(engine_state) == ref.position_to_fen(game.position), where
    assert bool(engine_state.terminated) == game.terminated, where
    assert int(engine_state.result) == game.result, where
    assert int(engine_state.plies_without_capture) == game.plies_without_capture, where
    if not rules.multi_jump:  # the engine counts each jump of a multi-jump as a ply
        assert int(engine_state.ply) == game.ply, where


@pytest.mark.parametrize("name", sorted(GAMES))
def test_random_games_agree_with_reference(name):
    rules, ref_rules = get_rules(name), ref.REF_PRESETS[name]
    endings = set()
    for seed in range(GAMES[name]):
        rng = random.Random(seed)
        state, game = init(rules), ref.new_game(ref_rules)
        turn = 0
        while True:
            where = f"{name} seed {seed} turn {turn} at {ref.position_to_fen(game.position)}"
            _check_same(name, state, game, where)
            if game.terminated:
                endings.add(_ending(ref_rules, game))
                break
            ours = {m.notation: m for m in legal_moves(rules, state)}
            theirs = {m.notation(): m for m in ref.legal_moves(ref_rules, game.position)}
            assert sorted(ours) == sorted(theirs), where
            choice = rng.choice(sorted(theirs))
            state = apply_move(rules, state, ours[choice])
            game = ref.play(ref_rules, game, theirs[choice])
            turn += 1
    assert endings == ENDINGS[name], f"{name}: the games ended as {sorted(endings)}"


@pytest.mark.parametrize(
    "name, fen",
    [
        ("american8", "B:W6,7,14,15,22,23:BK10"),
        ("american6", "W:WK8:B4,5,11,12"),
        ("simple6", "B:WK4,8,14:BK11,12"),
        ("american8", "W:W18,K27:B14,15,22,23,K30"),
    ],
)
def test_fen_positions_agree_with_reference(name, fen):
    rules, ref_rules = get_rules(name), ref.REF_PRESETS[name]
    state = parse_fen(rules, fen)
    ours = sorted(m.notation for m in legal_moves(rules, state))
    theirs = sorted(m.notation() for m in ref.legal_moves(ref_rules, ref.position_from_fen(fen)))
    assert ours == theirs and ours
