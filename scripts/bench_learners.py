"""Benchmark the self-play learners: self-play plies per second, Adam updates per second, and whole
TD(lambda) epochs, next to the arena's speed for random games (random vs random in ``play_match``)
and the engine's random playouts, on whatever cores this process may use (printed).

Usage: ``python scripts/bench_learners.py [--rules american6] [--games 1024] [--search alphabeta]
[--depth 1] [--sims 16] [--layers 5] [--width 32] [--batch-size 256] [--repeats 5] [--td-leaf]
[--members M]``

``--members M`` also plays the same number of games as M networks' self-play vmapped side by side
(PBT's members, ``games / M`` each), once as a plain ``vmap`` and once in lockstep (the members' axis
name, ``sharding.LOCKSTEP_AXES``: the search's branches and the game loop shared by every member),
and once packed in one batch (``self_play.members_selfplay``, what PBT's epoch plays with a
full-width search: each member's leaves scored by its network in chunks of its own).

Every figure is the median of ``--repeats`` timed runs after one untimed run that compiles (the
compile seconds are printed apart). Self-play plies count the plies after the openings of every game
(``SelfPlayBatch.length``), as ``metrics.csv``'s ``plies`` does.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rules", default="american6")
    parser.add_argument("--games", type=int, default=1024, help="self-play games at once")
    parser.add_argument("--search", default="alphabeta", choices=("alphabeta", "mcts"))
    parser.add_argument("--depth", type=int, default=1, help="alpha-beta depth")
    parser.add_argument("--sims", type=int, default=16, help="MCTS simulations per move")
    parser.add_argument("--layers", type=int, default=5)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=256, help="positions per Adam step")
    parser.add_argument("--updates", type=int, default=64, help="Adam steps per timed update run")
    parser.add_argument("--opening-plies", type=int, default=4)
    parser.add_argument("--max-plies", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--devices", type=int, default=0, help="host devices (0: one per usable core)")
    parser.add_argument("--td-leaf", action="store_true", help="record principal leaves (TDLeaf)")
    parser.add_argument("--members", type=int, default=0, help="also vmap the games over M networks")
    return parser.parse_args(argv)


def timed(function, repeats: int) -> tuple[float, float, object]:
    """(compile-and-first-run seconds, median seconds of ``repeats`` later runs, last result)."""
    import jax

    start = time.perf_counter()
    result = jax.block_until_ready(function(0))
    first = time.perf_counter() - start
    times = []
    for i in range(repeats):
        start = time.perf_counter()
        result = jax.block_until_ready(function(i + 1))
        times.append(time.perf_counter() - start)
    return first, statistics.median(times), result


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    from neurocheckers.devices import use_host_devices

    devices = use_host_devices(args.devices or cores)
    import jax

    from neurocheckers.learners.common import regress
    from neurocheckers.learners.self_play import selfplay
    from neurocheckers.learners.td_lambda import TDLeafSettings, TDSettings, epoch, init, training_data
    from neurocheckers.match.arena import play_match
    from neurocheckers.rules.playout import random_playouts
    from neurocheckers.rules.presets import get_rules
    from neurocheckers.search.baselines import random_policy

    print(f"cores usable: {cores}, host devices: {devices}, jax {jax.__version__}")
    settings_class = TDLeafSettings if args.td_leaf else TDSettings
    settings = settings_class(
        rules=args.rules, layers=args.layers, width=args.width, search=args.search, depth=args.depth,
        simulations=args.sims, selfplay_games=args.games, opening_plies=args.opening_plies,
        max_plies=args.max_plies, batch_size=args.batch_size, updates_per_epoch=args.updates,
    )  # fmt: skip
    search = f"alpha-beta depth {args.depth}" if args.search == "alphabeta" else f"MCTS {args.sims} sims"
    print(
        f"{args.rules}, {args.layers}x{args.width} MLP, {args.games} games, {search}, repeats {args.repeats}"
    )
    state = init(settings, jax.random.key(0))

    play = jax.jit(functools.partial(selfplay, settings))
    first, median, batch = timed(lambda i: play(state.params, jax.random.key(i), 0.1), args.repeats)
    plies = int(batch.length.sum())
    print(
        f"self-play: {plies / median:,.0f} plies/s ({plies} plies in {median:.3f} s; "
        f"compile+first {first:.1f} s)"
    )

    if args.members:
        members_self_play(args, settings, plies / median)

    obs, targets, weights, *_ = jax.jit(training_data, static_argnums=0)(settings, state.params, batch)
    fit = jax.jit(lambda key: regress(settings, state, obs, targets, weights, key, args.updates)[1])
    first, median, _ = timed(lambda i: fit(jax.random.key(i)), args.repeats)
    print(
        f"updates: {args.updates / median:,.0f} Adam steps/s of {args.batch_size} positions "
        f"({args.updates * args.batch_size / median:,.0f} positions/s; compile+first {first:.1f} s)"
    )

    run_epoch = jax.jit(epoch, static_argnums=0)
    first, median, (_, metrics) = timed(lambda i: run_epoch(settings, state, jax.random.key(i)), args.repeats)
    print(
        f"TD(lambda) epoch ({args.updates} updates): {median:.3f} s, {int(metrics['plies']) / median:,.0f} "
        f"self-play plies/s (compile+first {first:.1f} s)"
    )

    rules = get_rules(args.rules)
    rand = random_policy(rules)
    arena = functools.partial(play_match, rules, rand, None, rand, None, num_games=args.games)
    first, median, records = timed(lambda i: arena(jax.random.key(i)), args.repeats)
    plies = int(records.length.sum())
    print(f"arena, random vs random (play_match): {plies / median:,.0f} plies/s at batch {args.games}")
    first, median, stats = timed(
        lambda i: random_playouts(rules, jax.random.key(i), args.games), args.repeats
    )
    plies = int(stats.length.sum())
    print(f"engine random playouts (random_playouts): {plies / median:,.0f} plies/s at batch {args.games}")


def members_self_play(args: argparse.Namespace, settings, one_network_rate: float) -> None:
    """Print the self-play plies/s of ``args.members`` networks (``games / members`` games each),
    vmapped plainly and in lockstep, and packed in one batch where the search is full-width, beside
    one network's ``one_network_rate``."""
    import dataclasses

    import jax
    import jax.numpy as jnp

    from neurocheckers.learners.common import searches_full_width
    from neurocheckers.learners.self_play import members_selfplay, selfplay
    from neurocheckers.learners.td_lambda import init
    from neurocheckers.sharding import MEMBERS_AXIS

    if args.games % args.members:
        raise SystemExit(f"--members {args.members} must divide --games {args.games}")
    each = dataclasses.replace(settings, selfplay_games=args.games // args.members)
    keys = jax.random.split(jax.random.key(1), args.members)
    params = jax.vmap(lambda k: init(each, k).params)(keys)
    report = _members_report(args, each.selfplay_games, one_network_rate)
    for label, axis in (("a plain vmap", None), ("in lockstep", MEMBERS_AXIS)):
        play = jax.jit(jax.vmap(lambda p, k: selfplay(each, p, k, 0.1), axis_name=axis))

        def run(i: int, play=play):
            return play(params, jax.random.split(jax.random.key(i), args.members))

        report(label, *timed(run, args.repeats))
    if searches_full_width(each):
        packed = jax.jit(lambda p, k: members_selfplay(each, p, k, jnp.full(args.members, 0.1)))

        def run_packed(i: int):
            return packed(params, jax.random.split(jax.random.key(i), args.members))

        report("packed in one batch", *timed(run_packed, args.repeats))


def _members_report(args: argparse.Namespace, games_each: int, one_network_rate: float):
    """A function that prints one members' self-play row from ``timed``'s (first, median, batch)."""

    def report(label: str, first: float, median: float, batch) -> None:
        plies = int(batch.length.sum())
        print(
            f"self-play of {args.members} networks x {games_each} games, {label}: "
            f"{plies / median:,.0f} plies/s ({one_network_rate / (plies / median):.2f}x slower than one "
            f"network; compile+first {first:.1f} s)"
        )

    return report


if __name__ == "__main__":
    main()
