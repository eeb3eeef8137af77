"""Seconds per evolution epoch: the study's base case and how it grows with P, G and simulations.

Base case: P=256 members x G=8 games against the boss, 5-layer MLPs, simple6, 16 simulations per move
for members and boss, supervised quarter included. Prints medians over repeats after a compile,
the compile time, and the peak resident memory of the process.

    python scripts/bench_evolve.py            # base case + scaling (several minutes)
    python scripts/bench_evolve.py --quick    # a small smoke run
    python scripts/bench_evolve.py --devices 2  # split the population across 2 host devices
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke test")
    parser.add_argument(
        "--width", type=int, default=32, help="hidden units per layer (quoted with every figure)"
    )
    parser.add_argument("--layers", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--devices", type=int, default=0, help="host devices to use (0: leave JAX's default)")
    parser.add_argument("--no-scaling", action="store_true", help="only the base case")
    args = parser.parse_args()
    if args.devices:
        from neurocheckers.devices import use_host_devices

        use_host_devices(args.devices)

    import jax

    from neurocheckers.evolution.boss_ga import epoch_key, evolve_epoch, init, make_setup
    from neurocheckers.experiment.config import load_config
    from neurocheckers.runtime import configure_jax

    configure_jax()

    def measure(population: int, games: int, sims: int) -> tuple[float, float, float]:
        config = load_config(
            None,
            [
                f"population={population}",
                f"games_per_epoch={games}",
                f"simulations={sims}",
                f"layers={args.layers}",
                f"width={args.width}",
                "rules=simple6",
            ],
        )
        setup = make_setup(config.evolution_settings())
        state = init(setup, jax.random.key(0))
        start = time.perf_counter()
        state, metrics = evolve_epoch(setup, state, epoch_key(0, 0))
        jax.block_until_ready(metrics)
        compile_and_first = time.perf_counter() - start
        times, plies = [], []
        for epoch in range(1, args.repeats + 1):
            start = time.perf_counter()
            state, metrics = evolve_epoch(setup, state, epoch_key(0, epoch))
            jax.block_until_ready(metrics)
            times.append(time.perf_counter() - start)
            plies.append(float(metrics["plies"]))
        median = statistics.median(times)
        return median, compile_and_first, statistics.median(plies) / median

    print(f"machine: {os.cpu_count()} cores, JAX devices: {jax.devices()}")
    print(
        f"MLP: {args.layers} hidden layers x {args.width} units; rules simple6; supervised quarter included"
    )
    if args.quick:
        cases = [(16, 4, 4)]
    else:
        cases = [(256, 8, 16)]
        if not args.no_scaling:
            cases += [(64, 8, 16), (128, 8, 16), (512, 8, 16), (1024, 8, 16)]
            cases += [(256, 4, 16), (256, 16, 16)]
            cases += [(256, 8, 8), (256, 8, 32), (256, 8, 64)]
    print(f"{'P':>5} {'G':>3} {'sims':>5} {'s/epoch':>9} {'compile+1st s':>14} {'plies/s':>10}")
    for population, games, sims in cases:
        median, first, plies_per_s = measure(population, games, sims)
        tag = "  <- base case" if (population, games, sims) == (256, 8, 16) else ""
        print(
            f"{population:>5} {games:>3} {sims:>5} {median:>9.2f} {first:>14.1f} {plies_per_s:>10,.0f}{tag}",
            flush=True,
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory: {peak:.0f} MiB")
    if not args.quick:
        print("(the study: 32-35 s per base-case epoch; target here: <= 3 s, i.e. 512 epochs in < 30 min)")


if __name__ == "__main__":
    sys.exit(main())
