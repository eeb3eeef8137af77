#!/usr/bin/env python
"""Benchmark the rules engine: batched random playouts (1 device and all host devices), OpenSpiel's
Python API on the same kind of games, and perft.

    python scripts/bench_rules.py            # the full table (a few minutes on 2 cores)
    python scripts/bench_rules.py --quick    # a smoke run (well under a minute)

Plies per second count every action played (each jump of a multi-jump is one ply), summed over the
games of a batch, divided by wall time. Each figure is the median over ``--repeats`` timed repeats
after a warm-up call; a repeat plays fresh batches (new keys) for at least ``--min-time`` seconds.
The compile time is the first call's time less a median call's. ``cpu/wall`` is the process's CPU
time over wall time while timing: about 1 per device in use on an idle machine, less when other
processes take the cores. This machine's speed varies by 20-35% between identical runs, so compare
figures from one run, side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PERFT_TABLE = REPO_ROOT / "tests" / "data" / "perft.json"  # the published counts, vendored
PRESETS = ("simple6", "american6", "american8")
TARGET_SIMPLE6_PLIES = 5_000_000
TARGET_OPENSPIEL_RATIO = 50.0


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


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        import neurocheckers  # noqa: F401
    except ImportError:  # running from a checkout without an install
        sys.path.insert(0, str(REPO_ROOT))
    from neurocheckers.devices import use_host_devices

    num_devices = use_host_devices(args.devices)  # before JAX creates its backend
    import jax

    if args.compile_cache:
        jax.config.update("jax_compilation_cache_dir", args.compile_cache)
    from neurocheckers.rules import get_rules
    from neurocheckers.rules.playout import playout_devices

    machine = _machine()
    cores = machine["cpu_count"]
    print(
        f"machine: {cores} CPU cores ({machine['processor']}), python {machine['python']}, "
        f"jax {machine['jax']}, {len(machine['devices'])} host device(s), load average {machine['loadavg']}"
    )
    print(f"figures: medians of {args.repeats} repeats (>= {args.min_time} s each) after a warm-up call\n")
    results: dict = {"machine": machine, "args": vars(args), "playouts": [], "openspiel": None, "perft": []}

    if not args.no_playouts:
        header = (
            f"{'preset':<10} {'batch':>6} {'dev':>3} {'compile s':>9} {'plies/s (median)':>17} "
            f"{'min .. max':>25} {'games/s':>11} {'mean len':>8} {'cpu/wall':>8}"
        )
        print("Batched random playouts (neurocheckers.rules.playout.random_playouts)")
        print(header)
        print("-" * len(header))
        for name in args.presets:
            rules = get_rules(name)
            for batch in args.batch_sizes:
                device_counts = [1] + ([num_devices] if num_devices > 1 else [])
                for devices in device_counts:
                    if devices > 1 and playout_devices(batch, devices) != devices:
                        continue  # the batch does not split evenly: the 1-device row stands
                    row = bench_playouts(rules, batch, devices, args.repeats, args.min_time)
                    results["playouts"].append(row)
                    spread = f"{_fmt_rate(row['plies_per_s_min'])} .. {_fmt_rate(row['plies_per_s_max'])}"
                    print(
                        f"{name:<10} {batch:>6} {devices:>3} {row['compile_s']:>9.2f} "
                        f"{_fmt_rate(row['plies_per_s']):>17} {spread:>25} {row['games_per_s']:>11,.0f} "
                        f"{row['mean_length']:>8.1f} {row['cpu_per_wall']:>8.2f}",
                        flush=True,
                    )
        print()

    if not args.no_openspiel:
        os_row = bench_openspiel(args.openspiel_seconds, args.repeats)
        results["openspiel"] = os_row
        if os_row is None:
            print("OpenSpiel: pyspiel is not installed; skipped\n")
        else:
            print(
                f"OpenSpiel {os_row['version']} checkers (8x8), Python API, one process: "
                f"{_fmt_rate(os_row['plies_per_s'])} plies/s median "
                f"({_fmt_rate(os_row['plies_per_s_min'])} .. {_fmt_rate(os_row['plies_per_s_max'])}), "
                f"mean length {os_row['mean_length']:.1f}\n"
            )

    if results["playouts"]:
        print(f"Summary ({cores} cores; best batch size per preset, medians)")
        os_rate = results["openspiel"]["plies_per_s"] if results["openspiel"] else None
        best: dict[str, dict] = {}
        for row in results["playouts"]:
            if row["preset"] not in best or row["plies_per_s"] > best[row["preset"]]["plies_per_s"]:
                best[row["preset"]] = row
        for name, row in best.items():
            ratio = f", {row['plies_per_s'] / os_rate:,.1f}x OpenSpiel" if os_rate else ""
            print(
                f"  {name:<10} {_fmt_rate(row['plies_per_s']):>14} plies/s "
                f"(batch {row['batch']}, {row['devices']} device(s)){ratio}"
            )
        results["best"] = best
        if "simple6" in best:
            rate = best["simple6"]["plies_per_s"]
            verdict = "met" if rate >= TARGET_SIMPLE6_PLIES else "NOT met"
            print(f"  target >= {TARGET_SIMPLE6_PLIES:,} plies/s for simple6: {verdict}")
            if os_rate:
                ratio = rate / os_rate
                verdict = "met" if ratio >= TARGET_OPENSPIEL_RATIO else "NOT met"
                print(
                    f"  best simple6 / OpenSpiel = {ratio:,.1f}x "
                    f"(target >= {TARGET_OPENSPIEL_RATIO:g}x): {verdict}"
                )
                results["simple6_over_openspiel"] = ratio
            if os_rate and "american8" in best:
                print(
                    f"  best american8 / OpenSpiel (the same game) = "
                    f"{best['american8']['plies_per_s'] / os_rate:,.1f}x"
                )
        print()

    if not args.no_perft:
        table = json.loads(PERFT_TABLE.read_text()) if PERFT_TABLE.exists() else None
        print("Perft (neurocheckers.rules.perft.perft; cumulative seconds; compile timed separately)")
        for name in args.presets:
            rules = get_rules(name)
            depth = args.perft_depth_8x8 if rules.board_size == 8 else args.perft_depth_6x6
            row = bench_perft(rules, depth, table)
            results["perft"].append(row)
            print(f"  {name} (compile {row['compile_s']:.2f} s)")
            for d in row["depths"]:
                check = (
                    "" if d["expected"] is None else ("  ok" if d["expected"] == d["count"] else "  MISMATCH")
                )
                print(
                    f"    depth {d['depth']:>2} {d['count']:>13,} {d['seconds']:>8.2f} s{check}", flush=True
                )
        print()

    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
