"""Epochs per second of 3 seeds of one evolution config (issue 32, part 3), run as (a) 3 separate
processes at once, (b) one process, the seeds one after another (``run``), (c) one process, the seeds
vmapped as one program (``run_seeds``); each with 1 and 8 epochs per device call (``epochs_per_call``).

Default config: P=64 members x G=8 games against the boss, 16 simulations a move, 5 x 32 MLPs,
simple6, the boss GA (a quarter of the base case's population; ``--population 256`` for the base
case). A measurement is one fresh run folder per seed of ``--epochs`` epochs through the run loop
(rows, lineage, the last checkpoint), timed warm: a warm-up run of the same shapes first compiles
every program (or loads it from the compile cache). Each separate process warms up, waits for the
others, then times its runs; their throughput is all their epochs over the span from the first
start to the last end. Figures: the median of ``--repeats``, in epochs/s of all seeds together, and
"device" epochs/s, the epochs over the summed wall time of the device calls alone (``wall_seconds``
of metrics.csv, where a vmapped call's is shared among its seeds), which leaves out each run's
start (its compiled epoch's memory check, the first lineage file) and the host's writing between
calls; and epochs per CPU second of the processes (all threads), steadier on a shared machine.

    python scripts/bench_seeds.py --devices 2    # a few minutes on 2 cores
    python scripts/bench_seeds.py --quick        # a tiny smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SEEDS = (0, 1, 2)
MODES = ("processes", "sequential", "vmapped")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke test")
    parser.add_argument("--population", type=int, default=64)
    parser.add_argument("--games", type=int, default=8, help="games per member and epoch")
    parser.add_argument("--sims", type=int, default=16, help="MCTS simulations per move")
    parser.add_argument("--layers", type=int, default=5)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=16, help="epochs of each run (a multiple of every K)")
    parser.add_argument("--ks", default="1,8", help="epochs per call to compare, comma-separated")
    parser.add_argument("--modes", default=",".join(MODES), help=f"which of {', '.join(MODES)}")
    parser.add_argument("--repeats", type=int, default=3, help="timed measurements per mode and K")
    parser.add_argument("--devices", type=int, default=0, help="host devices (0: leave JAX's default)")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)  # a separate process
    parser.add_argument("--barrier", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.population, args.games, args.sims, args.layers, args.width = 4, 2, 2, 1, 4
        args.epochs = 2
    args.ks = [int(k) for k in args.ks.split(",")]
    args.modes = args.modes.split(",")
    for k in args.ks:
        if k < 1 or args.epochs % k:
            parser.error(f"--ks: each K must be >= 1 and divide --epochs ({args.epochs}), got {k}")
    for mode in args.modes:
        if mode not in MODES:
            parser.error(f"--modes must be among {', '.join(MODES)}, got {mode!r}")
    return args


def config_items(args: argparse.Namespace, seed: int, k: int, epochs: int) -> list[str]:
    shape = [f"population={args.population}", f"games_per_epoch={args.games}", f"simulations={args.sims}"]
    shape += [f"layers={args.layers}", f"width={args.width}", "rules=simple6"]
    shape += ["train_steps=1"] if args.quick else []
    run = [f"seed={seed}", f"epochs={epochs}", f"epochs_per_call={k}", "checkpoint_every=100000"]
    return [*shape, *run, "strength_every=0", "name=bench_seeds"]


def in_process(args: argparse.Namespace, seeds: tuple[int, ...], k: int, epochs: int, vmapped: bool) -> dict:
    """Runs of ``seeds`` in this process: the seconds of the run loop, its CPU seconds (every thread
    of this process) and the seconds of its device calls."""
    from neurocheckers.experiment.config import load_config
    from neurocheckers.experiment.run import create_run, run, run_seeds
    from neurocheckers.formats import read_metrics

    out = Path(tempfile.mkdtemp(prefix="bench_seeds_"))
    dirs = [create_run(load_config(None, config_items(args, s, k, epochs)), out) for s in seeds]
    start, cpu = time.perf_counter(), time.process_time()
    if vmapped:
        run_seeds(dirs)
    else:
        for run_dir in dirs:
            run(run_dir)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    walls = [[float(r["wall_seconds"]) for r in read_metrics(d)] for d in dirs]
    device = sum(map(sum, walls))  # a vmapped call's wall time is shared evenly among its seeds
    return {"seconds": seconds, "cpu": cpu, "device": device}


def worker(args: argparse.Namespace) -> int:
    """One separate process: warm up, then for each repeat wait for the others and time one run."""
    k = args.ks[0]
    in_process(args, (args.worker,), k, k, vmapped=False)  # compiles (or loads) the programs
    spans = []
    for repeat in range(args.repeats):
        barrier = Path(args.barrier)
        (barrier / f"ready_{repeat}_{args.worker}").touch()
        while len(list(barrier.glob(f"ready_{repeat}_*"))) < len(SEEDS):
            time.sleep(0.01)
        start = time.time()
        timed = in_process(args, (args.worker,), k, args.epochs, vmapped=False)
        spans.append({"start": start, "end": time.time(), "cpu": timed["cpu"], "device": timed["device"]})
    print("SPANS " + json.dumps(spans))
    return 0


def separate_processes(args: argparse.Namespace, k: int) -> list[dict]:
    """Each repeat's seconds from the first start to the last end (CPU and device seconds summed) of
    ``len(SEEDS)`` processes running at once."""
    with tempfile.TemporaryDirectory() as barrier:
        common = [
            sys.executable,
            __file__,
            "--barrier",
            barrier,
            "--ks",
            str(k),
            "--repeats",
            str(args.repeats),
        ]
        common += ["--population", str(args.population), "--games", str(args.games), "--sims", str(args.sims)]
        common += ["--layers", str(args.layers), "--width", str(args.width), "--epochs", str(args.epochs)]
        common += ["--devices", str(args.devices)] + (["--quick"] if args.quick else [])
        procs = [
            subprocess.Popen([*common, "--worker", str(seed)], stdout=subprocess.PIPE, text=True)
            for seed in SEEDS
        ]
        outputs = [proc.communicate()[0] for proc in procs]
    if any(proc.returncode for proc in procs):
        raise SystemExit(f"a separate process failed: {outputs}")
    spans = [
        json.loads(next(line[6:] for line in out.splitlines() if line.startswith("SPANS ")))
        for out in outputs
    ]
    return [
        {
            "seconds": max(s[r]["end"] for s in spans) - min(s[r]["start"] for s in spans),
            "cpu": sum(s[r]["cpu"] for s in spans),
            "device": sum(s[r]["device"] for s in spans),
        }
        for r in range(args.repeats)
    ]


def measure(args: argparse.Namespace, mode: str, k: int) -> list[dict]:
    if mode == "processes":
        return separate_processes(args, k)
    vmapped = mode == "vmapped"
    in_process(args, SEEDS, k, k, vmapped)  # warm-up: compiles (or loads) the programs
    return [in_process(args, SEEDS, k, args.epochs, vmapped) for _ in range(args.repeats)]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.devices:
        from neurocheckers.devices import use_host_devices

        use_host_devices(args.devices)
    from neurocheckers.runtime import configure_jax

    configure_jax()
    if args.worker is not None:
        return worker(args)
    import jax

    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} cores, load average {load:.1f}, JAX {jax.__version__}")
    print(f"devices: {jax.devices()}")
    print(
        f"config: boss GA, P={args.population}, G={args.games}, {args.sims} simulations, "
        f"{args.layers} x {args.width} MLPs, simple6; {len(SEEDS)} seeds x {args.epochs} epochs, warm"
    )
    total = len(SEEDS) * args.epochs
    header = f"{'mode':<11} {'K':>3} {'epochs/s':>9} {'min .. max':>13} {'device epochs/s':>16}"
    header += f" {'epochs/cpu-s':>13}"
    print(f"median of {args.repeats} repeats")
    print(header)
    print("-" * len(header))
    for k in args.ks:
        for mode in args.modes:
            rows = measure(args, mode, k)
            rates = [total / r["seconds"] for r in rows]
            device = statistics.median(total / r["device"] for r in rows)
            per_cpu = statistics.median(total / r["cpu"] for r in rows)
            spread = f"{min(rates):.2f} .. {max(rates):.2f}"
            line = f"{mode:<11} {k:>3} {statistics.median(rates):>9.2f} {spread:>13} {device:>16.2f}"
            print(f"{line} {per_cpu:>13.2f}", flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
