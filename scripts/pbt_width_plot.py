"""Plot a PBT run's evolving network width and its strength probe against its epochs (issue 32).

    python scripts/pbt_width_plot.py RUN --out RUN/width.png

Reads the ``metrics.csv`` (``formats.read_metrics``) of a run with ``[pbt] min_width`` > 0: the best
member's width and the population's least and greatest width each epoch, and the probe (its
network at alpha-beta 2 against material at 2) where it was played.
"""

from __future__ import annotations

import argparse
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from neurocheckers.formats import read_metrics  # noqa: E402


def read_columns(run_dir: str, names: tuple[str, ...]) -> dict[str, list[float]]:
    rows = read_metrics(run_dir)
    if not rows or "pbt_width" not in rows[0]:
        raise SystemExit(f"{run_dir}: no pbt_width column (a PBT run with [pbt] min_width > 0 writes one)")
    return {name: [float(row[name]) if row.get(name) else math.nan for row in rows] for name in names}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("run", help="a PBT run's folder (its metrics.csv)")
    parser.add_argument("--out", required=True, help="image to write (.png or .svg)")
    args = parser.parse_args()
    names = ("epoch", "pbt_width", "pbt_width_min", "pbt_width_max", "strength_material")
    columns = read_columns(args.run, names)
    epochs = columns["epoch"]
    fig, (widths, probe) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    widths.fill_between(epochs, columns["pbt_width_min"], columns["pbt_width_max"], alpha=0.25,
                        step="post", label="members' widths (least to greatest)")  # fmt: skip
    widths.step(epochs, columns["pbt_width"], where="post", label="best member's width")
    widths.set_ylabel("hidden units a layer")
    widths.legend(loc="lower left", fontsize=8)
    probed = [(e, s) for e, s in zip(epochs, columns["strength_material"], strict=True) if not math.isnan(s)]
    probe.plot([e for e, _ in probed], [s for _, s in probed], marker="o")
    probe.set_ylabel("probe: score vs material")
    probe.set_xlabel("epoch (8 members x 128 self-play games)")
    probe.set_ylim(0.4, 1.0)
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
