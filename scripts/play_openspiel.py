"""Play one of our players against an OpenSpiel bot over paired committed openings (american8), and
write the score with its paired 95% interval (``stats.paired_interval``) and every game as PDN.

    python scripts/play_openspiel.py mcts:results/openspiel/agent.safetensors:16 openspiel:mcts:100 \\
        --openings 16 --out results/openspiel

Writes ``OUT/match.json`` (the summary) and ``OUT/games.pdn``; needs ``pip install -e ".[engines]"``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from neurocheckers.analysis.games import games_from_actions
from neurocheckers.analysis.pdn_games import save_pdn
from neurocheckers.match.arena import MatchOptions, paired_opening_starts
from neurocheckers.match.host import parse_any_player, play_any_match
from neurocheckers.rules import AMERICAN8
from neurocheckers.rules.openings import load_openings, opening_states
from neurocheckers.runtime import configure_jax
from neurocheckers.stats import paired_interval


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("player", help="Player A (ours or openspiel:...)")
    parser.add_argument("opponent", help="Player B, e.g. openspiel:mcts:100")
    parser.add_argument("--openings", type=int, default=16, help="Committed openings, each with both colours")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/openspiel", help="Folder for match.json and games.pdn")
    args = parser.parse_args()
    configure_jax()
    a, b = parse_any_player(args.player, AMERICAN8), parse_any_player(args.opponent, AMERICAN8)
    openings = opening_states(AMERICAN8, load_openings(AMERICAN8, args.openings))
    games = 2 * args.openings
    start = time.perf_counter()
    options = MatchOptions(games, args.seed, keep_actions=games, openings=openings)
    records = play_any_match(AMERICAN8, a, b, options)
    seconds = time.perf_counter() - start
    score = np.asarray(records.score)
    mean, low, high = paired_interval(score)
    summary = {
        "player": a.name,
        "opponent": b.name,
        "rules": AMERICAN8.name,
        "openings": args.openings,
        "games": games,
        "seed": args.seed,
        "wins": int((score == 1).sum()),
        "draws": int((score == 0.5).sum()),
        "losses": int((score == 0).sum()),
        "unfinished": int((~np.asarray(records.finished)).sum()),
        "score": mean,
        "score_ci95": [low, high],
        "mean_length": float(np.mean(records.length)),
        "seconds": round(seconds, 1),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "match.json").write_text(json.dumps(summary, indent=2) + "\n")
    blacks = [a.name if x else b.name for x in records.a_is_black]
    whites = [b.name if x else a.name for x in records.a_is_black]
    starts = paired_opening_starts(openings, jnp.arange(games))
    played = games_from_actions(AMERICAN8, records.actions, blacks, whites, starts)
    save_pdn(out / "games.pdn", AMERICAN8, played, event=f"{a.name} vs {b.name}, paired openings")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
