"""A slow, plainly written endgame solver over the pure-Python reference rules, to cross-check
``neurocheckers.endgame`` in tests. Like ``reference_rules`` it imports nothing from the package.

It lists every position with at most a few pieces by brute force (no index), generates moves with
``reference_rules``, and settles values by plain repeated sweeps: a position is won in ``k`` when a
move reaches a position lost in ``k - 1``, lost in ``k`` when every move reaches a position won in
at most ``k - 1`` (one of them in exactly ``k - 1``), and drawn when no sweep settles it.
"""

from __future__ import annotations

import itertools

import numpy as np
from reference_rules import RefPosition, RefRules, apply_move, legal_moves, num_squares, square_to_rc

LOSS, DRAW, WIN = 0, 1, 2


def _positions(rules: RefRules, max_pieces: int):
    n = num_squares(rules.size)
    last_row = {s for s in range(1, n + 1) if square_to_rc(rules.size, s)[0] == rules.size - 1}
    first_row = {s for s in range(1, n + 1) if square_to_rc(rules.size, s)[0] == 0}
    for total in range(1, max_pieces + 1):
        for squares in itertools.combinations(range(1, n + 1), total):
            for kinds in itertools.product("bBwW", repeat=total):
                if not any(k in "bB" for k in kinds) and not any(k in "wW" for k in kinds):
                    continue
                placed = dict(zip(squares, kinds, strict=True))
                if any(k == "b" and s in last_row or k == "w" and s in first_row for s, k in placed.items()):
                    continue
                groups = [frozenset(s for s, k in placed.items() if k == kind) for kind in "bBwW"]
                for black_to_move in (True, False):
                    yield RefPosition(*groups, black_to_move)


def solve(rules: RefRules, max_pieces: int) -> dict[RefPosition, tuple[int, int]]:
    """(value for the side to move, distance in whole moves) of every position with at most
    ``max_pieces`` pieces (a side without pieces to move has lost in 0)."""
    children: dict[RefPosition, list[RefPosition]] = {}
    for pos in _positions(rules, max_pieces):
        own = (pos.black_men | pos.black_kings) if pos.black_to_move else (pos.white_men | pos.white_kings)
        children[pos] = [apply_move(rules, pos, m) for m in legal_moves(rules, pos)] if own else []
    known = {pos: (LOSS, 0) for pos, kids in children.items() if not kids}
    level = 1
    while True:
        found = {}
        for pos, kids in children.items():
            if pos in known:
                continue
            kid_values = [known.get(k) for k in kids]
            if any(v == (LOSS, level - 1) for v in kid_values):
                found[pos] = (WIN, level)
            elif all(v is not None and v[0] == WIN for v in kid_values) and (
                max(v[1] for v in kid_values) == level - 1
            ):
                found[pos] = (LOSS, level)
        if not found:
            break
        known.update(found)
        level += 1
    return {pos: known.get(pos, (DRAW, 0)) for pos in children}


def as_arrays(reference: dict[RefPosition, tuple[int, int]]):
    """The solved positions where both sides have pieces, as ``([P, 4] bitboards of black men, black
    kings, white men, white kings; [P] black to move; [P, 2] value and distance)``."""
    boards, black_to_move, expected = [], [], []
    for pos, answer in reference.items():
        if not ((pos.black_men | pos.black_kings) and (pos.white_men | pos.white_kings)):
            continue
        parts = (pos.black_men, pos.black_kings, pos.white_men, pos.white_kings)
        boards.append([sum(1 << (q - 1) for q in part) for part in parts])
        black_to_move.append(pos.black_to_move)
        expected.append(answer)
    return np.array(boards, dtype=np.uint32), np.array(black_to_move), np.array(expected)
