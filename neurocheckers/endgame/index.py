"""Slices of endgame positions and their perfect index, in plain NumPy (importing it loads no JAX).

Positions are kept from the side to move's point of view (the *mover orientation*): the mover plays
Black's part, its men moving towards higher squares and crowning on the last row. A White-to-move
position is turned half a turn (square ``s`` becomes ``N + 1 - s``) and its colours swapped first,
which the rules' symmetry allows, so one table serves both colours.

A :class:`Slice` holds every position with given numbers of mover men, mover kings, opponent men
and opponent kings. :class:`SliceIndex` maps each of its positions to a number in ``0 .. size - 1``
and back, with no gaps: the mover's men are ranked among the squares a mover's man can stand on,
the opponent's men among their own squares left free, then the kings among the squares left (each
set of squares ranked in colexicographic order).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import re

import numpy as np

from neurocheckers.rules.presets import Rules
from neurocheckers.rules.tables import tables

MAX_SQUARES = 32
_BINOM = np.array(
    [[math.comb(n, k) for k in range(MAX_SQUARES + 1)] for n in range(MAX_SQUARES + 1)], dtype=np.int64
)
_NAME = re.compile(r"^(\d+)m(\d+)k-(\d+)m(\d+)k$")


@dataclasses.dataclass(frozen=True, order=True)
class Slice:
    """The positions with ``men`` and ``kings`` of the side to move against ``opp_men`` and
    ``opp_kings`` of the other side."""

    men: int
    kings: int
    opp_men: int
    opp_kings: int

    @property
    def name(self) -> str:
        """``"2m1k-1m0k"``: mover men and kings, then the opponent's."""
        return f"{self.men}m{self.kings}k-{self.opp_men}m{self.opp_kings}k"

    @property
    def pieces(self) -> int:
        return self.men + self.kings + self.opp_men + self.opp_kings

    @property
    def flipped(self) -> Slice:
        """The slice of the positions after a quiet move: the other side to move."""
        return Slice(self.opp_men, self.opp_kings, self.men, self.kings)

    @property
    def counts(self) -> tuple[int, int, int, int]:
        return (self.men, self.kings, self.opp_men, self.opp_kings)

    @classmethod
    def from_name(cls, name: str) -> Slice:
        match = _NAME.match(name)
        if match is None:
            raise ValueError(f"bad slice name {name!r}: expected e.g. '2m1k-1m0k'")
        return cls(*(int(g) for g in match.groups()))


def solve_order(max_pieces: int) -> list[Slice]:
    """Every slice with 2 .. ``max_pieces`` pieces and at least one piece a side, in an order in which
    every capture and crowning leads into an earlier slice: fewer pieces first, then fewer men.
    A slice and its flip (the same pieces, the other side to move) are next to each other."""
    found = []
    for total in range(2, max_pieces + 1):
        for a, b, c, d in itertools.product(range(total + 1), repeat=4):
            if a + b + c + d == total and a + b > 0 and c + d > 0:
                found.append(Slice(a, b, c, d))
    return sorted(found, key=lambda s: (s.pieces, s.men + s.opp_men, min(s, s.flipped), s))


def families(max_pieces: int) -> list[tuple[Slice, ...]]:
    """``solve_order`` grouped into families solved together: a slice with its flip (one slice when
    the flip is itself)."""
    out: list[tuple[Slice, ...]] = []
    for s in solve_order(max_pieces):
        if s.flipped != s and out and s.flipped in out[-1]:
            continue
        out.append((s,) if s.flipped == s else (min(s, s.flipped), max(s, s.flipped)))
    return out


def popcount(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(np.asarray(x, dtype=np.uint32)).astype(np.int64)


def select_bit(universe: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """The bit (as a uint32 mask) of the ``rank``-th (0-based) set bit of each ``universe``."""
    universe = np.asarray(universe, dtype=np.uint32)
    rank = np.asarray(rank, dtype=np.int64).copy()
    pos = np.zeros(np.broadcast(universe, rank).shape, dtype=np.uint32)
    for width in (16, 8, 4, 2, 1):
        count = popcount((universe >> pos) & np.uint32((1 << width) - 1))
        up = rank >= count
        rank = np.where(up, rank - count, rank)
        pos = np.where(up, pos + np.uint32(width), pos)
    return np.left_shift(np.uint32(1), pos, dtype=np.uint32)


def colex_rank(bits: np.ndarray, universe: np.ndarray, count: int) -> np.ndarray:
    """The colexicographic rank of each set ``bits`` (``count`` squares) among the subsets of that
    size of ``universe``, squares numbered by their order in ``universe``."""
    x = np.asarray(bits, dtype=np.uint32).copy()
    universe = np.asarray(universe, dtype=np.uint32)
    rank = np.zeros(x.shape, dtype=np.int64)
    for i in range(1, count + 1):
        low = x & (~x + np.uint32(1))
        rank += _BINOM[popcount(universe & (low - np.uint32(1))), i]
        x ^= low
    return rank


def colex_unrank(rank: np.ndarray, universe: np.ndarray, count: int) -> np.ndarray:
    """The inverse of :func:`colex_rank`: the set of ``count`` squares of ``universe`` with that rank."""
    rank = np.asarray(rank, dtype=np.int64).copy()
    bits = np.zeros(rank.shape, dtype=np.uint32)
    for i in range(count, 0, -1):
        p = np.searchsorted(_BINOM[:, i], rank, side="right") - 1
        rank -= _BINOM[p, i]
        bits |= select_bit(universe, p)
    return bits


def reverse_bits(x: np.ndarray, num_squares: int) -> np.ndarray:
    """Each bitboard turned half a turn: square ``s`` (1-based) moves to ``N + 1 - s``."""
    x = np.asarray(x, dtype=np.uint32)
    for shift, mask in ((1, 0x55555555), (2, 0x33333333), (4, 0x0F0F0F0F), (8, 0x00FF00FF)):
        m = np.uint32(mask)
        x = ((x >> np.uint32(shift)) & m) | ((x & m) << np.uint32(shift))
    x = (x >> np.uint32(16)) | (x << np.uint32(16))
    return x >> np.uint32(32 - num_squares)


def to_mover_view(boards: np.ndarray, black_to_move: np.ndarray, num_squares: int) -> np.ndarray:
    """[B, 4] uint32 (mover men, mover kings, opponent men, opponent kings) from [B, 4] (black men,
    black kings, white men, white kings) and who is to move."""
    boards = np.asarray(boards, dtype=np.uint32)
    turned = reverse_bits(boards[:, [2, 3, 0, 1]], num_squares)
    return np.where(np.asarray(black_to_move)[:, None], boards, turned)


@functools.cache
def board_masks(rules: Rules) -> tuple[int, int, int]:
    """(every square, the squares a mover's man may stand on, an opponent man's)."""
    t = tables(rules.board_size)
    return t.all_squares, t.all_squares & ~t.last_row, t.all_squares & ~t.first_row


@functools.cache
def men_offsets(rules: Rules, men: int, opp_men: int) -> np.ndarray:
    """[C(M, men) + 1] int64: where each set of mover men (by rank) starts in the numbering of men
    placements, M being the squares a mover's man may stand on."""
    _, mover_squares, opp_squares = board_masks(rules)
    squares = [s for s in range(rules.num_squares) if mover_squares >> s & 1]
    combos = np.array(
        [sum(1 << s for s in combo) for combo in itertools.combinations(squares, men)], dtype=np.uint32
    ).reshape(-1)
    order = np.argsort(colex_rank(combos, np.uint32(mover_squares), men), kind="stable")
    free = popcount(np.uint32(opp_squares) & ~combos[order])
    return np.concatenate([[0], np.cumsum(_BINOM[free, opp_men])]).astype(np.int64)


@dataclasses.dataclass(frozen=True)
class SliceIndex:
    """The perfect index of one slice under ``rules``."""

    rules: Rules
    slice: Slice

    @functools.cached_property
    def _offsets(self) -> np.ndarray:
        return men_offsets(self.rules, self.slice.men, self.slice.opp_men)

    @property
    def _kings_sizes(self) -> tuple[int, int]:
        free = self.rules.num_squares - self.slice.men - self.slice.opp_men
        return int(_BINOM[free, self.slice.kings]), int(_BINOM[free - self.slice.kings, self.slice.opp_kings])

    @property
    def size(self) -> int:
        """How many positions the slice holds."""
        first, second = self._kings_sizes
        return int(self._offsets[-1]) * first * second

    def rank(self, boards: np.ndarray) -> np.ndarray:
        """[B] int64 indices of [B, 4] mover-view bitboards, each taken to lie in this slice."""
        a, b, c, d = self.slice.counts
        every, mover_squares, opp_squares = (np.uint32(m) for m in board_masks(self.rules))
        boards = np.asarray(boards, dtype=np.uint32)
        mm, mk, om, ok = (boards[:, i] for i in range(4))
        men = self._offsets[colex_rank(mm, mover_squares, a)] + colex_rank(om, opp_squares & ~mm, c)
        free = every & ~mm & ~om
        first, second = self._kings_sizes
        kings = colex_rank(mk, free, b) * second + colex_rank(ok, free & ~mk, d)
        return men * (first * second) + kings

    def unrank(self, index: np.ndarray) -> np.ndarray:
        """[B, 4] mover-view bitboards of [B] indices in ``0 .. size - 1``."""
        a, b, c, d = self.slice.counts
        every, mover_squares, opp_squares = (np.uint32(m) for m in board_masks(self.rules))
        index = np.asarray(index, dtype=np.int64)
        first, second = self._kings_sizes
        men, kings = np.divmod(index, first * second)
        first_kings, second_kings = np.divmod(kings, second)
        mover_rank = np.searchsorted(self._offsets, men, side="right") - 1
        mm = colex_unrank(mover_rank, mover_squares, a)
        om = colex_unrank(men - self._offsets[mover_rank], opp_squares & ~mm, c)
        free = every & ~mm & ~om
        mk = colex_unrank(first_kings, free, b)
        ok = colex_unrank(second_kings, free & ~mk, d)
        return np.stack([mm, mk, om, ok], axis=1)


def slice_of(boards: np.ndarray) -> np.ndarray:
    """[B, 4] int64 piece counts of [B, 4] bitboards."""
    return popcount(np.asarray(boards, dtype=np.uint32))
