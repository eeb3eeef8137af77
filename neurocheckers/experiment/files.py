"""Small file helpers shared by configs, runs and sweeps (no JAX here: sweep workers import it first)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any


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


def read_toml(path: Path, kind: str, error: type[Exception]) -> dict[str, Any]:
    """The TOML table in ``path``; a missing or malformed file raises ``error`` naming the ``kind`` of
    file (e.g. "config file") and the path."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{kind} not found: {path}") from None
    except IsADirectoryError:
        raise error(f"{kind} {path} is a folder, not a TOML file") from None
    except UnicodeDecodeError:
        raise error(f"{kind} {path} is not a UTF-8 text file") from None
    except OSError as e:
        raise error(f"{kind} {path} cannot be read: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise error(f"{kind} {path} is not valid TOML: {e}") from None
