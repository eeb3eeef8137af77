"""Tests of py-draughts' engine as an opponent (``pydraughts_engine``): the board mapping (squares,
colours, forced captures) against our engine over random games, the adapter's moves (legal, whole
multi-jumps played one jump a call, reproducible), its errors, and the spec parser."""

from __future__ import annotations

import functools
import importlib
import re
import subprocess
import sys

import jax
import numpy as np
import pytest

pytest.importorskip("draughts")

from neurocheckers.players import pydraughts as pde  # noqa: E402
from neurocheckers.rules import AMERICAN6, AMERICAN8, BLACK, SIMPLE6, init, step  # noqa: E402
from neurocheckers.rules.notation import action_squares, legal_actions, legal_moves, to_fen  # noqa: E402
from neurocheckers.rules.tables import tables  # noqa: E402

T = tables(8)


@functools.cache
def _step():
    return jax.jit(functools.partial(step, AMERICAN8))


def _play(state, action):
    return jax.device_get(_step()(state, int(action)))


def _start():
    return jax.device_get(init(AMERICAN8))


def _between(a: int, b: int) -> int:
    """Our square (1-based) jumped over from square ``a`` to square ``b``, two diagonal steps apart."""
    (r1, c1), (r2, c2) = T.coords[a - 1], T.coords[b - 1]
    return int(np.flatnonzero((T.coords == ((r1 + r2) // 2, (c1 + c2) // 2)).all(axis=1))[0]) + 1


def _our_moves(state) -> tuple[set, set]:
    """(start, landing, captured squares) of our whole moves, and their paths."""
    keys, paths = set(), set()
    for move in legal_moves(AMERICAN8, state):
        path = move.path
        jumps = zip(path, path[1:], strict=False)
        captured = frozenset(_between(a, b) for a, b in jumps) if move.is_capture else frozenset()
        keys.add((path[0], path[-1], captured))
        paths.add(path)
    return keys, paths


def _key(move) -> tuple:
    """A py-draughts move in our squares: (start, landing, captured squares)."""
    return (
        32 - move.square_list[0],
        32 - move.square_list[-1],
        frozenset(32 - i for i in move.captured_list),
    )


def _their_moves(board) -> tuple[set, set]:
    moves = board.legal_moves
    return {_key(m) for m in moves}, {tuple(32 - i for i in m.square_list) for m in moves}


def _random_games(games: int, plies: int, seed: int):
    """Every position of ``games`` seeded random games of up to ``plies`` actions."""
    for game in range(games):
        rng = np.random.default_rng([seed, game])
        state = _start()
        for _ in range(plies):
            yield state
            if bool(state.terminated):
                break
            state = _play(state, rng.choice(legal_actions(state)))


def test_the_module_imports_without_py_draughts():
    code = "import sys, neurocheckers.players.pydraughts; assert 'draughts' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_initial_position_maps():
    state = _start()
    board = pde.board_of(state)
    assert board.white_men == ((1 << 12) - 1) << 20 and board.black_men == (1 << 12) - 1
    assert board.white_kings == board.black_kings == 0
    assert board.turn.name == "WHITE"
    theirs = {(32 - m.square_list[0], 32 - m.square_list[-1]) for m in board.legal_moves}
    assert theirs == {(m.path[0], m.path[-1]) for m in legal_moves(AMERICAN8, state)}
    assert (11, 15) in theirs and (9, 13) in theirs  # their 22-18 and 24-20


def test_whole_moves_agree_over_random_games():
    seen = {"positions": 0, "captures": 0, "multi-jumps": 0, "kings": 0, "unforced": 0}
    for state in _random_games(games=10, plies=100, seed=3):
        if int(state.continuing) or bool(state.terminated):
            continue
        board = pde.board_of(state)
        ours, our_paths = _our_moves(state)
        theirs, their_paths = _their_moves(board)
        assert theirs == ours, to_fen(state)
        # py-draughts keeps one path of moves alike in all three (a king's circle either way round).
        assert their_paths <= our_paths, to_fen(state)
        plain = super(type(board), board).legal_moves  # py-draughts' own: captures optional
        seen["positions"] += 1
        seen["captures"] += any(captured for _, _, captured in ours)
        seen["multi-jumps"] += any(len(captured) > 1 for _, _, captured in ours)
        seen["kings"] += bool(int(state.black_kings) | int(state.white_kings))
        seen["unforced"] += len(plain) > len(board.legal_moves)
    assert min(seen.values()) > 0, seen


def _whole_key(before, actions: list[int]) -> tuple:
    """(start, landing, captured squares) of a whole move played as ``actions`` from ``before``."""
    state, squares, captured = before, [], set()
    for action in actions:
        src, dst, is_jump = action_squares(AMERICAN8, state, action)
        squares += [src, dst] if not squares else [dst]
        if is_jump:
            captured.add(_between(src, dst))
        state = _play(state, action)
    return squares[0], squares[-1], frozenset(captured)


def _position(board) -> tuple:
    return board.white_men, board.white_kings, board.black_men, board.black_kings, board.turn


def _game_against_random(bot, engine_is_black: bool, seed: int, max_plies: int = 400):
    """A game of ``bot`` against uniformly random moves, also played on a py-draughts board whole
    move by whole move; (our final state, the board, the engine's actions, the game's engine)."""
    game, rng = bot.new_game(), np.random.default_rng(seed)
    state = _start()
    board = pde.board_of(state)
    turn_start, turn, played = state, [], []
    for _ in range(max_plies):
        if bool(state.terminated):
            break
        if (int(state.color) == BLACK) == engine_is_black:
            action = game(state)
            assert np.asarray(state.legal_action_mask)[action], to_fen(state)
            played.append(action)
        else:
            action = int(rng.choice(legal_actions(state)))
        turn.append(action)
        state = _play(state, action)
        if not int(state.continuing):
            key = _whole_key(turn_start, turn)
            (move,) = [m for m in board.legal_moves if _key(m) == key]
            board.push(move)
            turn_start, turn = state, []
            assert _position(board) == _position(pde.board_of(state))
    return state, board, played, game


def test_the_engine_plays_legal_games_and_both_engines_agree_on_wins():
    bot = pde.parse_pydraughts("pydraughts:2", AMERICAN8)
    engine_wins = searches = actions = 0
    for seed in range(4):
        engine_is_black = seed % 2 == 0
        state, board, played, game = _game_against_random(bot, engine_is_black, seed)
        assert game.searches > 0 and game.nodes >= game.searches
        searches, actions = searches + game.searches, actions + len(played)
        if bool(state.terminated) and int(state.result) != 0:
            assert board.game_over
            assert {"1-0": 1, "0-1": -1}[board.result] == int(state.result)  # their White is our Black
            engine_wins += int(state.result) == (1 if engine_is_black else -1)
    assert engine_wins >= 3
    assert searches < actions  # the engine played multi-jumps, their later jumps without a search
    # A fresh game replays the first game's moves: the engine is deterministic, games independent.
    again = _game_against_random(bot, True, 0)[2]
    first = _game_against_random(bot, True, 0)[2]
    assert again == first


def test_a_game_handed_over_mid_jump_goes_on_with_the_jumping_piece():
    states = [s for s in _random_games(games=10, plies=100, seed=5) if int(s.continuing)]
    assert states
    for state in states[:5]:
        game = pde.parse_pydraughts("pydraughts:2", AMERICAN8).new_game()
        while int(state.continuing) and not bool(state.terminated):
            action = game(state)
            assert np.asarray(state.legal_action_mask)[action]
            assert int(state.continuing) == 1 << (action % 32)
            state = _play(state, action)
        assert game.searches == 1


def test_a_move_illegal_here_names_the_position_and_the_move():
    for state in _random_games(games=4, plies=100, seed=7):
        board = pde.board_of(state)
        plain = super(type(board), board).legal_moves
        quiet = [m for m in plain if not m.captured_list]
        if not int(state.continuing) and quiet and len(plain) > len(board.legal_moves):
            break  # a capture is forced, py-draughts' own rules would allow a quiet move
    else:
        pytest.fail("no position with a forced capture")
    game = pde.parse_pydraughts("pydraughts:1", AMERICAN8).new_game()
    game._engine.get_best_move = lambda board: quiet[0]
    with pytest.raises(
        RuntimeError, match=re.escape(f"plays {quiet[0]} in {to_fen(state)}: its action 1 is illegal")
    ):
        game(state)


def test_specs_and_their_errors(monkeypatch):
    assert pde.is_pydraughts_spec(" pydraughts:6") and not pde.is_pydraughts_spec("openspiel:mcts:3")
    assert pde.parse_pydraughts("pydraughts:6", AMERICAN8) == pde.PyDraughtsBot("pydraughts:6", 6, None)
    assert pde.parse_pydraughts("pydraughts:0.5s", AMERICAN8) == pde.PyDraughtsBot(
        "pydraughts:0.5s", pde.TIMED_DEPTH_CAP, 0.5
    )
    for bad, value in (
        ("pydraughts:0", "'0'"),
        ("pydraughts:21", "'21'"),
        ("pydraughts:x", "'x'"),
        ("pydraughts:", "''"),
        ("pydraughts:0s", "'0s'"),
        ("pydraughts:100s", "'100s'"),
        ("pydraughts:nans", "'nans'"),
    ):
        with pytest.raises(ValueError, match=f"bad player spec.*{value}") as error:
            pde.parse_pydraughts(bad, AMERICAN8)
        assert "\n" not in str(error.value)
    for preset in (SIMPLE6, AMERICAN6):
        with pytest.raises(ValueError, match=f"american8 only; got --rules {preset.name}"):
            pde.parse_pydraughts("pydraughts:2", preset)
    real = importlib.import_module

    def without_draughts(name, *args):
        if name == "draughts":
            raise ImportError(name)
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", without_draughts)
    with pytest.raises(
        ValueError, match=r'py-draughts players need py-draughts: pip install -e "\.\[engines\]"'
    ):
        pde.parse_pydraughts("pydraughts:2", AMERICAN8)
