"""Hand-made evaluator networks for tests: a network that counts material, and one that knows nothing."""

from __future__ import annotations

import jax
import numpy as np


def material_network(spec, scale: float = 0.25):
    """MLP parameters whose output is sigmoid(scale * material of the side to move): two ReLU units
    carry max(m, 0) and max(-m, 0) through every hidden layer."""
    from neurocheckers.networks.evaluator import param_shapes

    shapes = param_shapes(spec)
    params = {
        layer: {k: np.zeros(s, np.float32) for k, s in leaves.items()} for layer, leaves in shapes.items()
    }
    n = spec.num_squares
    material = np.concatenate([np.ones(n), np.full(n, 1.5)]).astype(np.float32)
    params["layer_0"]["kernel"][:, 0] = material
    params["layer_0"]["kernel"][:, 1] = -material
    for i in range(1, spec.layers):
        params[f"layer_{i}"]["kernel"][0, 0] = params[f"layer_{i}"]["kernel"][1, 1] = 1.0
    out = params[f"layer_{spec.layers}"]["kernel"]
    out[0, 0], out[1, 0] = scale, -scale
    return jax.tree.map(jax.numpy.asarray, params)


def zero_network(spec):
    """MLP parameters that are all zero: every position is worth the same (an even chance)."""
    return jax.tree.map(jax.numpy.zeros_like, material_network(spec))
