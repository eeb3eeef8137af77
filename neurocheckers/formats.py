"""File and text formats shared by several layers, with no JAX (sweep workers import it first).

A run folder holds ``metrics.csv`` (one row per epoch, ``METRIC_COLUMNS``) and the boss lineage:
``lineage.csv`` (``LINEAGE_COLUMNS``) naming one agent file per boss in ``lineage/``. Agent files
reserve some metadata keys for their own header. Player specs are the command line's names of
players (``random``, ``mcts:FILE:SIMS``, ...; their registry is ``players.registry``).
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` all or nothing: a temporary file beside it, synced, then renamed."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


CONFIG_FILE = "config.json"
METRICS_FILE = "metrics.csv"
LINEAGE_DIR = "lineage"
LINEAGE_FILE = "lineage.csv"

STRENGTH_COLUMNS = (
    "strength_material",
    "strength_material_low",
    "strength_material_high",
    "strength_random",
    "strength_random_low",
    "strength_random_high",
    "strength_seconds",
)
"""The strength probe's columns: the boss's network under alpha-beta against material at the same
depth, and the boss with its training search against random (scores with their 95% intervals), and
the probe's seconds (not in ``wall_seconds``)."""

LEARNER_COLUMNS = (
    "loss",
    "td_error",
    "epsilon",
    "value_mean",
    "score_vs_opponent",
)
"""The self-play learners' columns (empty in evolution runs): the training loss after the epoch's
updates, the mean absolute TD error before them, the exploration rate (epsilon, or the softmax
temperature) and the network's mean value of the positions it trained on; DQN adds its points per
finished game against its opponent (``score_vs_opponent``)."""

FITNESS_COLUMNS = (
    "fitness_min",
    "fitness_q25",
    "fitness_median",
    "fitness_q75",
    "fitness_max",
    "fitness_mean",
)
"""The quantiles and mean of the members' points against the boss in an epoch."""

PBT_COLUMNS = (
    "pbt_best",
    "pbt_best_score",
    "pbt_worst_score",
    "pbt_learning_rate",
    "pbt_lambda",
    "pbt_learning_rate_min",
    "pbt_learning_rate_max",
    "pbt_lambda_min",
    "pbt_lambda_max",
    "pbt_exploration_min",
    "pbt_exploration_max",
    "pbt_sources",
    "pbt_depth",
    "pbt_depth_min",
    "pbt_depth_max",
    "pbt_width",
    "pbt_width_min",
    "pbt_width_max",
)
"""Population-based training's columns (``strategy = "pbt"``; its loss, TD error, epsilon and value
columns are the best member's, its game columns every member's self-play games): the best member (the
latest tournament's winner), its learning rate and lambda; the smallest and largest learning rate,
lambda and exploration rate of the members; and on a tournament's epoch the best and worst members'
points per game in it and ``pbt_sources``, each member's source at the exploit (the member whose
network and hyperparameters it copied, -1 where it kept its own), space-separated; with alpha-beta
members the best member's depth and the members' smallest and largest (``max_depth``); with an
evolving width (``min_width``) the same of the MLP's width."""

METRIC_COLUMNS = (
    "epoch",
    *FITNESS_COLUMNS,
    "best_member",
    "best_points",
    "boss_changed",
    "boss_id",
    "boss_age",
    "learner_loss_before",
    "learner_loss_after",
    "games",
    "wins",
    "draws",
    "losses",
    "plies",
    "confirm_score",
    "confirm_low",
    "hall_of_fame_score",
    "benchmark_score",
    *STRENGTH_COLUMNS,
    *LEARNER_COLUMNS,
    *PBT_COLUMNS,
    "plies_per_second",
    "wall_seconds",
)
"""Columns of ``metrics.csv``; fitness columns are points over the epoch's games (not per game)
against the boss. The selection columns (the confirmation match's score and lower 95% bound, mean
points per game against the hall of fame and the benchmark opponent) are empty when that setting is
off; the strength columns (``STRENGTH_COLUMNS``) are empty except on the epochs that rate the boss.
A self-play learner's run (``LEARNER_COLUMNS``) leaves the fitness and selection columns empty; its
boss is the latest network snapshot (``boss_changed`` on the epochs that took one), ``learner_loss_*``
its loss before and after the updates, ``wins``/``losses`` the games Black/White won.
Files written before a column existed lack it; readers use ``row.get``."""
TIMING_COLUMNS = ("plies_per_second", "wall_seconds", "strength_seconds")
"""The columns that differ between two runs of the same config and seed."""
LINEAGE_COLUMNS = ("boss_id", "epoch", "points", "file")
"""Columns of ``lineage.csv``: epoch -1 is the random first boss; file is in ``lineage/``."""

RESERVED_AGENT_KEYS = (
    "format",
    "format_version",
    "rules",
    "board_size",
    "layers",
    "width",
    "input_encoding",
    "material_input",
    "architecture",
    "cnn_channels",
    "cnn_dense",
    "transformer_layers",
    "transformer_heads",
    "transformer_width",
    "nnue_width",
    "nnue_hidden",
)
"""Agent-file metadata keys written by ``save_agent`` itself; extra metadata may not use them."""

FIXED_OPPONENTS = "random | greedy-material | alphabeta:D"
"""The knowledge-light player specs an evolution run can play as a fixed benchmark opponent."""
MAX_BENCHMARK_DEPTH = 8
"""The deepest fixed benchmark opponent (``alphabeta:D`` of ``FIXED_OPPONENTS``): it plays a match
every epoch of a run, so it is capped below a match's players (``search.limits.MAX_ALPHABETA_DEPTH``)."""


def _complete_rows(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV file up to its last line end (a row still being appended is left out);
    ``ValueError`` saying what is wrong with a file that is not CSV text."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            text = f.read()
        return list(csv.DictReader(io.StringIO(text[: text.rfind("\n") + 1])))
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text") from None
    except csv.Error as e:
        raise ValueError(f"{path} is not a CSV file ({e})") from None


def read_metrics(run_dir: str | Path) -> list[dict[str, str]]:
    """The finished epochs' rows of a run's ``metrics.csv``, as strings; ``FileNotFoundError`` if
    the file is missing. Safe while the run is writing: a half-written last row is left out."""
    return _complete_rows(Path(run_dir) / METRICS_FILE)


def read_lineage(run_dir: str | Path) -> list[dict[str, str]]:
    """The rows of a run's ``lineage.csv`` (``LINEAGE_COLUMNS``, as strings), first boss first;
    ``FileNotFoundError`` if the file is missing."""
    return _complete_rows(Path(run_dir) / LINEAGE_FILE)


def display_name(spec: str) -> str:
    """A player spec with agent-file paths cut to their file names, for figure titles:
    ``mcts:runs/x/agent.safetensors:16`` -> ``mcts:agent.safetensors:16``."""
    return ":".join(part.rsplit("/", 1)[-1] for part in spec.split(":"))


def parse_fixed_opponent(spec: str) -> tuple[str, int]:
    """``(kind, depth)`` of a fixed opponent spec (``FIXED_OPPONENTS``): ``("random", 0)``,
    ``("greedy-material", 0)`` or ``("alphabeta", D)`` with D in 1..``MAX_BENCHMARK_DEPTH``;
    ``ValueError`` naming it otherwise."""
    if spec in ("random", "greedy-material"):
        return spec, 0
    kind, _, depth = spec.partition(":")
    if kind == "alphabeta" and depth.isdigit() and 1 <= int(depth) <= MAX_BENCHMARK_DEPTH:
        return kind, int(depth)
    raise ValueError(f"a fixed opponent is {FIXED_OPPONENTS} (D in 1..{MAX_BENCHMARK_DEPTH}), got {spec!r}")
