"""Benchmark the batched compact MCTS: simulations per second, compile time, one device vs all.

Usage: ``python scripts/bench_search.py [--quick] [--mctx] [--devices N]``

Measures a vmapped ``neurocheckers.search.search`` over a batch of positions (``simple6`` after 10
uniformly random plies, a mid-game-like batch) with a ``--layers`` x width MLP evaluator, at each
``--sims`` count, on one device and, when ``neurocheckers.devices`` exists, split over ``--devices``
host devices with ``jax.shard_map`` (each device runs its own loops over its share of the games).
Prints the median over ``--repeats`` runs (this machine varies by 20-35% between identical runs) and
an estimate of one epoch: ``--batch`` games x ``--plies`` plies, one batched search per ply.
``--mctx`` also times mctx's ``muzero_policy`` over the same K move slots with the same evaluator.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small run: 512 games, 16 sims, width 32")
    parser.add_argument("--rules", default="simple6")
    parser.add_argument("--batch", type=int, default=2048, help="games searched together")
    parser.add_argument("--sims", type=int, nargs="+", default=[16, 64], help="simulations per search")
    parser.add_argument("--layers", type=int, default=5, help="hidden layers of the MLP")
    parser.add_argument("--widths", type=int, nargs="+", default=[64, 32], help="hidden units per layer")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per setting (median printed)")
    parser.add_argument("--plies", type=int, default=50, help="plies per game, for the epoch estimate")
    parser.add_argument("--random-plies", type=int, default=10, help="random plies before the benchmark")
    parser.add_argument(
        "--devices", type=int, default=os.cpu_count() or 1, help="host devices for the split run (1: skip)"
    )
    parser.add_argument(
        "--population",
        type=int,
        default=1,
        help="P > 1: P members, each with its own weights, search batch / P games each",
    )
    parser.add_argument("--mctx", action="store_true", help="also time mctx.muzero_policy")
    args = parser.parse_args(argv)
    if args.quick:
        args.batch, args.sims, args.widths, args.repeats = 512, [16], [32], 3
    return args


def setup_devices(count: int) -> int:
    """Ask for ``count`` host devices before JAX starts, if ``neurocheckers.devices`` exists."""
    if count <= 1:
        return 1
    try:
        from neurocheckers import devices
    except ImportError:
        print("neurocheckers.devices not found: one device only")
        return 1
    return devices.use_host_devices(count)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    wanted_devices = setup_devices(args.devices)

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    from neurocheckers import evaluator
    from neurocheckers.rules import get_rules, init, random_action, step
    from neurocheckers.search import MCTSConfig, search

    rules = get_rules(args.rules)
    batch = args.batch
    if batch % args.population:
        raise SystemExit(f"--batch {batch} must be a multiple of --population {args.population}")
    devices = jax.devices()[: max(1, wanted_devices)]
    print(
        f"jax {jax.__version__}, backend {jax.default_backend()}, {len(jax.devices())} device(s), "
        f"{os.cpu_count()} CPU(s); rules {rules.name}, batch {batch}, MLP {args.layers} hidden layers, "
        f"{'one shared network' if args.population == 1 else f'{args.population} members'}"
    )

    @jax.jit
    def positions(key: jax.Array):
        start = jax.tree.map(lambda x: jnp.broadcast_to(x, (batch, *x.shape)), init(rules))

        def ply(t, states):
            keys = jax.random.split(jax.random.fold_in(key, t), batch)
            actions = jax.vmap(functools.partial(random_action, rules))(keys, states)
            return jax.vmap(functools.partial(step, rules))(states, actions)

        return jax.lax.fori_loop(0, args.random_plies, ply, start)

    states = positions(jax.random.key(0))
    keys = jax.random.split(jax.random.key(1), batch)
    print(f"positions: {int(np.sum(np.asarray(states.terminated)))} of {batch} games already over")
    members = args.population
    if members > 1:
        # Members on the leading axis, each searching its own games: [P, B / P] states and keys.
        states, keys = jax.tree.map(
            lambda x: x.reshape(members, batch // members, *x.shape[1:]), (states, keys)
        )

    def timed(fn, *inputs) -> tuple[float, float, float]:
        """(compile seconds, median seconds, min seconds) of ``fn`` (a jitted function)."""
        started = time.perf_counter()
        compiled = fn.lower(*inputs).compile()
        compile_s = time.perf_counter() - started
        jax.block_until_ready(compiled(*inputs))
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            jax.block_until_ready(compiled(*inputs))
            times.append(time.perf_counter() - started)
        return compile_s, statistics.median(times), min(times)

    def report(
        label: str, width: int, sims: int, n_dev: int, compile_s: float, median_s: float, min_s: float
    ):
        rate = sims * batch / median_s
        epoch = args.plies * median_s
        print(
            f"{label:8s} width {width:3d}  sims {sims:3d}  devices {n_dev}  compile {compile_s:5.1f} s  "
            f"search {median_s * 1e3:8.1f} ms (min {min_s * 1e3:7.1f})  {rate / 1e6:6.3f} M sims/s  "
            f"epoch of {args.plies} plies ~ {epoch:5.1f} s"
        )

    for width in args.widths:
        spec = evaluator.EvaluatorSpec(layers=args.layers, width=width, board_size=rules.board_size)
        value_fn = evaluator.value_fn(spec)
        if members > 1:
            params = evaluator.init_population(jax.random.key(2), spec, members)
        else:
            params = evaluator.init_params(jax.random.key(2), spec)
        for sims in args.sims:
            one_search = functools.partial(search, rules, MCTSConfig(num_simulations=sims), value_fn)
            batched = jax.vmap(one_search, in_axes=(None, 0, 0))
            if members > 1:
                batched = jax.vmap(batched, in_axes=(0, 0, 0))
            single = jax.jit(batched)
            report("compact", width, sims, 1, *timed(single, params, states, keys))
            if len(devices) > 1 and batch % len(devices) == 0:
                mesh = Mesh(np.array(devices), ("games",))
                split = jax.jit(
                    jax.shard_map(
                        batched,
                        mesh=mesh,
                        in_specs=(
                            PartitionSpec("games") if members > 1 else PartitionSpec(),
                            PartitionSpec("games"),
                            PartitionSpec("games"),
                        ),
                        out_specs=PartitionSpec("games"),
                    )
                )
                games = NamedSharding(mesh, PartitionSpec("games"))
                sharded = (jax.device_put(states, games), jax.device_put(keys, games))
                shared = jax.device_put(params, games) if members > 1 else params
                report("compact", width, sims, len(devices), *timed(split, shared, *sharded))
            if args.mctx and members == 1:
                report(
                    "mctx", width, sims, 1, *timed(mctx_policy(rules, sims, value_fn), params, states, keys)
                )
        sys.stdout.flush()
    return 0


def mctx_policy(rules, num_simulations: int, value_fn):
    """A jitted ``(params, states [B], keys [B]) -> actions [B]`` with mctx over the K legal-move slots.

    mctx conventions (verified in the design note): value is for the side to move, in [-1, 1]; reward
    is for the player who just moved; discount -1, +1 when the same player moves again (a multi-jump),
    0 at a terminal; below a terminal, reward, discount and value are 0; ``invalid_actions`` only masks
    the root, so illegal slots get prior logits of ``finfo.min`` inside the tree.
    """
    import jax
    import jax.numpy as jnp
    import mctx

    from neurocheckers.rules import step
    from neurocheckers.rules.bits import nth_legal_action
    from neurocheckers.rules.outcome import points_for

    k = rules.max_legal_moves
    slots = jnp.arange(k)
    floor = jnp.finfo(jnp.float32).min

    def logits(state):
        return jnp.where(slots < state.num_legal_actions, 0.0, floor)

    def recurrent_one(params, key, slot, state):
        after = step(rules, state, nth_legal_action(rules, state.legal_bits, slot))
        same_player = after.color == state.color
        # The result for the side to move after the move (colour 0 is Black).
        outcome = 2.0 * points_for(after.result, after.color == 0) - 1.0
        reward = jnp.where(after.terminated, jnp.where(same_player, outcome, -outcome), 0.0)
        discount = jnp.where(after.terminated, 0.0, jnp.where(same_player, 1.0, -1.0))
        value = jnp.where(after.terminated, 0.0, 2.0 * value_fn(params, after, key) - 1.0)
        below_terminal = state.terminated
        out = mctx.RecurrentFnOutput(
            reward=jnp.where(below_terminal, 0.0, reward),
            discount=jnp.where(below_terminal, 0.0, discount),
            prior_logits=logits(after),
            value=jnp.where(below_terminal, 0.0, value),
        )
        return out, after

    def recurrent_fn(params, key, action, embedding):
        keys = jax.random.split(key, action.shape[0])
        return jax.vmap(recurrent_one, in_axes=(None, 0, 0, 0))(params, keys, action, embedding)

    def policy(params, states, keys):
        root_values = jax.vmap(lambda s, kk: 2.0 * value_fn(params, s, kk) - 1.0)(states, keys)
        root = mctx.RootFnOutput(prior_logits=jax.vmap(logits)(states), value=root_values, embedding=states)
        out = mctx.muzero_policy(
            params,
            keys[0],
            root,
            recurrent_fn,
            num_simulations=num_simulations,
            invalid_actions=jax.vmap(lambda s: slots >= s.num_legal_actions)(states),
            temperature=0.0,
        )
        return out.action

    return jax.jit(policy)


if __name__ == "__main__":
    sys.exit(main())
