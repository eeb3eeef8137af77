"""Benchmark the batched compact MCTS: simulations per second, compile time, one device vs all.

Usage: ``python scripts/bench_search.py [--quick] [--mctx] [--devices N]``

Measures a vmapped ``neurocheckers.search.search`` over a batch of positions (``simple6`` after 10
uniformly random plies, a mid-game-like batch) with a ``--layers`` x width MLP evaluator, at each
``--sims`` count, on one device and, when ``neurocheckers.devices`` exists, split over ``--devices``
host devices with ``jax.shard_map`` (each device runs its own loops over its share of the games).
Prints the median over ``--repeats`` runs (this machine varies by 20-35% between identical runs) and
an estimate of one epoch: ``--batch`` games x ``--plies`` plies, one batched search per ply.
``--mctx`` also times mctx's ``muzero_policy`` over the same K move slots with the same evaluator.

``--alphabeta`` instead compares the play-time search (``search.timed``, one game at a time, on the
host) with py-draughts' ``SimpleEngine`` and OpenSpiel's Python ``alpha_beta_search`` and ``MCTSBot``
on ``american8`` (see ``alphabeta_main``):
``python scripts/bench_search.py --alphabeta [--positions 20] [--seconds 0.5] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

ENGINES = ("ours", "pydraughts", "openspiel-ab", "openspiel-mcts")
"""The engines of ``--alphabeta``."""


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
    parser.add_argument(
        "--repeats", type=int, default=None, help="timed runs per setting (median printed; 7, --alphabeta 3)"
    )
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
    add_alphabeta_args(parser)
    args = parser.parse_args(argv)
    if args.repeats is None:
        args.repeats = 3 if args.alphabeta else 7
    if args.quick:
        args.batch, args.sims, args.widths, args.repeats = 512, [16], [32], 3
    return args


def add_alphabeta_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("--alphabeta: the timed alpha-beta beside py-draughts and OpenSpiel")
    group.add_argument("--alphabeta", action="store_true", help="run this comparison instead (american8)")
    group.add_argument("--positions", type=int, default=20, help="the first N openings with a move choice")
    group.add_argument("--midgame", type=int, default=5, help="mid-game positions by seeded random play")
    group.add_argument("--midgame-plies", type=int, default=16, help="random plies after the opening")
    group.add_argument("--seconds", type=float, default=0.5, help="time per move of the timed searches")
    group.add_argument(
        "--evaluators",
        nargs="+",
        default=["material", "heuristic", "results/openspiel/agent.safetensors"],
        help="leaf evaluators of our timed search (material, heuristic or an agent file)",
    )
    group.add_argument(
        "--table-bits",
        nargs="+",
        type=int,
        default=[0],
        help="transposition table sizes of our timed search, as powers of 2 (0: none; one row each)",
    )
    group.add_argument("--pydraughts-depth-cap", type=int, default=30, help="SimpleEngine depth_limit")
    group.add_argument("--openspiel-depth", type=int, default=6, help="alpha_beta_search maximum_depth")
    group.add_argument("--mcts-sims", type=int, default=1000, help="OpenSpiel MCTSBot simulations")
    group.add_argument(
        "--engines",
        nargs="+",
        default=list(ENGINES),
        choices=list(ENGINES),
        help="which engines to time (default all)",
    )


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
    if args.alphabeta:
        return alphabeta_main(args)
    wanted_devices = setup_devices(args.devices)

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    from neurocheckers.networks import evaluator
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


# --- --alphabeta: the play-time search beside py-draughts' and OpenSpiel's ----------------------------


@dataclasses.dataclass(frozen=True)
class Position:
    """A benchmark position: our host ``State``, and the opening and our actions after it that reach it
    (replayed in OpenSpiel, which cannot be set up from a position)."""

    name: str
    state: Any
    opening: Any
    extra: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True)
class Pass:
    """One engine's pass over every position."""

    seconds: float
    """Search seconds, summed over the positions (set-up outside the clock)."""
    moves: int
    nodes: int | None
    depths: list[int] | None


@dataclasses.dataclass
class Row:
    """One line of the table: an engine set up (compiled, warm) and its passes, run by ``run_pass(r)``
    for pass ``r``; every row's pass ``r`` runs before any row's pass ``r + 1``, so that the machine's
    load, which changes over minutes, weighs on all engines alike."""

    label: str
    unit: str
    run_pass: Callable[[int], Pass]
    passes: list[Pass] = dataclasses.field(default_factory=list)


def alphabeta_main(args: argparse.Namespace) -> int:
    """The timed alpha-beta beside py-draughts and OpenSpiel, one core, one game at a time."""
    from neurocheckers.rules import get_rules

    rules = get_rules("american8")
    load_start = os.getloadavg()
    positions, notes = bench_positions(rules, args.positions, args.midgame, args.midgame_plies)
    alphabeta_header(args, positions, notes, load_start)
    rows: list[Row] = []
    if "ours" in args.engines:
        for evaluator in args.evaluators:
            for bits in args.table_bits:
                row, compile_s = bench_ours(rules, positions, evaluator, args, bits)
                print(f"{row.label}: first search (compile) {compile_s:.1f} s, then compile caches warm")
                rows.append(row)
    if "pydraughts" in args.engines:
        rows.append(bench_pydraughts(positions, args))
    if {"openspiel-ab", "openspiel-mcts"} & set(args.engines):
        import pyspiel

        game = pyspiel.load_game("checkers")
        os_states = openspiel_states(game, positions)
        if "openspiel-ab" in args.engines:
            rows += bench_openspiel_ab(game, os_states, args)
        if "openspiel-mcts" in args.engines:
            rows.append(bench_openspiel_mcts(game, os_states, args))
    for r in range(args.repeats):
        for row in rows:
            row.passes.append(row.run_pass(r))
        print(f"pass {r + 1} of {args.repeats} done, load average {fmt_load()}", flush=True)
    print()
    print_table(rows)
    print()
    print_alphabeta_notes(args)
    print(f"load average (1, 5, 15 min) at the start: {fmt_load(load_start)}; at the end: {fmt_load()}")
    return 0


def print_alphabeta_notes(args) -> None:
    notes = [
        "A node is not the same unit in each engine, so nodes/s compares speed per unit of work, not per",
        "position: ours counts loop iterations (one jump of a multi-jump is a level; a child searched and",
        "a node finished are an iteration each), py-draughts counts negamax and quiescence calls (a whole",
        "multi-jump is one move), OpenSpiel counts _alpha_beta calls (states visited; one jump is one",
        "action). 'depth' at equal time compares like with like better: ours is the deepest nominal",
        "depth whose result chose the move (in actions; captures extended to quiet, up to 8 levels),",
        "py-draughts' the last iteration it finished (in whole moves, with quiescence over captures,",
        "a transposition table, PVS and late-move reductions), OpenSpiel's the deepest fixed-depth",
        "search (in actions, no quiescence, no table, restarted from scratch each depth) finished",
        f"within {args.seconds:g} s. OpenSpiel's material leaf score ties in most quiet positions, so its",
        "alpha-beta prunes to a near-minimal tree there: its depths flatter it. Our material",
        "evaluator ties likewise. s/move differs from the budget because each engine stops its own way:",
        "ours starts no iteration past half the budget, py-draughts checks the clock every 2048 nodes",
        "and after each iteration, OpenSpiel's deepening here at each leaf.",
    ]
    print("\n".join(notes))


def fmt_load(load: tuple[float, float, float] | None = None) -> str:
    return ", ".join(f"{x:.2f}" for x in (load or os.getloadavg()))


def alphabeta_header(args, positions: list[Position], notes: list[str], load_start) -> None:
    from importlib.metadata import version

    import jax

    cpus = sorted(os.sched_getaffinity(0))
    print(
        f"jax {jax.__version__} ({jax.default_backend()}), py-draughts {version('py-draughts')}, "
        f"open_spiel {version('open_spiel')}; american8"
    )
    print(
        f"CPUs this process may use: {cpus} of {os.cpu_count()}; load average (1, 5, 15 min) at the "
        f"start: {fmt_load(load_start)} (other jobs were running: numbers are slower and noisier than on "
        "an idle machine)"
    )
    print(
        f"one core, one game at a time, {args.seconds:g} s per move for every timed search (ours, "
        f"py-draughts, OpenSpiel's deepening); {len(positions)} positions; median of {args.repeats} passes"
    )
    for note in notes:
        print(note)
    print()


def bench_positions(rules, count: int, midgame: int, plies: int) -> tuple[list[Position], list[str]]:
    """The first ``count`` committed openings with a choice of move (a forced move is not searched
    by our player), then ``midgame`` positions ``plies`` seeded random plies (and on to a choice of
    move, no multi-jump under way) after the first of them."""
    import jax
    import numpy as np

    from neurocheckers.rules import step
    from neurocheckers.rules.openings import load_openings, opening_states

    openings = load_openings(rules)
    host = jax.device_get(opening_states(rules, openings))
    states = [jax.tree.map(lambda x, i=i: x[i], host) for i in range(len(openings))]
    chosen = [i for i, s in enumerate(states) if int(s.num_legal_actions) >= 2][:count]
    skipped = [i + 1 for i in range(chosen[-1] + 1) if i not in chosen]
    positions = [Position(f"opening {i + 1}", states[i], states[i]) for i in chosen]
    step_fn = jax.jit(functools.partial(step, rules))
    rng = np.random.default_rng(0)
    made = 0
    for i in chosen:
        if made == midgame:
            break
        state, extra = states[i], []
        while len(extra) < plies or int(state.continuing) or int(state.num_legal_actions) < 2:
            if bool(state.terminated) or len(extra) > 4 * plies:
                break
            action = int(rng.choice(np.flatnonzero(np.asarray(state.legal_action_mask))))
            state = jax.device_get(step_fn(state, action))
            extra.append(action)
        if not bool(state.terminated) and int(state.num_legal_actions) >= 2 and not int(state.continuing):
            positions.append(
                Position(f"opening {i + 1} + {len(extra)} plies", state, states[i], tuple(extra))
            )
            made += 1
    notes = [
        f"positions: openings {[i + 1 for i in chosen]} of the committed set (skipped, one legal action: "
        f"{skipped}), and {made} mid-game positions, {plies}+ random plies (numpy seed 0) after "
        f"openings {[i + 1 for i in chosen[:made]]}"
    ]
    return positions, notes


def bench_ours(
    rules, positions: list[Position], evaluator: str, args, table_bits: int = 0
) -> tuple[Row, float]:
    """Our timed search (``timed:SECONDSs:EVAL``, with a transposition table of ``2 ** table_bits``
    entries, 0: none) on every position, a fresh table for each; the first search compiles."""
    import jax

    from neurocheckers.networks.agent_file import load_agent
    from neurocheckers.players.timed import parse_timed

    deepening = parse_timed(f"timed:{args.seconds:g}s:{evaluator}", rules, table_bits).deepening
    started = time.perf_counter()
    deepening.search(positions[0].state, jax.random.key(0), nodes=1000)
    compile_s = time.perf_counter() - started
    for position in positions[:3]:  # the node rate measured, as in a game after a few moves
        deepening.search(position.state, jax.random.key(1), seconds=args.seconds)

    def run_pass(r: int) -> Pass:
        keys = [jax.random.key(1000 * r + i) for i in range(len(positions))]
        infos = [
            deepening.search(p.state, k, seconds=args.seconds) for p, k in zip(positions, keys, strict=True)
        ]
        nodes = sum(i.nodes for i in infos)
        return Pass(sum(i.seconds for i in infos), len(infos), nodes, [i.depth for i in infos])

    name = evaluator
    if evaluator not in ("material", "heuristic"):
        spec = load_agent(evaluator, rules).spec
        name = f"{spec.layers} x {spec.width} {spec.architecture} {evaluator}"
    table = f", table 2^{table_bits}" if table_bits else ""
    label = f"ours: timed alpha-beta (JAX, jitted), {name}{table}"
    return Row(label, "loop iterations (child searched or node finished)", run_pass), compile_s


class DepthLog:
    """Stands in for py-draughts' logger in ``SimpleEngine.get_best_move``, which logs ``Depth d: ...``
    after each iteration of its deepening: keeps the last ``d``."""

    def __init__(self) -> None:
        self.depth = 0

    def debug(self, message: str) -> None:
        if message.startswith("Depth "):
            self.depth = int(message.split()[1].rstrip(":"))

    def info(self, message: str) -> None:
        pass


def bench_pydraughts(positions: list[Position], args) -> Row:
    """py-draughts' ``SimpleEngine`` (a fresh one a position) with ``time_limit`` = ``--seconds``.

    Depth: the last iteration it finished. An iteration cut by the clock (``stop_search`` set) returns
    at once and is still logged, so it is not counted."""
    import importlib

    from neurocheckers.players.pydraughts import board_of, draughts_module

    draughts = draughts_module()
    simple = importlib.import_module("draughts.engines.simple")
    draughts.SimpleEngine(depth_limit=3).get_best_move(board_of(positions[0].state))  # warm caches

    def run_pass(r: int) -> Pass:
        log, logger = DepthLog(), simple.logger
        simple.logger = log
        seconds, nodes, depths = 0.0, 0, []
        try:
            for position in positions:
                board = board_of(position.state)
                engine = draughts.SimpleEngine(depth_limit=args.pydraughts_depth_cap, time_limit=args.seconds)
                log.depth = 0
                started = time.perf_counter()
                engine.get_best_move(board)
                seconds += time.perf_counter() - started
                nodes += int(engine.nodes)
                depths.append(log.depth - (1 if engine.stop_search else 0))
        finally:
            simple.logger = logger
        return Pass(seconds, len(positions), nodes, depths)

    label = "py-draughts 1.10.1 SimpleEngine, Python (board_of: forced captures)"
    return Row(label, "negamax + quiescence calls", run_pass)


def openspiel_states(game, positions: list[Position]) -> list[Any]:
    """OpenSpiel states of the positions: the opening's path (``engines.opening_path``) and then the
    same actions; ``RuntimeError`` unless the pieces, the side to move and the moves agree."""
    from neurocheckers.players.openspiel import opening_path
    from neurocheckers.rules.openspiel_actions import legal_moves_of, position_of

    out = []
    for position in positions:
        state = game.new_initial_state()
        for action in opening_path(game, position.opening):
            state.apply_action(action)
        for action in position.extra:
            state.apply_action(legal_moves_of(state)[action])
        ours = position.state
        target = {
            name: {s + 1 for s in range(32) if int(getattr(ours, name)) >> s & 1}
            for name in ("black_men", "black_kings", "white_men", "white_kings")
        }
        target["black_to_move"] = int(ours.color) == 0
        if position_of(state) != target or len(state.legal_actions()) != int(ours.num_legal_actions):
            raise RuntimeError(f"{position.name}: OpenSpiel's position differs from ours")
        out.append(state)
    return out


class OutOfTime(Exception):
    """Raised from a leaf when an OpenSpiel search passes its deadline."""


def bench_openspiel_ab(game, os_states: list[Any], args) -> list[Row]:
    """OpenSpiel's ``alpha_beta_search`` with ``engines.material_for`` at the leaves: at a fixed depth
    (nodes counted in a separate pass, timed passes without the counter), and deepening 1, 2, ...
    from scratch until ``--seconds`` (the deepest depth finished in time)."""
    from neurocheckers.players.openspiel import material_for, openspiel_modules

    _, _, minimax = openspiel_modules()
    depth = args.openspiel_depth

    def search(state, depth: int, value=None) -> None:
        value = value or material_for(state.current_player())
        minimax.alpha_beta_search(game, state, value_function=value, maximum_depth=depth)

    nodes = sum(count_calls(minimax, lambda s=s: search(s, depth)) for s in os_states)

    def fixed_pass(r: int) -> Pass:
        seconds = 0.0
        for state in os_states:
            started = time.perf_counter()
            search(state, depth)
            seconds += time.perf_counter() - started
        return Pass(seconds, len(os_states), nodes, [depth] * len(os_states))

    def deepening_pass(r: int) -> Pass:
        reached = [openspiel_depth_in_time(search, s, args.seconds, material_for) for s in os_states]
        return Pass(sum(t for _, t in reached), len(os_states), None, [d for d, _ in reached])

    label = "OpenSpiel 2.0.2, Python API alpha_beta_search"
    return [
        Row(f"{label}, depth {depth}", "_alpha_beta calls (states visited)", fixed_pass),
        Row(f"{label}, deepening to {args.seconds:g} s", "(depth only)", deepening_pass),
    ]


def count_calls(minimax, run) -> int:
    """Calls of ``minimax._alpha_beta`` (one a state visited, the root included) while ``run()`` runs:
    the recursion looks the name up in the module, so a counting wrapper sees every call."""
    original, count = minimax._alpha_beta, 0

    def counted(*a, **k):
        nonlocal count
        count += 1
        return original(*a, **k)

    minimax._alpha_beta = counted
    try:
        run()
    finally:
        minimax._alpha_beta = original
    return count


def openspiel_depth_in_time(search, state, seconds: float, material_for) -> tuple[int, float]:
    """``(depth, seconds)``: the deepest depth that ``search`` finished within ``seconds`` of
    deepening 1, 2, ... from scratch (a leaf past the deadline stops it), and the time taken."""
    value = material_for(state.current_player())
    started = time.perf_counter()
    deadline = started + seconds

    def timed_value(s) -> float:
        if time.perf_counter() > deadline:
            raise OutOfTime
        return value(s)

    reached = 0
    try:
        for depth in range(1, 31):
            search(state, depth, timed_value)
            reached = depth
    except OutOfTime:
        pass
    return reached, time.perf_counter() - started


def bench_openspiel_mcts(game, os_states: list[Any], args) -> Row:
    """OpenSpiel's ``MCTSBot`` (``engines.make_bot``, ``openspiel:mcts:N``): seconds a move."""
    from neurocheckers.players.openspiel import EngineBot, make_bot

    sims = args.mcts_sims
    bot = EngineBot(f"openspiel:mcts:{sims}", "mcts", sims)

    def run_pass(r: int) -> Pass:
        seconds = 0.0
        for i, state in enumerate(os_states):
            step_fn, root = make_bot(bot, game, [r, i]), state.clone()
            started = time.perf_counter()
            step_fn(root)
            seconds += time.perf_counter() - started
        return Pass(seconds, len(os_states), sims * len(os_states), None)

    label = f"OpenSpiel 2.0.2, Python MCTSBot, {sims} sims, random rollouts"
    return Row(label, "simulations (one random playout each)", run_pass)


def print_table(rows: list[Row]) -> None:
    """One line a row: rate median (min-max over passes), mean depth, seconds a move (medians)."""
    head = ("engine / evaluator", "nodes/s median", "(min - max)", "depth", "s/move")
    print(f"{head[0]:82s} {head[1]:>14s} {head[2]:>19s} {head[3]:>6s} {head[4]:>7s}  unit")
    for row in rows:
        spm = statistics.median(p.seconds / p.moves for p in row.passes)
        depth = "-"
        if row.passes[0].depths is not None:
            depth = f"{statistics.median(statistics.mean(p.depths) for p in row.passes):.2f}"
        rate = spread = "-"
        if row.passes[0].nodes is not None:
            rates = [p.nodes / p.seconds for p in row.passes]
            rate = f"{statistics.median(rates):,.0f}"
            spread = f"({min(rates):,.0f} - {max(rates):,.0f})"
        print(f"{row.label:82s} {rate:>14s} {spread:>19s} {depth:>6s} {spm:7.3f}  {row.unit}")


if __name__ == "__main__":
    sys.exit(main())
