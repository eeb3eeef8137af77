"""Merge gauntlets played in parts (``neurocheckers gauntlet --only ...`` in parallel processes) into
one, rated again over all rows: ``python scripts/merge_gauntlets.py PART_DIR... --out DIR``."""

from __future__ import annotations

import argparse
from pathlib import Path

from neurocheckers.analysis.gauntlet import format_gauntlet, read_gauntlet, write_gauntlet
from neurocheckers.analysis.gauntlet_merge import merge_gauntlets


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("parts", nargs="+", help="folders holding a gauntlet.json each")
    parser.add_argument("--out", required=True, help="folder for the merged gauntlet files")
    args = parser.parse_args(argv)
    merged = merge_gauntlets([read_gauntlet(Path(part) / "gauntlet.json") for part in args.parts])
    text = format_gauntlet(merged)
    files = write_gauntlet(merged, args.out)
    (Path(args.out) / "gauntlet.txt").write_text(text + "\n")
    print(text)
    print("wrote " + ", ".join(str(p) for p in files.values()))


if __name__ == "__main__":
    main()
