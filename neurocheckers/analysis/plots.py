"""Fitness over epochs, for one run or several overlaid."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def _column(rows: list[dict[str, str]], name: str) -> np.ndarray:
    return np.array([float(r[name]) for r in rows])


def plot_fitness(
    run_dirs: Sequence[str | Path], out: str | Path, labels: Sequence[str] | None = None
) -> list[Path]:
    """Fitness per epoch: the min-max band, the mean, the best member's points, and boss changes
    marked. Writes ``out`` as PNG and SVG (whatever its suffix); returns the files written."""
    from neurocheckers.experiment.run import read_metrics, read_run_config

    fig, ax = plt.subplots(figsize=(9, 5))
    for i, run_dir in enumerate(run_dirs):
        rows = read_metrics(run_dir)
        if not rows:
            continue
        config, sims = read_run_config(run_dir)
        label = labels[i] if labels else f"{Path(run_dir).name}"
        epoch = _column(rows, "epoch")
        color = f"C{i}"
        ax.fill_between(
            epoch, _column(rows, "fitness_min"), _column(rows, "fitness_max"), color=color, alpha=0.15
        )
        ax.plot(epoch, _column(rows, "fitness_mean"), color=color, label=f"{label}: mean")
        ax.plot(epoch, _column(rows, "best_points"), color=color, ls=":", label=f"{label}: best member")
        changed = _column(rows, "boss_changed") > 0
        ax.plot(
            epoch[changed],
            _column(rows, "best_points")[changed],
            "^",
            color=color,
            ms=6,
            label=f"{label}: new boss",
        )
        ax.axhline(config.promotion_threshold * config.games_per_epoch, color=color, lw=0.5, ls="--")
        subtitle = f"{config.rules}, {config.layers}x{config.width} MLP, P={config.population}, {sims} sims"
    ax.set_xlabel("epoch")
    ax.set_ylabel("points against the boss")
    ax.set_title("Fitness over epochs" + (f" ({subtitle})" if len(run_dirs) == 1 and rows else ""))
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out = Path(out)
    written = []
    for suffix in (".png", ".svg"):
        path = out.with_suffix(suffix)
        fig.savefig(path, dpi=120)
        written.append(path)
    plt.close(fig)
    return written
