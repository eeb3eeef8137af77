"""Time the default gauntlet (``neurocheckers gauntlet AGENT``) end to end in this process.

    python scripts/bench_gauntlet.py [--agent results/base_final_boss.safetensors] [--repeats 3] [--cold]
        [--openings 100] [--depth 3]

Runs the gauntlet ``--repeats`` times and prints each wall time, the median of the repeats after the
first, and whether the compile cache was warm (``--cold`` uses an empty cache directory, so the first
repeat pays every compile). The default gauntlet: 100 paired openings (200 games a match), the ladder
random, greedy-material, alphabeta:1..3, the equal-depth test at depths 1-3 and the calibration
matches between neighbouring ladder players.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default=str(REPO / "results" / "base_final_boss.safetensors"))
    parser.add_argument("--rules", default="simple6")
    parser.add_argument("--repeats", type=int, default=3, help="Gauntlets to time (>= 2).")
    parser.add_argument("--cold", action="store_true", help="Start from an empty compile cache.")
    parser.add_argument("--devices", type=int, default=os.cpu_count(), help="Host devices (as the CLI).")
    parser.add_argument("--openings", type=int, default=100, help="Paired openings a match (tiny runs: 1).")
    parser.add_argument(
        "--depth", type=int, default=3, help="The deepest ladder and equal-depth row (tiny runs: 1)."
    )
    args = parser.parse_args()
    if args.repeats < 2:
        parser.error(f"--repeats must be >= 2, got {args.repeats}")
    if args.depth < 1:
        parser.error(f"--depth must be >= 1, got {args.depth}")

    from neurocheckers.devices import use_host_devices

    use_host_devices(args.devices)
    import jax

    from neurocheckers.analysis.gauntlet import GauntletConfig, format_gauntlet, run_gauntlet
    from neurocheckers.rules import get_rules
    from neurocheckers.runtime import configure_jax

    cold_dir = tempfile.TemporaryDirectory() if args.cold else None
    configure_jax(cold_dir.name if cold_dir else None)
    cache = jax.config.jax_compilation_cache_dir
    had_entries = cache is not None and Path(cache).is_dir() and any(Path(cache).iterdir())
    config = GauntletConfig(
        openings=args.openings, depth=args.depth, equal_depths=tuple(range(1, args.depth + 1))
    )
    rules = get_rules(args.rules)
    print(f"machine: {os.cpu_count()} cores, JAX {jax.__version__}, {len(jax.devices())} host devices")
    print(f"agent: {args.agent}; rules {args.rules}; {config.openings} openings x 2 colours per match")
    print(f"compile cache: {cache} ({'warm' if had_entries else 'cold'} at the first repeat)")
    times = []
    for repeat in range(args.repeats):
        start = time.perf_counter()
        result = run_gauntlet(rules, args.agent, config)
        times.append(time.perf_counter() - start)
        print(f"repeat {repeat + 1}: {times[-1]:.1f} s ({len(result.rows)} matches)", flush=True)
    print(format_gauntlet(result))
    print(
        f"first repeat {times[0]:.1f} s ({'warm' if had_entries else 'cold'} cache); "
        f"median of the {len(times) - 1} later repeats (warm cache, compiled in process): "
        f"{statistics.median(times[1:]):.1f} s"
    )


if __name__ == "__main__":
    main()
