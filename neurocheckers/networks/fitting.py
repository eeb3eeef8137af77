"""The learning arithmetic that the GA's learner quarter (``evolution.operators``) and the self-play
learners (``learners``) share: TD(lambda) targets, and Adam steps under ``lax.scan``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax


def td_lambda_targets(
    values: jax.Array, valid: jax.Array, flips: jax.Array, end: jax.Array, lambda_: float | jax.Array
) -> jax.Array:
    """[..., L] TD(lambda) targets of the valid slots of a game, each for the side to move there.

    Going back from the end, ``t_i = lambda * t_next + (1 - lambda) * v_next``, where "next" is the
    next valid slot (the end of the game after the last one) seen by slot ``i``'s side to move.
    ``lambda_ = 1`` gives the outcome (``end``) everywhere, ``lambda_ = 0`` one-step TD.

    Args:
      values: [..., L] each slot's value for its side to move.
      valid: [..., L] bool, the slots that are positions to learn (the others are passed over, and
        their targets are meaningless).
      flips: [..., L] bool, whether the side to move at valid slot ``i`` is not the one of the next
        valid slot (or of the end).
      end: [...] the value of the end of the game, seen by the side after the last valid slot.
      lambda_: TD(lambda)'s lambda in [0, 1].
    """

    def back(carry, x):
        next_target, next_value = carry
        value_i, valid_i, flip_i = x
        turn = valid_i & flip_i  # the successor's numbers seen by slot i's side to move
        next_target = jnp.where(turn, 1.0 - next_target, next_target)
        next_value = jnp.where(turn, 1.0 - next_value, next_value)
        target = lambda_ * next_target + (1.0 - lambda_) * next_value
        carry = (jnp.where(valid_i, target, carry[0]), jnp.where(valid_i, value_i, carry[1]))
        return carry, target

    lead = tuple(jnp.moveaxis(x, -1, 0) for x in (values, valid, flips))
    start = (end.astype(values.dtype), end.astype(values.dtype))
    _, targets = jax.lax.scan(back, start, lead, reverse=True)
    return jnp.moveaxis(targets, 0, -1)


def adam_step(
    optimizer: optax.GradientTransformation, loss_fn: Callable, params: Any, opt_state: Any, x: Any
) -> tuple[Any, Any, jax.Array]:
    """(params, optimizer state, loss) after one step of ``optimizer`` on ``loss_fn(params, x)``."""
    loss, grads = jax.value_and_grad(loss_fn)(params, x)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def adam_steps(
    optimizer: optax.GradientTransformation,
    loss_fn: Callable,
    params: Any,
    opt_state: Any,
    xs: Any,
    length: int | None = None,
) -> tuple[Any, Any, jax.Array]:
    """``adam_step`` for each ``x`` of ``xs`` in turn (``length`` steps with x None when ``xs`` is
    None), in ``lax.scan``: (params, optimizer state, [steps] losses)."""

    def step(carry, x):
        params, opt_state, loss = adam_step(optimizer, loss_fn, *carry, x)
        return (params, opt_state), loss

    (params, opt_state), losses = jax.lax.scan(step, (params, opt_state), xs, length=length)
    return params, opt_state, losses
