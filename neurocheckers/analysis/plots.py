"""Fitness over epochs, for one run or several overlaid.

Figures are drawn on ``matplotlib.figure.Figure`` objects, never through pyplot, so no backend is
chosen here (saving uses matplotlib's Agg renderer; no display is needed).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from neurocheckers.formats import read_metrics

BAND_ALPHA = {"fitness_min": 0.12, "fitness_q25": 0.25}
"""Opacity of the min-max band and of the quartile band (drawn over it)."""


def _column(rows: list[dict[str, str]], name: str) -> np.ndarray:
    """A column as floats; empty cells (a column this run does not fill, e.g. DQN's TD error) are NaN."""
    return np.array([float(r[name]) if r.get(name) else np.nan for r in rows])


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


def _read_runs(run_dirs: Sequence[str | Path]) -> list[tuple[Any, list[dict[str, str]], Any, int]]:
    """(run_dir, metrics rows, config, simulations) of every run with at least one epoch."""
    from neurocheckers.experiment.folder import read_run_config

    runs = []
    for run_dir in run_dirs:
        rows = read_metrics(run_dir)
        config, sims = read_run_config(run_dir)
        if rows:
            runs.append((run_dir, rows, config, sims))
    if not runs:
        raise ValueError("no epochs to plot: the runs have no metrics yet")
    return runs


def _draw_run(ax, ax_boss, index: int, rows, config, window: int, single: bool) -> None:
    """One run's curves, in points per game: bands and new-boss marks only when it is alone."""
    color = f"C{index % 10}"
    epoch = _column(rows, "epoch")

    def series(name: str) -> np.ndarray:
        return rolling_mean(_column(rows, name) / config.games_per_epoch, window)

    changed = _column(rows, "boss_changed") > 0
    if single:
        for low, high in (("fitness_min", "fitness_max"), ("fitness_q25", "fitness_q75")):
            ax.fill_between(epoch, series(low), series(high), color=color, alpha=BAND_ALPHA[low], lw=0)
        ax.plot(epoch[changed], series("best_points")[changed], "^", color=color, ms=3, alpha=0.7)
    ax.plot(epoch, series("fitness_mean"), color=color, lw=1.3)
    ax.plot(epoch, series("best_points"), color=color, ls=":", lw=1.1)
    ax_boss.step(epoch, np.cumsum(changed), where="post", color=color, lw=1.3)


def _style_handles(single: bool) -> list:
    """Legend entries of the line styles (and, for one run, of its bands and promotions)."""
    handles = [
        Line2D([], [], color="0.3", lw=1.3, label="mean member"),
        Line2D([], [], color="0.3", ls=":", lw=1.1, label="best member"),
        Line2D([], [], color="0.4", ls="--", lw=0.8, label="promotion threshold"),
    ]
    if single:
        a_min, a_mid = BAND_ALPHA["fitness_min"], BAND_ALPHA["fitness_q25"]  # the middle half lies on both
        handles += [
            Patch(color="C0", alpha=a_min, lw=0, label="members' min-max"),
            Patch(color="C0", alpha=1 - (1 - a_min) * (1 - a_mid), lw=0, label="members' middle half"),
            Line2D([], [], color="C0", marker="^", ls="", ms=4, label="new boss"),
        ]
    return handles


def _run_handles(runs, names: list[str]) -> list[Line2D]:
    """One legend entry per overlaid run: its name and what sets it apart."""
    handles = []
    for i, (_, _, config, sims) in enumerate(runs):
        text = (
            f"{names[i]} ({config.layers}x{config.width}, G={config.games_per_epoch}, "
            f"mut {config.mutation_rate:g}, {sims} sims)"
        )
        handles.append(Line2D([], [], color=f"C{i % 10}", lw=2, label=text))
    return handles


def _row_major(handles: list, ncol: int) -> list:
    """``handles`` reordered (and padded with blanks) so that a legend of ``ncol`` columns, which
    fills column by column, reads row by row: the line styles first, then the runs."""
    rows = -(-len(handles) // ncol)
    padded = handles + [Line2D([], [], alpha=0, label=" ")] * (rows * ncol - len(handles))
    return [padded[r * ncol + c] for c in range(ncol) for r in range(rows)]


def fitness_figure(
    run_dirs: Sequence[str | Path], labels: Sequence[str] | None = None, smooth: int | None = None
) -> Figure:
    """Fitness per epoch and the boss lineage's growth of one run or several overlaid.

    Top: points per game against the boss (so runs with other games per epoch compare): the mean
    member, the best member and, for one run, the min-max and quartile bands with each promotion
    marked; the promotion threshold dashed. Bottom: bosses promoted so far. With several runs each
    curve is a rolling mean over ``smooth`` epochs (default: about 1/50 of the longest run). One
    legend, below the axes and off the data, names the line styles, bands and runs.
    """
    runs = _read_runs(run_dirs)
    names = list(labels) if labels else _labels([r[0] for r in runs], [r[2] for r in runs])
    from neurocheckers.experiment.strategy_registry import is_learner

    learners = [is_learner(config.strategy) for _, _, config, _ in runs]  # the registry's kind
    if all(is_tuning(rows) for _, rows, _, _ in runs):
        return tuning_figure(runs, names, smooth)
    if all(learners):
        return learning_figure(runs, names, smooth)
    if any(learners):
        raise ValueError("self-play learner runs have no fitness: plot them apart from evolution runs")
    single = len(runs) == 1
    longest = max(len(r[1]) for r in runs)
    window = smooth if smooth is not None else (1 if single else max(1, longest // 50))

    fig = Figure(figsize=(10, 7.0 if single else 7.0 + 0.2 * len(runs)), layout="constrained")
    ax, ax_boss = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": (3, 1.2)})
    for i, (_, rows, config, _) in enumerate(runs):
        _draw_run(ax, ax_boss, i, rows, config, window, single)
    for threshold in {config.promotion_threshold for _, _, config, _ in runs}:
        ax.axhline(threshold, color="0.4", lw=0.8, ls="--")
    smoothing = f", rolling mean over {window} epochs" if window > 1 else ""
    ax.set_ylabel(f"points per game vs the boss{smoothing}")
    ax.set_ylim(-0.02, 1.02)
    ax_boss.set_ylabel("bosses promoted")
    ax_boss.set_xlabel("epoch")
    for a in (ax, ax_boss):
        a.grid(alpha=0.3)
    if single:
        _, _, config, sims = runs[0]
        ax.set_title(
            f"{names[0]}: {config.rules}, {config.layers}x{config.width} MLP, P={config.population}, "
            f"G={config.games_per_epoch}, {sims} simulations/move"
        )
    else:
        ax.set_title(f"Fitness over epochs ({len(runs)} runs)")
    handles = _style_handles(single) + ([] if single else _run_handles(runs, names))
    fig.legend(handles=_row_major(handles, 3), loc="outside lower center", ncol=3, fontsize=8)
    return fig


def learning_figure(runs, names: list[str], smooth: int | None = None) -> Figure:
    """The training curves of self-play learner runs (``_read_runs`` tuples): the mean absolute TD
    error before each epoch's updates (solid) and the loss after them (dotted), and below the
    network snapshots saved so far (the run's lineage)."""
    single = len(runs) == 1
    longest = max(len(r[1]) for r in runs)
    window = smooth if smooth is not None else (1 if single else max(1, longest // 50))
    fig = Figure(figsize=(10, 7.0), layout="constrained")
    ax, ax_snap = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": (3, 1.2)})
    for i, (_, rows, _, _) in enumerate(runs):
        color, epoch = f"C{i % 10}", _column(rows, "epoch")
        ax.plot(epoch, rolling_mean(_column(rows, "td_error"), window), color=color, lw=1.3, label=names[i])
        ax.plot(epoch, rolling_mean(_column(rows, "loss"), window), color=color, ls=":", lw=1.1)
        ax_snap.step(epoch, np.cumsum(_column(rows, "boss_changed") > 0), where="post", color=color, lw=1.3)
    smoothing = f", rolling mean over {window} epochs" if window > 1 else ""
    ax.set_ylabel(f"TD error (solid), loss (dotted){smoothing}")
    ax.set_ylim(bottom=0)
    ax_snap.set_ylabel("snapshots saved")
    ax_snap.set_xlabel("epoch")
    for a in (ax, ax_snap):
        a.grid(alpha=0.3)
    _, _, config, _ = runs[0]
    title = f"{names[0]}: {config.rules}, {config.layers}x{config.width} MLP, {config.strategy}"
    ax.set_title(title if single else f"Self-play learning ({len(runs)} runs)")
    ax.legend(fontsize=8)
    return fig


TUNED_BY = {"spsa": "spsa", "cma_search": "cma", "ga_search": "ga", "es_network": "es"}
"""The strategies tuned by engine games, with their keys' prefix (``strategy_entries.TUNERS``)."""


def is_tuning(rows: list[dict[str, str]]) -> bool:
    """Whether a run's rows are a tuning's by engine games (``spsa_score`` or ``tune_score`` filled)."""
    return any(r.get("spsa_score") or r.get("tune_score") for r in rows)


def _tuning_words(config) -> tuple[list[str], str, str]:
    """``(tuned parameters, score label, title)`` of a tuning run's config."""
    prefix = TUNED_BY.get(config.strategy, "spsa")
    names = [n.strip() for n in getattr(config, f"{prefix}_parameters", "").split(",") if n.strip()]
    agent = Path(getattr(config, f"{prefix}_agent")).stem
    what = f"{agent}'s network" if prefix == "es" else f"{agent}'s search"
    games = f"{getattr(config, f'{prefix}_nodes')} nodes/move, {getattr(config, f'{prefix}_pairs')} pairs"
    if prefix == "spsa":
        return names, "plus vs minus", f"SPSA of {what}, {games}/iteration"
    candidates = getattr(config, f"{prefix}_population")
    return names, "candidates vs reference", f"{config.strategy} of {what}, {candidates} candidates x {games}"


def tuning_figure(runs, names: list[str], smooth: int | None = None) -> Figure:
    """A tuning's curves by engine games (``_read_runs`` tuples): each tuned search parameter's value
    as a share of its range (``compiled.driver.tunable_fields``; a network ES: the RMS change of its
    weights) and, below, the score an epoch (SPSA: plus against minus; an evolution strategy: its
    candidates' mean against the reference; 0.5: no difference seen)."""
    from neurocheckers.compiled.driver import tunable_fields

    ranges = tunable_fields()
    longest = max(len(r[1]) for r in runs)
    window = smooth if smooth is not None else max(1, longest // 50)
    fig = Figure(figsize=(10, 7.0), layout="constrained")
    ax, ax_score = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": (3, 1.2)})
    styles = ("-", "--", ":", "-.")
    for i, (_, rows, config, _) in enumerate(runs):
        epoch = _column(rows, "epoch")
        tuned, score_label, _ = _tuning_words(config)
        for j, name in enumerate(tuned):
            low, high, _ = ranges[name]
            share = (_column(rows, f"tuned_{name}") - low) / (high - low)
            label = f"{name} [{low:g}, {high:g}]" + ("" if len(runs) == 1 else f" ({names[i]})")
            ax.plot(epoch, share, color=f"C{j % 10}", ls=styles[i % len(styles)], lw=1.3, label=label)
        if not tuned:
            ax.plot(epoch, _column(rows, "tune_distance"), color=f"C{i % 10}", lw=1.3, label=names[i])
        score = _column(rows, "spsa_score" if config.strategy == "spsa" else "tune_score")
        ax_score.plot(epoch, rolling_mean(score, window), color=f"C{i % 10}", lw=1.2)
    ax_score.axhline(0.5, color="0.4", lw=0.8, ls="--")
    ax.set_ylabel("tuned value, share of its range" if tuned else "RMS change of the tuned weights")
    if tuned:
        ax.set_ylim(-0.02, 1.02)
    ax_score.set_ylabel(score_label + (f" (mean of {window})" if window > 1 else ""))
    ax_score.set_xlabel("epoch (iteration, generation)")
    for a in (ax, ax_score):
        a.grid(alpha=0.3)
    _, _, config, _ = runs[0]
    title = f"{names[0]}: {config.rules}, {_tuning_words(config)[2]}"
    title = title if len(runs) == 1 else f"Tunings by engine games ({len(runs)} runs)"
    ax.set_title(textwrap.fill(title, 90))  # a long run name and recipe would run off the figure
    ax.legend(fontsize=8)
    return fig


def plot_fitness(
    run_dirs: Sequence[str | Path],
    out: str | Path,
    labels: Sequence[str] | None = None,
    smooth: int | None = None,
) -> list[Path]:
    """Write :func:`fitness_figure` of ``run_dirs`` as ``out`` in PNG and SVG (whatever its suffix);
    returns the files written."""
    return _save_figure(fitness_figure(run_dirs, labels, smooth), out)


def _save_figure(fig: Figure, out: str | Path) -> list[Path]:
    """Write ``fig`` as ``out`` in PNG and SVG (whatever its suffix); returns the files written."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".svg"):
        path = out.with_suffix(suffix)
        fig.savefig(path, dpi=120)
        written.append(path)
    return written


STRENGTH_MATCHES = {
    "strength_material": ("-", "network at alpha-beta 2 vs material at 2"),
    "strength_random": ("--", "training search vs random"),
}
"""The strength probe's matches (``experiment.strength``): line style and legend text."""


def has_strength(rows: list[dict[str, str]]) -> bool:
    """Whether any row holds a strength probe (files written before the probe existed hold none)."""
    return any(r.get("strength_material") for r in rows)


def _strength_series(rows: list[dict[str, str]], column: str):
    """(epochs, minutes of training so far at the end of each, score, low, high) of the probed rows;
    the training time is the cumulative ``wall_seconds`` of all epochs up to the probed one."""
    minutes = np.cumsum([float(r["wall_seconds"]) for r in rows]) / 60.0
    probed = [i for i, r in enumerate(rows) if r.get(column)]
    values = [[float(rows[i][c]) for i in probed] for c in (column, f"{column}_low", f"{column}_high")]
    return (_column([rows[i] for i in probed], "epoch"), minutes[probed], *map(np.array, values))


def strength_figure(run_dirs: Sequence[str | Path], labels: Sequence[str] | None = None) -> Figure:
    """The strength probes of one run or several: each match's score with its 95% interval (a band)
    against epochs (left) and against minutes of training wall time (right), 1/2 dashed.
    ``ValueError`` when no run has a probe (``strength_every`` was 0 or the file predates it)."""
    runs = _read_runs(run_dirs)
    names = list(labels) if labels else _labels([r[0] for r in runs], [r[2] for r in runs])
    probed = [i for i, r in enumerate(runs) if has_strength(r[1])]
    if not probed:
        raise ValueError("no strength probes to plot: the runs were made with strength_every = 0")
    runs, names = [runs[i] for i in probed], [names[i] for i in probed]
    fig = Figure(figsize=(11, 4.8), layout="constrained")
    ax_epoch, ax_time = fig.subplots(1, 2, sharey=True)
    for i, (_, rows, _, _) in enumerate(runs):
        color = f"C{i % 10}"
        for column, (style, _) in STRENGTH_MATCHES.items():
            epoch, minutes, score, low, high = _strength_series(rows, column)
            for ax, x in ((ax_epoch, epoch), (ax_time, minutes)):
                ax.plot(x, score, style, color=color, lw=1.3, marker=".", ms=4)
                ax.fill_between(x, low, high, color=color, alpha=0.12, lw=0)
    for ax, label in ((ax_epoch, "epoch"), (ax_time, "training wall time (minutes)")):
        ax.axhline(0.5, color="0.4", lw=0.8, ls=":")
        ax.set_xlabel(label)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    ax_epoch.set_ylabel("boss's score per game (95% interval)")
    fig.suptitle("Strength of the boss over training")
    handles = [Line2D([], [], color="0.3", ls=style, label=text) for style, text in STRENGTH_MATCHES.values()]
    handles += [Line2D([], [], color=f"C{i % 10}", lw=2, label=names[i]) for i in range(len(runs))]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8)
    return fig


def strength_path(fitness_out: str | Path) -> Path:
    """Where the strength figure goes beside a fitness figure: ``fitness.png`` -> ``strength.png``,
    ``x.png`` -> ``x_strength.png``."""
    out = Path(fitness_out)
    return out.with_name(("strength" if out.stem == "fitness" else f"{out.stem}_strength") + ".png")


def plot_strength(
    run_dirs: Sequence[str | Path], out: str | Path, labels: Sequence[str] | None = None
) -> list[Path]:
    """Write :func:`strength_figure` as ``out`` in PNG and SVG; nothing (an empty list) when no run
    has a strength probe."""
    if not any(has_strength(read_metrics(d)) for d in run_dirs):
        return []
    return _save_figure(strength_figure(run_dirs, labels), out)
