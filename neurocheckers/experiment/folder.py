"""A run folder read and locked without the training stack (no JAX): its config, whether it is
complete or in use, its training time, and the one-line summaries of its config.

``analysis``, ``web`` and the command line read run folders through this module; ``experiment.run``
writes them.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import datetime
import io
import json
import os
from pathlib import Path
from typing import Any

from safetensors import SafetensorError, safe_open

from neurocheckers.experiment.config import ConfigError, ExperimentConfig, make_config
from neurocheckers.experiment.strategy_registry import strategy
from neurocheckers.formats import CONFIG_FILE, METRICS_FILE, read_metrics
from neurocheckers.networks.architectures import network_summary

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: run folders are not locked
    fcntl = None  # type: ignore[assignment]

CHECKPOINT = "checkpoint.safetensors"
LOCK_FILE = "run.lock"
CHECKPOINT_FORMAT = "neurocheckers-checkpoint"
CHECKPOINT_VERSION = "1"


class RunError(ValueError):
    """A run folder or checkpoint that cannot be used; nothing was changed."""


def run_folder_name(config: ExperimentConfig, now: datetime.datetime | None = None) -> str:
    """``{name}_seed{seed}_{YYYYmmdd-HHMMSS}``."""
    now = now or datetime.datetime.now()
    return f"{config.name}_seed{config.seed}_{now:%Y%m%d-%H%M%S}"


def csv_writer(f):
    """A CSV writer with LF line endings (the csv module's default is CRLF)."""
    return csv.writer(f, lineterminator="\n")


def csv_text(columns: tuple[str, ...], rows: list[dict[str, str]]) -> str:
    """A whole CSV file (LF line endings) of ``rows`` under ``columns``."""
    buffer = io.StringIO()
    writer = csv_writer(buffer)
    writer.writerow(columns)
    writer.writerows([r.get(c, "") for c in columns] for r in rows)  # older files lack new columns
    return buffer.getvalue()


def read_run_config(run_dir: str | Path) -> tuple[ExperimentConfig, int]:
    """(config, simulations used) of a run folder; ``RunError`` if it is not one."""
    run_dir = Path(run_dir)
    path = run_dir / CONFIG_FILE
    if not run_dir.is_dir():
        raise RunError(f"no run folder {run_dir}" + (" (it is a file)" if run_dir.exists() else ""))
    missing = [name for name in (CONFIG_FILE, METRICS_FILE) if not (run_dir / name).is_file()]
    if missing:
        raise RunError(f"{run_dir} is not a neurocheckers run folder: it has no {' and no '.join(missing)}")
    try:
        data = json.loads(path.read_text())
        return make_config(data["config"]), int(data["simulations_used"])
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ConfigError) as e:
        raise RunError(f"{path} is not a valid run config: {e}") from None


def run_metrics(run_dir: str | Path) -> list[dict[str, str]]:
    """The finished epochs' rows of the run's ``metrics.csv`` (``formats.read_metrics``); ``RunError``
    saying what is wrong with a file that cannot be read (missing, not UTF-8 text, not CSV)."""
    try:
        return read_metrics(run_dir)
    except OSError as e:
        raise RunError(f"{Path(run_dir) / METRICS_FILE} cannot be read: {e.strerror or e}") from None
    except ValueError as e:
        raise RunError(str(e)) from None


def checkpoint_epoch(run_dir: str | Path) -> int | None:
    """Epochs done according to the run's checkpoint; None without a readable checkpoint written
    by the run's own config."""
    config, _ = read_run_config(run_dir)
    try:
        with safe_open(str(Path(run_dir) / CHECKPOINT), framework="numpy") as f:
            metadata = f.metadata() or {}
        if not written_by(metadata.get("config"), config):
            return None
        return int(metadata["epoch"])
    except (SafetensorError, OSError, ValueError, KeyError):
        return None


def written_by(stored: str | None, config: ExperimentConfig) -> bool:
    """Whether a checkpoint's stored config (JSON) is ``config``; keys added to the config since the
    checkpoint was written count at their defaults, so older runs still resume."""
    try:
        return make_config(json.loads(stored or "")).to_dict() == config.to_dict()
    except (ValueError, TypeError, AttributeError):  # not JSON, or not a config (ConfigError too)
        return False


@contextlib.contextmanager
def run_lock(run_dir: str | Path):
    """Hold the exclusive lock of ``run_dir`` (``fcntl.flock`` on its ``run.lock``) while in the
    block; ``RunError`` at once if another process holds it. The lock goes with the process."""
    path = Path(run_dir) / LOCK_FILE
    with open(path, "a") as f:
        if fcntl is not None:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RunError(
                    f"{run_dir} is in use by another process (it holds {path}); wait for it to end"
                ) from None
        yield


def run_is_locked(run_dir: str | Path) -> bool:
    """Whether a process holds ``run_dir``'s lock (a run is going on), found without writing or
    locking anything: from ``/proc/locks`` where there is one (Linux), else by a shared-lock probe of
    an existing ``run.lock``. False when the folder has no ``run.lock``."""
    path = Path(run_dir) / LOCK_FILE
    try:
        status = path.stat()
    except OSError:
        return False
    try:
        locks = Path("/proc/locks").read_text()
    except OSError:
        locks = None
    if locks is not None:
        device = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
        return any(device in line.split() for line in locks.splitlines() if "FLOCK" in line)
    if fcntl is None:  # pragma: no cover - not POSIX
        return False
    with open(path) as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    return False


DISCARDED_FILE = "discarded_seconds.txt"
"""The training seconds of epochs stopped part-way by the budget and discarded (not in metrics.csv)."""
BUDGET_MARGIN_SECONDS = 5.0
"""How far past its wall-time budget a run may expect its next epoch to end and still start it."""
PIECES_MARGIN = 2.0
"""How many of the latest epoch's wall times before the budget's end epochs are played in pieces
(``Budget.may_end_in_next_epoch``): an epoch may take longer than the one before."""


def discarded_seconds(run_dir: str | Path) -> float:
    """The seconds of ``DISCARDED_FILE`` (0 without one, or when it is unreadable)."""
    try:
        return max(float((Path(run_dir) / DISCARDED_FILE).read_text()), 0.0)
    except (OSError, ValueError):
        return 0.0


def training_seconds(run_dir: str | Path) -> float:
    """The training wall time of the epochs in ``metrics.csv`` (the sum of ``wall_seconds``; the
    strength probes are measurement, not training, and are left out), plus the seconds of epochs
    the budget stopped part-way (``DISCARDED_FILE``)."""
    rows = run_metrics(run_dir)
    return float(sum(float(r.get("wall_seconds") or 0.0) for r in rows)) + discarded_seconds(run_dir)


@dataclasses.dataclass
class Budget:
    """A run's wall-time budget: ``seconds`` of training (0: none) of which ``used`` are spent; the
    next epoch is expected to take ``next_epoch`` seconds (the latest epoch's wall time)."""

    seconds: float
    used: float = 0.0
    next_epoch: float = 0.0

    def spent(self) -> bool:
        """Spent, or too little left for the next epoch (it would end more than
        ``BUDGET_MARGIN_SECONDS`` past the budget)."""
        if self.seconds <= 0:
            return False
        return self.used >= self.seconds or self.used + self.next_epoch > self.seconds + BUDGET_MARGIN_SECONDS

    def over(self, running: float) -> bool:
        """Whether ``running`` more seconds of an unfinished epoch pass the budget."""
        return self.seconds > 0 and self.used + running >= self.seconds

    def may_end_in_next_epoch(self) -> bool:
        """Whether the budget may run out inside the next epoch: before any epoch was timed, or when
        ``PIECES_MARGIN`` times the latest epoch's wall time reaches its end. Only then is an epoch
        played in pieces with the budget checked between them (``Trainer.epoch_steps``), which costs
        time: each piece's game loop waits for its longest game (8x8 TDLeaf, 1,024 games: 12.1 s an
        epoch in 4 pieces, 7.1 s whole, one core)."""
        if self.seconds <= 0:
            return False
        return self.next_epoch <= 0 or self.used + PIECES_MARGIN * self.next_epoch >= self.seconds


def run_budget(run_dir: str | Path, budget_minutes: float) -> Budget:
    """The budget of a run folder: its training seconds so far, its latest epoch's wall time."""
    rows = run_metrics(run_dir)
    latest = float(rows[-1].get("wall_seconds") or 0.0) if rows else 0.0
    return Budget(budget_minutes * 60.0, training_seconds(run_dir), latest)


def run_is_complete(run_dir: str | Path, epochs: int) -> bool:
    """Whether the run's checkpoint already holds ``epochs`` (or more) epochs."""
    done = checkpoint_epoch(run_dir)
    return done is not None and done >= epochs


def search_metadata(search: str, depth: int) -> dict[str, str]:
    """Agent-file metadata naming the search a run's players used (next to ``simulations``):
    ``search``, and ``depth`` for alpha-beta, so ``gauntlet FILE`` plays the agent the same way."""
    return {"search": search, **({"depth": str(depth)} if search == "alphabeta" else {})}


def config_summary(config: ExperimentConfig, simulations: int) -> str:
    """The run in one line, as its strategy's registry entry words it (``simulations``: per move)."""
    entry = strategy(config.strategy)
    if entry.summary is None:
        return f"{config.name}: {config.rules}, {network_summary(config)}, strategy {config.strategy}"
    return entry.summary(config, simulations)


def learner_status(row: dict[str, Any]) -> str:
    """The progress bar's status of a learner epoch's metrics row (loss and TD error when it has them)."""
    parts = [f"snapshot #{int(row['boss_id'])}"]
    shown = [name for name in ("loss", "td_error") if name in row]
    parts += [f"{name.replace('_', ' ')} {float(row[name]):.4f}" for name in shown]
    return " ".join([*parts, f"{float(row['wall_seconds']):.2f} s/epoch"])


FAILURE_FILE = "failed.txt"
"""Written by a run that stopped on an error (one line: the error), removed when it starts again."""


def failure(run_dir: str | Path) -> str | None:
    """The error a run stopped on, or None when it did not stop on one."""
    try:
        return (Path(run_dir) / FAILURE_FILE).read_text().strip() or "unknown error"
    except OSError:
        return None


def run_status(run_dir: str | Path, epochs: int | None = None) -> str:
    """Where a run stands, in words: ``running`` (a process holds its lock), ``finished`` (its
    checkpoint has ``epochs``, default the config's), ``failed`` (it stopped on an error: ``failure``
    says which; ``evolve --resume`` retries from its last checkpoint), ``budget reached`` (its
    training time is spent), ``interrupted (resumable)`` (epochs remain: ``evolve --resume`` goes on),
    or ``not started``."""
    config, _ = read_run_config(run_dir)
    total = config.epochs if epochs is None else epochs
    done = checkpoint_epoch(run_dir)
    if run_is_locked(run_dir):
        return "running"
    if done is not None and done >= total:
        return "finished"
    if failure(run_dir) is not None:
        return "failed"
    if run_budget(run_dir, config.budget_minutes).spent():
        return "budget reached"
    played = done is not None or bool(run_metrics(run_dir))
    return "interrupted (resumable)" if played else "not started"


def stop_message(run_dir: str | Path, epochs: int | None = None) -> str:
    """One line on why a run that is not running stopped, for the end of ``evolve``."""
    config, _ = read_run_config(run_dir)
    total = config.epochs if epochs is None else epochs
    done = checkpoint_epoch(run_dir) or 0
    status = run_status(run_dir, total)
    if status == "budget reached":
        spent = f"{training_seconds(run_dir) / 60:.1f} of {config.budget_minutes:g} min"
        return f"stopped: the training budget is spent ({spent}) after {done} of {total} epochs"
    if status == "failed":
        return f"failed after {done} of {total} epochs: {failure(run_dir)}"
    return f"{status}: {done} of {total} epochs"
