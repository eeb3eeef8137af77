"""Helpers shared by the benchmark scripts: one-core runs and the state of the compile cache.

Imported as ``benchlib`` by the scripts in this folder (Python puts a script's folder on sys.path).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

SINGLE_THREAD_FLAGS = ("--xla_cpu_multi_thread_eigen=false", "intra_op_parallelism_threads=1")


def pin_to_one_core() -> str:
    """Run this process on one core with one XLA thread and one host device; call before JAX starts.

    Pins the process to its first allowed CPU (Linux) and turns off XLA's intra-op threading, so a
    figure is per core and compares with a single-threaded player such as OpenSpiel's Python API.
    Returns a description for the report.
    """
    flags = os.environ.get("XLA_FLAGS", "")
    flags = re.sub(r"--xla_force_host_platform_device_count=\S*", "", flags)
    kept = [f for f in flags.split() if f.split("=")[0] not in {s.split("=")[0] for s in SINGLE_THREAD_FLAGS}]
    os.environ["XLA_FLAGS"] = " ".join(
        [*kept, *SINGLE_THREAD_FLAGS, "--xla_force_host_platform_device_count=1"]
    )
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}, 1 host device, XLA single-threaded ({' '.join(SINGLE_THREAD_FLAGS)})"
    return f"1 host device, XLA single-threaded ({' '.join(SINGLE_THREAD_FLAGS)}); not pinned (no affinity)"


def cache_entries(path: str | Path | None) -> int:
    """Files in a JAX persistent compilation cache folder (0 when there is none)."""
    if not path or not Path(path).is_dir():
        return 0
    return sum(1 for p in Path(path).iterdir() if p.is_file())


def cache_state(path: str | Path | None) -> str:
    """How warm the compile cache is before a benchmark starts, for the report."""
    if not path:
        return "off: every shape is compiled in this process (cold)"
    entries = cache_entries(path)
    if entries == 0:
        return f"cold: {path} is empty at the start"
    return f"{entries} entries in {path} at the start (warm for shapes compiled before)"


@contextlib.contextmanager
def checked_out(rev: str, folder: Path) -> Iterator[Path]:
    """The code at ``rev`` checked out (``git worktree``, detached) into ``folder``, removed afterwards;
    run it with ``PYTHONPATH`` set to the folder, which then comes before the installed package."""
    subprocess.run(["git", "worktree", "add", "--quiet", "--detach", str(folder), rev], cwd=REPO, check=True)
    try:
        yield folder
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=REPO, check=True)
