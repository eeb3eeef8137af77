"""Population-based training with its members trained in shares: in this process, or as Ray tasks
on the Ray instance this process is connected to, for a population beyond one machine. Each share
is ``pbt.train_members`` of its rows; the tournament and the exploit step (``pbt.after_training``)
run here: the same functions as ``pbt.epoch``, so the same epoch (bit for bit in
``tests/test_pbt.py``)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from neurocheckers.endgame.device import DeviceDB
from neurocheckers.learners.pbt import (
    PBTSettings,
    PBTState,
    after_training,
    epoch_present,
    member_keys,
    train_members,
)
from neurocheckers.match.shares import MapShares

_jitted_train = jax.jit(train_members, static_argnums=0)
_jitted_keys = jax.jit(member_keys, static_argnums=0)
_jitted_after = jax.jit(after_training, static_argnums=0)


def train_share(
    settings: PBTSettings, members: Any, hypers: Any, key_data: Any, present: Any, exact: Any
) -> tuple[Any, dict]:
    """``train_members`` of one share, its keys as raw key data, everything in and out as host
    (NumPy) arrays: what a worker runs."""
    keys = jax.random.wrap_key_data(jnp.asarray(key_data))
    return jax.device_get(_jitted_train(settings, members, hypers, keys, present, exact))


def epoch_in_shares(
    settings: PBTSettings,
    state: PBTState,
    key: jax.Array,
    map_shares: MapShares,
    share: int,
    exact: DeviceDB | None = None,
) -> tuple[PBTState, dict]:
    """``epoch`` with the members trained ``share`` at a time by ``map_shares`` (``train_share``, in
    this process or on Ray's workers), then the tournament and exploit/explore here: the same
    functions as ``epoch`` (``train_members``, ``after_training``), so the same epoch (within float
    rounding where a share's vmap rounds otherwise than the whole population's)."""
    if share < 1 or settings.members % share:
        raise ValueError(f"share must divide members ({settings.members}), got {share}")
    keys, exploit_key = _jitted_keys(settings, key)
    present = jax.device_get(epoch_present(settings, state))
    key_data, host = jax.device_get(jax.random.key_data(keys)), jax.device_get((state.members, state.hypers))
    rows = [slice(first, first + share) for first in range(0, settings.members, share)]
    shares = [(settings, *jax.tree.map(lambda x, r=r: x[r], host), key_data[r], present, exact) for r in rows]
    trained = map_shares(train_share, shares)
    members, metrics = jax.tree.map(lambda *xs: jnp.concatenate([jnp.asarray(x) for x in xs]), *trained)
    return _jitted_after(settings, state, members, metrics, exploit_key)
