"""Throughput and strength of the baseline players (neurocheckers/search/baselines.py).

Plays batches of whole games with a vmapped ``lax.while_loop`` driver, in chunks, and prints games/s
and plies/s (compilation excluded, timed separately), then alpha-beta's results against random play.

    python scripts/bench_baselines.py            # the full run
    python scripts/bench_baselines.py --quick    # 10x fewer games
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from neurocheckers.rules import BLACK, PRESETS, SIMPLE6, Rules, init, step
from neurocheckers.search.baselines import (
    Policy,
    alphabeta_policy,
    greedy_policy,
    material_value_fn,
    random_policy,
)


def make_driver(rules: Rules, policy_a: Policy, policy_b: Policy, chunk: int):
    """Jitted ``key -> (score_a [chunk], plies [chunk])``: ``chunk`` whole games of A against B.

    A plays Black in even games and White in odd ones; its score is 1 / 1/2 / 0. Under vmap both
    policies are evaluated at every ply, each seeing a finished game when it is not its turn (searches
    then stop at once; fixed-cost players like greedy still pay full price).
    """

    def one(key: jax.Array, a_color: jax.Array) -> tuple[jax.Array, jax.Array]:
        def body(carry):
            s, k = carry
            k, ka, kb = jax.random.split(k, 3)
            # Under vmap both policies run at every ply; showing each one a finished game when it is
            # not its turn lets a search (alpha-beta's while_loop) stop at once instead of being wasted.
            a_turn = s.color == a_color
            action_a = policy_a(None, s.replace(terminated=s.terminated | ~a_turn), ka)
            action_b = policy_b(None, s.replace(terminated=s.terminated | a_turn), kb)
            action = jnp.where(a_turn, action_a, action_b)
            return step(rules, s, action), k

        s, _ = jax.lax.while_loop(lambda c: ~c[0].terminated, body, (init(rules), key))
        sign = jnp.where(a_color == BLACK, 1.0, -1.0)
        return 0.5 * (1.0 + sign * s.result), s.ply

    colors = jnp.arange(chunk) % 2
    return jax.jit(lambda key: jax.vmap(one)(jax.random.split(key, chunk), colors))


def run(rules: Rules, name: str, policy_a: Policy, policy_b: Policy, games: int, chunk: int, seed: int = 0):
    chunk = min(chunk, games)
    driver = make_driver(rules, policy_a, policy_b, chunk)
    t0 = time.perf_counter()
    driver = driver.lower(jax.random.key(seed)).compile()
    compile_s = time.perf_counter() - t0
    scores, plies = [], []
    t0 = time.perf_counter()
    for key in jax.random.split(jax.random.key(seed), -(-games // chunk)):
        s, p = driver(key)
        scores.append(np.asarray(s))
        plies.append(np.asarray(p))
    elapsed = time.perf_counter() - t0
    scores = np.concatenate(scores)[:games]
    plies = np.concatenate(plies)
    n = len(plies)  # games actually played (whole chunks)
    win, draw, loss = (np.mean(scores == v) for v in (1.0, 0.5, 0.0))
    print(
        f"{rules.name:10s} {name:28s} games={n:6d} chunk={chunk:5d} compile={compile_s:5.1f}s "
        f"time={elapsed:7.2f}s games/s={n / elapsed:9.1f} plies/s={plies.sum() / elapsed:10.0f} "
        f"mean_plies={plies.mean():5.1f} | A: win={win:.3f} draw={draw:.3f} loss={loss:.3f} "
        f"score={scores.mean():.3f}",
        flush=True,
    )
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10x fewer games")
    parser.add_argument(
        "--scale", type=int, default=None, help="N x fewer games (quick: 10; a smoke test: 1000)"
    )
    parser.add_argument("--greedy-chunk", type=int, default=10_000)
    parser.add_argument("--ab-chunk", type=int, default=1_000)
    parser.add_argument(
        "--presets", default=",".join(PRESETS), help="The presets of the last rows (comma-separated)."
    )
    args = parser.parse_args()
    presets = [name for name in args.presets.split(",") if name]
    unknown = [name for name in presets if name not in PRESETS]
    if unknown:
        parser.error(f"--presets: unknown preset {unknown[0]!r} (known: {', '.join(PRESETS)})")
    scale = args.scale or (10 if args.quick else 1)
    print(f"jax {jax.__version__} on {jax.devices()[0].platform} ({jax.device_count()} device)")

    rules = SIMPLE6
    rand = random_policy(rules)
    greedy = greedy_policy(rules, material_value_fn(rules))
    run(rules, "greedy(material) vs random", greedy, rand, 50_000 // scale, args.greedy_chunk)
    run(rules, "alphabeta:3 vs random", alphabeta_policy(rules, 3), rand, 10_000 // scale, args.ab_chunk)

    for rules in (PRESETS[name] for name in presets):
        run(
            rules,
            "alphabeta:3 vs random",
            alphabeta_policy(rules, 3),
            random_policy(rules),
            max(1_000 // scale, 1),
            args.ab_chunk,
            seed=1,
        )


if __name__ == "__main__":
    main()
