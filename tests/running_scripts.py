"""Running a script of scripts/ from a test: the interpreter of the suite, one host device, its stdout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "scripts"


def script(name: str, *args: str, cwd: Path = REPO, timeout: int = 600) -> str:
    """Run ``scripts/NAME ARGS`` with this interpreter; its stdout (it must exit 0)."""
    env = {**os.environ, "NEUROCHECKERS_DEVICES": "1", "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / name), *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip
    assert done.returncode == 0, (
        f"{name} {' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    )
    return done.stdout
