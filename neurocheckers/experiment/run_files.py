"""A run folder's files as the run loop writes them: the checkpoint (any run state, as safetensors,
written atomically), the ``metrics.csv`` rows and the lineage entries (``lineage.csv`` and the saved
networks)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import jax
import numpy as np
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save

from neurocheckers.experiment.config import ExperimentConfig
from neurocheckers.experiment.files import atomic_write_bytes, atomic_write_text
from neurocheckers.experiment.folder import (
    CHECKPOINT,
    CHECKPOINT_FORMAT,
    CHECKPOINT_VERSION,
    RunError,
    csv_text,
    csv_writer,
    written_by,
)
from neurocheckers.experiment.strategy_registry import strategy
from neurocheckers.experiment.strength import is_probe_epoch, strength_probe
from neurocheckers.experiment.trainers import Trainer
from neurocheckers.formats import (
    CONFIG_FILE,
    LINEAGE_COLUMNS,
    LINEAGE_DIR,
    LINEAGE_FILE,
    METRICS_FILE,
    read_lineage,
    read_metrics,
)
from neurocheckers.networks.agent_file import save_agent

# --- checkpoints -------------------------------------------------------------------------------


def write_checkpoint(run_dir: Path, config: ExperimentConfig, simulations: int, state: Any) -> None:
    """Write any run state (a pytree with an ``epoch`` field) atomically, as safetensors."""
    leaves = [np.asarray(x) for x in jax.tree.leaves(jax.device_get(state))]
    tensors = {f"leaf_{i:04d}": np.array(x, order="C") for i, x in enumerate(leaves)}  # keeps 0-d
    metadata = {
        "format": CHECKPOINT_FORMAT,
        "format_version": CHECKPOINT_VERSION,
        "epoch": str(int(state.epoch)),
        "config": json.dumps(config.to_dict(), sort_keys=True),
        "simulations": str(simulations),
    }
    atomic_write_bytes(run_dir / CHECKPOINT, save(tensors, metadata=metadata))


def read_checkpoint(run_dir: Path, config: ExperimentConfig, template: Any) -> Any:
    """The state saved in ``run_dir``, shaped like ``template`` (a pytree of arrays or shapes);
    ``RunError`` if it is corrupt or from another config."""
    path = run_dir / CHECKPOINT
    treedef = jax.tree.structure(template)
    expected = jax.tree.leaves(template)
    try:
        with safe_open(str(path), framework="numpy") as f:
            metadata = dict(f.metadata() or {})
            tensors = {name: f.get_tensor(name) for name in f.keys()}  # noqa: SIM118 (not a dict)
    except (SafetensorError, OSError, ValueError) as e:
        raise RunError(f"checkpoint {path} cannot be read: {e}") from None
    if metadata.get("format") != CHECKPOINT_FORMAT:
        raise RunError(f"{path} is not a neurocheckers checkpoint")
    if metadata.get("format_version") != CHECKPOINT_VERSION:
        raise RunError(
            f"{path} has checkpoint version {metadata.get('format_version')!r}, not {CHECKPOINT_VERSION}"
        )
    if not written_by(metadata.get("config"), config):
        raise RunError(f"checkpoint {path} was written by another config than {run_dir / CONFIG_FILE}")
    if len(tensors) != len(expected):
        raise RunError(f"checkpoint {path} holds {len(tensors)} arrays, expected {len(expected)}")
    leaves = []
    for i, want in enumerate(expected):
        got = tensors.get(f"leaf_{i:04d}")
        if got is None or got.shape != want.shape or got.dtype != want.dtype:
            found = "missing" if got is None else f"{got.dtype}{list(got.shape)}"
            raise RunError(
                f"checkpoint {path}: array {i} is {found}, this config needs {want.dtype}{list(want.shape)}"
            )
        leaves.append(got)
    return jax.tree.unflatten(treedef, leaves)


# --- metrics and lineage -----------------------------------------------------------------------


def metric_columns(config: ExperimentConfig) -> tuple[str, ...]:
    """The columns of the run's ``metrics.csv``: its strategy's (``StrategyEntry.metrics_header``)."""
    return strategy(config.strategy).metrics_header()


def truncate_run(run_dir: Path, epochs_done: int, columns: tuple[str, ...]) -> None:
    """Drop metrics rows and lineage entries from epochs after the checkpoint (they are replayed)."""
    rows = [r for r in read_metrics(run_dir) if int(r["epoch"]) < epochs_done]
    atomic_write_text(run_dir / METRICS_FILE, csv_text(columns, rows))
    with open(run_dir / LINEAGE_FILE, newline="") as f:
        lineage = list(csv.DictReader(f))
    kept = [r for r in lineage if int(r["epoch"]) < epochs_done]
    for r in lineage:
        if r not in kept:
            (run_dir / LINEAGE_DIR / r["file"]).unlink(missing_ok=True)
    atomic_write_text(run_dir / LINEAGE_FILE, csv_text(LINEAGE_COLUMNS, kept))


def save_network(
    run_dir: Path, trainer: Trainer, network: Any, entry: int, epoch: int, points: float,
    extra: dict[str, str] | None = None,
) -> None:  # fmt: skip
    """Save ``network`` as lineage entry ``entry`` (a boss, or a learner's snapshot) of ``epoch`` (-1:
    the start), with the ``extra`` metadata of its state (``Trainer.metadata_of``)."""
    name = f"boss_{entry:04d}_epoch_{epoch:04d}.safetensors"
    metadata = {"boss_id": str(entry), "epoch": str(epoch), "points": str(points), **trainer.agent_metadata}
    metadata.update(extra or {})
    save_agent(run_dir / LINEAGE_DIR / name, trainer.rules, trainer.spec, jax.device_get(network), metadata)
    with open(run_dir / LINEAGE_FILE, "a", newline="") as f:
        csv_writer(f).writerow((entry, epoch, points, name))


def end_at_latest_row(
    run_dir: Path,
    config: ExperimentConfig,
    trainer: Trainer,
    network: Any,
    extra: dict[str, str] | None = None,
) -> None:
    """Make the latest epoch the run's last after the budget ran out inside the next one (its row was
    written before the run knew): give it what a last epoch takes and it lacks, the snapshot of
    ``network`` (its network; a learner's lineage ends with it, which ``export`` reads) and the
    strength probe, and rewrite its row."""
    rows = read_metrics(run_dir)
    if not rows:
        return
    row, changed = rows[-1], False
    epoch = int(row["epoch"])
    if trainer.snapshots and not int(row["boss_changed"] or 0):
        row.update({k: format_metric(v) for k, v in lineage_columns(run_dir, config, epoch, True).items()})
        points = float(row.get(trainer.points_column) or "nan")
        save_network(run_dir, trainer, network, int(row["boss_id"]), epoch, points, extra)
        changed = True
    if config.strength_every > 0 and not row.get("strength_seconds"):
        row.update({k: format_metric(v) for k, v in strength_probe(trainer, network).items()})
        changed = True
    if changed:
        atomic_write_text(run_dir / METRICS_FILE, csv_text(metric_columns(config), rows))


def format_metric(value: Any) -> str:
    if value is None or isinstance(value, str):  # a column this epoch has no value for
        return value or ""
    value = np.asarray(value)
    if value.ndim:  # a vector metric (PBT's sources): its values, space-separated
        return " ".join(format_metric(x) for x in value)
    if value.dtype == np.bool_:
        return str(int(value))
    if np.issubdtype(value.dtype, np.integer):
        return str(int(value))
    return repr(float(value))


def check_history(run_dir: Path, done: int) -> None:
    """``RunError`` unless ``metrics.csv`` and ``lineage.csv`` hold every epoch up to the checkpoint's
    ``done``: a damaged history is never silently cut (the run cannot write it again)."""
    try:
        logged = [int(row["epoch"]) for row in read_metrics(run_dir)]
        lineage = read_lineage(run_dir)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise RunError(
            f"{run_dir}: its metrics.csv or lineage.csv cannot be read ({e}); restore them"
        ) from None
    missing = sorted(set(range(done)) - set(logged))
    if missing:
        raise RunError(
            f"{run_dir / METRICS_FILE} lacks the rows of epochs {missing[0]}..{missing[-1]}, which its "
            f"checkpoint (after epoch {done}) has played: restore it, or start a new run; nothing was changed"
        )
    if not lineage:
        raise RunError(f"{run_dir / LINEAGE_FILE} has lost its entries: restore it; nothing was changed")


def lineage_columns(run_dir: Path, config: ExperimentConfig, epoch: int, last: bool) -> dict[str, Any]:
    """A learner epoch's ``boss_changed``, ``boss_id`` and ``boss_age``: a snapshot is due every
    ``snapshot_every`` epochs and after the last."""
    snapshot = (epoch + 1) % config.snapshot_every == 0 or last
    newest = read_lineage(run_dir)[-1]
    entry, entry_epoch = int(newest["boss_id"]), int(newest["epoch"])
    return {"boss_changed": snapshot, "boss_id": entry + snapshot, "boss_age": epoch - entry_epoch}


def write_row(
    run_dir: Path,
    config: ExperimentConfig,
    trainer: Trainer,
    epoch: int,
    metrics: dict[str, Any],
    network: Any,
    wall: float,
    total: int,
    last: bool,
    extra: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Append ``epoch``'s metrics row (with its strength probe when due, of ``network``, the epoch's
    network) and, when the epoch changed the boss or took a snapshot, its lineage entry; the row."""
    try:
        strategy(config.strategy).check_metrics(metrics)  # each name is a column or declared unlogged
    except ValueError as e:
        raise RunError(str(e)) from None
    row = {"epoch": epoch, **metrics}
    if trainer.snapshots:
        row.update(lineage_columns(run_dir, config, epoch, last))
    row["plies_per_second"] = float(metrics.get("plies", np.nan)) / max(wall, 1e-9)
    row["wall_seconds"] = wall
    if is_probe_epoch(epoch, config.strength_every, total) or (last and config.strength_every > 0):
        row.update(strength_probe(trainer, network))
    with open(run_dir / METRICS_FILE, "a", newline="") as f:
        csv_writer(f).writerow([format_metric(row.get(c)) for c in metric_columns(config)])
    if bool(row["boss_changed"]):
        points = float(row.get(trainer.points_column, float("nan")))
        save_network(run_dir, trainer, network, int(row["boss_id"]), epoch, points, extra)
    return row
