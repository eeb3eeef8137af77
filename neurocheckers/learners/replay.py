"""A uniform replay buffer held in fixed-size JAX arrays, with pure ``add`` and ``sample``.

The buffer stores any pytree of transitions (each leaf gets a leading ``[C]`` capacity axis). ``add``
writes a batch at the write position, wrapping around and overwriting the oldest entries once the
buffer is full; ``sample`` draws uniformly (with replacement) among the entries written so far.
Everything is jittable: shapes are fixed by the capacity, and the fill level is an array.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class ReplayBuffer:
    """C transitions in a ring.

    Fields:
      data: the transition pytree, every leaf with a leading [C] axis.
      position: [] int32, the slot the next transition is written to.
      size: [] int32, how many slots hold a transition (at most C).
    """

    data: Any
    position: jax.Array
    size: jax.Array

    @property
    def capacity(self) -> int:
        """C: how many transitions the buffer holds at most (static)."""
        return jax.tree.leaves(self.data)[0].shape[0]


def init(example: Any, capacity: int) -> ReplayBuffer:
    """An empty buffer of ``capacity`` transitions shaped like ``example`` (one transition, no
    leading axis): zero-filled arrays of its leaves' dtypes."""
    if not isinstance(capacity, int) or capacity < 1:
        raise ValueError(f"replay buffer capacity must be a positive int, got {capacity!r}")
    data = jax.tree.map(lambda x: jnp.zeros((capacity, *jnp.shape(x)), jnp.asarray(x).dtype), example)
    return ReplayBuffer(data=data, position=jnp.int32(0), size=jnp.int32(0))


def add(buffer: ReplayBuffer, batch: Any) -> ReplayBuffer:
    """The buffer with the B transitions of ``batch`` (leaves [B, ...]) written at the write position,
    in order, wrapping around the end. B must not exceed the capacity (each slot is written once)."""
    count = jax.tree.leaves(batch)[0].shape[0]
    if count > buffer.capacity:
        raise ValueError(f"cannot add {count} transitions at once to a buffer of {buffer.capacity}")
    slots = (buffer.position + jnp.arange(count, dtype=jnp.int32)) % buffer.capacity
    data = jax.tree.map(
        lambda stored, new: stored.at[slots].set(new.astype(stored.dtype)), buffer.data, batch
    )
    return ReplayBuffer(
        data=data,
        position=(buffer.position + count) % buffer.capacity,
        size=jnp.minimum(buffer.size + count, buffer.capacity),
    )


def sample(buffer: ReplayBuffer, key: jax.Array, batch_size: int) -> Any:
    """``batch_size`` transitions drawn uniformly with replacement from the ``size`` filled slots
    (leaves [batch_size, ...]). On an empty buffer it returns the zero-filled slot 0: callers
    check ``size`` first (``dqn`` skips its updates until the buffer holds a batch)."""
    slots = jax.random.randint(key, (batch_size,), 0, jnp.maximum(buffer.size, 1))
    return jax.tree.map(lambda stored: stored[slots], buffer.data)
