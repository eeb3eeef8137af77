"""Time PBT's tournament (``pbt_tournament.tournament``) of a config on one core, its games searched in
one batch (``packed_choose``, alpha-beta members) and each game's search vmapped (``vmapped_choose``,
the code before it), and check that both give the same points.

    python scripts/bench_pbt_tournament.py experiments/american8/pbt.toml \\
        --network results/american8/pbt_packed_seed1/final.safetensors

The members are ``--network``'s weights each perturbed by 0.05 x a fresh initialisation (random
networks without it). Prints each mode's first call (compile and run) and the median of ``--repeats``
later calls, with the state of the compile cache.
"""

from __future__ import annotations

import argparse
import statistics
import time

from benchlib import cache_state, pin_to_one_core


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("config", help="a PBT experiment TOML file")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override")
    parser.add_argument("--network", default=None, help="an agent file whose network every member perturbs")
    parser.add_argument("--repeats", type=int, default=5)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    pinned = pin_to_one_core()
    import jax
    import numpy as np

    from neurocheckers.experiment.config import ConfigError, load_config
    from neurocheckers.experiment.trainers import make_trainer
    from neurocheckers.learners.pbt import learner_spec
    from neurocheckers.learners.pbt_tournament import tournament
    from neurocheckers.networks.agent_file import load_agent
    from neurocheckers.networks.evaluator import init_params
    from neurocheckers.runtime import configure_jax

    configure_jax()
    try:
        settings = make_trainer(load_config(args.config, args.set)).settings
    except ConfigError as error:
        raise SystemExit(f"error: {error}") from None
    spec, m = learner_spec(settings), settings.members
    params = jax.vmap(lambda k: init_params(k, spec))(jax.random.split(jax.random.key(0), m))
    if args.network:
        trained = load_agent(args.network).params
        params = jax.tree.map(lambda t, noise: t[None] + 0.05 * noise, trained, params)
    games = m * (m - 1) * settings.tournament_openings
    print(f"{args.config}: {m} members, {games} games, {settings.search} depth {settings.depth}; {pinned}")
    print(f"compile cache: {cache_state(jax.config.jax_compilation_cache_dir)}")
    points = {}
    for packed in (True, False):
        play = jax.jit(lambda p, k, packed=packed: tournament(settings, p, k, packed=packed))
        start = time.perf_counter()
        points[packed] = np.asarray(play(params, jax.random.key(0)))
        first = time.perf_counter() - start
        times = []
        for repeat in range(1, args.repeats + 1):
            start = time.perf_counter()
            jax.block_until_ready(play(params, jax.random.key(repeat)))
            times.append(time.perf_counter() - start)
        label = "in one batch (packed)" if packed else "each game vmapped"
        runs, median = " ".join(f"{t:.2f}" for t in times), statistics.median(times)
        print(f"tournament, {label}: first call {first:.1f} s; runs {runs} s; median {median:.2f} s")
    print(f"the same points: {'yes' if np.array_equal(points[True], points[False]) else 'NO'}")


if __name__ == "__main__":
    main()
