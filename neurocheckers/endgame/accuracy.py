"""Move accuracy against an endgame database: in every position of a played game that the database
holds, did the mover's whole move keep the position's value, or drop it (win to draw, win to loss,
draw to loss)?"""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from neurocheckers.endgame.database import DRAW, LOSS, OUTSIDE, WIN, EndgameDB
from neurocheckers.endgame.index import to_mover_view
from neurocheckers.rules.engine import step
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State


@dataclasses.dataclass(frozen=True)
class Accuracy:
    """One side's moves in database positions: ``positions`` moved from, ``blunders`` among them
    (moves that dropped the value), and ``wins_dropped`` (of the blunders, wins let go)."""

    positions: int = 0
    blunders: int = 0
    wins_dropped: int = 0

    def __add__(self, other: Accuracy) -> Accuracy:
        return Accuracy(
            *(a + b for a, b in zip(dataclasses.astuple(self), dataclasses.astuple(other), strict=True))
        )

    def per_thousand(self) -> tuple[float, float, float] | None:
        """Blunders per 1,000 database positions with a 95% Wilson interval; None without positions."""
        n = self.positions
        if n == 0:
            return None
        p, z = self.blunders / n, 1.96
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return 1000 * p, 1000 * max(0.0, centre - half), 1000 * min(1.0, centre + half)


@functools.cache
def _replay(rules: Rules):
    def one_game(start: State, actions: jax.Array):
        def ply(state: State, action: jax.Array):
            seen = (state.black_men, state.black_kings, state.white_men, state.white_kings)
            out = (jnp.stack(seen), state.color, state.continuing, state.terminated)
            return jax.lax.cond(action >= 0, lambda: step(rules, state, action), lambda: state), out

        final, trace = jax.lax.scan(ply, start, actions)
        return trace, final

    return jax.jit(jax.vmap(one_game))


def _moves(boards, color, continuing, played) -> list[tuple[int, int, int]]:
    """``(game, ply before, ply after)`` of every whole move: from a turn boundary at which an action
    is played to the next turn boundary."""
    out = []
    for game in range(len(played)):
        boundaries = [t for t in range(played.shape[1] + 1) if t == 0 or played[game, t - 1]]
        boundaries = [t for t in boundaries if continuing[game, t] == 0]
        for before, after in zip(boundaries, boundaries[1:], strict=False):
            if played[game, before]:
                out.append((game, before, after))
    return out


@dataclasses.dataclass(frozen=True)
class WholeMoves:
    """Every whole move of some games (a multi-jump is one move): ``game`` [M], the boards before and
    after it ([M, 4]: Black's men, Black's kings, White's men, White's kings), ``color`` [M], the
    mover (``BLACK`` or ``WHITE``), and ``color_after`` [M], the side to move after it, in the order of
    the games and their moves."""

    game: np.ndarray
    before: np.ndarray
    after: np.ndarray
    color: np.ndarray
    color_after: np.ndarray


def whole_moves(rules: Rules, starts: State, actions: np.ndarray) -> WholeMoves:
    """The whole moves of games given by their start states ([N] ``State``) and actions ([N, L], -1
    after the end), replayed with the JAX engine."""
    actions = np.asarray(actions, dtype=np.int32)
    trace, final = jax.device_get(_replay(rules)(starts, jnp.asarray(actions)))
    boards, color, continuing, _ = trace

    def extended(part, last):
        return np.concatenate([np.asarray(part), np.asarray(last)[:, None]], axis=1)

    boards = extended(
        boards, np.stack([final.black_men, final.black_kings, final.white_men, final.white_kings], 1)
    )
    color = extended(color, final.color)
    continuing = extended(continuing, final.continuing)
    moves = _moves(boards, color, continuing, actions >= 0)
    if not moves:
        empty, boards = np.zeros((0,), dtype=np.int64), np.zeros((0, 4), dtype=np.int64)
        return WholeMoves(empty, boards, boards, empty, empty)
    game, before, after = (np.array(column) for column in zip(*moves, strict=True))
    return WholeMoves(
        game, boards[game, before], boards[game, after], color[game, before], color[game, after]
    )


def move_accuracy(
    db: EndgameDB, starts: State, actions: np.ndarray, a_is_black: np.ndarray
) -> tuple[Accuracy, Accuracy]:
    """(player A's, player B's) accuracy over games given by their start states ([N] ``State``) and
    actions ([N, L], -1 after the end), A having Black where ``a_is_black`` ([N] bool)."""
    moves = whole_moves(db.rules, starts, actions)
    if len(moves.game) == 0:
        return Accuracy(), Accuracy()
    views = [
        to_mover_view(boards, color == BLACK, db.rules.num_squares)
        for boards, color in ((moves.before, moves.color), (moves.after, moves.color_after))
    ]
    value_before, _ = db.lookup(views[0])
    value_after, _ = db.lookup(views[1])
    held = value_before != OUTSIDE
    dropped_win = (value_before == WIN) & (value_after != LOSS)
    blunder = held & (dropped_win | ((value_before == DRAW) & (value_after == WIN)))
    by_a = (moves.color == BLACK) == np.asarray(a_is_black)[moves.game]
    return tuple(
        Accuracy(
            int((held & side).sum()), int((blunder & side).sum()), int((held & dropped_win & side).sum())
        )
        for side in (by_a, ~by_a)
    )
