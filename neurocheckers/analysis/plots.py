"""Fitness over epochs, for one run or several overlaid."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402


def _column(rows: list[dict[str, str]], name: str) -> np.ndarray:
    return np.array([float(r[name]) for r in rows])


def rolling_mean(values: np.ndarray, window: int) -> np.ndarray:
    """The mean of the last ``window`` values at each point (fewer at the start), same length."""
    if window <= 1:
        return values
    sums = np.cumsum(np.insert(values, 0, 0.0))
    ends = np.arange(1, len(values) + 1)
    starts = np.maximum(ends - window, 0)
    return (sums[ends] - sums[starts]) / (ends - starts)


def _labels(run_dirs: Sequence[str | Path], configs) -> list[str]:
    """Each run's experiment name, or its folder name where names repeat."""
    names = [c.name for c in configs]
    return [n if names.count(n) == 1 else Path(d).name for n, d in zip(names, run_dirs, strict=True)]


def plot_fitness(
    run_dirs: Sequence[str | Path],
    out: str | Path,
    labels: Sequence[str] | None = None,
    smooth: int | None = None,
) -> list[Path]:
    """Fitness per epoch and the boss lineage's growth; writes ``out`` as PNG and SVG (whatever its
    suffix) and returns the files written.

    Top: points per game against the boss (so runs with other games per epoch compare): the mean
    member, the best member and, for one run, the min-max and quartile bands with each promotion
    marked; the promotion threshold dashed. Bottom: bosses promoted so far. With several runs each
    curve is a rolling mean over ``smooth`` epochs (default: about 1/50 of the longest run).
    """
    from neurocheckers.experiment.run import read_metrics, read_run_config

    runs = []
    for run_dir in run_dirs:
        rows = read_metrics(run_dir)
        config, sims = read_run_config(run_dir)
        if rows:
            runs.append((run_dir, rows, config, sims))
    if not runs:
        raise ValueError("no epochs to plot: the runs have no metrics yet")
    names = list(labels) if labels else _labels([r[0] for r in runs], [r[2] for r in runs])
    single = len(runs) == 1
    longest = max(len(r[1]) for r in runs)
    window = smooth if smooth is not None else (1 if single else max(1, longest // 50))

    fig, (ax, ax_boss) = plt.subplots(
        2, 1, figsize=(10, 6.5), sharex=True, gridspec_kw={"height_ratios": (3, 1.2)}
    )
    thresholds = set()
    for i, (_, rows, config, _) in enumerate(runs):
        color = f"C{i % 10}"
        epoch = _column(rows, "epoch")

        def series(name: str, rows=rows, games: int = config.games_per_epoch) -> np.ndarray:
            return rolling_mean(_column(rows, name) / games, window)

        changed = _column(rows, "boss_changed") > 0
        if single:
            ax.fill_between(epoch, series("fitness_min"), series("fitness_max"), color=color, alpha=0.12)
            ax.fill_between(epoch, series("fitness_q25"), series("fitness_q75"), color=color, alpha=0.25)
            ax.plot(epoch[changed], series("best_points")[changed], "^", color=color, ms=3, alpha=0.7)
        ax.plot(epoch, series("fitness_mean"), color=color, lw=1.3)
        ax.plot(epoch, series("best_points"), color=color, ls=":", lw=1.1)
        thresholds.add(config.promotion_threshold)
        ax_boss.step(epoch, np.cumsum(changed), where="post", color=color, lw=1.3)

    for threshold in thresholds:
        ax.axhline(threshold, color="0.4", lw=0.8, ls="--")
    smoothing = f", rolling mean over {window} epochs" if window > 1 else ""
    ax.set_ylabel(f"points per game vs the boss{smoothing}")
    ax.set_ylim(-0.02, 1.02)
    ax_boss.set_ylabel("bosses promoted")
    ax_boss.set_xlabel("epoch")
    for a in (ax, ax_boss):
        a.grid(alpha=0.3)

    style = [
        Line2D([], [], color="0.3", lw=1.3, label="mean member"),
        Line2D([], [], color="0.3", ls=":", lw=1.1, label="best member"),
        Line2D([], [], color="0.4", ls="--", lw=0.8, label="promotion threshold"),
    ]
    if single:
        style.append(Line2D([], [], color="C0", marker="^", ls="", ms=4, label="new boss"))
        _, _, config, sims = runs[0]
        ax.set_title(
            f"{names[0]}: {config.rules}, {config.layers}x{config.width} MLP, P={config.population}, "
            f"G={config.games_per_epoch}, {sims} simulations/move"
        )
        ax.legend(handles=style, fontsize=8, loc="lower right", ncol=2)
    else:
        ax.set_title(f"Fitness over epochs ({len(runs)} runs)")
        ax.legend(handles=style, fontsize=8, loc="lower right", ncol=3)
        per_run = []
        for i, (_, _, config, sims) in enumerate(runs):
            text = (
                f"{names[i]} ({config.layers}x{config.width}, G={config.games_per_epoch}, "
                f"mut {config.mutation_rate:g}, {sims} sims)"
            )
            per_run.append(Line2D([], [], color=f"C{i % 10}", lw=2, label=text))
        ax_boss.legend(handles=per_run, fontsize=7.5, loc="upper left", ncol=2 if len(runs) > 4 else 1)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".svg"):
        path = out.with_suffix(suffix)
        fig.savefig(path, dpi=120)
        written.append(path)
    plt.close(fig)
    return written
