"""scripts/bench_compiled_search.py (quoted in docs/compiled.md) runs at tiny sizes and prints the
figures it exists for; no timing is asserted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def bench(*args: str) -> str:
    env = {**os.environ, "NEUROCHECKERS_DEVICES": "1", "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench_compiled_search.py"), *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


def test_speed_run_prints_nodes_per_second_depth_and_cache_state():
    out = bench("--positions", "2", "--seconds", "0.01", "--variants", "--fixed-depth", "3")
    assert "numba cache:" in out and "M nodes/s" in out and "nodes to depth 3" in out
    assert out.count("depth median") == 4


def test_agent_leaves_are_timed_after_material():
    agent = str(REPO / "results" / "american8" / "td_leaf_w64_seed0" / "final.safetensors")  # a 5 x 64 MLP
    out = bench("--positions", "2", "--seconds", "0.01", "--agent", agent, "--nodes", "2000")
    assert out.count("depth median") == 4 and "final.safetensors (mlp)" in out
    assert "M a CPU second" in out and out.count("depth median with 2,000 nodes") == 2


def test_a_bad_agent_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_text("not an agent")
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench_compiled_search.py"), "--agent", str(bad)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and "bad.safetensors" in done.stderr and "Traceback" not in done.stderr


def test_perft_check_and_match_options():
    out = bench("--perft", "3", "--check-moves", "20", "--match", "1", "--seconds", "0.005", "--games", "1")
    assert "american8 depth 3: 302 ok" in out
    assert "1 self-play games, 0.005 s a move" in out and "material" in out and "s a move; results" in out
    assert "american8: 20 positions" in out and "mismatches so far 0" in out
    assert "LMR (the default) against none" in out and "over 2 games" in out


def test_bad_sizes_exit_2_in_one_line():
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bench_compiled_search.py"), "--positions", "0"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "--positions 0" in done.stderr and "Traceback" not in done.stderr
