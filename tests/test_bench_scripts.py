"""Benchmark scripts of scripts/ at tiny sizes: training, evolution, gauntlets, endgames and baselines.
Each prints or writes the figure it exists for; no timing is asserted. The other quoted scripts are in
tests/test_scripts.py; the benchmarks are split over two files so that the suite's two workers (whole
files each) share them."""

from __future__ import annotations

import pytest
from running_scripts import script


@pytest.mark.slow
def test_bench_endgame_prints_steps_successors_and_a_build():
    out = script(
        "bench_endgame.py", "--rules", "american6", "--pieces", "2", "--repeats", "1", "--largest", "8"
    )
    assert "steps/s" in out and "successors:" in out and "build up to 2 pieces" in out


@pytest.mark.slow
def test_bench_learners_prints_self_play_updates_and_epochs():
    out = script(
        "bench_learners.py", "--games", "8", "--repeats", "1", "--layers", "1", "--width", "8",
        "--batch-size", "16", "--updates", "2", "--max-plies", "20", "--devices", "1", "--members", "2",
    )  # fmt: skip
    assert "self-play:" in out and "Adam steps/s" in out and "TD(lambda) epoch" in out and "playouts" in out
    assert "2 networks x 4 games, a plain vmap" in out and "2 networks x 4 games, in lockstep" in out
    assert "2 networks x 4 games, packed in one batch" in out


@pytest.mark.slow
def test_bench_evolve_quick_prints_seconds_per_epoch():
    out = script("bench_evolve.py", "--quick", "--no-scaling", "--repeats", "5", "--leaf-floor")
    assert "epoch" in out and "peak" in out.lower() and "leaf networks alone:" in out


@pytest.mark.slow
def test_bench_gauntlet_times_a_gauntlet():
    out = script("bench_gauntlet.py", "--repeats", "2", "--openings", "1", "--depth", "1", "--devices", "1")
    assert "repeat 2:" in out and "median of the 1 later repeats" in out


@pytest.mark.slow
def test_bench_baselines_prints_throughput_and_results():
    out = script(
        "bench_baselines.py", "--scale", "1000", "--greedy-chunk", "50", "--ab-chunk", "10",
        "--presets", "american6",
    )  # fmt: skip
    assert "greedy(material) vs random" in out and "alphabeta:3 vs random" in out


@pytest.mark.slow
def test_bench_seeds_prints_the_epochs_per_second_of_seeds_vmapped():
    out = script("bench_seeds.py", "--quick", "--modes", "vmapped", "--ks", "2", "--repeats", "1")
    assert "epochs/s" in out and "vmapped       2" in out


@pytest.mark.slow
def test_bench_pbt_tournament_times_both_searches_and_compares_their_points():
    out = script(
        "bench_pbt_tournament.py", "experiments/american8/pbt.toml", "--repeats", "1",
        "--set", "rules=simple6", "--set", "members=3", "--set", "tournament_openings=1",
        "--set", "max_plies=12", "--set", "layers=1", "--set", "width=8", "--set", "depth=2",
    )  # fmt: skip
    assert "in one batch (packed): first call" in out and "each game vmapped: first call" in out
    assert "the same points: yes" in out


@pytest.mark.slow
def test_bench_against_times_a_revision_beside_the_working_tree():
    out = script(
        "bench_against.py", "HEAD", "--rounds", "1", "--figure", r"^\s*16\s+4\s+4\s+([\d.]+)",
        "--", "scripts/bench_evolve.py", "--quick", "--no-scaling", "--repeats", "5",
    )  # fmt: skip
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("WORK", "round"))]
    assert any(row[0] == "WORK" and float(row[1]) > 0 and row[-1] != "nan" for row in rows), out
    assert sum(row[0] == "round" for row in rows) == 2  # HEAD's run and the working tree's


@pytest.mark.slow
def test_bench_engine_games_prints_games_per_second():
    out = script(
        "bench_engine_games.py", "--nodes", "200", "--pairs", "1", "--repeats", "1", "--modes", "one-core"
    )
    assert "one-core" in out and "200 nodes/move:" in out and "games/s" in out
