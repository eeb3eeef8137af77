"""Seconds per evolution epoch: the study's base case and how it grows with P, G and simulations.

Base case: P=256 members x G=8 games against the boss, 5-layer MLPs, simple6, 16 simulations per move
for members and boss, supervised quarter included. For each shape: the first epoch (compiling
included) and whether the persistent compile cache already held that shape ("hit": loaded, "miss":
compiled here), then the median, min and max of ``--repeats`` (>= 5) further epochs, the searched
plies per second (game plies played, each one MCTS search of ``sims`` simulations by the side to
move), the process's CPU time per epoch (median; steadier than the wall time on a shared machine),
and at the end the peak resident memory of the process.

    python scripts/bench_evolve.py --devices 2   # base case + scaling (several minutes on 2 cores)
    python scripts/bench_evolve.py --quick       # a small smoke run
    python scripts/bench_evolve.py --cold        # an empty cache folder: every compile timed cold
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time

from benchlib import cache_entries, cache_state  # scripts/benchlib.py (the script's folder is on sys.path)

BASE_CASE = (256, 8, 16)
MIN_REPEATS = 5


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke test")
    parser.add_argument(
        "--width", type=int, default=32, help="hidden units per layer (quoted with every figure)"
    )
    parser.add_argument("--layers", type=int, default=5)
    parser.add_argument(
        "--repeats", type=int, default=MIN_REPEATS, help=f"timed epochs per shape (>= {MIN_REPEATS})"
    )
    parser.add_argument("--devices", type=int, default=0, help="host devices to use (0: leave JAX's default)")
    parser.add_argument("--no-scaling", action="store_true", help="only the base case")
    parser.add_argument(
        "--cold", action="store_true", help="compile into a new empty cache folder (cold-cache compile times)"
    )
    parser.add_argument(
        "--leaf-floor",
        action="store_true",
        help="also time the leaf networks alone: the epoch's leaf evaluations in the search's batches",
    )
    args = parser.parse_args(argv)
    if args.repeats < MIN_REPEATS:
        parser.error(f"--repeats must be >= {MIN_REPEATS}, got {args.repeats}")
    return args


def cases(args: argparse.Namespace) -> list[tuple[int, int, int]]:
    if args.quick:
        return [(16, 4, 4)]
    found = [BASE_CASE]
    if not args.no_scaling:
        found += [(64, 8, 16), (128, 8, 16), (512, 8, 16), (1024, 8, 16)]
        found += [(256, 4, 16), (256, 16, 16)]
        found += [(256, 8, 8), (256, 8, 32), (256, 8, 64)]
    return found


def measure(args: argparse.Namespace, population: int, games: int, sims: int) -> dict:
    """The first epoch (compile included, cache hit or miss) and ``args.repeats`` timed epochs."""
    import jax

    from neurocheckers.evolution.boss_ga import evolve_epoch, init, make_setup
    from neurocheckers.experiment.config import load_config
    from neurocheckers.search.play_settings import epoch_key
    from neurocheckers.sharding import on_every_device

    keys = [f"population={population}", f"games_per_epoch={games}", f"simulations={sims}"]
    config = load_config(None, [*keys, f"layers={args.layers}", f"width={args.width}", "rules=simple6"])
    setup = make_setup(config.evolution_settings())
    state = on_every_device(init(setup, jax.random.key(0)))  # as a run lays it: one compile
    cache = jax.config.jax_compilation_cache_dir
    entries = cache_entries(cache)
    start = time.perf_counter()
    state, metrics = evolve_epoch(setup, state, epoch_key(0, 0))
    jax.block_until_ready(metrics)
    first = time.perf_counter() - start
    times, cpu_times, plies = [], [], []
    for epoch in range(1, args.repeats + 1):
        start, cpu_start = time.perf_counter(), time.process_time()
        state, metrics = evolve_epoch(setup, state, epoch_key(0, epoch))
        jax.block_until_ready(metrics)
        state = on_every_device(state)  # as a run lays it before each call (a no-op here)
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
        plies.append(float(metrics["plies"]))
    median = statistics.median(times)
    return {
        "median": median,
        "cpu": statistics.median(cpu_times),
        "min": min(times),
        "max": max(times),
        "first": first,
        "cache": "miss" if cache_entries(cache) > entries else "hit",
        "searched_plies_per_s": statistics.median(plies) / median,
        "plies": statistics.median(plies),
    }


def leaf_floor(args: argparse.Namespace, population: int, games: int, sims: int, plies: float) -> float:
    """Seconds (median of ``args.repeats``) for the leaf networks alone over an epoch's evaluations:
    ``plies x sims`` leaves, one per game and simulation, as the games' searches batch them (each
    member's network on its G/2 games where it moves, the boss's on the P x G/2 others)."""
    import jax
    import jax.numpy as jnp

    from neurocheckers.networks.architectures import EvaluatorSpec
    from neurocheckers.networks.evaluator import init_params, network

    spec = EvaluatorSpec(layers=args.layers, width=args.width, board_size=6)
    net, half = network(spec), max(games // 2, 1)
    params = jax.vmap(lambda k: init_params(k, spec))(jax.random.split(jax.random.key(0), population))
    members_rows = jax.random.uniform(jax.random.key(1), (population, half, spec.input_size))
    boss_rows = jax.random.uniform(jax.random.key(2), (population * half, spec.input_size))
    boss = jax.tree.map(lambda a: a[0], params)
    steps = max(round(plies * sims / (population * games)), 1)

    def evaluate(i, total):
        shift = i.astype(jnp.float32)  # new inputs each step, at no cost, so nothing is hoisted
        members = jax.vmap(lambda p, x: net.apply({"params": p}, x))(params, members_rows + shift)
        return total + members.sum() + net.apply({"params": boss}, boss_rows + shift).sum()

    run = jax.jit(lambda: jax.lax.fori_loop(0, steps, evaluate, jnp.float32(0)))
    run().block_until_ready()
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        run().block_until_ready()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.devices:
        from neurocheckers.devices import use_host_devices

        use_host_devices(args.devices)
    import jax

    from neurocheckers.runtime import configure_jax

    cold_dir = tempfile.TemporaryDirectory() if args.cold else None
    configure_jax(cold_dir.name if cold_dir else None)
    cache = jax.config.jax_compilation_cache_dir
    print(f"machine: {os.cpu_count()} cores, JAX {jax.__version__}, devices: {jax.devices()}")
    print(
        f"MLP: {args.layers} hidden layers x {args.width} units; rules simple6; supervised quarter included"
    )
    print(f"compile cache: {cache_state(cache)}")
    print(f"s/epoch: median of {args.repeats} epochs after the first (min .. max beside it)")
    header = (
        f"{'P':>5} {'G':>3} {'sims':>5} {'s/epoch':>8} {'min .. max':>13} {'1st epoch s':>12} "
        f"{'cache':>6} {'searched plies/s':>17} {'cpu s/epoch':>12}"
    )
    print(header)
    print("-" * len(header))
    for population, games, sims in cases(args):
        row = measure(args, population, games, sims)
        tag = "  <- base case" if (population, games, sims) == BASE_CASE else ""
        spread = f"{row['min']:.2f} .. {row['max']:.2f}"
        print(
            f"{population:>5} {games:>3} {sims:>5} {row['median']:>8.2f} {spread:>13} {row['first']:>12.1f} "
            f"{row['cache']:>6} {row['searched_plies_per_s']:>17,.0f} {row['cpu']:>12.2f}{tag}",
            flush=True,
        )
        if args.leaf_floor:
            floor = leaf_floor(args, population, games, sims, row["plies"])
            print(f"      leaf networks alone: {floor:.2f} s/epoch (median of {args.repeats})", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory: {peak:.0f} MiB")
    print(
        "searched plies/s: game plies played per second, each one MCTS search of `sims` simulations "
        "by the side to move (members' and boss's moves both count)"
    )
    print("1st epoch s: compiling (cache miss) or loading from the cache (hit), plus one epoch")
    print(
        "cpu s/epoch: the process's CPU time per epoch (all threads, median), steadier than the wall "
        "time on a shared machine; on an idle machine about s/epoch x the cores kept busy"
    )
    if not args.quick:
        print("(the study: 32-35 s per base-case epoch; target here: <= 3 s, i.e. 512 epochs in < 30 min)")
    if cold_dir is not None:
        cold_dir.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
