"""Reading the served folder: run folders and their curves, game files, agent files.

Everything here only reads. Every path a request names is relative to the served folder and is
refused (``PathRefused``) when it leads outside it, symbolic links included; ``NotFound`` when
there is nothing there. Agent files named in player specs are found the same way.
"""

from __future__ import annotations

import functools
import logging
import math
import os
from pathlib import Path
from typing import Any

from neurocheckers.analysis.lineage import lineage
from neurocheckers.experiment.folder import (
    CHECKPOINT,
    FAILURE_FILE,
    config_summary,
    failure,
    read_run_config,
    run_is_locked,
    training_seconds,
)
from neurocheckers.experiment.folder import run_status as folder_run_status
from neurocheckers.formats import (
    CONFIG_FILE,
    FITNESS_COLUMNS,
    LINEAGE_DIR,
    METRICS_FILE,
    STRENGTH_COLUMNS,
    read_metrics,
)

CURVE_COLUMNS = (
    *FITNESS_COLUMNS,
    *(c for c in STRENGTH_COLUMNS if c != "strength_seconds"),
    "boss_changed",
)
"""The ``metrics.csv`` columns the Runs page draws (fitness and strength curves, boss changes)."""
GAME_SUFFIXES = (".json", ".pdn")
"""Files the Games page offers (a .json file only when it is a game file)."""
SKIPPED_FOLDERS = (LINEAGE_DIR, "__pycache__", "node_modules")
"""Folders never searched for runs or game files (hidden ones neither)."""

LOG = logging.getLogger("neurocheckers.web")
"""Where the server logs what it leaves out and its own failures."""


class PathRefused(ValueError):
    """A path that leads outside the served folder."""


class NotFound(ValueError):
    """A path inside the served folder with nothing (of the asked kind) there."""


class BadFile(ValueError):
    """A file of the served folder that cannot be used (a damaged run folder or game file)."""


class BadPath(ValueError):
    """A path no file could have (a NUL byte, too long): the client's mistake, answered 400."""


MAX_PATH_CHARS = 1024
"""The longest ``path`` a request may name (the served folder's paths are far shorter)."""


def reads_files(function):
    """``function`` with the problems of the files it reads told apart from the server's own: a file
    that cannot be read is ``NotFound``, one whose content is refused (``ValueError``) ``BadFile``."""

    @functools.wraps(function)
    def reading(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except (PathRefused, NotFound, BadFile):
            raise
        except OSError as error:
            raise NotFound(f"cannot read it: {error.strerror or error}") from None
        except (ValueError, KeyError) as error:
            raise BadFile(str(error.args[0]) if error.args else type(error).__name__) from None

    return reading


def inside(root: str | Path, relative: str) -> Path:
    """``root / relative`` resolved (links followed); ``PathRefused`` when that is outside ``root``,
    ``NotFound`` when it does not exist, ``BadPath`` for a NUL byte or over ``MAX_PATH_CHARS``."""
    if "\x00" in relative:
        raise BadPath("a path must not hold a NUL byte")
    if len(relative) > MAX_PATH_CHARS:
        raise BadPath(f"a path must be at most {MAX_PATH_CHARS} characters, got {len(relative)}")
    base = Path(root).resolve()
    try:
        target = (base / relative).resolve()
    except OSError as error:  # a name over the system's limits
        raise BadPath(f"no file can be named {relative[:40]!r}...: {error.strerror or error}") from None
    if target != base and base not in target.parents:
        raise PathRefused(f"{relative!r} is outside the served folder")
    try:
        exists = target.exists()
    except OSError:  # a component over the system's name length
        exists = False
    if not exists:
        raise NotFound(f"nothing at {relative!r} in the served folder")
    return target


def relative_name(root: str | Path, path: Path) -> str:
    """``path`` relative to ``root``, with forward slashes (how the page names it)."""
    return path.resolve().relative_to(Path(root).resolve()).as_posix()


def listed(root: str | Path, paths) -> list[str]:
    """The names (``relative_name``) of ``paths`` that stay inside ``root``; an entry that leads
    outside it (a link) is left out of the listing and logged, and the listing goes on."""
    names = []
    for path in paths:
        try:
            names.append(relative_name(root, path))
        except ValueError:
            LOG.warning("not listed: %s leads outside the served folder", Path(path).name)
    return names


def relative_message(root: str | Path, text: str) -> str:
    """``text`` with the served folder's absolute path taken out (messages name files relative to
    it, never where it is on the server)."""
    for base in {str(Path(root).resolve()), str(Path(root).absolute())}:
        text = text.replace(base + os.sep, "").replace(base, ".")
    return text


def walk_served(root: str | Path):
    """``os.walk`` of ``root`` (links not followed) without hidden or skipped folders."""
    for folder, subfolders, files in os.walk(Path(root).resolve()):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        yield Path(folder), subfolders, sorted(files)


# --- runs ----------------------------------------------------------------------------------------


def is_run_folder(path: Path) -> bool:
    return (path / CONFIG_FILE).is_file() and (path / METRICS_FILE).is_file()


def find_runs(root: str | Path) -> list[Path]:
    """Every run folder under ``root`` (itself included), in path order."""
    runs = []
    for folder, subfolders, _ in walk_served(root):
        if is_run_folder(folder):
            runs.append(folder)
            subfolders[:] = []  # a run folder holds no other runs
    return runs


def run_status(run_dir: Path, epochs: int, epochs_done: int) -> str:
    """``experiment.folder.run_status``: running, finished, budget reached or interrupted (resumable);
    a committed run kept without its checkpoint is finished when its metrics hold every epoch."""
    status = folder_run_status(run_dir, epochs)
    if status in ("interrupted (resumable)", "not started") and epochs_done >= epochs:
        return "finished"
    return status


def stop_reason(run_dir: Path, status: str, epochs: int, epochs_done: int, budget_minutes: float) -> str:
    """Where the run stands, or why it stopped, in one line (``status`` from ``run_status``)."""
    done = f"{epochs_done} of {epochs} epochs"
    if status == "running":
        return f"running: {done} so far"
    if status == "finished":
        return f"finished: {done}"
    if status == "budget reached":
        spent = training_seconds(run_dir) / 60
        return f"budget reached: {spent:.1f} of {budget_minutes:g} training minutes spent after {done}"
    if status == "interrupted (resumable)":
        return f"interrupted after {done}: evolve --resume goes on"
    if status == "failed":
        return f"failed after {done}: {failure(run_dir)} (evolve --resume retries)"
    return f"{status}: {done}"


def epochs_played(rows: list[dict[str, str]]) -> int:
    """The epochs a run's metrics rows reach: the last row's epoch + 1 (a committed run may keep only
    some rows, thinned to its probe epochs, so their count is not its epochs)."""
    return int(rows[-1]["epoch"]) + 1 if rows else 0


@reads_files
def run_summary(root: str | Path, run_dir: Path) -> dict[str, Any]:
    """One run folder for the Runs page's list: name, summary line, status and why it stopped,
    epochs."""
    config, simulations = read_run_config(run_dir)
    epochs_done = epochs_played(read_metrics(run_dir))
    status = run_status(run_dir, config.epochs, epochs_done)
    return {
        "path": relative_name(root, run_dir),
        "name": config.name,
        "rules": config.rules,
        "summary": config_summary(config, simulations),
        "status": status,
        "stop_reason": stop_reason(run_dir, status, config.epochs, epochs_done, config.budget_minutes),
        "epochs_done": epochs_done,
        "epochs": config.epochs,
    }


SUMMARY_FILES = (CONFIG_FILE, METRICS_FILE, CHECKPOINT, FAILURE_FILE)
"""The files a run's summary is read from: it is read again when one of them changes."""
_SUMMARIES: dict[Path, tuple[tuple, dict[str, Any]]] = {}
"""Run folder -> (its files' signature, its summary): the Runs page re-reads its list every few
seconds, and reading a config (validating it) is slow."""


def _signature(run_dir: Path) -> tuple:
    """What a run's summary depends on: its files' sizes and times, and whether it runs now."""
    stats = []
    for name in SUMMARY_FILES:
        try:
            stat = (run_dir / name).stat()
            stats.append((stat.st_mtime_ns, stat.st_size))
        except OSError:
            stats.append(None)
    return (*stats, run_is_locked(run_dir))


def cached_summary(root: str | Path, run_dir: Path) -> dict[str, Any]:
    """``run_summary``, read again only when the run's files or lock changed."""
    signature = _signature(run_dir)
    kept = _SUMMARIES.get(run_dir)
    if kept is None or kept[0] != signature:
        kept = (signature, run_summary(root, run_dir))
        _SUMMARIES[run_dir] = kept
    return dict(kept[1])


FAILED = "failed"
"""The status of a run folder that cannot be read (a damaged config.json or metrics.csv)."""


def run_row(root: str | Path, run_dir: Path) -> dict[str, Any]:
    """``run_summary``, or for a run folder that cannot be read a ``failed`` row saying why (the
    listing goes on with the other runs)."""
    try:
        return cached_summary(root, run_dir)
    except (BadFile, NotFound) as error:
        reason = relative_message(root, str(error))
        path = relative_name(root, run_dir)
        return {"path": path, "name": run_dir.name, "rules": None, "summary": "", "status": FAILED,
                "stop_reason": f"failed: the run folder cannot be read: {reason}", "epochs_done": None,
                "epochs": None}  # fmt: skip


@reads_files
def run_detail(root: str | Path, run_dir: Path) -> dict[str, Any]:
    """A run's summary, its whole config, its boss lineage (with whether each file is there) and the
    agent files at the top of its folder (a committed learner run keeps its final network there and
    no lineage)."""
    config, simulations = read_run_config(run_dir)
    try:
        bosses = lineage(run_dir)
    except ValueError:  # no lineage.csv
        bosses = []
    entries = [
        {
            "boss_id": b.boss_id,
            "epoch": b.epoch,
            "points": None if math.isnan(b.points) else b.points,
            "file": relative_name(root, b.path) if b.path.is_file() else None,
            "simulations": simulations,
        }
        for b in bosses
    ]
    detail = cached_summary(root, run_dir)
    agents = sorted(relative_name(root, p) for p in run_dir.glob("*.safetensors") if p.name != CHECKPOINT)
    detail.update(config=config.to_dict(), simulations_used=simulations, lineage=entries, agents=agents)
    return detail


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text not in (None, "") else None
    except ValueError:
        return None
    return None if value is None or not math.isfinite(value) else value


@reads_files
def run_curves(run_dir: Path) -> dict[str, Any]:
    """The run's finished epochs and its ``CURVE_COLUMNS`` (None where a row has no value)."""
    rows = read_metrics(run_dir)
    curves = {c: [_number(r.get(c)) for r in rows] for c in CURVE_COLUMNS}
    return {"epoch": [int(r["epoch"]) for r in rows], "columns": curves}
