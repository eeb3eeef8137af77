"""The fitness figure: its legend explains every band and sits off the data, in points per game."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from neurocheckers.analysis.plots import fitness_figure, plot_fitness
from neurocheckers.experiment.config import load_config
from neurocheckers.experiment.run import create_run
from neurocheckers.formats import METRIC_COLUMNS, METRICS_FILE


def _run_with_metrics(root, name: str, games: int, epochs: int = 6):
    """A run folder whose metrics are written directly: fitness_mean = games / 2 (half a point per
    game), best member = all points."""
    config = load_config(None, [f"name={name}", f"games_per_epoch={games}", "population=8"])
    path = create_run(config, root)
    with open(path / METRICS_FILE, "a", newline="") as f:
        for epoch in range(epochs):
            row = dict.fromkeys(METRIC_COLUMNS, "0")
            half, full = str(games / 2), str(float(games))
            row.update(epoch=str(epoch), fitness_mean=half, fitness_q75=half, fitness_max=full)
            row.update(best_points=full, boss_changed=str(epoch % 2), wall_seconds="1.0")
            csv.writer(f).writerow([row[c] for c in METRIC_COLUMNS])
    return path


def _legend_texts(fig) -> list[str]:
    (legend,) = fig.legends
    return [t.get_text() for t in legend.get_texts()]


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


@pytest.mark.parametrize("count", [1, 3])
def test_legend_names_the_bands_and_sits_off_the_axes(tmp_path, count):
    runs = [_run_with_metrics(tmp_path, f"r{i}", games=4 * (i + 1)) for i in range(count)]
    fig = fitness_figure(runs)
    texts = _legend_texts(fig)
    assert "mean member" in texts and "promotion threshold" in texts
    if count == 1:
        assert "members' min-max" in texts and "members' middle half" in texts
    else:
        assert sum(t.startswith("r") for t in texts) == count
    fig.draw_without_rendering()
    legend = fig.legends[0].get_window_extent()
    assert not any(_overlaps(legend, ax.get_window_extent()) for ax in fig.axes)


def test_fitness_is_in_points_per_game(tmp_path):
    """Runs with 4 and 8 games per epoch both plot their mean member at 0.5 points per game."""
    runs = [_run_with_metrics(tmp_path, f"g{g}", games=g) for g in (4, 8)]
    fig = fitness_figure(runs, smooth=1)
    top = fig.axes[0]
    means = [line for line in top.get_lines() if line.get_linestyle() == "-" and len(line.get_xdata()) == 6]
    assert len(means) == 2
    for line in means:
        np.testing.assert_allclose(line.get_ydata(), 0.5)
    files = plot_fitness(runs, tmp_path / "fit.png")
    assert [f.suffix for f in files] == [".png", ".svg"] and all(f.stat().st_size > 0 for f in files)
