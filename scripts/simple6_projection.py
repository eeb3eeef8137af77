"""The cost of solving the study's ``simple6`` (60-ply cap, optional single captures, a stuck side
draws), measured on its subproblems: the start's value when the game must end within k plies, for
growing k, by the proof-number search (``solve.horizon``), and the whole game's cost projected from
the growth of the nodes.

Usage:
  python scripts/simple6_projection.py [--max-plies 30] [--node-limit 300000000] [--table-bits 24]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from neurocheckers.compiled.board import Position  # noqa: E402
from neurocheckers.endgame.database import VALUE_NAMES  # noqa: E402
from neurocheckers.rules.presets import get_rules  # noqa: E402
from neurocheckers.solve.horizon import capped_value, growth_fit  # noqa: E402

FULL_GAME = 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-plies", type=int, default=30, help="The largest cap tried.")
    parser.add_argument(
        "--node-limit", type=int, default=300_000_000, help="Stop at a cap past this many nodes."
    )
    parser.add_argument("--table-bits", type=int, default=24, help="The table holds 2^B positions.")
    args = parser.parse_args()
    rules = get_rules("simple6")
    start = Position.start(rules)
    print("| plies left | value for Black | nodes | seconds | nodes/s |")
    print("|---|---|---|---|---|")
    points = []
    for plies in range(2, args.max_plies + 1, 2):
        point = capped_value(rules, start, plies, args.table_bits, args.node_limit)
        name = "open (node limit)" if point.value is None else VALUE_NAMES[point.value]
        rate = point.nodes / max(point.seconds, 1e-9)
        print(f"| {plies} | {name} | {point.nodes:,} | {point.seconds:.2f} | {rate:,.0f} |", flush=True)
        if point.value is None:
            break
        points.append(point)
    factor, nodes = growth_fit(points, FULL_GAME)
    rate = points[-1].nodes / max(points[-1].seconds, 1e-9)
    fitted = f"{points[len(points) // 2].plies}-{points[-1].plies}"
    print(f"\nnodes grow {factor:.2f}x a ply (fit over caps {fitted});"
          f" projected for {FULL_GAME} plies: {nodes:.2e} nodes, {nodes / rate / 3600:,.0f} hours at"
          f" {rate:,.0f} nodes/s on one core")  # fmt: skip


if __name__ == "__main__":
    main()
