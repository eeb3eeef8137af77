"""The tables of results/strength/README.md (and results/learners/README.md) from committed runs:
each setting's final gauntlet rows, and how soon its strength curve reached the reference setting's
final strength.

    python scripts/strength_table.py results/strength [--reference study] [--names a,b,...]

Each setting is a folder holding ``gauntlet.json`` (its final network's gauntlet) and ``metrics.csv``
(its run, with strength probes). Prints Markdown:

1. per setting: the score against random with the search it was trained with, the equal-depth scores
   against material (d = 1, 2, 3), each with its 95% interval and W/D/L, and its Elo;
2. per setting: training minutes, epochs, the final probe (equal depth 2 over 32 paired openings),
   and the training minutes at which the probe first reached the reference's final probe, as a
   fraction of the reference's training time.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path


def score_cell(row: dict | None) -> str:
    if row is None:
        return "-"
    return (
        f"{row['score']:.3f} ({row['low']:.3f}-{row['high']:.3f}), "
        f"{row['wins']}/{row['draws']}/{row['losses']}"
    )


def gauntlet_cells(folder: Path) -> list[str]:
    data = json.loads((folder / "gauntlet.json").read_text())
    rows = data["rows"]
    player = data["player"]
    random_row = next((r for r in rows if r["player"] == player and r["opponent"] == "random"), None)
    equal = {int(r["opponent"].split(":")[1]): r for r in rows if r["kind"] == "equal-depth"}
    elo = next((r for r in data["ratings"] if r["player"] == player), None)
    elo_cell = f"{elo['elo']:+.0f} ({elo['low']:+.0f}..{elo['high']:+.0f})" if elo else "-"
    search = player.split(":")[0] + (f" {player.split(':')[-1]}" if player.startswith("mcts") else "")
    if player.startswith("alphabeta"):
        search = f"alphabeta {player.split(':')[1]}"
    return [search, score_cell(random_row), *(score_cell(equal.get(d)) for d in (1, 2, 3)), elo_cell]


def strength_curve(folder: Path) -> list[tuple[float, int, float]]:
    """(training minutes, epoch, probe score vs material) at each probed epoch."""
    with open(folder / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    minutes, curve = 0.0, []
    for row in rows:
        minutes += float(row["wall_seconds"] or 0.0) / 60.0
        if row.get("strength_material"):
            curve.append((minutes, int(row["epoch"]), float(row["strength_material"])))
    return curve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--reference", default="study")
    parser.add_argument("--names", default="", help="comma-separated settings, in order (default: all)")
    parser.add_argument("--plot", type=Path, help="also draw every setting's probe against training minutes")
    args = parser.parse_args(argv)
    names = (
        args.names.split(",")
        if args.names
        else sorted(
            p.name
            for p in args.folder.iterdir()
            if (p / "gauntlet.json").exists() and (p / "metrics.csv").exists()
        )
    )
    print("| setting | search | vs random | equal depth 1 | equal depth 2 | equal depth 3 | Elo |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        print("| " + " | ".join([name, *gauntlet_cells(args.folder / name)]) + " |")
    reference = strength_curve(args.folder / args.reference)
    ref_minutes, _, ref_final = reference[-1]
    print()
    print(
        f"| setting | training minutes | epochs | final probe (eq. depth 2, 64 games) | "
        f"first probe >= {args.reference}'s final {ref_final:.3f} |"
    )
    print("|---|---|---|---|---|")
    for name in names:
        curve = strength_curve(args.folder / name)
        minutes, epoch, final = curve[-1]
        reached = next(((m, e) for m, e, s in curve if s >= ref_final), None)
        when = "never"
        if reached is not None:
            share = reached[0] / ref_minutes
            when = f"{reached[0]:.1f} min (epoch {reached[1]}), {share:.2f} of {args.reference}'s time"
        print(f"| {name} | {minutes:.1f} | {epoch + 1} | {final:.3f} | {when} |")
    if args.plot:
        plot_curves(args.folder, names, args.plot)
    return 0


def plot_curves(folder: Path, names: list[str], out: Path) -> None:
    """The probe (network at alpha-beta 2 vs material at 2, with its interval) of every setting
    against training minutes, on one axis."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 5), layout="constrained")
    ax = fig.subplots()
    for i, name in enumerate(names):
        with open(folder / name / "metrics.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        minutes, total = [], 0.0
        for row in rows:
            total += float(row["wall_seconds"] or 0.0) / 60.0
            minutes.append(total)
        probed = [(m, r) for m, r in zip(minutes, rows, strict=True) if r.get("strength_material")]
        x = [m for m, _ in probed]
        y = [float(r["strength_material"]) for _, r in probed]
        low = [float(r["strength_material_low"]) for _, r in probed]
        high = [float(r["strength_material_high"]) for _, r in probed]
        style = "-" if i < 10 else "--"  # matplotlib has ten colours: the next ten are dashed
        ax.plot(x, y, style, marker="o", ms=3, color=f"C{i % 10}", label=Path(name).name)
        ax.fill_between(x, low, high, color=f"C{i % 10}", alpha=0.12)
    ax.axhline(0.5, color="k", ls=":", lw=0.8)
    ax.set_xlabel("training wall time (minutes; one core unless the name ends in _2cores)")
    ax.set_ylabel("network at alpha-beta 2 vs material at 2 (64 games, 95% interval)")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())
