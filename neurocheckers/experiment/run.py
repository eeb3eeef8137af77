"""The evolution driver: run folders, metrics, lineage files, atomic checkpoints and resume.

The jitted ``evolve_epoch`` does the work; this module only logs, saves and shows progress. Epoch
keys depend on the seed and the epoch number alone, so a run resumed from a checkpoint writes the
same metrics (apart from timing columns) as an uninterrupted one.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save_file

from neurocheckers.agent_file import save_agent
from neurocheckers.evolution.boss_ga import EvoState, Setup, epoch_key, evolve_epoch, init, make_setup
from neurocheckers.experiment.config import ConfigError, ExperimentConfig, make_config
from neurocheckers.experiment.files import atomic_write_text
from neurocheckers.formats import (
    CONFIG_FILE,
    LINEAGE_DIR,
    LINEAGE_FILE,
    METRIC_COLUMNS,
    METRICS_FILE,
    read_metrics,
)

CHECKPOINT = "checkpoint.safetensors"
CHECKPOINT_FORMAT = "neurocheckers-checkpoint"
CHECKPOINT_VERSION = "1"


class RunError(ValueError):
    """A run folder or checkpoint that cannot be used; nothing was changed."""


def run_folder_name(config: ExperimentConfig, now: datetime.datetime | None = None) -> str:
    """``{name}_seed{seed}_{YYYYmmdd-HHMMSS}``."""
    now = now or datetime.datetime.now()
    return f"{config.name}_seed{config.seed}_{now:%Y%m%d-%H%M%S}"


def _calibrated_simulations(config: ExperimentConfig) -> int:
    """The simulation count that fits ``seconds_per_move`` on this machine (measured once)."""
    if config.seconds_per_move <= 0:
        return config.simulations
    from neurocheckers.evaluator import init_params, value_fn
    from neurocheckers.search.mcts import MCTSConfig, calibrate_simulations

    setup = make_setup(config.evolution_settings())
    params = init_params(jax.random.key(0), setup.spec)
    return int(
        calibrate_simulations(
            setup.rules,
            MCTSConfig(),
            value_fn(setup.spec),
            params,
            config.seconds_per_move,
            batch_size=config.population * config.games_per_epoch,
        )
    )


def create_run(config: ExperimentConfig, out: str | Path = "runs") -> Path:
    """Make a new run folder under ``out`` with the resolved config; returns its path."""
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    path = root / run_folder_name(config)
    suffix = 1
    while path.exists():
        path = root / f"{run_folder_name(config)}-{suffix}"
        suffix += 1
    path.mkdir()
    simulations = _calibrated_simulations(config)
    resolved = {"config": config.to_dict(), "simulations_used": simulations}
    atomic_write_text(path / CONFIG_FILE, json.dumps(resolved, indent=2) + "\n")
    (path / LINEAGE_DIR).mkdir()
    with open(path / METRICS_FILE, "w", newline="") as f:
        csv.writer(f).writerow(METRIC_COLUMNS)
    with open(path / LINEAGE_FILE, "w", newline="") as f:
        csv.writer(f).writerow(("boss_id", "epoch", "points", "file"))
    return path


def read_run_config(run_dir: str | Path) -> tuple[ExperimentConfig, int]:
    """(config, simulations used) of a run folder; ``RunError`` if it is not one."""
    run_dir = Path(run_dir)
    path = run_dir / CONFIG_FILE
    if not run_dir.is_dir() or not path.exists() or not (run_dir / METRICS_FILE).exists():
        raise RunError(f"{run_dir} is not a neurocheckers run folder (no {CONFIG_FILE} or {METRICS_FILE})")
    try:
        data = json.loads(path.read_text())
        return make_config(data["config"]), int(data["simulations_used"])
    except (json.JSONDecodeError, KeyError, TypeError, ConfigError) as e:
        raise RunError(f"{path} is not a valid run config: {e}") from None


# --- checkpoints -------------------------------------------------------------------------------


def save_checkpoint(run_dir: Path, config: ExperimentConfig, setup: Setup, state: EvoState) -> None:
    """Write the whole evolution state atomically (a temporary file, fsync, then rename)."""
    leaves = [np.asarray(x) for x in jax.tree.leaves(jax.device_get(state))]
    tensors = {f"leaf_{i:04d}": np.array(x, order="C") for i, x in enumerate(leaves)}  # keeps 0-d
    metadata = {
        "format": CHECKPOINT_FORMAT,
        "format_version": CHECKPOINT_VERSION,
        "epoch": str(int(state.epoch)),
        "config": json.dumps(config.to_dict(), sort_keys=True),
        "simulations": str(setup.search.num_simulations),
    }
    tmp = run_dir / (CHECKPOINT + ".tmp")
    save_file(tensors, str(tmp), metadata=metadata)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, run_dir / CHECKPOINT)


def load_checkpoint(run_dir: Path, config: ExperimentConfig, setup: Setup) -> EvoState:
    """The state saved in ``run_dir``; ``RunError`` if it is corrupt or from another config."""
    path = run_dir / CHECKPOINT
    template = jax.eval_shape(lambda: init(setup, jax.random.key(0)))
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
    if metadata.get("config") != json.dumps(config.to_dict(), sort_keys=True):
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


def _truncate_run(run_dir: Path, epochs_done: int) -> None:
    """Drop metrics rows and lineage entries from epochs after the checkpoint (they are replayed)."""
    rows = [r for r in read_metrics(run_dir) if int(r["epoch"]) < epochs_done]
    lines = [",".join(METRIC_COLUMNS)] + [",".join(r[c] for c in METRIC_COLUMNS) for r in rows]
    atomic_write_text(run_dir / METRICS_FILE, "\n".join(lines) + "\n")
    with open(run_dir / LINEAGE_FILE, newline="") as f:
        lineage = list(csv.DictReader(f))
    kept = [r for r in lineage if int(r["epoch"]) < epochs_done]
    for r in lineage:
        if r not in kept:
            (run_dir / LINEAGE_DIR / r["file"]).unlink(missing_ok=True)
    lines = ["boss_id,epoch,points,file"] + [
        f"{r['boss_id']},{r['epoch']},{r['points']},{r['file']}" for r in kept
    ]
    atomic_write_text(run_dir / LINEAGE_FILE, "\n".join(lines) + "\n")


def _save_boss(run_dir: Path, setup: Setup, params: Any, boss_id: int, epoch: int, points: float) -> None:
    name = f"boss_{boss_id:04d}_epoch_{epoch:04d}.safetensors"
    save_agent(
        run_dir / LINEAGE_DIR / name,
        setup.rules,
        setup.spec,
        jax.device_get(params),
        metadata={
            "boss_id": str(boss_id),
            "epoch": str(epoch),
            "points": str(points),
            "games_per_epoch": str(setup.settings.games_per_epoch),
            "simulations": str(setup.search.num_simulations),
        },
    )
    with open(run_dir / LINEAGE_FILE, "a", newline="") as f:
        csv.writer(f).writerow((boss_id, epoch, points, name))


def _format(value: Any) -> str:
    value = np.asarray(value)
    if value.dtype == np.bool_:
        return str(int(value))
    if np.issubdtype(value.dtype, np.integer):
        return str(int(value))
    return repr(float(value))


# --- the loop ----------------------------------------------------------------------------------


def run(
    run_dir: str | Path,
    epochs: int | None = None,
    on_epoch: Callable[[dict[str, Any]], None] | None = None,
    stop_after: int | None = None,
) -> Path:
    """Run (or continue) the evolution in ``run_dir`` up to ``epochs`` (default: the config's).

    Starts from the checkpoint when there is one. ``on_epoch`` receives each epoch's metrics row;
    ``stop_after`` stops after that many epochs of this call (for tests of interruption).
    """
    run_dir = Path(run_dir)
    config, simulations = read_run_config(run_dir)
    total = epochs if epochs is not None else config.epochs
    setup = make_setup(config.evolution_settings(simulations))
    if (run_dir / CHECKPOINT).exists():
        state = load_checkpoint(run_dir, config, setup)
        _truncate_run(run_dir, int(state.epoch))
    else:
        state = init(setup, jax.random.key(config.seed))
        _truncate_run(run_dir, 0)
        _save_boss(run_dir, setup, state.boss, 0, -1, float("nan"))
    done_here = 0
    while int(state.epoch) < total:
        epoch = int(state.epoch)
        start = time.perf_counter()
        state, metrics = evolve_epoch(setup, state, epoch_key(config.seed, epoch))
        metrics = jax.device_get(metrics)
        wall = time.perf_counter() - start
        row = {"epoch": epoch, **metrics}
        row["plies_per_second"] = float(metrics["plies"]) / max(wall, 1e-9)
        row["wall_seconds"] = wall
        with open(run_dir / METRICS_FILE, "a", newline="") as f:
            csv.writer(f).writerow([_format(row[c]) for c in METRIC_COLUMNS])
        if bool(metrics["boss_changed"]):
            _save_boss(run_dir, setup, state.boss, int(state.boss_id), epoch, float(metrics["best_points"]))
        epoch_done = int(state.epoch)
        if epoch_done % config.checkpoint_every == 0 or epoch_done == total:
            save_checkpoint(run_dir, config, setup, state)
        if on_epoch is not None:
            on_epoch(row)
        done_here += 1
        if stop_after is not None and done_here >= stop_after:
            break
    return run_dir


def config_summary(config: ExperimentConfig, simulations: int) -> str:
    d = dataclasses.asdict(config)
    return (
        f"{d['name']}: {d['rules']}, {d['layers']}x{d['width']} MLP, P={d['population']}, "
        f"G={d['games_per_epoch']}, {simulations} simulations/move, strategy {d['strategy']}, "
        f"seed {d['seed']}"
    )
