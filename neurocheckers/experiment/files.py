"""Small file helpers shared by configs, runs and sweeps (no JAX here: sweep workers import it first)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from neurocheckers.formats import atomic_write_bytes, atomic_write_text

__all__ = ["ConfigError", "atomic_write_bytes", "atomic_write_text", "read_toml"]


class ConfigError(ValueError):
    """A configuration that cannot be run; the message names the bad key and value (``config``
    raises it; here, below the strategies' own checks, so that they raise it too)."""


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
