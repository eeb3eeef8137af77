"""Accuracy against perfect play over a 6x6 run's epochs: the boss (or a learner's snapshot) of every
E-th epoch plays a fixed opponent from the same committed openings, both colours each, and its moves
are graded by the solution (``analysis.perfect_play``); the figure puts the accuracy, with 95%
intervals, under the run's fitness."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from neurocheckers.analysis.gauntlet import play_row
from neurocheckers.analysis.gauntlet_config import GauntletConfig
from neurocheckers.analysis.lineage import LineageEntry, lineage
from neurocheckers.analysis.matches import boss_spec, run_rules
from neurocheckers.analysis.perfect_play import PerfectAccuracy, from_row, load_oracle
from neurocheckers.analysis.replay import table_epochs
from neurocheckers.experiment.folder import RunError, read_run_config
from neurocheckers.formats import read_metrics
from neurocheckers.rules.openings import load_openings, opening_states

CSV_COLUMNS = ("epoch", "boss_id", "graded", "kept", "win_to_draw", "win_to_loss", "draw_to_loss",
               "unsolved", "accuracy", "low", "high", "score")  # fmt: skip
"""The columns of ``accuracy.csv``."""


@dataclasses.dataclass(frozen=True)
class EpochAccuracy:
    """The boss after ``epoch`` (the last one promoted at or before it): its moves' ``accuracy``
    against perfect play and its ``score`` (points per game) against the fixed opponent."""

    epoch: int
    boss_id: int
    accuracy: PerfectAccuracy
    score: float


def boss_after(entries: Sequence[LineageEntry], epoch: int) -> LineageEntry:
    """The boss in charge at the end of ``epoch``: the last promoted at or before it."""
    return [e for e in entries if e.epoch <= epoch][-1]


def epoch_accuracy(
    run_dir: str | Path,
    folder: str | Path,
    opponent: str = "alphabeta:1",
    openings: int = 10,
    every: int = 10,
    simulations: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[EpochAccuracy]:
    """The accuracy of the boss after epochs 0, E, 2E, ..., last of an ``american6`` run against
    perfect play over the database in ``folder``: each boss plays ``opponent`` from the first
    ``openings`` committed openings with both colours (its run's search, or MCTS with
    ``simulations``). A boss in charge at several of those epochs is played once. ``ValueError``
    (one line) for a run of other rules or a missing database."""
    config, sims = read_run_config(run_dir)
    rules = run_rules(config)
    load_oracle(folder, rules)
    entries = lineage(run_dir)
    epochs = table_epochs(len(read_metrics(run_dir)), every)
    if not epochs:
        raise RunError(f"{run_dir} has no epochs yet")
    settings = GauntletConfig(openings=openings, perfect_play=str(folder))
    starts = opening_states(rules, load_openings(rules, openings))
    played: dict[int, tuple[PerfectAccuracy, float]] = {}
    out = []
    for i, epoch in enumerate(epochs):
        entry = boss_after(entries, epoch)
        if entry.boss_id not in played:
            spec = boss_spec(rules, entry, simulations or sims)
            row = play_row(rules, "perfect", spec, opponent, starts, settings)
            played[entry.boss_id] = (from_row(row, "player") or PerfectAccuracy(), row.score)
        out.append(EpochAccuracy(epoch, entry.boss_id, *played[entry.boss_id]))
        if progress is not None:
            progress(i + 1, len(epochs))
    return out


def write_accuracy_csv(rows: Sequence[EpochAccuracy], path: str | Path) -> Path:
    """``rows`` as a CSV file of ``CSV_COLUMNS``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [",".join(CSV_COLUMNS)]
    for r in rows:
        a = r.accuracy
        rate = a.rate() or (float("nan"),) * 3
        counts = (a.graded, a.kept, a.win_to_draw, a.win_to_loss, a.draw_to_loss, a.unsolved)
        lines.append(
            ",".join(map(str, (r.epoch, r.boss_id, *counts, *(f"{x:.4f}" for x in rate), f"{r.score:.4f}")))
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def accuracy_figure(run_dir: str | Path, rows: Sequence[EpochAccuracy], opponent: str) -> Figure:
    """Top: the run's fitness (mean and best member, points per game against the boss). Bottom: the
    share of the boss's moves that kept the value under perfect play, with 95% Wilson intervals."""
    config, _ = read_run_config(run_dir)
    metrics = read_metrics(run_dir)
    games = config.games_per_epoch
    epoch = np.array([float(m["epoch"]) for m in metrics])
    fig = Figure(figsize=(8, 6), layout="constrained")
    ax_fit, ax_acc = fig.subplots(2, 1, sharex=True)
    for column, style, label in (("fitness_mean", "-", "mean member"), ("best_points", ":", "best member")):
        if metrics and metrics[0].get(column):
            values = np.array([float(m[column]) if m.get(column) else np.nan for m in metrics]) / games
            ax_fit.plot(epoch, values, style, color="C0", lw=1.2, label=label)
    ax_fit.set_ylabel("fitness (points per game vs the boss)")
    ax_fit.legend(fontsize=8, loc="lower right")
    rated = [(r.epoch, r.accuracy.rate()) for r in rows if r.accuracy.graded]
    if rated:
        x = np.array([e for e, _ in rated], dtype=float)
        mid, low, high = (np.array([rate[k] for _, rate in rated]) for k in range(3))
        ax_acc.errorbar(x, mid, yerr=[mid - low, high - mid], fmt="o-", color="C1", capsize=3, ms=4)
    graded = [r.accuracy.graded for r in rows]
    ax_acc.set_ylabel("moves keeping the value (95% CI)")
    ax_acc.set_xlabel("epoch")
    ax_acc.set_title(
        f"the boss vs {opponent}, graded by perfect play ({min(graded, default=0)}-{max(graded, default=0)}"
        " moves a point)",
        fontsize=9,
    )
    for a in (ax_fit, ax_acc):
        a.grid(alpha=0.3)
    ax_fit.set_title(f"{Path(run_dir).name}: {config.rules}, {config.layers}x{config.width} MLP", fontsize=10)
    return fig


def plot_epoch_accuracy(
    run_dir: str | Path, rows: Sequence[EpochAccuracy], out: str | Path, opponent: str = "alphabeta:1"
) -> Path:
    """Write ``accuracy_figure`` as the PNG ``out`` (dpi 100); returns its path."""
    out = Path(out).with_suffix(".png")
    out.parent.mkdir(parents=True, exist_ok=True)
    accuracy_figure(run_dir, rows, opponent).savefig(out, dpi=100)
    return out
