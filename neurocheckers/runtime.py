"""Process-wide JAX settings for command-line runs and tests."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """Where compiled XLA programs are cached between processes (``NEUROCHECKERS_CACHE`` overrides)."""
    env = os.environ.get("NEUROCHECKERS_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "neurocheckers" / "jax"


def configure_jax(cache_dir: str | Path | None = None) -> None:
    """Turn on JAX's persistent compilation cache, which makes a second process start in ~0.1 s."""
    import jax

    path = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(path))
    # NEUROCHECKERS_CACHE_MIN_SECONDS: only programs slower to compile than this are written.
    min_seconds = float(os.environ.get("NEUROCHECKERS_CACHE_MIN_SECONDS", "0.5"))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", min_seconds)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
