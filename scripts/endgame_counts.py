"""Write tests/data/endgame_counts.json from built databases: per slice, its positions, wins, draws,
losses and longest distance (the test data that later builds and the index are checked against).

    python scripts/endgame_counts.py runs/endgame/american6 runs/endgame/american8
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

KEYS = ("positions", "wins", "draws", "losses", "max_distance")


def main(folders: list[str]) -> None:
    out = Path(__file__).resolve().parent.parent / "tests" / "data" / "endgame_counts.json"
    counts = json.loads(out.read_text()) if out.exists() else {}
    for folder in folders:
        manifest = json.loads((Path(folder) / "manifest.json").read_text())
        counts[manifest["rules"]] = {
            name: {k: entry[k] for k in KEYS} for name, entry in sorted(manifest["slices"].items())
        }
        print(f"{manifest['rules']}: {len(manifest['slices'])} slices from {folder}")
    out.write_text(json.dumps(counts, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
