"""The tables and the plot of results/american8/README.md from the committed 8x8 runs.

    python scripts/american8_table.py results/american8 --names a,b,... [--seeds a,b,c] [--plot F]

Each name is a folder holding ``metrics.csv`` and ``config.json`` (its run, with strength probes) and,
when it was rated, ``gauntlet.json`` (``scripts/gauntlet_american8.sh`` or a part of it). Prints
Markdown:

1. per method: training minutes and epochs, the equal-depth scores against material (d = 1-4) and
   against the hand-written evaluation (d = 2-4), and the equal-time rows against py-draughts and
   OpenSpiel, each with its 95% interval and W/D/L ("-" where not played);
2. with ``--seeds``: the mean and spread (standard deviation, min-max) over those runs of every
   equal-depth score.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from strength_table import plot_curves, strength_curve  # noqa: E402

MATERIAL = [f"alphabeta:{d}" for d in (1, 2, 3, 4)]
HEURISTIC = [f"alphabeta:{d}:heuristic" for d in (2, 3, 4)]
ENGINES = ["pydraughts:6", "pydraughts:8", "openspiel:mcts:1000"]


def cell(row: dict | None, seconds: bool = False) -> str:
    if row is None:
        return "-"
    interval = f"({row['low']:.3f}-{row['high']:.3f})"
    text = f"{row['score']:.3f} {interval}, {row['wins']}/{row['draws']}/{row['losses']}"
    if row["games"] != 200:
        text += f" of {row['games']}"
    if seconds and row.get("player_seconds") is not None:
        text += f"; {row['player_seconds']:.2f} s vs {row['opponent_seconds']:.2f} s a move"
    return text


def rows_of(folder: Path) -> tuple[dict[str, dict], dict[str, dict]]:
    """(equal-depth rows by opponent, ladder rows by opponent) of a folder's gauntlet (empty if none)."""
    path = folder / "gauntlet.json"
    if not path.exists():
        return {}, {}
    rows = json.loads(path.read_text())["rows"]
    equal = {r["opponent"]: r for r in rows if r["kind"] == "equal-depth"}
    ladder = {r["opponent"]: r for r in rows if r["kind"] == "ladder"}
    return equal, ladder


def method_table(folder: Path, names: list[str]) -> None:
    header = ["method", "minutes", "epochs"] + [f"= depth {o.split(':')[1]}" for o in MATERIAL]
    header += [f"vs heuristic {o.split(':')[1]}" for o in HEURISTIC] + ENGINES
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name in names:
        curve = strength_curve(folder / name)
        minutes, epoch = (curve[-1][0], curve[-1][1] + 1) if curve else (0.0, 0)
        equal, ladder = rows_of(folder / name)
        cells = [name, f"{minutes:.0f}", str(epoch)]
        cells += [cell(equal.get(o)) for o in MATERIAL + HEURISTIC]
        cells += [cell(ladder.get(o), seconds=True) for o in ENGINES]
        print("| " + " | ".join(cells) + " |")


def seeds_table(folder: Path, seeds: list[str]) -> None:
    print("| equal-depth row | " + " | ".join(seeds) + " | mean | sd | min-max |")
    print("|---|" + "---|" * (len(seeds) + 3))
    for opponent in MATERIAL + HEURISTIC:
        scores = [rows_of(folder / s)[0].get(opponent) for s in seeds]
        if any(s is None for s in scores):
            continue
        values = [s["score"] for s in scores]
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        print(
            f"| vs {opponent} | " + " | ".join(f"{v:.3f}" for v in values)
            + f" | {statistics.mean(values):.3f} | {spread:.3f} | {min(values):.3f}-{max(values):.3f} |"
        )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--names", required=True, help="comma-separated method folders, in order")
    parser.add_argument("--seeds", default="", help="comma-separated folders of one method's seeds")
    parser.add_argument("--plot", type=Path, help="draw every method's probe against training minutes")
    args = parser.parse_args(argv)
    names = args.names.split(",")
    method_table(args.folder, names)
    if args.seeds:
        print()
        seeds_table(args.folder, args.seeds.split(","))
    if args.plot:
        plot_curves(args.folder, names, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
