"""The table of ``scripts/endgame_targets_study.sh``'s results: for each arm and seed, the epochs its
run reached in the budget, its final probe, and its network against material at equal depth 2; then
the head-to-head match of the two arms, with the mean and spread over the seeds.

    python scripts/endgame_targets_table.py runs/egt exact plain
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from neurocheckers.formats import read_metrics


def score_text(result: dict) -> str:
    low, high = result["score_ci95"]
    return (
        f"{result['score']:.3f} ({low:.3f}-{high:.3f}), {result['wins']}/{result['draws']}/{result['losses']}"
    )


def run_row(folder: Path, arm: str, seed: int) -> tuple[str, float]:
    [run_dir] = sorted((folder / arm).glob(f"*_seed{seed}_*"))
    rows = read_metrics(run_dir)
    probes = [r["strength_material"] for r in rows if r.get("strength_material")]
    minutes = sum(float(r["wall_seconds"]) for r in rows) / 60
    result = json.loads((folder / f"{arm}_seed{seed}_vs_material.json").read_text())
    line = (
        f"| {arm} | {seed} | {len(rows)} | {minutes:.1f} | {float(probes[-1]):.3f} | {score_text(result)} |"
    )
    return line, result["score"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("arms", nargs=2)
    args = parser.parse_args()
    seeds = sorted(
        int(p.stem.split("seed")[1]) for p in args.folder.glob(f"{args.arms[0]}_vs_{args.arms[1]}_seed*.json")
    )
    print("| arm | seed | epochs | training minutes | final probe | vs material, equal depth 2 |")
    print("|---|---|---|---|---|---|")
    scores: dict[str, list[float]] = {arm: [] for arm in args.arms}
    for arm in args.arms:
        for seed in seeds:
            line, score = run_row(args.folder, arm, seed)
            print(line)
            scores[arm].append(score)
    for arm, values in scores.items():
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        print(
            f"\n{arm} vs material: mean {statistics.mean(values):.3f}, sd {spread:.3f}"
            f" over {len(values)} seeds"
        )
    head = []
    for seed in seeds:
        result = json.loads((args.folder / f"{args.arms[0]}_vs_{args.arms[1]}_seed{seed}.json").read_text())
        print(f"{args.arms[0]} vs {args.arms[1]}, seed {seed}: {score_text(result)}")
        head.append(result["score"])
    spread = statistics.stdev(head) if len(head) > 1 else 0.0
    print(f"{args.arms[0]} vs {args.arms[1]}: mean {statistics.mean(head):.3f}, sd {spread:.3f}")


if __name__ == "__main__":
    main()
