"""Genetic operators of the reference study, written generically over flax MLP parameter pytrees.

A member's parameters are a flax linen pytree ``{"params": {"Dense_0": {"kernel", "bias"}, ...}}``; a
*population* is the same pytree with a leading ``[P]`` axis on every leaf. A *layer* is one submodule
under ``"params"`` (its kernel and bias together); layers are ordered by natural sort of their names
(``Dense_2`` before ``Dense_10``), so everything here works for any depth. A bare ``{"Dense_0": ...}``
(without the ``"params"`` collection) is accepted too. Nothing assumes a Dense: a layer is every leaf
under its top-level key, however nested (a CNN's ``conv_0``, a transformer's ``block_0`` with its
attention, norms and MLP), so the operators work on any of the evaluator's architectures.

The operators act on ONE member (or a pair) and are ``jax.vmap``-ed over the population by
``next_generation``. All are jittable: the chosen layer is a traced index and every layer is rebuilt
with ``jnp.where``, so the leaves of the layers that are not chosen come back bit-identical.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

import jax
import jax.numpy as jnp
import optax

from neurocheckers.networks.fitting import adam_steps
from neurocheckers.sharding import over_leading_shards

Params = Any
"""A flax parameter pytree (one member, or a population with a leading ``[P]`` axis)."""

ApplyFn = Callable[[Params, jax.Array], jax.Array]
"""``apply_fn(member_params, inputs [M, D]) -> [M]`` predictions in (0, 1)."""

LossName = Literal["mae", "mse"]

_NATURAL_CHUNK = re.compile(r"(\d+)")


def _natural_key(name: str) -> tuple:
    """Sort key splitting digit runs out as integers: ``Dense_2`` < ``Dense_10``."""
    return tuple(int(part) if part.isdigit() else part for part in _NATURAL_CHUNK.split(name))


def _has_collection(params: Params) -> bool:
    return isinstance(params, Mapping) and "params" in params


def _layer_root(params: Params) -> Mapping:
    return params["params"] if _has_collection(params) else params


def layer_paths(params: Params) -> list[str]:
    """The layer names (keys under ``"params"``), in natural order: ``["Dense_0", "Dense_1", ...]``.

    Works on one member or a population (only the names are read).
    """
    root = _layer_root(params)
    if not isinstance(root, Mapping) or not root:
        raise ValueError("expected a flax parameter pytree {'params': {layer_name: {...}, ...}}")
    return sorted((str(k) for k in root), key=_natural_key)


def num_layers(params: Params) -> int:
    """How many layers (Dense submodules) the parameter pytree has."""
    return len(layer_paths(params))


def _key_name(entry: Any) -> str:
    for attr in ("key", "name", "idx"):
        if hasattr(entry, attr):
            return str(getattr(entry, attr))
    return str(entry)


def _leaf_layer_indices(params: Params) -> tuple[list[int], Any, list[jax.Array]]:
    """For each leaf (in ``tree_flatten`` order) the index of its layer in ``layer_paths`` order."""
    names = layer_paths(params)
    index_of = {name: i for i, name in enumerate(names)}
    depth = 1 if _has_collection(params) else 0
    path_leaves, treedef = jax.tree_util.tree_flatten_with_path(params)
    layer_idx = [index_of[_key_name(path[depth])] for path, _ in path_leaves]
    return layer_idx, treedef, [leaf for _, leaf in path_leaves]


def mutate_one_layer(key: jax.Array, params: Params, sigma: float | jax.Array) -> Params:
    """Add N(0, sigma^2) noise to the kernel and bias of ONE layer picked uniformly at random.

    Args:
      key: PRNG key.
      params: one member's parameters (no population axis).
      sigma: [] float, the noise standard deviation (may be traced).

    Returns:
      The mutated member; every leaf of the other layers is bit-identical to the input.
    """
    layer_idx, treedef, leaves = _leaf_layer_indices(params)
    key_choice, key_noise = jax.random.split(key)
    chosen = jax.random.randint(key_choice, (), 0, num_layers(params))
    leaf_keys = jax.random.split(key_noise, len(leaves))
    new_leaves = []
    for leaf_key, idx, leaf in zip(leaf_keys, layer_idx, leaves, strict=True):
        noise = jnp.asarray(sigma, leaf.dtype) * jax.random.normal(leaf_key, leaf.shape, leaf.dtype)
        new_leaves.append(jnp.where(chosen == idx, leaf + noise, leaf))
    return jax.tree_util.tree_unflatten(treedef, new_leaves)


def crossover_layers(key: jax.Array, parent_a: Params, parent_b: Params) -> Params:
    """A child whose layers come whole (kernel and bias together) from ``parent_a`` or ``parent_b``.

    Each layer is taken from ``parent_a`` with probability 1/2, independently of the other layers.

    Args:
      key: PRNG key.
      parent_a, parent_b: two members with the same structure (no population axis).
    """
    layer_idx, treedef, leaves_a = _leaf_layer_indices(parent_a)
    leaves_b = treedef.flatten_up_to(parent_b)
    take_a = jax.random.bernoulli(key, 0.5, (num_layers(parent_a),))
    new_leaves = [
        jnp.where(take_a[idx], a, b) for idx, a, b in zip(layer_idx, leaves_a, leaves_b, strict=True)
    ]
    return jax.tree_util.tree_unflatten(treedef, new_leaves)


def pick_partners(key: jax.Array, num_elites: int) -> jax.Array:
    """int32[E]: for each elite ``i`` a uniformly random OTHER elite (never ``i`` itself when E > 1).

    ``num_elites`` is static. With a single elite its only partner is itself.
    """
    if num_elites < 1:
        raise ValueError(f"num_elites must be at least 1, got {num_elites}")
    if num_elites == 1:
        return jnp.zeros((1,), jnp.int32)
    offset = jax.random.randint(key, (num_elites,), 1, num_elites)
    return ((jnp.arange(num_elites) + offset) % num_elites).astype(jnp.int32)


def masked_loss(
    predictions: jax.Array, targets: jax.Array, weights: jax.Array, loss: LossName = "mae"
) -> jax.Array:
    """[] float: the weighted mean of ``|p - t|`` ("mae") or ``(p - t)^2`` ("mse") over ``[M]`` rows.

    ``weights`` is a 0/1 validity mask (any non-negative weights work); with no valid row the loss is 0.
    """
    err = predictions - targets
    if loss == "mae":
        per_row = jnp.abs(err)
    elif loss == "mse":
        per_row = jnp.square(err)
    else:
        raise ValueError(f"loss must be 'mae' or 'mse', got {loss!r}")
    w = weights.astype(per_row.dtype)
    return jnp.sum(w * per_row) / jnp.maximum(jnp.sum(w), 1.0)


def train_member(
    apply_fn: ApplyFn,
    params: Params,
    inputs: jax.Array,
    targets: jax.Array,
    weights: jax.Array,
    learning_rate: float | jax.Array,
    steps: int,
    loss: LossName = "mae",
    batch_size: int = 0,
    key: jax.Array | None = None,
) -> tuple[Params, jax.Array, jax.Array]:
    """Train ONE member with Adam to predict ``targets`` from ``inputs``: ``steps`` full-batch steps,
    or with ``batch_size`` > 0, ``steps`` minibatches of ``batch_size`` rows drawn (with replacement)
    from the valid rows (weight > 0, in proportion to it), for data too large for full batches, such
    as the positions of a whole population's games.

    Vmappable over members (``apply_fn``, ``steps``, ``loss`` and ``batch_size`` are static;
    ``learning_rate`` may be traced, so it can be swept).

    Args:
      apply_fn: ``apply_fn(params, inputs [M, D]) -> [M]`` predictions in (0, 1).
      params: one member's parameters.
      inputs: [M, D] float, the positions' features.
      targets: [M] float, the values to predict.
      weights: [M] 0/1 validity mask (rows with weight 0 are ignored).
      learning_rate: [] float, Adam's step size.
      steps: static int, the number of Adam steps (run in ``lax.scan``).
      loss: static, "mae" or "mse"; the masked mean over valid rows.
      batch_size: static int; 0 trains on the full batch, > 0 on minibatches of that many rows.
      key: the minibatches' draw (with ``batch_size`` > 0).

    Returns:
      (new_params, loss_before [], loss_after []): the losses on the full batch, or on the first
      minibatch (rating the whole data would cost more than the training).
    """
    if batch_size > 0:
        total = jnp.sum(weights)
        chance = weights / jnp.maximum(total, 1e-12)
        chance = jnp.where(total > 0, chance, 1.0 / weights.shape[0])
        rows = jax.random.choice(key, weights.shape[0], (steps, batch_size), p=chance)
        mask = (total > 0).astype(targets.dtype)
        first = rows[0]

        def loss_fn(p: Params, idx: jax.Array) -> jax.Array:
            return masked_loss(
                apply_fn(p, inputs[idx]), targets[idx], jnp.broadcast_to(mask, idx.shape), loss
            )

    else:
        rows = first = None

        def loss_fn(p: Params, _=None) -> jax.Array:
            return masked_loss(apply_fn(p, inputs), targets, weights, loss)

    optimizer = optax.adam(learning_rate)
    new_params, _, _ = adam_steps(optimizer, loss_fn, params, optimizer.init(params), rows, steps)
    return new_params, loss_fn(params, first), loss_fn(new_params, first)


def rank_members(fitness: jax.Array) -> jax.Array:
    """int32[P]: member indices, best (highest fitness) first.

    Tie rule: members with equal fitness keep their index order, so the LOWER index ranks first (a
    stable sort of ``-fitness``; ``0.0`` and ``-0.0`` tie). NaN fitness ranks last.
    """
    return jnp.argsort(-fitness, stable=True).astype(jnp.int32)


def _population_size(pop_params: Params) -> int:
    sizes = {leaf.shape[0] if leaf.ndim else None for leaf in jax.tree_util.tree_leaves(pop_params)}
    if len(sizes) != 1 or None in sizes:
        raise ValueError(f"population leaves must share one leading [P] axis, got sizes {sizes}")
    return sizes.pop()


def _take(tree: Params, idx: jax.Array) -> Params:
    return jax.tree_util.tree_map(lambda x: x[idx], tree)


def _checked_population_size(
    pop_params: Params, ranking: jax.Array, inputs: jax.Array, targets: jax.Array, weights: jax.Array
) -> int:
    """P, after checking that it is a positive multiple of 4 and that every argument has it."""
    pop_size = _population_size(pop_params)
    if pop_size == 0 or pop_size % 4:
        raise ValueError(f"population size must be a positive multiple of 4, got {pop_size}")
    if ranking.shape != (pop_size,):
        raise ValueError(f"ranking must have shape ({pop_size},), got {ranking.shape}")
    if inputs.shape[0] != pop_size or targets.shape[0] != pop_size or weights.shape[0] != pop_size:
        raise ValueError(
            f"inputs/targets/weights need a leading axis of {pop_size}, got "
            f"{inputs.shape}, {targets.shape}, {weights.shape}"
        )
    return pop_size


def _mutants_and_children(
    key: jax.Array, elites: Params, num_elites: int, mutation_rate: float | jax.Array
) -> tuple[Params, Params]:
    """The second and third quarters: each elite mutated, and each elite crossed with a partner."""
    key_mutate, key_partner, key_cross = jax.random.split(key, 3)
    mutants = jax.vmap(mutate_one_layer, in_axes=(0, 0, None))(
        jax.random.split(key_mutate, num_elites), elites, mutation_rate
    )
    partners = pick_partners(key_partner, num_elites)
    children = jax.vmap(crossover_layers)(
        jax.random.split(key_cross, num_elites), elites, _take(elites, partners)
    )
    return mutants, children


def _train_learners(
    key: jax.Array,
    elites: Params,
    elite_idx: jax.Array,
    inputs: jax.Array,
    targets: jax.Array,
    weights: jax.Array,
    apply_fn: ApplyFn,
    learning_rate: float | jax.Array,
    steps: int,
    loss: LossName,
    batch_size: int,
    pooled: bool,
) -> tuple[Params, jax.Array, jax.Array]:
    """The fourth quarter (see ``next_generation``): (trained elites, losses before [E], after [E])."""
    if pooled and batch_size <= 0:
        raise ValueError(f"pooled learners train on minibatches: batch_size must be > 0, got {batch_size}")
    if batch_size <= 0:

        def train(p, x, t, w):
            return train_member(apply_fn, p, x, t, w, learning_rate, steps, loss)

        return jax.vmap(train)(elites, inputs[elite_idx], targets[elite_idx], weights[elite_idx])

    # A key of its own, so the other quarters draw exactly what they draw without minibatches.
    keys = jax.random.split(jax.random.fold_in(key, 4), elite_idx.shape[0])

    def train_batched(p, x, t, w, k):
        return train_member(apply_fn, p, x, t, w, learning_rate, steps, loss, batch_size, k)

    if pooled:
        x, t, w = (a.reshape(-1, *a.shape[2:]) for a in (inputs, targets, weights))
        # Every host device gets the whole pool once and trains its share of the learners: left to
        # XLA, each minibatch gather reached across devices, and two devices were 3x slower than one.
        train_all = jax.vmap(train_batched, in_axes=(0, None, None, None, 0))
        train_all = over_leading_shards(train_all, elite_idx.shape[0], (False, True, True, True, False))
        return train_all(elites, x, t, w, keys)
    return jax.vmap(train_batched)(elites, inputs[elite_idx], targets[elite_idx], weights[elite_idx], keys)


def next_generation(
    key: jax.Array,
    pop_params: Params,
    ranking: jax.Array,
    inputs: jax.Array,
    targets: jax.Array,
    weights: jax.Array,
    *,
    apply_fn: ApplyFn,
    mutation_rate: float | jax.Array,
    learning_rate: float | jax.Array,
    train_steps: int,
    loss: LossName = "mae",
    fitness: jax.Array | None = None,
    batch_size: int = 0,
    pooled: bool = False,
) -> tuple[Params, dict[str, jax.Array]]:
    """The next population, in four equal quarters built from the E = P // 4 best members.

    With ``elites = pop_params[ranking[:E]]`` (best first), the new population is, in this order:

      1. ``[0, E)``: the elites unchanged (bit-identical copies), in rank order;
      2. ``[E, 2E)``: each elite mutated by ``mutate_one_layer`` with ``sigma = mutation_rate``;
      3. ``[2E, 3E)``: for each elite a ``crossover_layers`` child with a partner from ``pick_partners``;
      4. ``[3E, 4E)``: each elite trained by ``train_member`` on ITS OWN positions (the rows of
         ``inputs``/``targets``/``weights`` indexed by that elite's member index); with ``pooled``,
         on the positions of every member's games together, in minibatches.

    Jittable: close over (or mark static) ``apply_fn``, ``train_steps`` and ``loss``.

    Args:
      key: PRNG key.
      pop_params: the population, leaves with a leading [P] axis; P must be divisible by 4.
      ranking: int32[P], a permutation of member indices, best first (see ``rank_members``).
      inputs: [P, M, D] float, each member's training positions.
      targets: [P, M] float, their targets.
      weights: [P, M] 0/1 validity mask.
      apply_fn: ``apply_fn(member_params, inputs [M, D]) -> [M]``.
      mutation_rate: [] float, the mutation noise standard deviation.
      learning_rate: [] float, Adam's step size for the learner quarter.
      train_steps: static int, Adam steps for the learner quarter.
      loss: static, "mae" or "mse".
      fitness: optional [P] float; when given, the metrics include the elites' fitness.
      batch_size: static int; > 0 trains on minibatches of that many rows (``train_member``'s
        ``batch_size``) instead of full batches.
      pooled: static; each learner trains on all P members' rows (needs ``batch_size`` > 0).

    Returns:
      (new_pop [P, ...], metrics): metrics is a dict of [] floats: ``learner_loss_before`` and
      ``learner_loss_after`` (means over the learners), plus ``best_fitness`` and
      ``elite_fitness_mean`` when ``fitness`` is given.
    """
    pop_size = _checked_population_size(pop_params, ranking, inputs, targets, weights)
    num_elites = pop_size // 4
    elite_idx = ranking[:num_elites]
    elites = _take(pop_params, elite_idx)
    mutants, children = _mutants_and_children(key, elites, num_elites, mutation_rate)

    learners, loss_before, loss_after = _train_learners(
        key, elites, elite_idx, inputs, targets, weights, apply_fn, learning_rate, train_steps, loss,
        batch_size, pooled,
    )  # fmt: skip

    new_pop = jax.tree_util.tree_map(
        lambda *quarters: jnp.concatenate(quarters, axis=0), elites, mutants, children, learners
    )
    metrics = {
        "learner_loss_before": jnp.mean(loss_before),
        "learner_loss_after": jnp.mean(loss_after),
    }
    if fitness is not None:
        metrics["best_fitness"] = fitness[ranking[0]].astype(jnp.float32)
        metrics["elite_fitness_mean"] = jnp.mean(fitness[elite_idx].astype(jnp.float32))
    return new_pop, metrics
