"""The study's tables from replays of a run's bosses (the matches are in ``matches``).

Table 1: the boss in charge at every E-th epoch against the final boss, with the original run's
elapsed time. Tables 2-4: seconds per epoch of each variant, its final boss against the base run's,
and the first epoch at which its boss beat the base run's final boss. All matches of one table have
the same shapes, so they share one compiled program. The round-robin and Elo ratings are in ``elo``.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from neurocheckers.analysis.lineage import LineageEntry, boss_in_charge, lineage
from neurocheckers.analysis.matches import (
    Progress,
    boss_player,
    boss_spec,
    check_games,
    check_simulations,
    match_games,
    match_key,
    match_points,
    run_elapsed,
    run_rules,
)
from neurocheckers.experiment.folder import RunError, read_run_config
from neurocheckers.formats import read_metrics

DID_NOT_BEAT = "did not beat"


# --- Table 1: the lineage table --------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LineageRow:
    """The boss in charge during ``epoch`` against the final boss: its ``score`` (points out of
    ``games``) and the original run's elapsed seconds at the end of that epoch (not the replay's)."""

    epoch: int
    boss_id: int
    score: float
    games: int
    run_elapsed_seconds: float


def table_epochs(epochs_done: int, every: int) -> list[int]:
    """0, E, 2E, ... and the last epoch (``epochs_done - 1``)."""
    if every < 1:
        raise ValueError(f"--every must be >= 1, got {every}")
    epochs = list(range(0, epochs_done, every))
    if epochs_done and epochs[-1] != epochs_done - 1:
        epochs.append(epochs_done - 1)
    return epochs


def lineage_table(
    run_dir: str | Path,
    games: int = 20,
    every: int = 32,
    seed: int = 0,
    simulations: int | None = None,
    opening_plies: int = 2,
    progress: Progress | None = None,
    games_out: list[dict] | None = None,
) -> list[LineageRow]:
    """Table 1: the boss in charge at epochs 0, E, 2E, ..., last against the final boss.

    Both sides search with the run's simulation count (or ``simulations``); games are capped at the
    run's ``max_plies``. With ``games_out`` (a list), every game played is appended to it as a
    game-file dict whose players are the bosses' specs (``mcts:FILE:SIMS`` or ``alphabeta:D:FILE``).
    """
    check_games(games)
    config, sims = read_run_config(run_dir)
    sims = check_simulations(simulations, sims)
    rules = run_rules(config)
    entries = lineage(run_dir)
    elapsed = run_elapsed(run_dir)
    epochs = table_epochs(len(elapsed), every)
    final, final_spec = boss_player(rules, entries[-1], sims), boss_spec(rules, entries[-1], sims)
    players: dict[int, tuple[object, str]] = {}  # boss id -> (player, spec)
    rows = []
    for i, epoch in enumerate(epochs):
        entry = boss_in_charge(entries, epoch)
        if entry.boss_id not in players:
            players[entry.boss_id] = (boss_player(rules, entry, sims), boss_spec(rules, entry, sims))
        (boss, spec), key = players[entry.boss_id], match_key(seed, 0, i)
        names = None if games_out is None else (spec, final_spec)
        points, played = match_games(rules, boss, final, key, games, config.max_plies, opening_plies, names)
        if games_out is not None:
            games_out.extend(played)
        rows.append(LineageRow(epoch, entry.boss_id, points, games, float(elapsed[epoch])))
        if progress is not None:
            progress(i + 1, len(epochs))
    return rows


def format_duration(seconds: float) -> str:
    """``h:mm:ss``, rounded to the second ("-" when unknown)."""
    if not math.isfinite(seconds):
        return "-"
    whole = round(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def format_lineage_table(rows: Sequence[LineageRow]) -> str:
    """The study's Table 1: Epoch | Boss | Score (of G) | Run elapsed (the original run's time)."""
    games = rows[0].games if rows else 0
    head = f"{'Epoch':>7}  {'Boss':>6}  {f'Score (of {games})':>14}  {'Run elapsed':>11}"
    lines = [head, "-" * len(head)]
    for r in rows:
        elapsed = format_duration(r.run_elapsed_seconds)
        lines.append(f"{r.epoch:>7}  {'#' + str(r.boss_id):>6}  {r.score:>14g}  {elapsed:>11}")
    return "\n".join(lines)


def write_rows(rows: Sequence, path: str | Path) -> Path:
    """Rows of one frozen dataclass as a CSV file with a header."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fields = [f.name for f in dataclasses.fields(rows[0])] if rows else []
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(fields)
        for row in rows:
            writer.writerow([_cell(getattr(row, name)) for name in fields])
    return path


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


# --- Tables 2-4: comparing runs -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CompareRow:
    """One run against the base run.

    ``seconds_per_epoch`` is the median epoch time without epoch 0 (which includes compiling);
    ``score`` the final boss's points out of ``games`` against the base run's final boss (None for
    the base run itself); ``first_beat_epoch`` the epoch after which the first boss that beat the
    base run's final boss (more than half the points) was promoted (-1: the random first boss),
    ``"did not beat"`` if none did, None for the base run.
    """

    run: str
    role: str
    layers: int
    width: int
    simulations: int
    epochs: int
    seconds_per_epoch: float
    score: float | None
    games: int
    first_beat_epoch: int | str | None
    first_beat_seconds: float | None


def seconds_per_epoch(run_dir: str | Path) -> float:
    """Median ``wall_seconds`` without epoch 0 (or epoch 0's when it is the only one)."""
    rows = read_metrics(run_dir)
    later = [float(r["wall_seconds"]) for r in rows if int(r["epoch"]) > 0]
    if later:
        return float(np.median(later))
    return float(rows[0]["wall_seconds"]) if rows else float("nan")


def _compared_run(run_dir: str | Path, base_run: str | Path, base_config) -> tuple:
    """(run_dir, config, simulations, lineage, run elapsed [E]) of a run to compare with the base run;
    ``RunError`` if it plays other rules."""
    config, sims = read_run_config(run_dir)
    if config.rules != base_config.rules:
        raise RunError(
            f"{run_dir} plays {config.rules!r}, but the base run {base_run} plays {base_config.rules!r}"
        )
    return run_dir, config, sims, lineage(run_dir), run_elapsed(run_dir)


def _first_beat(
    entries: Sequence[LineageEntry],
    elapsed: np.ndarray,
    final_score: float,
    games: int,
    play: Callable[[int], float],
) -> tuple[int | str, float | None]:
    """(promotion epoch, the run's elapsed seconds then) of the first boss in lineage order to score
    more than half against the base run's final boss, or (``DID_NOT_BEAT``, None). ``play(index)``
    plays boss ``index``'s match; the final boss's score is reused, so the two columns agree."""
    last = len(entries) - 1
    for index, entry in enumerate(entries):
        points = final_score if index == last else play(index)
        if points > games / 2:
            seconds = 0.0 if entry.epoch < 0 else float(elapsed[min(entry.epoch, len(elapsed) - 1)])
            return entry.epoch, seconds
    return DID_NOT_BEAT, None


def _compare_row(run_dir, role, config, sims, elapsed, score, games, first_beat, beat_seconds) -> CompareRow:
    return CompareRow(
        Path(run_dir).name,
        role,
        config.layers,
        config.width,
        sims,
        len(elapsed),
        seconds_per_epoch(run_dir),
        score,
        games,
        first_beat,
        beat_seconds,
    )


def compare_runs(
    base_run: str | Path,
    runs: Sequence[str | Path],
    games: int = 20,
    seed: int = 0,
    opening_plies: int = 2,
    progress: Progress | None = None,
) -> list[CompareRow]:
    """The base run's row, then one per run: its speed, its final boss against the base run's final
    boss, and the first of its bosses (in lineage order) to beat the base run's final boss.

    Each side plays with its own network shape and simulation count; games are capped at the base
    run's ``max_plies``. ``progress`` counts matches; the total is an upper bound (the walk along a
    lineage stops at the first boss that wins).
    """
    check_games(games)
    base_config, base_sims = read_run_config(base_run)
    rules = run_rules(base_config)
    base_final = boss_player(rules, lineage(base_run)[-1], base_sims)
    setups = [_compared_run(run_dir, base_run, base_config) for run_dir in runs]
    base_elapsed = run_elapsed(base_run)
    rows = [_compare_row(base_run, "base", base_config, base_sims, base_elapsed, None, games, None, None)]
    total = sum(len(s[3]) for s in setups)
    done = 0

    def play(entry_index: int, entries: Sequence[LineageEntry], sims: int, run_index: int) -> float:
        nonlocal done
        player = boss_player(rules, entries[entry_index], sims)
        key = match_key(seed, 2, run_index, entry_index)
        points = match_points(rules, player, base_final, key, games, base_config.max_plies, opening_plies)
        done += 1
        if progress is not None:
            progress(done, total)
        return points

    for run_index, (run_dir, config, sims, entries, elapsed) in enumerate(setups):
        play_boss = functools.partial(play, entries=entries, sims=sims, run_index=run_index)
        final_score = play_boss(len(entries) - 1)
        first_beat, beat_seconds = _first_beat(entries, elapsed, final_score, games, play_boss)
        done = sum(len(s[3]) for s in setups[: run_index + 1])  # the matches the walk skipped
        if progress is not None:
            progress(done, total)
        rows.append(
            _compare_row(run_dir, "run", config, sims, elapsed, final_score, games, first_beat, beat_seconds)
        )
    return rows


def _compare_cells(row: CompareRow) -> list[str]:
    if row.role == "base":
        score, beat = "(base)", "-"
    else:
        score = f"{row.score:g} of {row.games}"
        if isinstance(row.first_beat_epoch, int):
            epoch = "start" if row.first_beat_epoch < 0 else str(row.first_beat_epoch)
            beat = f"{epoch} ({format_duration(row.first_beat_seconds or 0.0)})"
        else:
            beat = str(row.first_beat_epoch)
    return [
        row.run,
        f"{row.layers}x{row.width}",
        str(row.simulations),
        str(row.epochs),
        f"{row.seconds_per_epoch:.3f}",
        score,
        beat,
    ]


COMPARE_HEADERS = (
    "Run",
    "MLP",
    "Sims",
    "Epochs",
    "s/epoch",
    "Final boss vs base",
    "First beat base (run elapsed)",
)


def format_compare(rows: Sequence[CompareRow]) -> str:
    """Tables 2-4 as aligned text."""
    cells = [list(COMPARE_HEADERS)] + [_compare_cells(r) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COMPARE_HEADERS))]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in cells
    ]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def format_compare_markdown(rows: Sequence[CompareRow]) -> str:
    """Tables 2-4 as a Markdown table."""
    lines = [
        "| " + " | ".join(COMPARE_HEADERS) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(COMPARE_HEADERS) - 1)) + "|",
    ]
    lines += ["| " + " | ".join(_compare_cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"
