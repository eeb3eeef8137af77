"""Host-side notation: PDN FEN positions, full-turn moves in standard notation, text boards.

Squares are numbered 1..N in American notation (see ``tables``). A full-turn move is written
``9-14`` for a step, ``9x18`` for a capture and ``1x10x19`` for a multi-jump; every distinct capture
path is its own move.
"""

from __future__ import annotations

import dataclasses
import functools
import re

import jax
import numpy as np

from neurocheckers.rules.engine import from_position, step
from neurocheckers.rules.fen import read_fen
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, WHITE, State
from neurocheckers.rules.tables import tables


@dataclasses.dataclass(frozen=True)
class Move:
    """One whole turn: the actions that make it and the squares it visits (1-based)."""

    actions: tuple[int, ...]
    path: tuple[int, ...]
    is_capture: bool

    @property
    def notation(self) -> str:
        return ("x" if self.is_capture else "-").join(str(s) for s in self.path)

    def __str__(self) -> str:
        return self.notation


@functools.cache
def _jitted_step(rules: Rules):
    return jax.jit(functools.partial(step, rules))


@functools.cache
def _jitted_from_position(rules: Rules):
    return jax.jit(functools.partial(from_position, rules))


def _squares(bits: int | np.ndarray) -> list[int]:
    bits = int(bits)
    return [i + 1 for i in range(32) if bits >> i & 1]


def parse_fen(rules: Rules, fen: str, ply: int = 0, plies_without_capture: int = 0) -> State:
    """The state of a PDN FEN such as ``B:W21,22,K30:B1,2,K9`` (side to move first, ``K`` = king).

    Read and checked by ``fen.read_fen`` (ranges like ``1-12`` are accepted; at most
    ``rules.men_per_side`` pieces a side). Raises ``ValueError`` naming what is wrong.
    """
    position = read_fen(fen, rules.board_size, rules.men_per_side)
    if ply < 0 or plies_without_capture < 0:
        raise ValueError(f"ply and plies_without_capture must be >= 0, got {ply} and {plies_without_capture}")
    state = _jitted_from_position(rules)(
        np.uint32(position.black_men),
        np.uint32(position.black_kings),
        np.uint32(position.white_men),
        np.uint32(position.white_kings),
        BLACK if position.black_to_move else WHITE,
        ply,
        plies_without_capture,
    )
    return jax.device_get(state)


def to_fen(state: State) -> str:
    """The PDN FEN of a state (the continuing piece of an unfinished multi-jump is not recorded)."""
    side = "B" if int(state.color) == BLACK else "W"

    def listing(men, kings) -> str:
        items = [(s, "") for s in _squares(men)] + [(s, "K") for s in _squares(kings)]
        return ",".join(f"{k}{s}" for s, k in sorted(items))

    return (
        f"{side}:W{listing(state.white_men, state.white_kings)}"
        f":B{listing(state.black_men, state.black_kings)}"
    )


def action_squares(rules: Rules, state: State, action: int) -> tuple[int, int, bool]:
    """(from, to, is_capture) of ``action`` in ``state``, squares 1-based."""
    t = tables(rules.board_size)
    direction, square = divmod(int(action), rules.num_squares)
    adjacent = int(t.neighbor[direction, square])
    opponents = (
        int(state.white_men) | int(state.white_kings)
        if int(state.color) == BLACK
        else int(state.black_men) | int(state.black_kings)
    )
    if adjacent >= 0 and opponents >> adjacent & 1:
        return square + 1, int(t.jump_landing[direction, square]) + 1, True
    return square + 1, adjacent + 1, False


def legal_actions(state: State) -> list[int]:
    """The legal actions of ``state`` in increasing order."""
    return [int(a) for a in np.flatnonzero(np.asarray(state.legal_action_mask))]


def legal_moves(rules: Rules, state: State) -> list[Move]:
    """The full-turn legal moves of ``state``, multi-jumps followed to their end, in notation order."""
    moves: list[Move] = []
    step_fn = _jitted_step(rules)

    def extend(s: State, actions: tuple[int, ...], path: tuple[int, ...], capture: bool) -> None:
        for action in legal_actions(s):
            src, dst, is_capture = action_squares(rules, s, action)
            child = jax.device_get(step_fn(s, action))
            new_path = (path or (src,)) + (dst,)
            if int(child.continuing):
                extend(child, actions + (action,), new_path, True)
            else:
                moves.append(Move(actions + (action,), new_path, capture or is_capture))

    if not bool(state.terminated):
        extend(state, (), (), False)
    return sorted(moves, key=lambda m: (m.path, m.notation))


def parse_move(rules: Rules, state: State, text: str) -> Move:
    """The legal move written ``text`` (``9-14``, ``9x18``, ``1x10x19``; ``9x18`` also names the
    only capture path from 9 to 18). Raises ``ValueError`` listing the legal moves."""
    cleaned = text.strip().lower()
    moves = legal_moves(rules, state)
    listing = ", ".join(m.notation for m in moves) or "none"
    if not re.fullmatch(r"\d+([-x]\d+)+", cleaned):
        raise ValueError(f"malformed move {text!r}; legal moves: {listing}")
    exact = [m for m in moves if m.notation == cleaned]
    if exact:
        return exact[0]
    squares = tuple(int(s) for s in re.split(r"[-x]", cleaned))
    ends = [m for m in moves if m.is_capture and (m.path[0], m.path[-1]) == (squares[0], squares[-1])]
    if "x" in cleaned and len(squares) == 2 and len(ends) == 1:
        return ends[0]
    if len(ends) > 1 and len(squares) == 2:
        raise ValueError(f"ambiguous move {text!r}: give the whole path; legal moves: {listing}")
    raise ValueError(f"illegal move {text!r}; legal moves: {listing}")


def apply_move(rules: Rules, state: State, move: Move | str) -> State:
    """The state after a full-turn move (a ``Move`` or its notation)."""
    if isinstance(move, str):
        move = parse_move(rules, state, move)
    step_fn = _jitted_step(rules)
    for action in move.actions:
        state = jax.device_get(step_fn(state, action))
    return state


def board_text(rules: Rules, state: State, numbers: bool = True) -> str:
    """The board as text, Black at the top: ``b``/``w`` men, ``B``/``W`` kings, ``.`` empty dark
    squares; with ``numbers``, a square-number diagram beside it."""
    kinds = (
        (int(state.black_men), "b"),
        (int(state.black_kings), "B"),
        (int(state.white_men), "w"),
        (int(state.white_kings), "W"),
    )
    lines = []
    width = len(str(rules.num_squares))
    for row in range(rules.board_size):
        cells, labels = [], []
        for col in range(rules.board_size):
            if (row + col) % 2 == 0:
                cells.append(" ")
                labels.append(" " * width)
                continue
            square = row * (rules.board_size // 2) + col // 2
            mark = next((c for bits, c in kinds if bits >> square & 1), ".")
            cells.append(mark)
            labels.append(str(square + 1).rjust(width))
        line = " ".join(cells)
        lines.append(line + ("    " + " ".join(labels) if numbers else ""))
    side = "Black" if int(state.color) == BLACK else "White"
    if bool(state.terminated):
        outcome = {1: "Black wins", -1: "White wins", 0: "draw"}[int(state.result)]
        lines.append(f"game over: {outcome}")
    else:
        lines.append(f"{side} to move")
    return "\n".join(lines)
