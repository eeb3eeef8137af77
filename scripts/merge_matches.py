"""Pool the JSON summaries of a match played in parts (``neurocheckers match ... --openings N
--first-opening K --json``) into one, as if played at once: ``python scripts/merge_matches.py
PART.json... [--out FILE]``. The games files stay apart (PDN files can be concatenated)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from neurocheckers.analysis.match_report import format_table, pool_summaries


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("parts", nargs="+", help="match summaries (match --json output)")
    parser.add_argument("--out", help="write the pooled summary to this JSON file")
    args = parser.parse_args(argv)
    try:
        parts = [json.loads(Path(path).read_text()) for path in args.parts]
        pooled = pool_summaries(parts)
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"merge_matches: {e}")
    pooled["part_summaries"] = args.parts
    pooled["games_files"] = [p["games_file"] for p in parts if "games_file" in p]
    if args.out:
        Path(args.out).write_text(json.dumps(pooled, indent=2) + "\n")
    print(format_table(pooled["player_a"], pooled["player_b"], pooled["rules"], pooled))


if __name__ == "__main__":
    main()
