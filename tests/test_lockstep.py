"""Lanes of a lockstep vmap (PBT's members, ``evolve --seeds``) share their branches and loops
(``sharding.any_lane``): the branch stays a branch, the results stay each lane's own."""

import jax
import jax.numpy as jnp
import numpy as np

from neurocheckers.sharding import MEMBERS_AXIS, SEEDS_AXIS, any_lane, bound_lockstep_axes, lane_max


def has_cond(function, lanes: jax.Array, axis_name: str) -> bool:
    """Whether the vmapped ``function`` keeps a ``lax.cond`` (else it became a select)."""
    return "cond[" in str(jax.make_jaxpr(jax.vmap(function, axis_name=axis_name))(lanes))


def branchy(x: jax.Array) -> jax.Array:
    return jax.lax.cond(any_lane(x > 2), lambda: x * 10, lambda: x + 1)


def test_outside_a_lockstep_vmap_the_flag_is_the_lanes_own():
    lanes = jnp.arange(4.0)
    assert bound_lockstep_axes() == ()
    np.testing.assert_array_equal(jax.vmap(branchy)(lanes), [1, 2, 3, 30])
    # A vmap of another name changes nothing, and its cond becomes a select of both branches.
    assert not has_cond(branchy, lanes, "other")


def test_under_a_lockstep_vmap_every_lane_takes_the_branch_and_the_cond_stays():
    lanes = jnp.arange(4.0)
    for name in (MEMBERS_AXIS, SEEDS_AXIS):
        np.testing.assert_array_equal(jax.vmap(branchy, axis_name=name)(lanes), [0, 10, 20, 30])
        np.testing.assert_array_equal(jax.vmap(branchy, axis_name=name)(lanes - 5), [-4, -3, -2, -1])
        assert has_cond(branchy, lanes, name)


def test_lane_max_spans_nested_lockstep_axes():
    grid = jnp.arange(6).reshape(2, 3)
    inner = jax.vmap(lane_max, axis_name=MEMBERS_AXIS)
    np.testing.assert_array_equal(jax.vmap(inner, axis_name=SEEDS_AXIS)(grid), np.full((2, 3), 5))
    np.testing.assert_array_equal(jax.vmap(inner)(grid), [[2, 2, 2], [5, 5, 5]])
