"""Compare a built endgame database with the independent pure-Python solver, position by position.

    python scripts/endgame_reference_check.py runs/endgame/american6 --pieces 4

The solver (``tests/reference_endgame.py``) lists every position of at most ``--pieces`` pieces by
brute force, generates moves with the reference rules (``tests/reference_rules.py``) and settles
values by plain sweeps; it shares no code with ``neurocheckers.endgame``. Prints how many positions
were compared, how many disagree in value and in distance, and the time taken. Exit status 1 on any
disagreement.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import reference_endgame  # noqa: E402
import reference_rules  # noqa: E402

from neurocheckers.endgame.database import EndgameDB  # noqa: E402
from neurocheckers.endgame.index import to_mover_view  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path, help="a database folder (endgame build --out)")
    parser.add_argument("--pieces", type=int, default=3, help="compare positions of up to N pieces")
    args = parser.parse_args()
    db = EndgameDB(args.db)
    most = max(sum(s.counts) for s in db.slices)
    if not 1 < args.pieces <= most:
        parser.error(f"--pieces {args.pieces}: the database holds positions of 2 to {most} pieces")
    start = time.perf_counter()
    reference = reference_endgame.solve(reference_rules.REF_PRESETS[db.rules.name], args.pieces)
    solved = time.perf_counter() - start
    boards, black_to_move, expected = reference_endgame.as_arrays(reference)
    values, distances = db.lookup(to_mover_view(boards, black_to_move, db.rules.num_squares))
    wrong_values = int(np.sum(values != expected[:, 0]))
    wrong_distances = int(np.sum(distances != expected[:, 1]))
    print(
        f"{db.rules.name}, at most {args.pieces} pieces: {len(expected):,} positions compared "
        f"(both sides with pieces); {wrong_values} disagree in value, {wrong_distances} in distance; "
        f"the reference solver took {solved:.0f} s"
    )
    return 1 if wrong_values or wrong_distances else 0


if __name__ == "__main__":
    sys.exit(main())
