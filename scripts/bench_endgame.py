"""Endgame database speed: the JAX move generator alone, the whole-turn successors of a slice, and a
whole small build, on whatever device JAX uses (CPU here; a GPU where one is lent).

    python scripts/bench_endgame.py [--rules american8] [--pieces 4] [--repeats 3]

Prints, medians of the repeats after a compiling run: engine steps per second (one action from each
of B positions, B = 2^16 .. 2^20 by default (``--largest``), a jitted vmap of
``rules.engine.step_unchecked``), whole-turn successors per second (``endgame.moves.successors``,
host compaction included), and the build of every position with at most ``--pieces`` pieces
(positions per second).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np

from neurocheckers.endgame.index import Slice, SliceIndex
from neurocheckers.endgame.moves import successors
from neurocheckers.endgame.solve import build
from neurocheckers.rules import from_position, get_rules, step_unchecked


def timed(fn, repeats: int) -> float:
    fn()  # compile
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", default="american8")
    parser.add_argument("--pieces", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--largest", type=int, default=20, help="the largest engine batch is 2^N positions (tiny runs: 8)"
    )
    args = parser.parse_args()
    rules = get_rules(args.rules)
    print(
        f"device: {jax.devices()[0].device_kind} x {len(jax.devices())}, JAX {jax.__version__}, {rules.name}"
    )
    index = SliceIndex(rules, Slice(1, 2, 1, 1))
    boards = index.unrank(np.arange(min(index.size, 1 << 20)))

    @jax.jit
    def first_moves(b):
        states = jax.vmap(lambda x: from_position(rules, x[0], x[1], x[2], x[3], 0))(b)
        actions = jnp.argmax(jax.vmap(lambda s: s.legal_action_mask)(states), axis=1).astype(jnp.int32)
        return jax.vmap(lambda s, a: step_unchecked(rules, s, a))(states, actions).black_men

    for size in sorted({1 << max(args.largest - 4, 0), 1 << max(args.largest - 2, 0), 1 << args.largest}):
        batch = jnp.asarray(boards[np.arange(size) % len(boards)])
        seconds = timed(lambda batch=batch: first_moves(batch).block_until_ready(), args.repeats)
        print(f"engine: {size:>9,} positions, one step each: {size / seconds:>14,.0f} steps/s")
    chunk = boards[: 1 << max(args.largest - 3, 0)]
    seconds = timed(lambda: successors(rules, chunk), args.repeats)
    parent, _ = successors(rules, chunk)
    print(
        f"successors: {len(chunk):,} positions, {len(parent):,} moves:"
        f" {len(chunk) / seconds:,.0f} positions/s"
    )
    with tempfile.TemporaryDirectory() as folder:
        began = time.perf_counter()
        db = build(rules, args.pieces, folder)
        seconds = time.perf_counter() - began
        total = sum(s["positions"] for s in db.manifest["slices"].values())
        print(
            f"build up to {args.pieces} pieces: {total:,} positions in {seconds:.1f} s"
            f" ({total / seconds:,.0f}/s, compiling included)"
        )


if __name__ == "__main__":
    main()
