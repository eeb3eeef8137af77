"""Games a second of engine games as fitness (``match.engine_pairs``): game pairs between two
compiled-search players (the committed 8x8 agent against itself with one search parameter changed)
at a fixed node budget a move, from the committed openings, each with both colours.

Usage:
  python scripts/bench_engine_games.py [--nodes 1000 4000 16000] [--pairs 32] [--repeats 3]
      [--modes one-core two-processes ray-two-workers] [--agent results/best_american8.safetensors]
      [--pieces-a-share 4]

Modes: ``one-core`` plays every pair in this process (one core); ``two-processes`` splits them over
a pool of two spawned processes (``match.shares.process_pool``); ``ray-two-workers`` over two Ray
workers on a local Ray instance of two CPUs (``ray.init(num_cpus=2)``). With two workers the pairs
go in ``--pieces-a-share`` pieces a worker (``engine_pairs.PIECES_A_SHARE``; 1: one big share
each). Each mode plays one warm-up batch first (numba's cache loaded, each worker's imports paid),
then ``--repeats`` timed batches of the same pairs; it prints the median games a second with the
range, and the plies a second. The same pairs give the same games in every mode (a node budget is
deterministic).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from neurocheckers.match import engine_pairs  # noqa: E402
from neurocheckers.match.engine_pairs import EngineSide, play_pairs  # noqa: E402
from neurocheckers.match.shares import in_process, process_pool, ray_shares  # noqa: E402

MODES = ("one-core", "two-processes", "ray-two-workers")


def mode_runner(mode: str):
    """``(map_shares, shares, close)`` of a mode."""
    if mode == "one-core":
        return in_process, 1, lambda: None
    if mode == "two-processes":
        return process_pool(2), 2, lambda: None
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    return ray_shares(), 2, ray.shutdown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000, 4000, 16000])
    parser.add_argument("--pairs", type=int, default=32, help="game pairs a timed batch")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--agent", default="results/best_american8.safetensors")
    parser.add_argument("--pieces-a-share", type=int, default=engine_pairs.PIECES_A_SHARE)
    args = parser.parse_args()
    engine_pairs.PIECES_A_SHARE = args.pieces_a_share
    a = EngineSide(args.agent)
    b = EngineSide(args.agent, {"lmr_min_move": 4})
    print(f"american8, {args.agent} against itself with lmr_min_move 4, {args.pairs} pairs a batch, "
          f"{args.pieces_a_share} pieces a share")  # fmt: skip
    for mode in args.modes:
        map_shares, shares, close = mode_runner(mode)
        try:
            for nodes in args.nodes:
                play_pairs("american8", a, b, args.pairs, nodes, shares=shares, map_shares=map_shares)  # warm
                rates, plies = [], []
                for _ in range(args.repeats):
                    started = time.perf_counter()
                    result = play_pairs(
                        "american8", a, b, args.pairs, nodes, shares=shares, map_shares=map_shares
                    )
                    took = time.perf_counter() - started
                    rates.append(result.games / took)
                    plies.append(result.plies / took)
                print(
                    f"{mode:16s} {nodes:6d} nodes/move: {statistics.median(rates):6.2f} games/s "
                    f"(range {min(rates):.2f} .. {max(rates):.2f}; {statistics.median(plies):7.1f} plies/s; "
                    f"pairs LL..WW {' '.join(map(str, result.counts))})",
                    flush=True,
                )
        finally:
            close()


if __name__ == "__main__":
    main()
