"""Engine games as fitness (issue 56 item 1): game pairs between two compiled-search players, each
with its own network and search parameters, at a node budget, counted as pentanomial pairs; the same
pairs give the same games however they are split into shares, in this process or a process pool."""

from __future__ import annotations

import numpy as np
import pytest

from neurocheckers.match.engine_pairs import EngineSide, PairResult, play_pairs
from neurocheckers.match.shares import in_process, process_pool

AGENT = "results/best_american8.safetensors"
FAST = {"pairs": 3, "nodes": 300, "max_plies": 120}


@pytest.fixture(scope="module")
def whole():
    """Three pairs of the committed agent against itself with reductions from the second move on."""
    return play_pairs("american8", EngineSide(AGENT), EngineSide(AGENT, {"lmr_min_move": 1}), **FAST)


def test_pairs_are_counted_and_split_alike(whole):
    assert whole.counts.sum() == 3 and whole.games == 6 and whole.plies > 0 and whole.results.sum() == 6
    assert whole.results[2] - whole.results[0] == np.dot(whole.counts, np.arange(5)) - 6  # W - L
    assert whole.score == pytest.approx(np.dot(whole.counts, np.arange(5)) / 12)
    a, b = EngineSide(AGENT), EngineSide(AGENT, {"lmr_min_move": 1})
    split = play_pairs("american8", a, b, shares=2, map_shares=in_process, **FAST)
    assert split.counts.tolist() == whole.counts.tolist() and split.plies == whole.plies
    assert split.results.tolist() == whole.results.tolist()
    later = play_pairs("american8", a, b, **{**FAST, "pairs": 2}, first_opening=1)
    first = play_pairs("american8", a, b, **{**FAST, "pairs": 1})
    assert (first + later).counts.tolist() == whole.counts.tolist()  # pair i is opening i, wherever


def test_a_process_pool_plays_the_same_pairs(whole):
    pool = process_pool(2)
    a, b = EngineSide(AGENT), EngineSide(AGENT, {"lmr_min_move": 1})
    pooled = play_pairs("american8", a, b, shares=2, map_shares=pool, **FAST)
    assert pooled.counts.tolist() == whole.counts.tolist() and pooled.plies == whole.plies


def test_a_bad_side_is_one_line_before_any_game():
    with pytest.raises(ValueError, match=r"^lmr_min_move must be in 1..12, got 40$"):
        play_pairs("american8", EngineSide(AGENT), EngineSide(AGENT, {"lmr_min_move": 40}), **FAST)
    with pytest.raises(ValueError, match="no_such.safetensors"):
        play_pairs("american8", EngineSide("no_such.safetensors"), EngineSide(), **FAST)
    with pytest.raises(ValueError, match="pairs and shares must be >= 1, got 0 and 1"):
        play_pairs("american8", EngineSide(), EngineSide(), **{**FAST, "pairs": 0})
    assert PairResult(np.array([0, 0, 1, 0, 0]), np.array([1, 0, 1]), 10, 1.0).score == 0.5


def test_the_engine_loop_plays_the_host_loops_games(whole):
    """The pairs run in the compiled engine alone (its game record, the preset's end rules and
    threefold repetition); the host loop (``match.host``, our JAX rules) plays the same games: the same
    counts, results and plies."""
    from neurocheckers.match.host import play_any_match
    from neurocheckers.match.options import MatchOptions
    from neurocheckers.rules.openings import load_openings, opening_states
    from neurocheckers.rules.presets import AMERICAN8
    from neurocheckers.stats import pentanomial

    a, b = EngineSide(AGENT), EngineSide(AGENT, {"lmr_min_move": 1})
    openings = opening_states(AMERICAN8, load_openings(AMERICAN8, 3))
    options = MatchOptions(games=6, batch=6, max_plies=120, openings=openings)
    records = play_any_match(AMERICAN8, a.player("american8", 300), b.player("american8", 300), options)
    scores = np.asarray(records.score)
    assert pentanomial(scores).tolist() == whole.counts.tolist()
    assert np.bincount(np.rint(scores * 2).astype(int), minlength=3).tolist() == whole.results.tolist()
    assert int(np.sum(records.length)) == whole.plies


def test_the_committed_openings_are_read_once_and_handed_out_as_copies():
    """Each engine-game share asks for the openings: they are read and checked once a process, and a
    caller that changes its list does not change the next caller's."""
    from neurocheckers.rules.openings import committed_openings, load_openings
    from neurocheckers.rules.presets import AMERICAN8

    openings = load_openings(AMERICAN8)
    hits = committed_openings.cache_info().hits
    openings.clear()
    assert len(load_openings(AMERICAN8)) == 500 and committed_openings.cache_info().hits == hits + 1
    assert load_openings(AMERICAN8, 2, first=3) == list(committed_openings(AMERICAN8)[3:5])
