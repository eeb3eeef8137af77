"""The sequential test that stops a match once it is decided (issue 56 item 4): fishtest's SPRT
over game pairs, its log-likelihood ratio checked against fishtest's own code, and ``match --sprt``
stopping early either way."""

from __future__ import annotations

import json
import math

import jax
import numpy as np
import pytest

from neurocheckers.cli import main
from neurocheckers.match.host import parse_any_player
from neurocheckers.match.options import MatchOptions
from neurocheckers.match.sequential import play_until_decided, round_options
from neurocheckers.rules import SIMPLE6
from neurocheckers.rules.openings import load_openings, opening_states
from neurocheckers.stats import SPRT, llr, pentanomial

FISHTEST_LLR = [
    ([10, 40, 300, 45, 5], 0, 10, -2.617834),
    ([10, 40, 300, 45, 5], -5, 5, -0.800918),
    ([0, 3, 50, 10, 2], 0, 20, 3.004639),
    ([0, 3, 50, 10, 2], 0, 5, 0.927544),
    ([5, 20, 100, 20, 5], -5, 5, 0.0),
    ([1, 0, 10, 0, 0], 0, 5, -0.159207),
]
"""Pentanomial counts, elo0, elo1 and ``LLR_logistic(elo0, elo1, counts)`` as computed by fishtest's
``server/fishtest/stats/LLRcalc.py`` (official-stockfish/fishtest at 0753fcc, with SciPy's brentq),
run outside this project; empty counts are regularized to 1e-3 there as here."""


@pytest.mark.parametrize(("counts", "elo0", "elo1", "expected"), FISHTEST_LLR)
def test_the_llr_is_fishtests(counts, elo0, elo1, expected):
    assert llr(np.array(counts), elo0, elo1) == pytest.approx(expected, abs=2e-6)


def test_pairs_are_counted_by_their_points():
    scores = np.array([0, 0, 0, 0.5, 1, 0, 0.5, 0.5, 1, 0.5, 1, 1, 0.5, 1])
    assert pentanomial(scores).tolist() == [1, 1, 2, 2, 1]
    with pytest.raises(ValueError, match="paired games come in twos, got 3 games"):
        pentanomial(np.array([1, 0, 1]))


def test_the_bounds_and_verdicts_are_fishtests():
    test = SPRT(0, 10)
    lower, upper = test.bounds
    assert lower == pytest.approx(-math.log(19)) and upper == pytest.approx(math.log(19))  # +-2.94
    assert test.decide(np.array([0, 3, 50, 10, 2]))[1] is None
    assert SPRT(0, 20).decide(np.array([0, 3, 50, 10, 2]))[1] == "H1"
    assert test.decide(np.array([10, 40, 300, 45, 5]))[1] is None
    assert SPRT(0, 20).decide(np.array([10, 40, 300, 45, 5]))[1] == "H0"
    for bad, message in (((10, 0), "elo0 must be below elo1"), ((0, 10, 0.5), "alpha must be in")):
        with pytest.raises(ValueError, match=message):
            SPRT(*bad)


def test_each_round_takes_the_next_openings():
    openings = opening_states(SIMPLE6, load_openings(SIMPLE6, 4))
    options = MatchOptions(games=100, seed=3, openings=openings)
    first, second = (round_options(options, r, 3) for r in (0, 1))
    assert first.games == second.games == 6 and first.seed != second.seed
    boards = np.asarray(jax.tree.leaves(openings)[0])
    assert np.array_equal(np.asarray(jax.tree.leaves(first.openings)[0]), boards[[0, 1, 2]])
    assert np.array_equal(np.asarray(jax.tree.leaves(second.openings)[0]), boards[[3, 0, 1]])


def test_a_match_stops_once_decided_either_way():
    strong, weak = (parse_any_player(s, SIMPLE6) for s in ("greedy-material", "random"))
    options = MatchOptions(games=400, batch=20, seed=1)
    won = play_until_decided(SIMPLE6, strong, weak, options, SPRT(0, 200))
    assert won.verdict == "H1" and len(won.records.score) == 20 * won.rounds < 400
    assert won.counts.sum() * 2 == len(won.records.score) and won.llr >= SPRT(0, 200).bounds[1]
    even = play_until_decided(SIMPLE6, weak, weak, options, SPRT(0, 200))
    assert even.verdict == "H0" and len(even.records.score) < 400
    again = play_until_decided(SIMPLE6, weak, weak, options, SPRT(0, 200))
    assert again.counts.tolist() == even.counts.tolist()  # the same options play the same rounds
    cut = play_until_decided(SIMPLE6, weak, weak, MatchOptions(games=6, batch=4), SPRT(0, 5))
    assert cut.verdict is None and len(cut.records.score) == 6 and cut.rounds == 2


def test_match_sprt_reports_the_test(capsys):
    args = ["match", "greedy-material", "random", "--games", "400", "--batch", "20", "--sprt", "0,200"]
    assert main([*args, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["sprt"]["verdict"] == "H1" and summary["games"] < 400
    assert sum(summary["sprt"]["pentanomial"]) * 2 == summary["games"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "SPRT [0, 200] Elo: LLR +" in out and "H1 accepted: A is 200 Elo stronger" in out
    assert main(["match", "random", "random", "--sprt", "5"]) == 2
    assert "--sprt must be ELO0,ELO1 with ELO0 < ELO1, got '5'" in capsys.readouterr().err
