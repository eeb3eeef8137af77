"""Thin the lineage of finished runs to keep a repository small: keep every Nth boss, the first and
the final one, and delete the other bosses' weight files.

    python scripts/thin_lineage.py RUN_DIR... [--every 8]

In each run folder, ``lineage.csv`` then lists only the kept bosses (so every tool that reads it finds
its files), and ``lineage_full.csv`` lists every boss that was promoted, with a ``kept`` column (1 or
0). Tools that walk a thinned lineage (``lineage``, ``compare``, ``export --epoch``) see only the
kept bosses: a boss "in charge at epoch E" is then the last kept boss promoted before E.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path


def thin(run_dir: Path, every: int) -> tuple[int, int]:
    """Thin one run folder; returns (bosses kept, bosses in the full lineage)."""
    full_file = run_dir / "lineage_full.csv"
    source = full_file if full_file.exists() else run_dir / "lineage.csv"  # thinning twice is harmless
    with open(source, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"thin_lineage: {source} has no bosses")
    final_id = int(rows[-1]["boss_id"])
    for row in rows:
        boss_id = int(row["boss_id"])
        row["kept"] = "1" if boss_id % every == 0 or boss_id == final_id else "0"
    columns = ["boss_id", "epoch", "points", "file"]
    with open(full_file, "w", newline="") as f:
        writer = csv.DictWriter(f, [*columns, "kept"], lineterminator="\n")
        writer.writeheader()
        writer.writerows({c: row[c] for c in [*columns, "kept"]} for row in rows)
    with open(run_dir / "lineage.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows({c: row[c] for c in columns} for row in rows if row["kept"] == "1")
    for row in rows:
        if row["kept"] == "0":
            (run_dir / "lineage" / row["file"]).unlink(missing_ok=True)
    return sum(row["kept"] == "1" for row in rows), len(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (each with lineage.csv and lineage/)")
    parser.add_argument("--every", type=int, default=8, help="keep bosses whose id is a multiple of this")
    args = parser.parse_args(argv)
    if args.every < 1:
        parser.error(f"--every must be >= 1, got {args.every}")
    for run_dir in args.runs:
        if not (run_dir / "lineage.csv").is_file():
            parser.error(f"{run_dir} has no lineage.csv: not a run folder")
        kept, total = thin(run_dir, args.every)
        print(f"{run_dir}: kept {kept} of {total} bosses")
    return 0


if __name__ == "__main__":
    sys.exit(main())
