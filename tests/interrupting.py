"""Child processes that hear Ctrl-C: the environment and signal state the SIGINT tests start them with,
and why a child may not have stopped."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def child_env() -> dict[str, str]:
    """This environment with the checkout importable and the shared compile cache."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.setdefault("NEUROCHECKERS_CACHE", str(REPO / ".jax_cache"))
    return env


def not_interrupted(stderr: str) -> str:
    """Why a child that ignored Ctrl-C may have: this process's signal state (a child inherits its
    blocked signals and ignored handlers) and the end of the child's stderr."""
    blocked = sorted(s.name for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))
    handler = signal.getsignal(signal.SIGINT)
    err = stderr[-2000:]
    state = f"here blocked={blocked}, SIGINT handler={handler!r}"
    return f"the child did not exit after SIGINT; {state}; stderr: {err}"


@contextlib.contextmanager
def children_hear_ctrl_c():
    """Children started inside get SIGINT at its default: a pytest started in the background of a
    script has SIGINT ignored, children inherit an ignored signal across exec (a handled one is reset)
    and Python then leaves it ignored, so Ctrl-C would never reach them (these tests failed so when
    run that way). A handler here for the moment of the start, not ``preexec_fn``: forking a
    multithreaded process to run Python in the child may deadlock."""
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
