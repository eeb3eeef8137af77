#!/usr/bin/env python
"""Benchmark the rules engine: american8 against OpenSpiel on one core, batched random playouts on
all host devices, and perft.

    python scripts/bench_rules.py            # the full run (a few minutes on 2 cores)
    python scripts/bench_rules.py --quick    # a smoke run (about a minute)
    python scripts/bench_rules.py --per-core # only the like-for-like comparison with OpenSpiel

Like for like (printed first): ``american8`` (8x8 English draughts) against OpenSpiel's ``checkers``
(the same game) through OpenSpiel's Python API, both on one core: a child process pinned to one CPU,
with one host device and XLA's intra-op threading off (``cpu/wall`` shows about 1.00). OpenSpiel's
Python API plays one game at a time (batch 1 by nature), so the ratio is given at batch 1 and at our
best batch size.

Plies per second count every action played (each jump of a multi-jump is one ply), summed over the
games of a batch, divided by wall time. Each figure is the median over ``--repeats`` (>= 5 in a full
run) timed repeats after a warm-up call; a repeat plays fresh batches (new keys) for at least
``--min-time`` seconds. The compile time is the first call's time less a median call's; the report
says whether the persistent compile cache was warm. ``cpu/wall`` is the process's CPU time over wall
time while timing: about 1 per core in use on an idle machine, less when other processes take the
cores. This machine's speed varies by 20-35% between identical runs, so compare figures from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import cache_state, pin_to_one_core  # scripts/benchlib.py (the script's folder is on sys.path)

REPO_ROOT = Path(__file__).resolve().parents[1]
PERFT_TABLE = REPO_ROOT / "tests" / "data" / "perft.json"  # the published counts, vendored
PRESETS = ("simple6", "american6", "american8")
TARGET_SIMPLE6_PLIES = 5_000_000
OPENSPIEL = "OpenSpiel, Python API"


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="a fast smoke run (small sizes, short timings)")
    p.add_argument("--presets", type=_names, default=None, help=f"comma list (default {','.join(PRESETS)})")
    p.add_argument(
        "--batch-sizes",
        type=_ints,
        default=None,
        help="comma list (default 1,8,64,512,2048,8192; quick 8,512)",
    )
    p.add_argument(
        "--devices", type=int, default=None, help="host devices to create (default: os.cpu_count())"
    )
    p.add_argument("--repeats", type=int, default=None, help="timed repeats per figure (default 5; quick 2)")
    p.add_argument(
        "--min-time", type=float, default=None, help="seconds per repeat (default 0.25; quick 0.03)"
    )
    p.add_argument(
        "--openspiel-seconds",
        type=float,
        default=None,
        help="seconds per OpenSpiel repeat (default 2; quick 0.3)",
    )
    p.add_argument(
        "--perft-depth-8x8", type=int, default=None, help="american8 perft depth (default 10; quick 6)"
    )
    p.add_argument(
        "--perft-depth-6x6", type=int, default=None, help="6x6 presets' perft depth (default 11; quick 7)"
    )
    p.add_argument("--no-playouts", action="store_true", help="skip the JAX playouts")
    p.add_argument("--no-openspiel", action="store_true", help="skip OpenSpiel")
    p.add_argument("--no-perft", action="store_true", help="skip perft")
    p.add_argument(
        "--per-core",
        action="store_true",
        help="only the like-for-like comparison, in this process, pinned to one core",
    )
    p.add_argument("--no-per-core", action="store_true", help="skip the like-for-like comparison")
    p.add_argument(
        "--compile-cache", default=None, help="JAX persistent compilation cache directory (off by default)"
    )
    p.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = p.parse_args(argv)
    quick = args.quick
    defaults = {
        "presets": list(PRESETS),
        "batch_sizes": [8, 512] if quick else [1, 8, 64, 512, 2048, 8192],
        "repeats": 2 if quick else 5,
        "min_time": 0.03 if quick else 0.25,
        "openspiel_seconds": 0.3 if quick else 2.0,
        "perft_depth_8x8": 6 if quick else 10,
        "perft_depth_6x6": 7 if quick else 11,
    }
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.repeats < (2 if quick else 5):
        p.error(f"--repeats must be >= {2 if quick else 5} (medians of at least 5 in a full run)")
    return args


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def _fmt_rate(x: float) -> str:
    return f"{x:,.0f}" if x == x else "-"


def bench_playouts(rules, batch: int, devices: int, repeats: int, min_time: float) -> dict:
    """Median plies/s of ``random_playouts`` at this batch size on ``devices`` devices."""
    import jax
    import numpy as np

    from neurocheckers.rules.playout import random_playouts

    t0 = time.perf_counter()
    np.asarray(random_playouts(rules, jax.random.key(0), batch, devices=devices).length)
    first = time.perf_counter() - t0
    rates, call_times, lengths = [], [], []
    seed = 1
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _ in range(repeats):
        plies = calls = 0
        t0 = time.perf_counter()
        while True:
            stats = random_playouts(rules, jax.random.key(seed), batch, devices=devices)
            length = np.asarray(stats.length)  # waits for the result
            seed += 1
            plies += int(length.sum())
            calls += 1
            lengths.append(float(length.mean()))
            elapsed = time.perf_counter() - t0
            if elapsed >= min_time:
                break
        rates.append(plies / elapsed)
        call_times.append(elapsed / calls)
    cpu_per_wall = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    call = _median(call_times)
    return {
        "preset": rules.name,
        "batch": batch,
        "repeats": repeats,
        "devices": devices,
        "compile_s": max(first - call, 0.0),
        "call_s": call,
        "plies_per_s": _median(rates),
        "plies_per_s_min": min(rates),
        "plies_per_s_max": max(rates),
        "games_per_s": batch / call,
        "mean_length": float(np.mean(lengths)),
        "cpu_per_wall": cpu_per_wall,
    }


def bench_openspiel(seconds: float, repeats: int, seed: int = 0) -> dict | None:
    """Median plies/s of uniform-random ``checkers`` games through OpenSpiel's Python API."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("checkers")
    rng = random.Random(seed)
    rates, lengths = [], []
    for _ in range(repeats):
        plies = games = 0
        t0 = time.perf_counter()
        while True:
            state = game.new_initial_state()
            while not state.is_terminal():
                state.apply_action(rng.choice(state.legal_actions()))
                plies += 1
            games += 1
            elapsed = time.perf_counter() - t0
            if elapsed >= seconds:
                break
        rates.append(plies / elapsed)
        lengths.append(plies / games)
    return {
        "plies_per_s": _median(rates),
        "plies_per_s_min": min(rates),
        "plies_per_s_max": max(rates),
        "repeats": repeats,
        "mean_length": float(statistics.mean(lengths)),
        "version": getattr(pyspiel, "__version__", "?"),
    }


def bench_perft(rules, depth: int, table: dict | None) -> dict:
    """Perft counts and cumulative seconds per depth (compile measured separately by a warm-up)."""
    from neurocheckers.rules import init
    from neurocheckers.rules.perft import perft, perft_iter

    state = init(rules)
    t0 = time.perf_counter()
    perft(rules, state, 1)  # compiles the batched step
    compile_s = time.perf_counter() - t0
    expected = (table or {}).get(rules.name, {}).get("perft", [])
    rows = []
    t0 = time.perf_counter()
    for d, count in perft_iter(rules, state, depth):
        want = expected[d - 1] if d <= len(expected) else None
        rows.append({"depth": d, "count": count, "seconds": time.perf_counter() - t0, "expected": want})
    return {"preset": rules.name, "compile_s": compile_s, "depths": rows}


def _machine() -> dict:
    import jax

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "jax": jax.__version__,
        "devices": [str(d) for d in jax.devices()],
        "loadavg": [round(x, 2) for x in load],
    }


PLAYOUT_HEADER = (
    f"{'preset':<10} {'batch':>6} {'dev':>3} {'compile s':>9} {'plies/s (median)':>17} "
    f"{'min .. max':>25} {'games/s':>11} {'mean len':>8} {'cpu/wall':>8}"
)


def _print_playout_row(row: dict) -> None:
    spread = f"{_fmt_rate(row['plies_per_s_min'])} .. {_fmt_rate(row['plies_per_s_max'])}"
    print(
        f"{row['preset']:<10} {row['batch']:>6} {row['devices']:>3} {row['compile_s']:>9.2f} "
        f"{_fmt_rate(row['plies_per_s']):>17} {spread:>25} {row['games_per_s']:>11,.0f} "
        f"{row['mean_length']:>8.1f} {row['cpu_per_wall']:>8.2f}",
        flush=True,
    )


def like_for_like(args: argparse.Namespace, pinning: str) -> dict:
    """american8 against OpenSpiel's checkers on this (pinned) core: batch 1 and every batch size."""
    from neurocheckers.rules import get_rules

    rules = get_rules("american8")
    print(f"Like for like, per core: american8 against {OPENSPIEL} (checkers, the same game)")
    print(f"  one process, {pinning}")
    print(f"  medians of {args.repeats} repeats; compile cache {cache_state(args.compile_cache)}")
    print(PLAYOUT_HEADER)
    print("-" * len(PLAYOUT_HEADER))
    rows = []
    for batch in sorted({1, *args.batch_sizes}):
        rows.append(bench_playouts(rules, batch, 1, args.repeats, args.min_time))
        _print_playout_row(rows[-1])
    found: dict = {"pinning": pinning, "playouts": rows, "openspiel": None}
    os_row = None if args.no_openspiel else bench_openspiel(args.openspiel_seconds, args.repeats)
    if os_row is None:
        print(f"{OPENSPIEL}: {'skipped' if args.no_openspiel else 'pyspiel is not installed; skipped'}\n")
        return found
    found["openspiel"] = os_row
    print(
        f"{OPENSPIEL} (pyspiel {os_row['version']}), checkers (8x8), one game at a time (batch 1 by nature): "
        f"{_fmt_rate(os_row['plies_per_s'])} plies/s median of {os_row['repeats']} "
        f"({_fmt_rate(os_row['plies_per_s_min'])} .. {_fmt_rate(os_row['plies_per_s_max'])}), "
        f"mean length {os_row['mean_length']:.1f}"
    )
    single = next(r for r in rows if r["batch"] == 1)
    best = max(rows, key=lambda r: r["plies_per_s"])
    found["ratio_batch_1"] = single["plies_per_s"] / os_row["plies_per_s"]
    found["ratio_best_batch"] = best["plies_per_s"] / os_row["plies_per_s"]
    found["best_batch"] = best["batch"]
    print(
        f"  american8 / {OPENSPIEL}, one core: {found['ratio_batch_1']:,.1f}x at batch 1 (equal batch), "
        f"{found['ratio_best_batch']:,.1f}x at our best batch ({best['batch']})\n"
    )
    return found


def like_for_like_in_child(args: argparse.Namespace) -> dict | None:
    """Run :func:`like_for_like` in a child process pinned to one core; its output goes to ours."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "per_core.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--per-core", "--json", str(out)]
        command += ["--batch-sizes", ",".join(map(str, args.batch_sizes)), "--repeats", str(args.repeats)]
        command += ["--min-time", str(args.min_time), "--openspiel-seconds", str(args.openspiel_seconds)]
        command += ["--compile-cache", args.compile_cache] if args.compile_cache else []
        command += ["--no-openspiel"] if args.no_openspiel else []
        command += ["--quick"] if args.quick else []
        sys.stdout.flush()
        done = subprocess.run(command, check=False)
        if done.returncode != 0 or not out.exists():
            print(f"the per-core child failed (exit {done.returncode})\n")
            return None
        return json.loads(out.read_text()).get("per_core")


def all_devices_table(args: argparse.Namespace, num_devices: int) -> list[dict]:
    """Every preset and batch size on one device and on all host devices (XLA's own threading on)."""
    from neurocheckers.rules import get_rules
    from neurocheckers.rules.playout import playout_devices

    print(f"Batched random playouts on all cores ({num_devices} host device(s); no OpenSpiel ratio here:")
    print("  OpenSpiel is single-threaded, so it is compared per core above)")
    print(PLAYOUT_HEADER)
    print("-" * len(PLAYOUT_HEADER))
    rows = []
    for name in args.presets:
        rules = get_rules(name)
        for batch in args.batch_sizes:
            for devices in [1] + ([num_devices] if num_devices > 1 else []):
                if devices > 1 and playout_devices(batch, devices) != devices:
                    continue  # the batch does not split evenly: the 1-device row stands
                rows.append(bench_playouts(rules, batch, devices, args.repeats, args.min_time))
                _print_playout_row(rows[-1])
    print()
    best: dict[str, dict] = {}
    for row in rows:
        if row["preset"] not in best or row["plies_per_s"] > best[row["preset"]]["plies_per_s"]:
            best[row["preset"]] = row
    print("Best batch size per preset, all cores (medians)")
    for name, row in best.items():
        print(
            f"  {name:<10} {_fmt_rate(row['plies_per_s']):>14} plies/s "
            f"(batch {row['batch']}, {row['devices']} device(s))"
        )
    if "simple6" in best:
        verdict = "met" if best["simple6"]["plies_per_s"] >= TARGET_SIMPLE6_PLIES else "NOT met"
        print(f"  target >= {TARGET_SIMPLE6_PLIES:,} plies/s for simple6: {verdict}")
    print()
    return rows


def perft_section(args: argparse.Namespace) -> list[dict]:
    from neurocheckers.rules import get_rules

    table = json.loads(PERFT_TABLE.read_text()) if PERFT_TABLE.exists() else None
    print("Perft (neurocheckers.rules.perft.perft; cumulative seconds; compile timed separately)")
    rows = []
    for name in args.presets:
        rules = get_rules(name)
        depth = args.perft_depth_8x8 if rules.board_size == 8 else args.perft_depth_6x6
        row = bench_perft(rules, depth, table)
        rows.append(row)
        print(f"  {name} (compile {row['compile_s']:.2f} s)")
        for d in row["depths"]:
            check = "" if d["expected"] is None else ("  ok" if d["expected"] == d["count"] else "  MISMATCH")
            print(f"    depth {d['depth']:>2} {d['count']:>13,} {d['seconds']:>8.2f} s{check}", flush=True)
    print()
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    pinning = pin_to_one_core() if args.per_core else ""
    try:
        import neurocheckers  # noqa: F401
    except ImportError:  # running from a checkout without an install
        sys.path.insert(0, str(REPO_ROOT))
    from neurocheckers.devices import use_host_devices

    num_devices = use_host_devices(1 if args.per_core else args.devices)  # before JAX starts
    import jax

    if args.compile_cache:
        jax.config.update("jax_compilation_cache_dir", args.compile_cache)
    machine = _machine()
    results: dict = {"machine": machine, "args": vars(args)}
    if args.per_core:
        results["per_core"] = like_for_like(args, pinning)
    else:
        print(
            f"machine: {machine['cpu_count']} CPU cores ({machine['processor']}), python "
            f"{machine['python']}, jax {machine['jax']}, load average {machine['loadavg']}"
        )
        print(f"figures: medians of {args.repeats} repeats (>= {args.min_time} s each) after a warm-up call")
        print(f"compile cache: {cache_state(args.compile_cache)}\n")
        if not args.no_per_core:
            results["per_core"] = like_for_like_in_child(args)
        if not args.no_playouts:
            results["playouts"] = all_devices_table(args, num_devices)
        if not args.no_perft:
            results["perft"] = perft_section(args)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
        if not args.per_core:
            print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
