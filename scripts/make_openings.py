"""Write the committed opening sets, neurocheckers/data/openings_<preset>.txt (run once; seeded).

python scripts/make_openings.py [--count 500] [--turns 4] [--seed 0]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from neurocheckers.rules import PRESETS
from neurocheckers.rules.openings import make_openings, openings_text

DATA = Path(__file__).resolve().parents[1] / "neurocheckers" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500, help="Openings wanted per preset.")
    parser.add_argument("--turns", type=int, default=4, help="Random whole turns from the start.")
    parser.add_argument("--seed", type=int, default=0, help="Random seed.")
    args = parser.parse_args()
    for name, rules in PRESETS.items():
        lines = make_openings(rules, args.count, args.turns, args.seed)
        path = DATA / f"openings_{name}.txt"
        path.write_text(openings_text(rules, lines, args.turns, args.seed))
        print(f"{path}: {len(lines)} openings")


if __name__ == "__main__":
    main()
