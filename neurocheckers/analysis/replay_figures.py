"""Files of a boss round-robin: the score matrix as a table and a heatmap, the Elo ratings as a table
and a plot against time in charge.

Figures are drawn on ``matplotlib.figure.Figure`` objects, never through pyplot, so no backend is
chosen here (saving uses matplotlib's Agg renderer; no display is needed).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from neurocheckers.analysis.elo import RoundRobin
from neurocheckers.analysis.lineage import LineageEntry
from neurocheckers.stats import elo_standard_errors, fit_elo

MAX_LABELLED = 24
"""Above this many bosses the cell values and point labels no longer fit; they are left out."""


def _label(entry: LineageEntry) -> str:
    epoch = "start" if entry.epoch < 0 else f"e{entry.epoch}"
    return f"#{entry.boss_id}\n{epoch}"


def plot_round_robin(result: RoundRobin, path: str | Path) -> Path:
    """The [K, K] scores as a heatmap (row's score against column), written to ``path``."""
    entries, scores = result.entries, result.scores
    k = len(entries)
    fig = Figure(figsize=(max(5.0, 1.0 + 0.6 * k), max(4.0, 0.8 + 0.55 * k)))
    ax = fig.subplots()
    shown = np.where(np.eye(k, dtype=bool), np.nan, scores)
    image = ax.imshow(shown, cmap="RdBu", vmin=0.0, vmax=1.0)
    if k <= MAX_LABELLED:
        for i in range(k):
            for j in range(k):
                if i != j:
                    color = "white" if abs(scores[i, j] - 0.5) > 0.3 else "black"
                    ax.text(j, i, f"{scores[i, j]:.2f}", ha="center", va="center", fontsize=7, color=color)
    labels = [_label(e) for e in entries]
    ax.set_xticks(range(k), labels, fontsize=7)
    ax.set_yticks(range(k), labels, fontsize=7)
    ax.set_xlabel("opponent (boss id, promoted after epoch)")
    ax.set_ylabel("player")
    ax.set_title(
        f"Round-robin of the bosses\nrow's score against column, {result.games} games per pair", fontsize=9
    )
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return Path(path)


def plot_elo(result: RoundRobin, elo: np.ndarray, errors: np.ndarray, path: str | Path) -> Path:
    """Write :func:`elo_figure` to ``path``."""
    elo_figure(result, elo, errors).savefig(path, dpi=120)
    return Path(path)


def elo_figure(result: RoundRobin, elo: np.ndarray, errors: np.ndarray) -> Figure:
    """Each boss's Elo (+/- one standard error) against the first epoch it played as the boss: 0 for
    the random first boss, E + 1 for a boss promoted after epoch E."""
    entries = result.entries
    took_charge = np.array([e.epoch + 1 for e in entries])
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    ax.errorbar(took_charge, elo, yerr=errors, fmt="o-", ms=4, capsize=3, lw=1.2, elinewidth=0.9)
    if len(entries) <= MAX_LABELLED:
        for e, x, top in zip(entries, took_charge, elo + errors, strict=True):
            ax.annotate(
                f"#{e.boss_id}", (x, top), textcoords="offset points", xytext=(0, 3), ha="center", fontsize=7
            )
    ax.margins(x=0.05, y=0.12)  # room for the labels above the highest bar and beside the ends
    ax.set_xlabel("first epoch as the boss (0: the random first boss)")
    ax.set_ylabel("Elo (first boss = 0)")
    ax.set_title(
        f"Boss strength from the round-robin ({result.games} games per pair; Bradley-Terry fit,\n"
        "bars: one standard error against the first boss)",
        fontsize=9,
    )
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def _write_matrix(result: RoundRobin, path: Path) -> Path:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["boss_id", "epoch", *(f"vs_{e.boss_id}" for e in result.entries)])
        for e, row in zip(result.entries, result.scores, strict=True):
            writer.writerow([e.boss_id, e.epoch, *(repr(float(x)) for x in row)])
    return path


def _write_elo(result: RoundRobin, elo: np.ndarray, errors: np.ndarray, path: Path) -> Path:
    k = len(result.entries)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["boss_id", "epoch", "elo", "elo_se", "score"])
        for e, rating, error, row in zip(result.entries, elo, errors, result.scores, strict=True):
            mean = (row.sum() - 0.5) / max(k - 1, 1)  # mean score against the others
            writer.writerow([e.boss_id, e.epoch, f"{rating:.1f}", f"{error:.1f}", f"{mean:.4f}"])
    return path


def write_round_robin(result: RoundRobin, out_dir: str | Path) -> dict[str, Path]:
    """``round_robin.csv`` (the matrix), ``round_robin.png`` (its heatmap), ``elo.csv`` and
    ``elo.png`` (rating, with standard errors, against when each boss took charge) in ``out_dir``;
    returns them by name."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    elo = fit_elo(result.scores, result.games)
    errors = elo_standard_errors(result.scores, result.games, elo)
    files = {
        "round_robin.csv": _write_matrix(result, out_dir / "round_robin.csv"),
        "round_robin.png": plot_round_robin(result, out_dir / "round_robin.png"),
        "elo.csv": _write_elo(result, elo, errors, out_dir / "elo.csv"),
        "elo.png": plot_elo(result, elo, errors, out_dir / "elo.png"),
    }
    return files
