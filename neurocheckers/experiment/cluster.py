"""Ray, where a sweep or a strategy spreads its work over a cluster: the module (an optional
dependency, imported on first use) and this process's connection to an instance."""

from __future__ import annotations

from typing import Any

RAY_HINT = "install the ray extra: pip install 'neurocheckers[ray]'"


def import_ray(error: type[Exception]) -> Any:
    """The ``ray`` module, or ``error`` with the install hint (``RAY_HINT``) when it is missing."""
    try:
        import ray
    except ImportError:
        raise error(RAY_HINT) from None
    return ray


def connect_ray(address: str, error: type[Exception]) -> bool:
    """Connect this process to the Ray instance at ``address`` ("local", "auto", "ray://...") unless a
    connection is already open (used as it is); whether it connected here. ``error`` when it cannot."""
    ray = import_ray(error)
    if ray.is_initialized():
        return False
    try:
        ray.init(address=address)
    except (ConnectionError, ValueError, RuntimeError) as e:
        raise error(f"cannot connect to the Ray cluster at {address!r}: {e}") from None
    return True
