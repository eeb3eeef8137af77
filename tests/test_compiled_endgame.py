"""The endgame database inside the compiled search (``compiled.endgame``): the numba index and
probe against ``EndgameDB``, exact values in the search, and the ``compiled:BUDGET:FILE:DB`` spec."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neurocheckers.compiled import endgame as ce
from neurocheckers.compiled.board import Position, game_rule
from neurocheckers.compiled.driver import CompiledSearch
from neurocheckers.endgame.database import DRAW, LOSS, WIN, EndgameDB
from neurocheckers.endgame.flat import FlatDB
from neurocheckers.endgame.index import SliceIndex, board_masks, men_offsets, reverse_bits, solve_order
from neurocheckers.players.compiled import parse_compiled
from neurocheckers.rules.presets import AMERICAN6, AMERICAN8


def _relative(view, color: int, num_squares: int) -> tuple[np.int64, ...]:
    """The search's relative bitboards of a database (mover-view) position with ``color`` to move."""
    boards = [int(x) for x in view]
    if color == 1:
        boards = [int(reverse_bits(np.uint32(x), num_squares)) for x in boards]
    return tuple(np.int64(x) for x in boards)


def _position(view, color: int, num_squares: int) -> Position:
    own_men, own_kings, opp_men, opp_kings = (int(x) for x in _relative(view, color, num_squares))
    if color == 0:
        return Position(own_men, own_kings, opp_men, opp_kings, 0)
    return Position(opp_men, opp_kings, own_men, own_kings, 1)


@pytest.fixture(scope="module")
def small(small_db):
    return EndgameDB(small_db, AMERICAN6), ce.load(small_db, AMERICAN6)


def test_probe_gives_every_stored_value_and_distance_for_both_colours(small):
    db, packed = small
    checked = 0
    for s in db.slices:
        values, distances = db.load(s)
        views = SliceIndex(AMERICAN6, s).unrank(np.arange(len(values)))
        for i in range(0, len(values), 7):
            for color in (0, 1):
                entry = ce.probe(packed.array, *_relative(views[i], color, 18), np.int64(color))
                assert (entry & 3, entry >> 2) == (values[i], distances[i]), (s, i, color)
                checked += 1
    assert checked > 5000 and packed.max_pieces == 3


def test_the_index_port_ranks_american8_slices_as_slice_index_does():
    """A fake four-piece database whose entries hold their own index: the numba index must find it."""
    slices = [s for s in solve_order(4) if s.pieces == 4][::3]
    p = 4
    starts = np.full((p + 1,) * 4, -1, np.int32)
    sizes = [SliceIndex(AMERICAN8, s).size for s in slices]
    for s, at in zip(slices, np.cumsum([0, *sizes[:-1]]), strict=True):
        starts[s.counts] = at
    offsets, men_start, at = [], np.zeros((p + 1, p + 1), np.int32), 0
    for men in range(p + 1):
        for opp_men in range(p + 1 - men):
            men_start[men, opp_men] = at
            offsets.append(men_offsets(AMERICAN8, men, opp_men).astype(np.int32))
            at += len(offsets[-1])
    total = sum(sizes)
    binom = np.array([[math.comb(n, k) for k in range(p + 1)] for n in range(33)], np.int32)
    flat = FlatDB(np.zeros(total, np.int8), np.arange(total, dtype=np.int32), starts, np.concatenate(offsets),
                  men_start, binom, 32, p, board_masks(AMERICAN8))  # fmt: skip
    array = ce.pack(flat)
    rng = np.random.default_rng(0)
    for s, at in zip(slices, np.cumsum([0, *sizes[:-1]]), strict=True):
        index = SliceIndex(AMERICAN8, s)
        ranks = rng.choice(index.size, size=min(index.size, 60), replace=False)
        for rank, view in zip(ranks, index.unrank(ranks), strict=True):
            for color in (0, 1):
                entry = ce.probe(array, *_relative(view, color, 32), np.int64(color))
                assert entry >> 2 == at + rank, (s.name, rank, color)
    outside = _relative(np.array([1, 0, 1 << 31, 0], np.uint32), 0, 32)  # a 1-1 slice not held
    assert ce.probe(array, *outside, np.int64(0)) == -1


def test_the_search_scores_database_positions_exactly(small):
    """At depth 1 every child is in the database: a win in d moves is worth 1,000 men less d."""
    db, packed = small
    search = CompiledSearch(game_rule(AMERICAN6), endgame=packed)
    rng = np.random.default_rng(1)
    seen = {LOSS: 0, DRAW: 0, WIN: 0}
    for s in [s for s in db.slices if s.pieces == 3]:
        values, distances = db.load(s)
        views = SliceIndex(AMERICAN6, s).unrank(rng.choice(len(values), size=40, replace=False))
        for view in views:
            color = int(rng.integers(2))
            position = _position(view, color, 18)
            legal = search.legal_moves(position)
            if len(legal) < 2 or any(bin(int(c)).count("1") > 1 for c in legal[:, 2]):
                continue  # an only move is not searched; a multi-jump counts more than one move
            entry = int(ce.probe(packed.array, *_relative(view, color, 18), np.int64(color)))
            value, distance = entry & 3, entry >> 2
            search.new_game()
            score = search.search(position, depth=1).score
            expected = {WIN: 1000 - distance, LOSS: -(1000 - distance), DRAW: 0}[value]
            assert score == pytest.approx(expected), (s.name, view, color)
            seen[value] += 1
    assert seen[WIN] > 20 and seen[LOSS] > 20 and seen[DRAW] >= 3, seen


def test_the_player_takes_a_database(small_db):
    player = parse_compiled(f"compiled:300n:material:{small_db}", AMERICAN6)
    assert player.endgame is not None and player.endgame.max_pieces == 3
    with pytest.raises(ValueError, match="holds no endgame database") as info:
        parse_compiled(f"compiled:300n:material:{small_db}/nowhere", AMERICAN6)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="american6, not american8"):
        parse_compiled(f"compiled:300n:material:{small_db}", AMERICAN8)
