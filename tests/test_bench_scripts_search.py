"""Benchmark scripts of scripts/ at tiny sizes: rules, searches, the Python engines and the web pages.
Each prints or writes the figure it exists for; no timing is asserted. The other quoted scripts are in
tests/test_scripts.py; the benchmarks are split over two files so that the suite's two workers (whole
files each) share them."""

from __future__ import annotations

import json

import pytest
from running_scripts import script


@pytest.mark.slow
def test_bench_rules_quick_prints_playouts_and_perft(tmp_path):
    figures = tmp_path / "rules.json"
    out = script(
        "bench_rules.py", "--quick", "--presets", "simple6", "--batch-sizes", "8", "--repeats", "2",
        "--min-time", "0.01", "--no-per-core", "--json", str(figures),
    )  # fmt: skip
    assert "perft" in out and json.loads(figures.read_text())


@pytest.mark.slow
def test_bench_search_prints_simulations_per_second():
    out = script(
        "bench_search.py", "--batch", "8", "--sims", "2", "--layers", "1", "--widths", "4", "--repeats", "1",
        "--devices", "1",
    )  # fmt: skip
    assert "sims" in out


@pytest.mark.slow
def test_bench_search_alphabeta_compares_with_the_python_engines():
    out = script(
        "bench_search.py", "--alphabeta", "--positions", "1", "--midgame", "0", "--seconds", "0.05",
        "--repeats", "1", "--mcts-sims", "10", "--openspiel-depth", "1", "--pydraughts-depth-cap", "1",
    )  # fmt: skip
    assert "py-draughts" in out or "pydraughts" in out


@pytest.mark.slow
def test_handcrafted_ceiling_prints_a_row_per_depth():
    out = script("handcrafted_ceiling.py", "--openings", "1", "--depths", "1")
    assert (
        "hand-written evaluator vs material at equal depth, 2 games a row" in out
        and "score (95% interval)" in out
    )


@pytest.mark.slow
def test_play_openspiel_writes_the_match_and_its_games(tmp_path):
    script("play_openspiel.py", "random", "openspiel:mcts:2", "--openings", "1", "--out", str(tmp_path))
    summary = json.loads((tmp_path / "match.json").read_text())
    assert 0 <= summary["score"] <= 1 and "[Event" in (tmp_path / "games.pdn").read_text()


@pytest.mark.slow
@pytest.mark.browser
def test_web_screenshots_writes_the_pages(tmp_path):
    script("web_screenshots.py", "--out", str(tmp_path))
    assert {p.name for p in tmp_path.glob("*.png")} >= {"web_play.png", "web_games.png", "web_runs.png"}
