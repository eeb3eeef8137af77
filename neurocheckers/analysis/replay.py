"""Replays of a run's bosses: the lineage table, a round-robin with Elo ratings, and run comparisons.

These are the study's tables: Table 1 (the boss in charge at every E-th epoch against the final boss,
with the run's elapsed time) and Tables 2-4 (seconds per epoch of each variant, its final boss
against the base run's, and the first epoch at which its boss beat the base run's final boss).

Every match is ``games`` games of MCTS against MCTS, colours balanced, each side with its own
network shape and simulation count, and ``opening_plies`` random plies first so that repeated
games differ. All matches of one table have the same shapes, so they share one compiled program.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from neurocheckers.analysis.lineage import LineageEntry, boss_in_charge, lineage
from neurocheckers.experiment.run import RunError, read_metrics, read_run_config

Progress = Callable[[int, int], None]
"""``(done, total)``: called after every match."""

DID_NOT_BEAT = "did not beat"


# --- matches -------------------------------------------------------------------------------------


def check_games(games: int, what: str = "--games") -> None:
    """Matches need an even number of games >= 2, so both colours are played equally often."""
    if games < 2 or games % 2:
        raise ValueError(f"{what} must be an even number >= 2, got {games}")


def _player(rules, entry: LineageEntry, simulations: int):
    from neurocheckers.agent_file import load_agent
    from neurocheckers.players import mcts_player

    agent = load_agent(entry.path, rules)
    return mcts_player(rules, agent.spec, agent.params, simulations, f"boss #{entry.boss_id}")


def _points(rules, a, b, key, games: int, max_plies: int, opening_plies: int) -> float:
    """A's points out of ``games`` against B (A moves first in half of them)."""
    import jax

    from neurocheckers.arena import play_match

    records = play_match(rules, a.policy, a.params, b.policy, b.params, key, games, max_plies, opening_plies)
    return float(np.sum(jax.device_get(records.score)))


def _key(seed: int, *path: int):
    import jax

    key = jax.random.key(seed)
    for index in path:
        key = jax.random.fold_in(key, index)
    return key


def _elapsed(run_dir: str | Path) -> np.ndarray:
    """[E] seconds of the run at the end of each epoch (cumulative ``wall_seconds``)."""
    rows = sorted(read_metrics(run_dir), key=lambda r: int(r["epoch"]))
    if not rows:
        raise RunError(f"{run_dir} has no finished epoch")
    return np.cumsum([float(r["wall_seconds"]) for r in rows])


def _rules(config):
    from neurocheckers.rules import get_rules

    return get_rules(config.rules)


# --- Table 1: the lineage table --------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LineageRow:
    """The boss in charge during ``epoch`` against the final boss: its ``score`` (points out of
    ``games``) and the run's elapsed seconds at the end of that epoch."""

    epoch: int
    boss_id: int
    score: float
    games: int
    elapsed_seconds: float


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
) -> list[LineageRow]:
    """Table 1: the boss in charge at epochs 0, E, 2E, ..., last against the final boss.

    Both sides search with the run's simulation count (or ``simulations``); games are capped at the
    run's ``max_plies``.
    """
    check_games(games)
    config, sims = read_run_config(run_dir)
    sims = _check_simulations(simulations, sims)
    rules = _rules(config)
    entries = lineage(run_dir)
    elapsed = _elapsed(run_dir)
    epochs = table_epochs(len(elapsed), every)
    final = _player(rules, entries[-1], sims)
    players: dict[int, object] = {}
    rows = []
    for i, epoch in enumerate(epochs):
        entry = boss_in_charge(entries, epoch)
        if entry.boss_id not in players:
            players[entry.boss_id] = _player(rules, entry, sims)
        points = _points(
            rules, players[entry.boss_id], final, _key(seed, 0, i), games, config.max_plies, opening_plies
        )
        rows.append(LineageRow(epoch, entry.boss_id, points, games, float(elapsed[epoch])))
        if progress is not None:
            progress(i + 1, len(epochs))
    return rows


def _check_simulations(simulations: int | None, default: int) -> int:
    if simulations is None:
        return default
    if simulations < 1:
        raise ValueError(f"--simulations must be >= 1, got {simulations}")
    return simulations


def format_duration(seconds: float) -> str:
    """``h:mm:ss``, rounded to the second ("-" when unknown)."""
    if not math.isfinite(seconds):
        return "-"
    whole = round(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def format_lineage_table(rows: Sequence[LineageRow]) -> str:
    """The study's Table 1: Epoch | Boss | Score (of G) | Elapsed."""
    games = rows[0].games if rows else 0
    head = f"{'Epoch':>7}  {'Boss':>6}  {f'Score (of {games})':>14}  {'Elapsed':>9}"
    lines = [head, "-" * len(head)]
    for r in rows:
        elapsed = format_duration(r.elapsed_seconds)
        lines.append(f"{r.epoch:>7}  {'#' + str(r.boss_id):>6}  {r.score:>14g}  {elapsed:>9}")
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


# --- the round-robin and Elo ratings --------------------------------------------------------------


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
    sims = _check_simulations(simulations, sims)
    rules = _rules(config)
    entries = lineage(run_dir)
    chosen = tuple(entries[i] for i in sample_indices(len(entries), sample))
    players = [_player(rules, e, sims) for e in chosen]
    k = len(chosen)
    scores = np.full((k, k), 0.5)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    for n, (i, j) in enumerate(pairs):
        key = _key(seed, 1, i * k + j)
        points = _points(rules, players[i], players[j], key, games, config.max_plies, opening_plies)
        scores[i, j] = points / games
        scores[j, i] = (games - points) / games
        if progress is not None:
            progress(n + 1, len(pairs))
    return RoundRobin(chosen, scores, games)


def fit_elo(
    scores: np.ndarray, games: int | np.ndarray, prior: float = 1.0, iterations: int = 10_000
) -> np.ndarray:
    """[K] Elo ratings fitted to a round-robin, the first player anchored at 0.

    ``scores`` [K, K] is the row's points fraction against the column (draws count half), ``games``
    the games per pair (a number or a [K, K] array). The fit is the Bradley-Terry maximum likelihood
    by Hunter's MM iterations, with ``prior`` virtual drawn games added to every pair so that a
    player who won or lost everything keeps a finite rating. Elo = 400 log10(strength).
    """
    scores = np.asarray(scores, dtype=np.float64)
    k = scores.shape[0]
    if scores.shape != (k, k):
        raise ValueError(f"scores must be a square [K, K] matrix, got shape {scores.shape}")
    n = np.broadcast_to(np.asarray(games, dtype=np.float64), (k, k)).copy()
    np.fill_diagonal(n, 0.0)
    off = ~np.eye(k, dtype=bool)
    wins = np.where(off, scores * n + prior / 2, 0.0)
    n = np.where(off, n + prior, 0.0)
    total = wins.sum(axis=1)
    if k == 1:
        return np.zeros(1)
    if np.any(total <= 0):
        raise ValueError("every player needs some points (use prior > 0)")
    strength = np.ones(k)
    for _ in range(iterations):
        denominator = (n / (strength[:, None] + strength[None, :])).sum(axis=1)
        new = total / denominator
        new /= np.exp(np.mean(np.log(new)))  # the scale is free; fix the geometric mean at 1
        if np.max(np.abs(np.log(new) - np.log(strength))) < 1e-12:
            strength = new
            break
        strength = new
    elo = 400.0 * np.log10(strength)
    return elo - elo[0]


def _label(entry: LineageEntry) -> str:
    epoch = "start" if entry.epoch < 0 else f"e{entry.epoch}"
    return f"#{entry.boss_id}\n{epoch}"


def write_round_robin(result: RoundRobin, out_dir: str | Path) -> dict[str, Path]:
    """``round_robin.csv`` (the matrix), ``round_robin.png`` (its heatmap), ``elo.csv`` and
    ``elo.png`` (rating against promotion epoch) in ``out_dir``; returns them by name."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    entries, scores = result.entries, result.scores
    k = len(entries)
    files = {}

    path = out_dir / "round_robin.csv"
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["boss_id", "epoch", *(f"vs_{e.boss_id}" for e in entries)])
        for e, row in zip(entries, scores, strict=True):
            writer.writerow([e.boss_id, e.epoch, *(repr(float(x)) for x in row)])
    files["round_robin.csv"] = path

    fig, ax = plt.subplots(figsize=(max(5.0, 1.0 + 0.6 * k), max(4.0, 0.8 + 0.55 * k)))
    shown = np.where(np.eye(k, dtype=bool), np.nan, scores)
    image = ax.imshow(shown, cmap="RdBu", vmin=0.0, vmax=1.0)
    if k <= 24:  # beyond that the numbers do not fit in the cells
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
    path = out_dir / "round_robin.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    files["round_robin.png"] = path

    elo = fit_elo(scores, result.games)
    path = out_dir / "elo.csv"
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["boss_id", "epoch", "elo", "score"])
        for e, rating, row in zip(entries, elo, scores, strict=True):
            mean = (row.sum() - 0.5) / max(k - 1, 1)  # mean score against the others
            writer.writerow([e.boss_id, e.epoch, f"{rating:.1f}", f"{mean:.4f}"])
    files["elo.csv"] = path

    fig, ax = plt.subplots(figsize=(7, 4))
    epochs = [e.epoch for e in entries]
    ax.plot(epochs, elo, "o-")
    for e, rating in zip(entries, elo, strict=True):
        ax.annotate(f"#{e.boss_id}", (e.epoch, rating), textcoords="offset points", xytext=(3, 4), fontsize=7)
    ax.set_xlabel("promoted after epoch (-1: the random first boss)")
    ax.set_ylabel("Elo (first boss = 0)")
    ax.set_title("Boss strength from the round-robin (Bradley-Terry fit)", fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = out_dir / "elo.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    files["elo.png"] = path
    return files


def format_elo(result: RoundRobin) -> str:
    """The ratings, strongest first."""
    elo = fit_elo(result.scores, result.games)
    lines = [f"{'Boss':>6}  {'Epoch':>6}  {'Elo':>7}"]
    for index in np.argsort(-elo, kind="stable"):
        e = result.entries[index]
        lines.append(f"{'#' + str(e.boss_id):>6}  {e.epoch:>6}  {elo[index]:>+7.0f}")
    return "\n".join(lines)


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
    rules = _rules(base_config)
    base_entries = lineage(base_run)
    base_final = _player(rules, base_entries[-1], base_sims)
    setups = []
    for run_dir in runs:
        config, sims = read_run_config(run_dir)
        if config.rules != base_config.rules:
            raise RunError(
                f"{run_dir} plays {config.rules!r}, but the base run {base_run} plays {base_config.rules!r}"
            )
        setups.append((run_dir, config, sims, lineage(run_dir), _elapsed(run_dir)))
    base_elapsed = _elapsed(base_run)
    rows = [
        CompareRow(
            Path(base_run).name,
            "base",
            base_config.layers,
            base_config.width,
            base_sims,
            len(base_elapsed),
            seconds_per_epoch(base_run),
            None,
            games,
            None,
            None,
        )
    ]
    total = sum(len(s[3]) for s in setups)
    done = 0

    def play(entry: LineageEntry, sims: int, run_index: int, entry_index: int) -> float:
        nonlocal done
        player = _player(rules, entry, sims)
        key = _key(seed, 2, run_index, entry_index)
        points = _points(rules, player, base_final, key, games, base_config.max_plies, opening_plies)
        done += 1
        if progress is not None:
            progress(done, total)
        return points

    for run_index, (run_dir, config, sims, entries, elapsed) in enumerate(setups):
        last = len(entries) - 1
        final_score = play(entries[last], sims, run_index, last)
        first_beat: int | str = DID_NOT_BEAT
        beat_seconds = None
        # The final boss's match is reused for the last step of the walk, so the two columns agree.
        for entry_index, entry in enumerate(entries):
            points = final_score if entry_index == last else play(entry, sims, run_index, entry_index)
            if points > games / 2:
                first_beat = entry.epoch
                beat_seconds = 0.0 if entry.epoch < 0 else float(elapsed[min(entry.epoch, len(elapsed) - 1)])
                break
        done = sum(len(s[3]) for s in setups[: run_index + 1])  # the matches the walk skipped
        if progress is not None:
            progress(done, total)
        rows.append(
            CompareRow(
                Path(run_dir).name,
                "run",
                config.layers,
                config.width,
                sims,
                len(elapsed),
                seconds_per_epoch(run_dir),
                final_score,
                games,
                first_beat,
                beat_seconds,
            )
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
    "First beat base (elapsed)",
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
