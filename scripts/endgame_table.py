"""Print a markdown table of a built endgame database, by number of pieces: slices, positions,
share of wins/draws/losses for the side to move, the longest distance, build seconds, positions per
second and bytes on disk (values at 2 bits a position plus distances).

    python scripts/endgame_table.py runs/endgame/american8 [--slices]
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def main(folder: str, per_slice: bool = False) -> None:
    manifest = json.loads((Path(folder) / "manifest.json").read_text())
    rows: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for name, entry in manifest["slices"].items():
        pieces = sum(int(ch) for ch in name.replace("m", " ").replace("k", " ").replace("-", " ").split())
        row = rows[pieces]
        row["slices"] += 1
        for key in ("positions", "wins", "draws", "losses", "seconds"):
            row[key] += entry[key]
        row["max_distance"] = max(row["max_distance"], entry["max_distance"])
        width = 1 if entry["distance_dtype"] == "uint8" else 2
        row["bytes"] += -(-entry["positions"] // 4) + width * entry["positions"]
    print(f"{manifest['rules']}, every position with at most {manifest.get('max_pieces')} pieces:\n")
    print(
        "| pieces | slices | positions | wins | draws | losses | longest (moves) | seconds | positions/s"
        " | MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    total: dict[str, float] = defaultdict(float)
    for pieces in sorted(rows):
        r = rows[pieces]
        for k, v in r.items():
            total[k] = max(total[k], v) if k == "max_distance" else total[k] + v
        print(_line(str(pieces), r))
    print(_line("all", total))
    if per_slice:
        print("\n| slice | positions | wins | draws | losses | longest | seconds | positions/s |")
        print("|---|---|---|---|---|---|---|---|")
        for name, e in sorted(manifest["slices"].items()):
            print(
                f"| {name} | {e['positions']:,} | {e['wins']:,} | {e['draws']:,} | {e['losses']:,} |"
                f" {e['max_distance']} | {e['seconds']:.2f} |"
                f" {e['positions'] / max(e['seconds'], 1e-9):,.0f} |"
            )


def _line(label: str, r: dict[str, float]) -> str:
    n = r["positions"]
    return (
        f"| {label} | {int(r['slices'])} | {int(n):,} | {r['wins'] / n:.1%} | {r['draws'] / n:.1%} |"
        f" {r['losses'] / n:.1%} | {int(r['max_distance'])} | {r['seconds']:.1f} |"
        f" {n / max(r['seconds'], 1e-9):,.0f} |"
        f" {r['bytes'] / 1e6:.1f} |"
    )


if __name__ == "__main__":
    main(sys.argv[1], "--slices" in sys.argv)
