"""A run stopped in the middle, then resumed, equals an uninterrupted run: a real ``kill -9`` of
``neurocheckers evolve`` (``assert_killed_run_resumes_identically``, the process-level check) and a
crash inside the run loop in this process (``assert_crashed_run_resumes_identically``, the same
check of a strategy's checkpointed state without starting processes), shared by the evolution and
learner tests."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jax

from neurocheckers.experiment.config import load_config
from neurocheckers.experiment.run import create_run, run
from neurocheckers.formats import METRICS_FILE, TIMING_COLUMNS, read_metrics


def stable_rows(run_dir: Path) -> list[dict[str, str]]:
    """The metrics rows without their timing columns (which differ from run to run)."""
    return [{k: v for k, v in row.items() if k not in TIMING_COLUMNS} for row in read_metrics(run_dir)]


def lineage_rows(run_dir: Path) -> list[dict[str, str]]:
    with open(run_dir / "lineage.csv", newline="") as f:
        return list(csv.DictReader(f))


def assert_killed_run_resumes_identically(items: list[str], epochs: int, tmp_path: Path) -> None:
    """Run config ``items`` whole in-process; run it again as ``neurocheckers evolve``, kill it with
    SIGKILL after its third epoch, resume it, and check its metrics and lineage equal the whole run's.
    ``epochs`` must be many more than the kill needs (each epoch a few ms once compiled)."""
    values = dict(item.split("=", 1) for item in items)  # a later item overrides an earlier one
    items = [f"{key}={value}" for key, value in {**values, "epochs": str(epochs)}.items()]
    whole = run(create_run(load_config(None, items), tmp_path / "whole"))
    env = dict(os.environ)
    env.setdefault("NEUROCHECKERS_CACHE", str(jax.config.jax_compilation_cache_dir))
    # The same host devices as this process: the check is about resuming, not about device counts.
    env["NEUROCHECKERS_DEVICES"] = str(jax.local_device_count())
    config_file = tmp_path / "killed.toml"
    lines = [f'{key} = "{value}"' if not _is_toml_value(value) else f"{key} = {value}" for key, value in
             (item.split("=", 1) for item in items)]  # fmt: skip
    config_file.write_text("\n".join(lines) + "\n")
    out = tmp_path / "runs"
    args = [sys.executable, "-m", "neurocheckers", "evolve", str(config_file), "--out", str(out), "--no-plot"]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.time() + 240
    run_dirs: list = []
    while time.time() < deadline and proc.poll() is None:
        run_dirs = [p for p in out.iterdir() if p.is_dir()] if out.exists() else []
        if run_dirs and (run_dirs[0] / METRICS_FILE).exists() and len(read_metrics(run_dirs[0])) >= 3:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    log = proc.stdout.read().decode()
    assert proc.returncode == -signal.SIGKILL, (
        f"the run was not killed mid-run (exit {proc.returncode})\n{log}"
    )
    assert run_dirs, log
    run_dir = run_dirs[0]
    killed_rows = len(read_metrics(run_dir))
    assert 3 <= killed_rows < epochs, killed_rows
    resumed = subprocess.run(
        [sys.executable, "-m", "neurocheckers", "evolve", "--resume", str(run_dir), "--no-plot"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert len(read_metrics(run_dir)) == epochs
    assert stable_rows(run_dir) == stable_rows(whole)
    assert lineage_rows(run_dir) == lineage_rows(whole)


class CrashedEpoch(Exception):
    """Raised after an epoch's metrics row is written and before its checkpoint is due: a crash."""


def assert_crashed_run_resumes_identically(items: list[str], epochs: int, tmp_path: Path) -> None:
    """Run config ``items`` (``epochs`` epochs, a checkpoint every 2) whole; run it again and crash it
    (an exception from ``on_epoch``) after its third epoch, which has a metrics row but no checkpoint;
    resume it: the resumed run drops that row, plays the epoch again and ends with the whole run's
    metrics and lineage. Everything runs in this process, so the compiled programs are shared."""
    values = dict(item.split("=", 1) for item in items)
    config = load_config(None, [f"{k}={v}" for k, v in {**values, "epochs": str(epochs)}.items()])
    assert config.checkpoint_every == 2, "the crash must fall between two checkpoints"
    whole = run(create_run(config, tmp_path / "whole"))

    def crash_after_the_third_epoch(row: dict) -> None:
        if int(row["epoch"]) == 2:
            raise CrashedEpoch

    crashed = create_run(config, tmp_path / "crashed")
    try:
        run(crashed, on_epoch=crash_after_the_third_epoch)
    except CrashedEpoch:
        pass
    else:
        raise AssertionError("the run did not reach its third epoch")
    assert len(read_metrics(crashed)) == 3  # the third epoch's row, after the checkpoint of two
    run(crashed)
    assert len(read_metrics(crashed)) == epochs
    assert stable_rows(crashed) == stable_rows(whole)
    assert lineage_rows(crashed) == lineage_rows(whole)


def _is_toml_value(text: str) -> bool:
    """Whether ``text`` is a TOML number or boolean (else it is written as a string)."""
    import tomllib

    try:
        tomllib.loads(f"v = {text}")
        return True
    except tomllib.TOMLDecodeError:
        return False
