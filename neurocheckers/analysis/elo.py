"""A round-robin of a run's bosses and their Elo ratings (Bradley-Terry fit, with standard errors).

The matches are those of ``matches``; ``replay_figures.write_round_robin`` writes the tables, the
heatmap and the rating plot.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from neurocheckers.analysis.lineage import LineageEntry, lineage
from neurocheckers.analysis.matches import (
    Progress,
    boss_player,
    check_games,
    check_simulations,
    match_key,
    match_points,
    run_rules,
)
from neurocheckers.experiment.folder import read_run_config
from neurocheckers.stats import elo_standard_errors, fit_elo


@dataclasses.dataclass(frozen=True, eq=False)
class RoundRobin:
    """Every pair of ``entries`` played ``games`` games.

    Fields:
      entries: [K] the bosses, in lineage order.
      scores: [K, K] float64, row's points fraction against column; ``scores + scores.T == 1``
        (0.5 on the diagonal).
      games: games per pair.
    """

    entries: tuple[LineageEntry, ...]
    scores: np.ndarray
    games: int


def sample_indices(count: int, sample: int | None) -> list[int]:
    """At most ``sample`` evenly spaced indices of ``range(count)``, the first and the last included;
    all of them when ``sample`` is None or not smaller than ``count``."""
    if sample is not None and sample < 2:
        raise ValueError(f"--sample must be >= 2 (or 0 for all bosses), got {sample}")
    if sample is None or sample >= count:
        return list(range(count))
    return sorted({int(round(x)) for x in np.linspace(0, count - 1, sample)})


def round_robin(
    run_dir: str | Path,
    games: int = 20,
    sample: int | None = 12,
    seed: int = 0,
    simulations: int | None = None,
    opening_plies: int = 2,
    progress: Progress | None = None,
) -> RoundRobin:
    """Every pair of the run's bosses (or of an evenly spaced ``sample`` of them) plays ``games``."""
    check_games(games, "--round-robin-games")
    config, sims = read_run_config(run_dir)
    sims = check_simulations(simulations, sims)
    rules = run_rules(config)
    entries = lineage(run_dir)
    chosen = tuple(entries[i] for i in sample_indices(len(entries), sample))
    players = [boss_player(rules, e, sims) for e in chosen]
    k = len(chosen)
    scores = np.full((k, k), 0.5)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    for n, (i, j) in enumerate(pairs):
        key = match_key(seed, 1, i * k + j)
        points = match_points(rules, players[i], players[j], key, games, config.max_plies, opening_plies)
        scores[i, j] = points / games
        scores[j, i] = (games - points) / games
        if progress is not None:
            progress(n + 1, len(pairs))
    return RoundRobin(chosen, scores, games)


def format_elo(result: RoundRobin) -> str:
    """The ratings, strongest first, with their standard errors and each boss's first epoch as the
    boss (``LineageEntry.first_epoch``: 0 for the random first boss)."""
    elo = fit_elo(result.scores, result.games)
    errors = elo_standard_errors(result.scores, result.games, elo)
    lines = [f"{'Boss':>6}  {'Boss from epoch':>15}  {'Elo':>7}  {'+/-':>5}"]
    for index in np.argsort(-elo, kind="stable"):
        e = result.entries[index]
        lines.append(
            f"{'#' + str(e.boss_id):>6}  {e.first_epoch:>15}  {elo[index]:>+7.0f}  {errors[index]:>5.0f}"
        )
    return "\n".join(lines)
