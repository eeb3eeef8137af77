"""Sweeps: run many experiment configs (a list, or a grid of values: ``sweep_file``) as one
resumable job.

``run_sweep`` keeps everything in ``OUT/{name}/``: one run folder per entry, ``sweep.json`` (each
entry's run folder and status, replaced atomically) and ``summary.csv``. Calling it again skips
finished entries, continues started ones from their checkpoints and creates the missing ones. Runs
go one after another in this process, in a ``spawn`` process pool (``workers``), or as Ray tasks on
a cluster (``ray_address``; the out folder must be on a file system every node sees).

This module imports JAX only inside functions: a worker must choose its host devices first.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from neurocheckers.experiment.cluster import connect_ray, import_ray
from neurocheckers.experiment.files import atomic_write_text
from neurocheckers.experiment.sweep_file import Sweep, SweepEntry, SweepError, with_epochs
from neurocheckers.formats import read_metrics

STATE_FILE = "sweep.json"
SUMMARY_FILE = "summary.csv"
STATE_FORMAT = "neurocheckers-sweep"
STATE_VERSION = 1
SUMMARY_COLUMNS = (
    "label",
    "run_dir",
    "status",
    "epochs_done",
    "epochs",
    "bosses_promoted",
    "median_seconds_per_epoch",
    "final_mean_points_per_game",
)
"""Columns of ``summary.csv``; the points are the mean member's in the last epoch, per game."""
POLL_SECONDS = 2.0  # how often a pool or Ray sweep looks at the runs' metrics for progress


@dataclasses.dataclass(frozen=True)
class SweepEvent:
    """What ``run_sweep`` reports to ``on_event``.

    kind: "skip" (finished earlier), "start", "progress" (an epoch finished), "done" or "failed".
    metrics: the latest metrics row on "progress" events (values as numbers or strings).
    """

    kind: str
    label: str
    run_dir: Path | None
    epochs_done: int
    epochs: int
    message: str = ""
    metrics: dict[str, Any] | None = None


@dataclasses.dataclass(frozen=True)
class SweepResult:
    """The sweep folder, its summary file and the summary rows (one per entry, as strings)."""

    sweep_dir: Path
    summary: Path
    rows: tuple[dict[str, str], ...]

    @property
    def failed(self) -> tuple[dict[str, str], ...]:
        return tuple(r for r in self.rows if r["status"] == "failed")


# --- state and summary -------------------------------------------------------------------------


def _read_state(sweep_dir: Path) -> dict[str, Any] | None:
    path = sweep_dir / STATE_FILE
    if not path.exists():
        return None
    try:
        state = json.loads(path.read_text())
        ok = state.get("format") == STATE_FORMAT and isinstance(state.get("entries"), dict)
    except (json.JSONDecodeError, AttributeError):
        ok = False
    if not ok:
        raise SweepError(f"{path} is not a neurocheckers sweep state file")
    if state.get("version") != STATE_VERSION:
        raise SweepError(f"{path} has sweep state version {state.get('version')!r}, not {STATE_VERSION}")
    return state


def _write_state(sweep_dir: Path, state: dict[str, Any]) -> None:
    atomic_write_text(sweep_dir / STATE_FILE, json.dumps(state, indent=2) + "\n")


def _metrics_rows(run_dir: Path) -> list[dict[str, str]]:
    """The finished epochs of a run (none before its folder has a metrics file)."""
    try:
        return read_metrics(run_dir)
    except FileNotFoundError:
        return []


def _describe(sweep_dir: Path, entry: SweepEntry, record: dict[str, Any]) -> dict[str, str]:
    """One summary row, from the run's metrics as they are on disk now."""
    run_name = record.get("run_dir")
    rows = _metrics_rows(sweep_dir / run_name) if run_name else []
    last = rows[-1] if rows else {}
    walls = [float(r["wall_seconds"]) for r in rows]
    return {
        "label": entry.label,
        "run_dir": run_name or "",
        "status": record.get("status", "pending"),
        "epochs_done": str(len(rows)),
        "epochs": str(entry.config.epochs),
        "bosses_promoted": str(sum(int(r["boss_changed"]) for r in rows)) if rows else "",
        "median_seconds_per_epoch": f"{statistics.median(walls):.4g}" if walls else "",
        "final_mean_points_per_game": (
            f"{float(last['fitness_mean']) / entry.config.games_per_epoch:.3f}"
            if last.get("fitness_mean")  # a learner's rows have no fitness
            else ""
        ),
    }


def _write_summary(sweep_dir: Path, sweep: Sweep, state: dict[str, Any]) -> tuple[dict[str, str], ...]:
    rows = tuple(_describe(sweep_dir, e, state["entries"].get(e.label, {})) for e in sweep.entries)
    out = io.StringIO()
    writer = csv.DictWriter(out, SUMMARY_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(sweep_dir / SUMMARY_FILE, out.getvalue())
    return rows


SUMMARY_HEADERS = ("run", "status", "epochs", "bosses", "s/epoch", "pts/game")


def format_summary(rows: Sequence[dict[str, str]]) -> str:
    """The summary rows as an aligned text table: a label of up to 35 characters fits in 80 columns.

    Fitness is the mean member's points per game against the boss in the last epoch, as in the plots;
    bosses counts promotions. Each run's folder is in ``summary.csv``.
    """
    cells = [list(SUMMARY_HEADERS)] + [
        [
            r["label"],
            r["status"],
            f"{r['epochs_done']}/{r['epochs']}",
            r["bosses_promoted"],
            r["median_seconds_per_epoch"],
            r["final_mean_points_per_game"],
        ]
        for r in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(SUMMARY_HEADERS))]

    def line(row: list[str]) -> str:  # label and status to the left, numbers to the right
        pairs = enumerate(zip(row, widths, strict=True))
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in pairs)

    lines = [line(row).rstrip() for row in cells]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


# --- workers -----------------------------------------------------------------------------------


def run_entry(run_dir: str, devices: int | None = None, cache_dir: str | None = None) -> int:
    """Run (or continue) one run folder to its config's epochs in a fresh process; returns the epochs
    done. Chooses ``devices`` host devices before JAX starts (the pool and Ray workers call this)."""
    from neurocheckers.devices import use_host_devices
    from neurocheckers.runtime import configure_jax

    use_host_devices(devices)
    try:
        configure_jax(cache_dir)
    except OSError:  # the driver's cache folder is not writable on this node
        configure_jax()
    from neurocheckers.experiment.run import run

    run(run_dir)
    return len(_metrics_rows(Path(run_dir)))


def _cache_dir() -> str | None:
    """The compilation cache this process uses, so workers share compiled programs with it."""
    import jax

    return jax.config.jax_compilation_cache_dir


# --- the sweep ---------------------------------------------------------------------------------


class _Book:
    """The sweep's mutable bookkeeping, kept in one place: state file, summary and events."""

    def __init__(self, sweep: Sweep, sweep_dir: Path, state: dict[str, Any], on_event) -> None:
        self.sweep, self.sweep_dir, self.state, self.on_event = sweep, sweep_dir, state, on_event
        self.by_label = {e.label: e for e in sweep.entries}
        self.seen: dict[str, int] = {}

    def record(self, label: str) -> dict[str, Any]:
        return self.state["entries"].setdefault(label, {"run_dir": None, "status": "pending"})

    def run_dir(self, label: str) -> Path:
        return self.sweep_dir / self.record(label)["run_dir"]

    def save(self) -> None:
        _write_state(self.sweep_dir, self.state)

    def emit(self, kind: str, label: str, message: str = "", metrics: dict[str, Any] | None = None) -> None:
        if self.on_event is None:
            return
        done = len(_metrics_rows(self.run_dir(label))) if kind != "progress" else self.seen.get(label, 0)
        epochs = self.by_label[label].config.epochs
        self.on_event(SweepEvent(kind, label, self.run_dir(label), done, epochs, message, metrics))

    def start(self, label: str) -> None:
        self.record(label)["status"] = "running"
        self.record(label).pop("error", None)
        self.save()
        self.emit("start", label)

    def finish(self, label: str, error: str | None) -> None:
        record = self.record(label)
        record["status"] = "failed" if error else "done"
        if error:
            record["error"] = error
        self.save()
        _write_summary(self.sweep_dir, self.sweep, self.state)
        self.emit("failed" if error else "done", label, error or "")

    def progress(self, label: str, epochs_done: int, metrics: dict[str, Any] | None) -> None:
        if self.seen.get(label) != epochs_done:
            self.seen[label] = epochs_done
            self.emit("progress", label, metrics=metrics)

    def poll(self, labels) -> None:
        """Progress of runs in other processes, read from their metrics files."""
        for label in labels:
            rows = _metrics_rows(self.run_dir(label))
            if rows:
                self.progress(label, len(rows), rows[-1])


def _error_text(e: BaseException) -> str:
    return " ".join(f"{type(e).__name__}: {e}".split())


def _prepare(sweep: Sweep, sweep_dir: Path, epochs: int | None) -> tuple[Sweep, dict[str, Any]]:
    """Match the sweep to its folder's state: same --epochs, unchanged configs of started runs."""
    from neurocheckers.experiment.folder import RunError, read_run_config

    state = _read_state(sweep_dir)
    if state is None:
        state = {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "name": sweep.name,
            "epochs": epochs,
            "entries": {},
        }
    else:
        stored = state.get("epochs")
        if epochs is None:
            epochs = stored
        elif epochs != stored:
            before = f"--epochs {stored}" if stored is not None else "each config's own epochs"
            raise SweepError(
                f"the sweep in {sweep_dir} was started with {before}; continue it the same way "
                f"(--epochs can be left out), or write to another --out"
            )
    if epochs is not None:
        sweep = with_epochs(sweep, epochs)
    for entry in sweep.entries:
        record = state["entries"].get(entry.label)
        if not record or not record.get("run_dir"):
            continue
        run_dir = sweep_dir / record["run_dir"]
        if not run_dir.exists():  # deleted by hand: start that entry again
            state["entries"][entry.label] = {"run_dir": None, "status": "pending"}
            continue
        try:
            config, _ = read_run_config(run_dir)
        except RunError as e:
            raise SweepError(f"sweep entry {entry.label!r}: {e}") from None
        if config != entry.config:
            old, new = config.to_dict(), entry.config.to_dict()
            changes = ", ".join(f"{k}: {old[k]!r} -> {new[k]!r}" for k in new if old[k] != new[k])
            raise SweepError(
                f"sweep entry {entry.label!r} changed since its run {run_dir} started ({changes}); "
                "restore the sweep's configs or write to another --out"
            )
    return sweep, state


def run_sweep(
    sweep: Sweep,
    out_dir: str | Path = "runs",
    epochs: int | None = None,
    workers: int = 1,
    ray_address: str | None = None,
    on_event: Callable[[SweepEvent], None] | None = None,
    cpus_per_run: int = 1,
) -> SweepResult:
    """Run every entry of ``sweep`` not finished yet, in ``out_dir/{sweep.name}/``.

    ``epochs`` overrides every entry's epochs (remembered: a restart may leave it out). ``workers``
    > 1 runs that many entries at once in a ``spawn`` process pool, each with cores/workers host
    devices. ``ray_address`` (e.g. "auto", "ray://head:10001", "local") runs each entry as a Ray task
    taking ``cpus_per_run`` CPUs; a Ray connection already open in this process is used as it is.
    A run that raises is marked failed and the others go on; a restart tries it again.
    """
    if workers < 1:
        raise SweepError(f"workers must be >= 1, got {workers}")
    if cpus_per_run < 1:
        raise SweepError(f"cpus_per_run must be >= 1, got {cpus_per_run}")
    if epochs is not None and epochs < 1:
        raise SweepError(f"epochs must be >= 1, got {epochs}")
    if ray_address is not None:
        if workers != 1:
            raise SweepError(
                f"workers is for runs on this machine; with Ray give cpus_per_run, got {workers}"
            )
        import_ray(SweepError)  # before anything is written
    sweep_dir = Path(out_dir) / sweep.name
    sweep_dir.mkdir(parents=True, exist_ok=True)
    sweep, state = _prepare(sweep, sweep_dir, epochs)

    from neurocheckers.experiment.run import create_run

    book = _Book(sweep, sweep_dir, state, on_event)
    book.save()
    for entry in sweep.entries:
        if not book.record(entry.label)["run_dir"]:
            book.record(entry.label)["run_dir"] = create_run(entry.config, sweep_dir).name
            book.save()
    _write_summary(sweep_dir, sweep, state)
    todo = []
    for entry in sweep.entries:
        if book.record(entry.label)["status"] == "done":
            book.emit("skip", entry.label)
        else:
            todo.append(entry.label)

    if todo and ray_address is not None:
        _run_ray(book, todo, ray_address, cpus_per_run)
    elif todo and workers > 1:
        _run_pool(book, todo, workers)
    else:
        _run_inline(book, todo)
    rows = _write_summary(sweep_dir, sweep, state)
    return SweepResult(sweep_dir, sweep_dir / SUMMARY_FILE, rows)


def _run_inline(book: _Book, todo: list[str]) -> None:
    """One run after another in this process (same-shape configs share compiled programs)."""
    from neurocheckers.experiment.run import run

    for label in todo:
        book.start(label)

        def on_epoch(row: dict[str, Any], label: str = label) -> None:
            book.progress(label, int(row["epoch"]) + 1, row)

        try:
            run(book.run_dir(label), on_epoch=on_epoch)
        except Exception as e:  # one broken run should not stop a long sweep; it is retried on restart
            book.finish(label, _error_text(e))
        else:
            book.finish(label, None)


def _run_pool(book: _Book, todo: list[str], workers: int) -> None:
    """Several runs at once in fresh ``spawn`` processes (JAX is not fork-safe)."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    workers = min(workers, len(todo))
    devices = max(1, (os.cpu_count() or 1) // workers)
    cache = _cache_dir()
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        futures = {}
        for label in todo:
            futures[pool.submit(run_entry, str(book.run_dir(label)), devices, cache)] = label
            book.start(label)
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
            for future in finished:
                error = future.exception()
                if isinstance(error, KeyboardInterrupt):  # Ctrl-C reached the worker before us
                    raise error
                book.finish(futures[future], _error_text(error) if error else None)
            book.poll(futures[f] for f in pending)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _run_ray(book: _Book, todo: list[str], address: str, cpus_per_run: int) -> None:
    """One Ray task per run; results are recorded as each task finishes."""
    ray = import_ray(SweepError)
    connected_here = connect_ray(address, SweepError)
    try:
        task = ray.remote(num_cpus=cpus_per_run, max_retries=0)(run_entry)
        cache = _cache_dir()
        refs = {}
        for label in todo:
            refs[task.remote(str(book.run_dir(label).resolve()), cpus_per_run, cache)] = label
            book.start(label)
        pending = list(refs)
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1, timeout=POLL_SECONDS)
                for ref in ready:
                    try:
                        ray.get(ref)
                    except ray.exceptions.RayTaskError as e:
                        book.finish(refs[ref], _error_text(getattr(e, "cause", None) or e))
                    except ray.exceptions.RayError as e:  # a lost worker or node
                        book.finish(refs[ref], _error_text(e))
                    else:
                        book.finish(refs[ref], None)
                book.poll(refs[r] for r in pending)
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
    finally:
        if connected_here:
            ray.shutdown()
