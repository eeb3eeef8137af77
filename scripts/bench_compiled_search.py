"""Benchmark and check the compiled (numba) search of ``neurocheckers.compiled``.

Usage:
  python scripts/bench_compiled_search.py [--positions 50] [--seconds 0.1] [--repeats 3] [--variants]
  python scripts/bench_compiled_search.py --perft 11          # perft on every preset, leaves/s
  python scripts/bench_compiled_search.py --check-moves 1000000  # move lists against the JAX rules
  python scripts/bench_compiled_search.py --match 30 --seconds 0.02  # LMR against none
  python scripts/bench_compiled_search.py --match 20 --nodes 20000 --option lmr_log=1 --agent FILE
  python scripts/bench_compiled_search.py --against-timed 10 --seconds 0.1  # against the JAX search
  python scripts/bench_compiled_search.py --agent MLP.safetensors --agent NNUE.safetensors
  python scripts/bench_compiled_search.py --games 10 --seconds 0.1 --agent FILE  # depth as played

The speed run searches ``--positions`` middlegame positions (random playouts of 10-30 whole moves
from the start, seeded) for ``--seconds`` each with a fresh table, one game at a time on this
process's core, and prints the median nodes per second and the median depth reached (whole moves),
with the state of numba's cache at the start (cold: every function compiled in this process).
``--variants`` also times late-move reductions and aspiration windows, and ``--fixed-depth D`` the
nodes each variant needs to complete depth D. Each ``--agent FILE`` (an MLP or NNUE agent) is
timed too, its network at the leaves (material first); ``--against-timed`` then plays with the
first agent's network on both sides. Besides nodes per second of wall time it prints nodes per
second of the thread's CPU time (what a core of its own would give when others share it). Pin it
to one core (``taskset -c 1``) and say the machine's load: other processes on the core change the
figures.

``--games N`` measures the depth *as played*: N self-play games (from the first N committed openings, both
colours played by the same search, under the game's own draw rule), each side's table kept between
its moves as in a match, for material leaves and each ``--agent``; it prints the median and mean depth
a move, nodes per second (wall and CPU) and the time used a move. With ``--nodes N`` each move gets
N nodes instead of ``--seconds`` (the depth a core of its own reaches at N / (nodes a second),
whatever else runs on the machine).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_CACHE = ROOT / "neurocheckers" / "compiled" / "__pycache__"
MAX_GAME_PLIES = 600
"""A benchmark game still going after this many actions is stopped and counted a draw (the game's own
rule lets two searches shuffle kings for 79 plies between man moves for a long time)."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rules", default="american8", help="rules preset of the speed run")
    p.add_argument("--positions", type=int, default=50, help="middlegame positions (>= 1)")
    p.add_argument("--seconds", type=float, default=0.1, help="time a move (> 0)")
    p.add_argument("--repeats", type=int, default=1, help="runs over the positions; the median run counts")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--variants", action="store_true", help="also time LMR and aspiration windows")
    p.add_argument("--fixed-depth", type=int, default=0, help="nodes to complete this depth, per variant")
    p.add_argument(
        "--nodes", type=int, default=0, help="also the median depth with this many nodes a move (no clock)"
    )
    p.add_argument("--perft", type=int, default=0, help="perft from the start to this depth, every preset")
    p.add_argument("--match", type=int, default=0, help="openings of a match: LMR (default) against none")
    p.add_argument(
        "--against-timed",
        type=int,
        default=0,
        help="openings of a match compiled:SECONDSs against timed:SECONDSs:material (JAX)",
    )
    p.add_argument("--games", type=int, default=0, help="self-play games a leaf kind: depth as played")
    p.add_argument(
        "--option",
        action="append",
        default=[],
        help="KEY=VALUE of SearchOptions: the variant --match and --games try",
    )
    p.add_argument("--skip-material", action="store_true", help="--games: only the --agent networks")
    p.add_argument("--check-moves", type=int, default=0, help="random positions per preset to check")
    p.add_argument("--agent", action="append", default=[], help="an agent file whose network scores leaves")
    args = p.parse_args(argv)
    for path in args.agent:
        try:
            from neurocheckers.compiled import network

            network.load(path)
        except ValueError as error:
            p.error(f"--agent: {error}")
    if (
        args.positions < 1
        or args.seconds <= 0
        or args.repeats < 1
        or args.fixed_depth < 0
        or args.nodes < 0
        or args.games < 0
    ):
        p.error(
            f"bad sizes: --positions {args.positions}, --seconds {args.seconds}, --repeats {args.repeats}"
        )
    return args


def numba_cache_state() -> str:
    where = os.environ.get("NUMBA_CACHE_DIR")
    folder = Path(where) if where else PACKAGE_CACHE
    entries = len(list(folder.rglob("*.nbi"))) if folder.is_dir() else 0
    return f"{'warm' if entries else 'cold'}: {entries} numba index files in {folder} at the start"


def middlegame_positions(rules, count: int, seed: int) -> list:
    """Positions after 10-30 random whole moves from the start with two legal moves or more."""
    import numpy as np

    from neurocheckers.compiled.board import Position
    from neurocheckers.compiled.driver import CompiledSearch, SearchOptions
    from neurocheckers.compiled.movegen import make

    mover = CompiledSearch(rules, SearchOptions(table_bits=4))
    rng = np.random.default_rng(seed)
    n, men = rules.num_squares, rules.men_per_side
    out = []
    while len(out) < count:
        pos = Position((1 << men) - 1, 0, ((1 << men) - 1) << (n - men), 0, 0)
        for _ in range(int(rng.integers(10, 31))):
            legal = mover.legal_moves(pos)
            if len(legal) == 0:
                break
            src, dst, cap, _ = legal[rng.integers(len(legal))]
            a, b, c, d = make(mover.geo, *pos.relative(), np.int64(pos.color), src, dst, cap)
            a, b, c, d = int(a), int(b), int(c), int(d)
            pos = Position(c, d, a, b, 1) if pos.color == 0 else Position(a, b, c, d, 0)
        if len(mover.legal_moves(pos)) >= 2:
            out.append(pos)
    return out


def speed(rules, positions, seconds: float, options, repeats: int, leaves=None) -> dict:
    from neurocheckers.compiled.driver import CompiledSearch

    search = CompiledSearch(rules, options, leaves)
    search.search(positions[0], depth=2)  # compiled (or loaded) before the clock runs
    runs = []
    for _ in range(repeats):
        rates, cpu_rates, depths = [], [], []
        for pos in positions:
            search.new_game()
            cpu = time.thread_time()
            r = search.search(pos, seconds=seconds)
            cpu = time.thread_time() - cpu
            rates.append(r.nodes / r.seconds)
            cpu_rates.append(r.nodes / max(cpu, 1e-6))
            depths.append(r.depth)
        runs.append(
            (
                statistics.median(rates),
                statistics.median(cpu_rates),
                statistics.median(depths),
                statistics.mean(depths),
            )
        )
    rate, cpu_rate, depth, mean_depth = sorted(runs)[len(runs) // 2]
    return {"nodes_per_s": rate, "cpu_nodes_per_s": cpu_rate, "median_depth": depth, "mean_depth": mean_depth}


def depth_at_nodes(rules, positions, nodes: int, options, leaves=None) -> float:
    """The median depth completed with ``nodes`` a move: the depth a core of its own would reach at
    ``nodes / (nodes per second)`` seconds, whatever else runs on the machine."""
    from neurocheckers.compiled.driver import CompiledSearch

    search = CompiledSearch(rules, options, leaves)
    depths = []
    for pos in positions:
        search.new_game()
        depths.append(search.search(pos, nodes=nodes).depth)
    return statistics.median(depths)


def fixed_depth_nodes(rules, positions, depth: int, options) -> float:
    from neurocheckers.compiled.driver import CompiledSearch

    search = CompiledSearch(rules, options)
    counts = []
    for pos in positions:
        search.new_game()
        counts.append(search.search(pos, depth=depth).nodes)
    return statistics.median(counts)


def speed_main(args) -> None:
    state = numba_cache_state()
    t0 = time.perf_counter()
    import dataclasses

    from neurocheckers.compiled import network
    from neurocheckers.compiled.driver import CompiledSearch, SearchOptions
    from neurocheckers.rules.presets import get_rules

    imported = time.perf_counter() - t0
    rules = get_rules(args.rules)
    positions = middlegame_positions(rules, args.positions, args.seed)
    t1 = time.perf_counter()
    CompiledSearch(rules, SearchOptions(table_bits=10)).search(positions[0], depth=2)
    first = time.perf_counter() - t1
    print(f"numba cache: {state}; import {imported:.2f} s, first search {first:.2f} s")
    print(f"load average {os.getloadavg()[0]:.2f}; affinity {sorted(os.sched_getaffinity(0))}")
    print(f"{args.rules}: {len(positions)} positions, {args.seconds} s a move, {args.repeats} run(s)")
    base = SearchOptions()
    variants = {"default": base}
    if args.variants:
        variants |= {
            "no lmr": dataclasses.replace(base, lmr=False),
            "aspiration 0.5": dataclasses.replace(base, aspiration=0.5),
            "no lmr, aspiration": dataclasses.replace(base, lmr=False, aspiration=0.5),
        }
    if args.option:
        name, options = variant(args)
        variants[name] = options
    runs = [(name, options, None) for name, options in variants.items()]
    for path in args.agent:
        leaves = network.load(path)
        runs.append((f"{Path(path).name} ({('mlp', 'mlp', 'nnue')[leaves.kind]})", base, leaves))
    for name, options, leaves in runs:
        s = speed(rules, positions, args.seconds, options, args.repeats, leaves)
        line = (
            f"  {name:18s} {s['nodes_per_s'] / 1e6:5.2f} M nodes/s ({s['cpu_nodes_per_s'] / 1e6:.2f} M a CPU"
        )
        line += f" second), depth median {s['median_depth']} (mean {s['mean_depth']:.1f})"
        if args.nodes:
            depth = depth_at_nodes(rules, positions, args.nodes, options, leaves)
            line += f", depth median with {args.nodes:,} nodes {depth}"
        if args.fixed_depth:
            nodes = fixed_depth_nodes(rules, positions, args.fixed_depth, options)
            line += f", nodes to depth {args.fixed_depth}: {nodes:,.0f}"
        print(line, flush=True)


def perft_main(depth: int) -> None:
    import numpy as np

    from neurocheckers.compiled.board import Position, geometry
    from neurocheckers.compiled.movegen import move_buffer, perft
    from neurocheckers.rules.presets import PRESETS

    table = json.loads((ROOT / "tests" / "data" / "perft.json").read_text())
    buf = move_buffer(depth + 1)
    for name, rules in PRESETS.items():
        n, men = rules.num_squares, rules.men_per_side
        om, ok, pm, pk = Position((1 << men) - 1, 0, ((1 << men) - 1) << (n - men), 0, 0).relative()
        for d in range(1, min(depth, len(table[name]["perft"])) + 1):
            t = time.perf_counter()
            count = int(perft(geometry(rules), om, ok, pm, pk, np.int64(0), np.int64(d), buf, np.int64(0)))
            dt = time.perf_counter() - t
            ok_ = (
                "ok"
                if count == table[name]["perft"][d - 1]
                else f"MISMATCH (table {table[name]['perft'][d - 1]})"
            )
            print(
                f"{name} depth {d}: {count} {ok_}, {count / max(dt, 1e-9) / 1e6:.1f} M leaves/s", flush=True
            )


def check_main(count: int, seed: int) -> int:
    from neurocheckers.compiled.check import compare_moves
    from neurocheckers.rules.presets import PRESETS

    bad_total = 0
    for name, rules in PRESETS.items():
        done = moves = 0
        for start in range(0, count, 100_000):
            size = min(100_000, count - start)
            _, rows, bad = compare_moves(rules, size, seed=seed + start)
            done, moves, bad_total = done + size, moves + len(rows), bad_total + len(bad)
            for position in bad[:5]:
                print(f"  {name} mismatch at {position}")
        print(
            f"{name}: {done} positions, {moves} whole-turn moves, mismatches so far {bad_total}", flush=True
        )
    return 1 if bad_total else 0


def play_game(rules, searches, opening, seconds: float | None, record=None, nodes: int | None = None) -> int:
    """One game under the game's own draw rule from ``opening`` (FEN), at most ``MAX_GAME_PLIES``
    actions; +1 Black won, -1, 0.
    ``record(result, cpu_seconds)`` is called after each searched move."""
    from neurocheckers.compiled.board import Position, game_rule
    from neurocheckers.compiled.game import Game
    from neurocheckers.rules.fen import read_fen

    fen = read_fen(opening[0], rules.board_size)
    position = Position(
        fen.black_men, fen.black_kings, fen.white_men, fen.white_kings, 0 if fen.black_to_move else 1
    )
    game = Game(game_rule(rules), position, ply=opening[1])
    for search in searches:
        search.new_game()
    while game.result is None and game.ply < MAX_GAME_PLIES:
        search = searches[game.position.color]
        cpu = time.thread_time()
        r = search.search(
            game.position, seconds=seconds, nodes=nodes, ply=game.ply, quiet=game.quiet, history=game.history
        )
        if record is not None and r.nodes:
            record(r, time.thread_time() - cpu)
        game.play(r.move)
    return 0 if game.result is None else game.result


def variant(args):
    """``(name, SearchOptions)`` of the ``--option KEY=VALUE`` switches (None without any)."""
    import dataclasses

    from neurocheckers.compiled.driver import SearchOptions

    if not args.option:
        return None
    changes = {}
    for item in args.option:
        key, _, value = item.partition("=")
        fields = {f.name: f.type for f in dataclasses.fields(SearchOptions)}
        if key not in fields or not value:
            raise SystemExit(f"--option {item!r}: expected KEY=VALUE, KEY one of {', '.join(fields)}")
        kind = {"bool": lambda v: v.lower() in ("1", "true", "on", "yes"), "int": int, "float": float}
        changes[key] = kind[fields[key]](value)
    return ", ".join(args.option), dataclasses.replace(SearchOptions(), **changes)


def match_main(args) -> None:
    """The ``--option`` variant (without one: the default, with late-move reductions, against no
    LMR) against the default, each opening twice (both colours), equal time or ``--nodes``, leaves by
    the first ``--agent``'s network (else material)."""
    import dataclasses

    from neurocheckers.compiled import network
    from neurocheckers.compiled.driver import CompiledSearch, SearchOptions
    from neurocheckers.rules.openings import load_openings
    from neurocheckers.rules.presets import get_rules

    rules = get_rules(args.rules)
    leaves = network.load(args.agent[0]) if args.agent else None
    name, options = variant(args) or ("LMR (the default)", SearchOptions())
    other = "the default" if args.option else "none"
    mine = CompiledSearch(rules, options, leaves)
    theirs = CompiledSearch(
        rules, SearchOptions() if args.option else dataclasses.replace(SearchOptions(), lmr=False), leaves
    )
    seconds, nodes = (None, args.nodes) if args.nodes else (args.seconds, None)
    wins = draws = losses = 0
    for k, opening in enumerate(load_openings(rules, args.match)):
        for black in (True, False):
            pair = (mine, theirs) if black else (theirs, mine)
            result = play_game(rules, pair, opening, seconds, nodes=nodes)
            ours = result if black else -result
            wins, draws, losses = wins + (ours > 0), draws + (ours == 0), losses + (ours < 0)
        print(f"after {k + 1} openings: {name} {wins} W / {draws} D / {losses} L", flush=True)
    games = wins + draws + losses
    budget = f"{nodes:,} nodes" if nodes else f"{seconds} s"
    print(
        f"{name} against {other}, {budget} a move, the game's draw rule:"
        f" {wins}/{draws}/{losses}, score {(wins + 0.5 * draws) / games:.3f} over {games} games"
    )


def games_main(args) -> None:
    """Depth as played: ``--games`` self-play games a leaf kind (material, then each ``--agent``),
    each side's table kept between its moves (``CompiledSearch.new_game`` at each game's start)."""
    from neurocheckers.compiled import network
    from neurocheckers.compiled.driver import CompiledSearch, SearchOptions
    from neurocheckers.rules.openings import load_openings
    from neurocheckers.rules.presets import get_rules

    rules = get_rules(args.rules)
    openings = load_openings(rules, args.games)
    print(f"load average {os.getloadavg()[0]:.2f}; affinity {sorted(os.sched_getaffinity(0))}")
    seconds, nodes = (None, args.nodes) if args.nodes else (args.seconds, None)
    budget = f"{nodes:,} nodes" if nodes else f"{seconds} s"
    print(f"{args.rules}: {args.games} self-play games, {budget} a move, the game's draw rule")
    leaves = args.agent if args.skip_material else [None, *args.agent]
    runs = [(path, "", SearchOptions()) for path in leaves]
    if args.option:
        name, options = variant(args)
        runs = [run for path, _, base in runs for run in ((path, "", base), (path, f" [{name}]", options))]
    for path, label, options in runs:
        leaves = network.load(path) if path else None
        searches = [CompiledSearch(rules, options, leaves) for _ in range(2)]
        searches[0].search(middlegame_positions(rules, 1, 0)[0], depth=2)  # compiled before the clock
        moves: list[tuple] = []

        def record(r, cpu, moves=moves):
            moves.append((r.depth, r.nodes, r.seconds, cpu))

        results = [play_game(rules, searches, opening, seconds, record, nodes) for opening in openings]
        depths = [m[0] for m in moves]
        wall, cpu = sum(m[2] for m in moves), sum(m[3] for m in moves)
        searched = sum(m[1] for m in moves)
        name = (Path(path).name if path else "material") + label
        print(
            f"  {name:34s} {len(moves)} moves: depth median {statistics.median(depths)} (mean"
            f" {statistics.mean(depths):.1f}), {searched / wall / 1e6:.2f} M nodes/s"
            f" ({searched / max(cpu, 1e-9) / 1e6:.2f} M a CPU second), {wall / len(moves):.3f} s a move;"
            f" results (Black) {results}",
            flush=True,
        )


def against_timed_main(args) -> None:
    """The compiled player against the JAX timed search, both with material leaves (or the first
    ``--agent``'s network) and the same time a move, in the project's match loop
    (``engines.run_engine_match``), the preset's own draw rule."""
    import numpy as np

    from neurocheckers.compiled.driver import SearchOptions
    from neurocheckers.match.arena import MatchOptions
    from neurocheckers.match.host import MoveClock, run_engine_match
    from neurocheckers.players.compiled import parse_compiled
    from neurocheckers.players.timed import parse_timed
    from neurocheckers.rules.openings import load_openings, opening_states
    from neurocheckers.rules.presets import get_rules
    from neurocheckers.runtime import configure_jax

    configure_jax()
    rules, n, seconds = get_rules(args.rules), args.against_timed, args.seconds
    leaves = f":{args.agent[0]}" if args.agent else ""
    a = parse_compiled(f"compiled:{seconds}s{leaves}", rules, SearchOptions(table_bits=18))
    b = parse_timed(f"timed:{seconds}s{leaves or ':material'}", rules)
    openings = opening_states(rules, load_openings(rules, n))
    clock = MoveClock()
    records = run_engine_match(
        rules, a, b, MatchOptions(games=2 * n, batch=2 * n, openings=openings), clock=clock
    )
    score = np.asarray(records.score)
    w, d, lost = int((score == 1).sum()), int((score == 0.5).sum()), int((score == 0).sum())
    print(
        f"{a.name} against {b.name}, {2 * n} games ({rules.name}, its own draw rule): {w}/{d}/{lost},"
        f" score {score.mean():.3f}"
    )
    for side, name in ((True, a.name), (False, b.name)):
        print(f"  {name}: {clock.seconds[side] / max(clock.moves[side], 1):.3f} s a move")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.perft:
        perft_main(args.perft)
    status = check_main(args.check_moves, args.seed) if args.check_moves else 0
    if args.match:
        match_main(args)
    if args.against_timed:
        against_timed_main(args)
    if args.games:
        games_main(args)
    if not (args.perft or args.check_moves or args.match or args.against_timed or args.games):
        speed_main(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
