"""Train a leaf network on positions scored by a deeper search (``learners.search_targets``).

Two steps, so that scoring can run in several processes (one a core) and their files be pooled:

    python scripts/search_targets.py score AGENT --depth 10 --minutes 40 --seed 1 --out part1.npz
    python scripts/search_targets.py fit AGENT part1.npz part2.npz --out better.safetensors

``score`` plays the compiled search over AGENT's network against itself (random openings, some random
moves, the game's own end rules; ``--endgame DIR`` probes an endgame database) and keeps every quiet
position with the search's value and the game's result. ``fit`` regresses AGENT's network (or a fresh
one of its shape, ``--fresh``) on ``(1 - w) * value + w * result``, holding out whole games to report
the error on positions it did not see, and writes the agent file and a JSON of its figures beside it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import jax
import numpy as np

from neurocheckers.compiled import endgame as eg
from neurocheckers.compiled import network as nw
from neurocheckers.learners import search_targets as st
from neurocheckers.networks.agent_file import load_agent, save_agent
from neurocheckers.networks.evaluator import init_params


def score(args: argparse.Namespace) -> dict:
    agent = load_agent(args.agent)
    leaves = nw.load(args.agent)
    endgame = eg.load(args.endgame, agent.rules) if args.endgame else None
    settings = st.ScoringSettings(
        depth=args.depth, opening_turns=args.opening_turns, exploration=args.exploration,
        max_turns=args.max_turns, keep_captures=args.keep_captures,
    )  # fmt: skip

    def progress(games: int, positions: int, seconds: float) -> None:
        if games % args.report_every == 0:
            print(f"{games} games, {positions} positions, {seconds:.0f} s", flush=True)

    seconds = args.minutes * 60 if args.minutes else None
    start = time.monotonic()
    scored = st.score_games(agent.rules, leaves, args.games, settings, seed=args.seed, endgame=endgame,
                            seconds=seconds, progress=progress)  # fmt: skip
    elapsed = time.monotonic() - start
    scored.save(args.out, agent=args.agent, depth=args.depth, seed=args.seed, endgame=args.endgame or "",
               keep_captures=str(args.keep_captures))  # fmt: skip
    figures = {"positions": len(scored), "games": int(scored.games.max()) + 1 if len(scored) else 0,
               "seconds": round(elapsed, 1), "depth": args.depth, "seed": args.seed}  # fmt: skip
    print(json.dumps(figures))
    return figures


def fit(args: argparse.Namespace) -> dict:
    agent = load_agent(args.agent)
    scored = st.ScoredPositions.join([st.ScoredPositions.load(p) for p in args.data])
    targets = st.blend_targets(scored, args.outcome_weight)
    obs = st.encode_boards(agent.rules, scored.boards)
    train, held = st.split_by_games(scored, args.held_out, args.seed)
    key_init, key_fit = jax.random.split(jax.random.PRNGKey(args.seed))
    params = init_params(key_init, agent.spec) if args.fresh else agent.params

    def errors(p) -> dict:
        return {name: round(st.mean_squared_error(agent.spec, p, obs[rows], targets[rows]), 6)
                for name, rows in (("train", train), ("held_out", held)) if len(rows)}  # fmt: skip

    before = errors(params)
    sizes = f"{len(scored)} positions ({len(train)} training, {len(held)} held out)"
    print(f"{sizes}; before: {before}", flush=True)
    steps = max(1, len(scored) // args.positions_per_step) if args.positions_per_step else args.steps
    start = time.monotonic()
    params, losses = st.fit(
        agent.spec, params, obs[train], targets[train], steps=steps,
        batch_size=args.batch_size, learning_rate=args.learning_rate, key=key_fit,
    )  # fmt: skip
    after = errors(params)
    meta = {"trained_by": "scripts/search_targets.py fit", "start_agent": str(args.agent),
            "outcome_weight": str(args.outcome_weight), "steps": str(steps)}  # fmt: skip
    save_agent(args.out, agent.rules, agent.spec, params, meta)
    figures = {"positions": len(scored), "training": len(train), "held_out": len(held), "before": before,
               "after": after, "seconds": round(time.monotonic() - start, 1), "data": args.data,
               "last_losses": np.round(losses[-5:], 6).tolist(), **meta}  # fmt: skip
    Path(args.out).with_suffix(".json").write_text(json.dumps(figures, indent=2) + "\n")
    print(f"after: {after}; wrote {args.out}")
    return figures


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    sc = sub.add_parser("score", help="play scoring games and save their positions (.npz)")
    sc.add_argument("agent", help="agent file whose network the search uses at its leaves")
    sc.add_argument("--out", required=True, help="where to write the scored positions (.npz)")
    sc.add_argument("--games", type=int, default=1_000_000, help="games to play at most")
    sc.add_argument("--minutes", type=float, default=0.0, help="wall-time limit (0: none)")
    sc.add_argument("--depth", type=int, default=10, help="search depth in whole moves")
    sc.add_argument("--opening-turns", type=int, default=8, help="random turns (at most) first")
    sc.add_argument("--exploration", type=float, default=0.1, help="chance of a random move each later turn")
    sc.add_argument("--max-turns", type=int, default=300, help="turns after which a game is cut")
    sc.add_argument("--keep-captures", action="store_true",
                    help="also keep positions where the mover must capture (no quiescence)")  # fmt: skip
    sc.add_argument("--endgame", help="endgame database folder probed in the search")
    sc.add_argument("--seed", type=int, default=0)
    sc.add_argument("--report-every", type=int, default=100, help="print progress every this many games")
    ft = sub.add_parser("fit", help="regress a network on scored positions")
    ft.add_argument("agent", help="agent file: the network to fit (its shape with --fresh)")
    ft.add_argument("data", nargs="+", help="scored-positions files from 'score'")
    ft.add_argument("--out", required=True, help="agent file to write (figures: same name .json)")
    ft.add_argument("--fresh", action="store_true", help="start from fresh weights of the agent's shape")
    ft.add_argument("--outcome-weight", type=float, default=0.2, help="the game result's share of the target")
    ft.add_argument("--steps", type=int, default=20_000, help="Adam steps")
    ft.add_argument("--positions-per-step", type=int, default=0,
                    help="one Adam step per this many positions, instead of --steps (0: off)")  # fmt: skip
    ft.add_argument("--batch-size", type=int, default=1024)
    ft.add_argument("--learning-rate", type=float, default=3e-4)
    ft.add_argument("--held-out", type=float, default=0.05, help="share of the games held out")
    ft.add_argument("--seed", type=int, default=0)
    return p


def main(argv: list[str] | None = None) -> dict:
    args = parser().parse_args(argv)
    if args.command == "fit" and args.positions_per_step < 0:
        sys.exit(f"search_targets: --positions-per-step must be >= 0, got {args.positions_per_step}")
    try:
        return score(args) if args.command == "score" else fit(args)
    except (OSError, ValueError) as e:
        sys.exit(f"search_targets: {e}")


if __name__ == "__main__":
    main()
