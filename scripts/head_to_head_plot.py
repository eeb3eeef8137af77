"""Plot head-to-head match scores with their 95% intervals, one row a match (issue 32).

    python scripts/head_to_head_plot.py LABEL=MATCH.json [LABEL=MATCH.json ...] --out F.png [--target 0.55]

Each MATCH.json is a summary written by ``neurocheckers match ... --json`` (or
``scripts/merge_matches.py``): player A's score, its interval and W/D/L. Rows are drawn top to
bottom in the order given, with the score of a level match (0.5) and, with ``--target``, a
target score marked.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_match(item: str) -> tuple[str, dict]:
    """(label, summary) of a ``LABEL=PATH`` argument; exits with a one-line message if it is not one."""
    label, sep, path = item.partition("=")
    if not sep or not label or not path:
        raise SystemExit(f"{item!r}: expected LABEL=MATCH.json")
    try:
        summary = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise SystemExit(f"{path}: cannot read a match summary ({type(error).__name__}: {error})") from None
    if (
        not isinstance(summary, dict)
        or not {"score", "score_ci95", "wins", "draws", "losses"} <= summary.keys()
    ):
        raise SystemExit(f"{path}: not a match summary (no score, score_ci95 and W/D/L)")
    return label, summary


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("matches", nargs="+", help="LABEL=MATCH.json, one a row")
    parser.add_argument("--out", required=True, help="image to write (.png or .svg)")
    parser.add_argument("--target", type=float, help="a target score to mark (e.g. 0.55)")
    args = parser.parse_args()
    rows = [read_match(item) for item in args.matches]
    fig, ax = plt.subplots(figsize=(8, 0.9 + 0.38 * len(rows)), layout="constrained")
    for y, (_, summary) in enumerate(reversed(rows)):
        low, high = summary["score_ci95"]
        score = summary["score"]
        ax.errorbar(score, y, xerr=[[score - low], [high - score]], fmt="o", color="C0", capsize=3)
        wdl = f"{summary['wins']}/{summary['draws']}/{summary['losses']}"
        ax.annotate(
            f"{score:.3f} ({low:.3f}-{high:.3f}) {wdl}",
            (high, y),
            xytext=(6, -3),
            textcoords="offset points",
            fontsize=7,
        )
    ax.set_yticks(range(len(rows)), [label for label, _ in reversed(rows)], fontsize=8)
    ax.axvline(0.5, color="k", ls=":", lw=0.8)
    if args.target is not None:
        ax.axvline(args.target, color="C3", ls="--", lw=0.8, label=f"target {args.target}")
        ax.legend(fontsize=7, loc="upper left")
    ax.set_xlim(0.2, 0.95)
    ax.set_xlabel("score of the named player (95% interval; W/D/L)")
    ax.grid(axis="x", alpha=0.3)
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
