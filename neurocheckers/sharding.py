"""Work spread over host devices, and fitted in memory: shards of a batch's leading axis (one per
XLA host device, see ``devices``), arrays laid whole on every device, a compiled program's memory
checked against the machine's before it runs, and loops kept in lockstep across vmapped runs."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

MEMBERS_AXIS = "members"
"""The name of the ``vmap`` over PBT's members (``learners.pbt``)."""
SEEDS_AXIS = "seeds"
"""The name of the ``vmap`` over the seeds of one config (``evolve --seeds``, ``experiment.run``)."""
LOCKSTEP_AXES = (MEMBERS_AXIS, SEEDS_AXIS)
"""The vmaps whose lanes are whole runs of one program. Under ``vmap`` a ``lax.cond`` whose predicate
differs by lane becomes a select that runs both branches for every lane, and a ``lax.while_loop``
whose condition differs by lane carries a select of its whole state through every iteration; made
the same for every lane of these axes (``any_lane``, ``lane_max``), they stay a branch and a loop.
8x8 PBT self-play (8 members x 128 games, TDLeaf at depth 2) took 46-51 s an epoch without it, 5 s
as 1,024 games of one network."""


def bound_lockstep_axes() -> tuple[str, ...]:
    """The ``LOCKSTEP_AXES`` of the vmaps being traced through (at trace time; none outside them)."""
    bound = []
    for name in LOCKSTEP_AXES:
        try:
            jax.lax.axis_index(name)  # NameError where no enclosing vmap has this axis name
        except NameError:
            continue
        bound.append(name)
    return tuple(bound)


def lane_max(value: jax.Array) -> jax.Array:
    """``value``, or under vmaps of ``LOCKSTEP_AXES`` its largest over their lanes (the same in all)."""
    axes = bound_lockstep_axes()
    return jax.lax.pmax(value, axes) if axes else value


def any_lane(flag: jax.Array) -> jax.Array:
    """[] bool: ``flag``, or under vmaps of ``LOCKSTEP_AXES`` whether it holds in any of their lanes.
    A branch or a loop taken on it is taken by every lane, so its other branch, or its steps past a
    lane's own end, must leave that lane's results as they would be (``fullwidth_search``'s fallback,
    a finished game's plies)."""
    return lane_max(jnp.asarray(flag).astype(jnp.int32)) > 0


class MemoryLimitError(ValueError):
    """A compiled program needs more memory than the machine has; nothing was run."""


def available_memory_bytes() -> int:
    """Bytes JAX's first device can still take: the accelerator's free memory, else the host's
    available RAM (``MemAvailable``, or all physical memory where /proc is missing)."""
    stats = jax.local_devices()[0].memory_stats() or {}
    if "bytes_limit" in stats:
        return int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0))
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_memory(compiled: Any, what: str) -> None:
    """Raise ``MemoryLimitError`` when the ``jax.stages.Compiled`` program needs more memory at once
    (arguments, outputs, temporaries; on every local CPU device, which share the host's RAM) than
    ``available_memory_bytes``. Compiling costs about the same for any array sizes, so a program far
    too large for the machine is refused before it runs."""
    stats = compiled.memory_analysis()
    if stats is None:  # a backend without memory analysis: nothing to check
        return
    need = stats.argument_size_in_bytes + stats.output_size_in_bytes + stats.temp_size_in_bytes
    need -= stats.alias_size_in_bytes
    device = jax.local_devices()[0]
    if device.platform == "cpu":
        need *= jax.local_device_count()
    have = available_memory_bytes()
    if need > have:
        raise MemoryLimitError(
            f"{what} needs about {need / 2**30:,.1f} GiB of memory, {have / 2**30:,.1f} GiB is free"
        )


def over_leading_shards(play: Callable, count: int, replicated: tuple[bool, ...]) -> Callable:
    """``play`` run with one shard of its leading axis (members, or games) per host device, when
    there are several and they divide ``count``; ``replicated`` says which arguments every shard gets
    whole (the others are split along their leading axis). Per-game keys come from global ids, so the
    result is the same as on one device."""
    devices = jax.local_device_count()
    if devices == 1 or count % devices:
        return play
    mesh = jax.sharding.Mesh(np.array(jax.local_devices()), ("shards",))
    whole, split = jax.sharding.PartitionSpec(), jax.sharding.PartitionSpec("shards")
    return jax.shard_map(
        play,
        mesh=mesh,
        in_specs=tuple(whole if r else split for r in replicated),
        out_specs=split,
        check_vma=False,
    )


def whole_on_every_device(tree: Any) -> Any:
    """``tree`` (arrays, in a jitted function) laid whole on every host device when there are several
    (a no-op on one): for data that ``over_leading_shards`` left split by games, before work that
    reads all of it. A cumulative sum over a split array (``jax.random.choice``'s, over TD(lambda)'s
    position weights) was partitioned into a windowed sum that made a two-device american6 epoch 5x
    slower than one device's, and drew other minibatches."""
    whole = replicated_sharding()
    return tree if whole is None else jax.lax.with_sharding_constraint(tree, whole)


def replicated_sharding() -> jax.sharding.NamedSharding | None:
    """The sharding that lays an array whole on every host device, None on one device."""
    if jax.local_device_count() == 1:
        return None
    mesh = jax.sharding.Mesh(np.array(jax.local_devices()), ("shards",))
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())


def on_every_device(tree: Any) -> Any:
    """``tree`` committed whole to every host device when there are several (unchanged on one): the
    state a jitted epoch takes before its first call and between calls, so that it compiles once and
    runs its ``over_leading_shards`` work on the devices in parallel. An epoch returns its state so
    laid; given an uncommitted (host) state it compiled a program that ran the devices one after the
    other (the base-case epoch 1.5x slower on 2 cores), and given the state it returned after a host
    one it compiled again (7-15 s)."""
    sharding = replicated_sharding()
    return tree if sharding is None else jax.device_put(tree, sharding)
