"""Process-wide JAX settings for command-line runs and tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def default_cache_dir() -> Path:
    """Where compiled XLA programs are cached between processes (``NEUROCHECKERS_CACHE`` overrides)."""
    env = os.environ.get("NEUROCHECKERS_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "neurocheckers" / "jax"


def set_jax_option(name: str, value: str | int | float) -> None:
    """Set JAX option ``name``: at once when JAX is imported, else through its environment variable
    (``name`` in capitals), which JAX reads on import. So a command that computes nothing, such as
    ``--help``, never pays for importing JAX."""
    jax = sys.modules.get("jax")
    if jax is not None and hasattr(jax, "config"):
        jax.config.update(name, value)
    else:
        os.environ[name.upper()] = str(value)


def configure_jax(cache_dir: str | Path | None = None) -> None:
    """Turn on JAX's persistent compilation cache, which makes a second process start in ~0.1 s."""
    path = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path.mkdir(parents=True, exist_ok=True)
    set_jax_option("jax_compilation_cache_dir", str(path))
    # NEUROCHECKERS_CACHE_MIN_SECONDS: only programs slower to compile than this are written.
    min_seconds = float(os.environ.get("NEUROCHECKERS_CACHE_MIN_SECONDS", "0.5"))
    set_jax_option("jax_persistent_cache_min_compile_time_secs", min_seconds)
    set_jax_option("jax_persistent_cache_min_entry_size_bytes", 0)


def lazy_exports(package: str, homes: dict[str, str]):
    """``(__getattr__, __dir__)`` for ``package``, whose public names (``homes``: name -> submodule)
    are imported from their submodule on first use, so that importing the package alone is cheap (its
    plain-Python submodules stay free of JAX)."""
    import importlib

    def __getattr__(name: str):
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{homes[name]}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(homes))

    return __getattr__, __dir__
