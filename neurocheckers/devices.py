"""Host-device setup: use several CPU cores as several XLA devices.

On CPU, XLA runs much of a computation on one core. Splitting a batch across several *host devices*
(``--xla_force_host_platform_device_count``) runs the shards in parallel. On the 2-core development
machine, two host devices were 1.07-2.0x faster than one device with XLA's own intra-op threading
for random playouts at batch 8192 (1.07-1.3x in one run, 1.5-2.0x in a later one:
``results/benchmarks/bench_rules.txt``), and 1.3-2x for batched MCTS (``bench_search.txt``); how
much depends on the batch, the preset and the load. The flag must
be set before JAX creates its CPU backend (the first ``jax.devices()``, array or jitted call), so
library code never sets it at import: scripts and the CLI call :func:`use_host_devices` first.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys

from neurocheckers.runtime import set_jax_option

_FLAG = "--xla_force_host_platform_device_count"


def backend_initialized() -> bool:
    """Whether JAX has already created its backends (after which the device count is fixed).

    Asked through public API: JAX refuses a new ``jax_num_cpu_devices`` once its backends exist,
    so this tries a different value and puts the old one back.
    """
    if "jax" not in sys.modules:  # not imported yet, so no backend either
        return False
    import jax

    current = jax.config.jax_num_cpu_devices
    try:
        jax.config.update("jax_num_cpu_devices", current + 1 if current >= 0 else 1)
    except RuntimeError:
        return True
    jax.config.update("jax_num_cpu_devices", current)
    return False


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, e.g. under ``taskset``), else all."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def use_host_devices(n: int | None = None) -> int:
    """Make JAX's CPU backend expose ``n`` host devices (default: the cores this process may run on).

    Sets ``XLA_FLAGS`` (replacing any earlier ``--xla_force_host_platform_device_count``) and, where
    this JAX has it, the ``jax_num_cpu_devices`` option. Call it before any JAX computation; returns
    ``n``. Raises ``RuntimeError`` if JAX's backend is already initialised with a different count
    (calling it again with the count already in force is harmless).
    """
    if n is None:
        n = usable_cores()
    n = int(n)
    if n < 1:
        raise ValueError(f"need at least one host device, got {n}")
    if backend_initialized():
        import jax

        have = len(jax.devices("cpu"))
        if have == n:
            return n
        raise RuntimeError(
            f"use_host_devices({n}) was called after JAX initialised its backend with {have} CPU "
            "device(s); call it at the start of the program, before any JAX computation "
            "(jax.devices(), jnp arrays, jitted calls)."
        )
    flags = re.sub(rf"{_FLAG}=\S*", "", os.environ.get("XLA_FLAGS", "")).split()
    os.environ["XLA_FLAGS"] = " ".join([*flags, f"{_FLAG}={n}"])
    with contextlib.suppress(AttributeError, KeyError):  # a JAX without the option
        set_jax_option("jax_num_cpu_devices", n)
    return n
