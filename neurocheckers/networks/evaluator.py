"""The neural evaluator: a network that maps a position to the chance that the side to move wins.

Input encoding (``encode``, version ``INPUT_ENCODING``): two vectors over the N dark squares, men
then kings, each +1 for a piece of the side to move and -1 for an opponent piece, 0 elsewhere.
The board is always seen from the side to move: when White is to move, the board is rotated 180
degrees (square ``i`` becomes square ``N - 1 - i``), so the side to move always plays "down the
board" like Black. One network then serves both colours, and a position and its colour-swapped
mirror image get the same value.

The network is an MLP by default, or a CNN, a transformer or an NNUE-style network built for the
compiled search (``EvaluatorSpec.architecture``; their shapes are described in ``architectures``,
which holds ``EvaluatorSpec`` without JAX). All read the same encoded input and return a sigmoid, so
the search, the arena and the learners take any of them.

An MLP's parameters are a flax pytree ``{"layer_0": {"kernel", "bias"}, ..., "layer_L": {...}}`` (the
``params`` collection, without the ``{"params": ...}`` wrapper); hidden layers are ``layer_0`` ..
``layer_{L-1}``, and ``layer_L`` is the output layer. A population is the same pytree with a leading
``[P]`` axis on every leaf.

With ``material_input`` (Blondie24's piece difference) the output layer also holds
``material_weight`` [1]: the side to move's material (men 1, kings ``KING_VALUE``, minus the
opponent's), read off the encoded input, is added to the output logit with that weight. It starts at
zero, so a fresh network rates positions exactly as the same network without the input would.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree

from neurocheckers.networks import architectures
from neurocheckers.networks.architectures import (
    CNN_PLANES,
    PIECE_KINDS,
    TRANSFORMER_MLP_RATIO,
    EvaluatorSpec,
    board_layout,
)
from neurocheckers.rules.outcome import KING_VALUE
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State

Params = Any
"""A flax parameter pytree (one member, or a population with a leading ``[P]`` axis)."""

INPUT_ENCODING = "stm-men-kings-rot180-v1"
"""Version tag of ``encode``'s layout, written into agent files."""


def input_material(obs: jax.Array) -> jax.Array:
    """[...] the side to move's material minus the opponent's (men 1, kings ``KING_VALUE``), read off
    encoded positions ``obs`` [..., 2N] (men planes, then kings)."""
    men, kings = jnp.split(obs, 2, axis=-1)
    return jnp.sum(men, axis=-1) + KING_VALUE * jnp.sum(kings, axis=-1)


class MaterialOutput(nn.Module):
    """Dense(1) plus ``material_weight`` x the input's material balance (Blondie24's piece difference).

    Its kernel and bias are drawn like ``nn.Dense``'s (the same names in the same order, so the same
    values for the same key); ``material_weight`` starts at zero.
    """

    @nn.compact
    def __call__(self, x: jax.Array, material: jax.Array) -> jax.Array:
        """x: [..., width] hidden features, material: [...] -> [..., 1] logits."""
        kernel = self.param("kernel", nn.initializers.lecun_normal(), (x.shape[-1], 1), jnp.float32)
        bias = self.param("bias", nn.initializers.zeros_init(), (1,), jnp.float32)
        weight = self.param("material_weight", nn.initializers.zeros_init(), (1,), jnp.float32)
        return x @ kernel + bias + material[..., None] * weight


class MLP(nn.Module):
    """``layers`` Dense + ReLU blocks, then Dense(1) + sigmoid: the chance that the side to move wins.
    With ``material_input`` the output unit also reads the input's material balance."""

    layers: int
    width: int
    material_input: bool = False

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        """x: [..., 2N] encoded positions -> [...] win probabilities in (0, 1)."""
        obs = x
        for i in range(self.layers):
            x = nn.relu(nn.Dense(self.width, name=f"layer_{i}")(x))
        if self.material_input:
            logit = MaterialOutput(name=f"layer_{self.layers}")(x, input_material(obs))
        else:
            logit = nn.Dense(1, name=f"layer_{self.layers}")(x)
        return jax.nn.sigmoid(logit[..., 0])


def _output_logit(x: jax.Array, obs: jax.Array, material_input: bool, name: str) -> jax.Array:
    """[...] output logits from features ``x`` [..., F] (in a compact module's body): Dense(1), plus
    the material balance of ``obs`` with its own weight when ``material_input``."""
    if material_input:
        return MaterialOutput(name=name)(x, input_material(obs))[..., 0]
    return nn.Dense(1, name=name)(x)[..., 0]


def board_planes(obs: jax.Array, board_size: int) -> jax.Array:
    """[..., S, S, 5] planes of encoded positions ``obs`` [..., 2N] on the full board: own men, own
    kings, opponent men, opponent kings, and the side to move's plane (1 on every dark square: the
    input is already seen from the mover). Light squares are 0 in every plane."""
    men, kings = jnp.split(obs, 2, axis=-1)
    relu = jax.nn.relu
    planes = jnp.stack([relu(men), relu(kings), relu(-men), relu(-kings), jnp.ones_like(men)], axis=-1)
    # One zero row for the light squares, gathered in reading order.
    padded = jnp.concatenate([planes, jnp.zeros_like(planes[..., :1, :])], axis=-2)
    board = padded[..., jnp.asarray(board_layout(board_size)), :]
    return board.reshape(*board.shape[:-2], board_size, board_size, CNN_PLANES)


def piece_kinds(obs: jax.Array) -> jax.Array:
    """int32 [..., N] token kinds of encoded positions ``obs`` [..., 2N]: 0 empty, 1 own man,
    2 opponent man, 3 own king, 4 opponent king."""
    men, kings = jnp.split(obs, 2, axis=-1)
    kinds = (men > 0) * 1 + (men < 0) * 2 + (kings > 0) * 3 + (kings < 0) * 4
    return kinds.astype(jnp.int32)


class CNN(nn.Module):
    """3x3 'SAME' convolutions + ReLU over the board planes (``board_planes``), the board flattened,
    one Dense + ReLU layer, then the output unit and a sigmoid."""

    board_size: int
    channels: tuple[int, ...]
    dense: int
    material_input: bool = False

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        """obs: [..., 2N] encoded positions -> [...] win probabilities in (0, 1)."""
        x = board_planes(obs, self.board_size)
        for i, channels in enumerate(self.channels):
            kernel = (architectures.CONV_KERNEL, architectures.CONV_KERNEL)
            x = nn.relu(nn.Conv(channels, kernel, padding="SAME", name=f"conv_{i}")(x))
        x = x.reshape(*x.shape[:-3], -1)
        x = nn.relu(nn.Dense(self.dense, name="dense")(x))
        return jax.nn.sigmoid(_output_logit(x, obs, self.material_input, "output"))


class TransformerBlock(nn.Module):
    """Pre-LayerNorm self-attention and ReLU MLP, each added back to its input."""

    heads: int
    width: int

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        """x: [..., N, width] tokens -> [..., N, width]."""
        attention = nn.MultiHeadDotProductAttention(
            num_heads=self.heads, qkv_features=self.width, out_features=self.width, name="attention"
        )
        x = x + attention(nn.LayerNorm(name="norm_attention")(x), deterministic=True)
        hidden = nn.relu(
            nn.Dense(TRANSFORMER_MLP_RATIO * self.width, name="mlp_hidden")(nn.LayerNorm(name="norm_mlp")(x))
        )
        return x + nn.Dense(self.width, name="mlp_output")(hidden)


class Transformer(nn.Module):
    """One token per dark square (piece embedding + square embedding), ``layers`` blocks, a final
    LayerNorm, a linear head averaged over the squares, then a sigmoid."""

    num_squares: int
    layers: int
    heads: int
    width: int
    material_input: bool = False

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        """obs: [..., 2N] encoded positions -> [...] win probabilities in (0, 1)."""
        x = nn.Embed(PIECE_KINDS, self.width, name="embed_piece")(piece_kinds(obs))
        x = x + nn.Embed(self.num_squares, self.width, name="embed_square")(jnp.arange(self.num_squares))
        for i in range(self.layers):
            x = TransformerBlock(self.heads, self.width, name=f"block_{i}")(x)
        x = nn.LayerNorm(name="norm_final")(x)
        # The head is linear, so averaging its per-square outputs is the head of the averaged tokens.
        return jax.nn.sigmoid(_output_logit(x.mean(axis=-2), obs, self.material_input, "output"))


def nnue_features(obs: jax.Array) -> tuple[jax.Array, jax.Array]:
    """([..., 4N], [..., 4N]) piece-square inputs of encoded positions ``obs`` [..., 2N] from the
    mover's perspective and from the other side's (the board turned 180 degrees, the sides swapped):
    own men, own kings, the other side's men, its kings."""
    men, kings = jnp.split(obs, 2, axis=-1)
    relu = jax.nn.relu
    own_men, own_kings, opp_men, opp_kings = relu(men), relu(kings), relu(-men), relu(-kings)
    mover = jnp.concatenate([own_men, own_kings, opp_men, opp_kings], axis=-1)
    other = jnp.concatenate(
        [opp_men[..., ::-1], opp_kings[..., ::-1], own_men[..., ::-1], own_kings[..., ::-1]], axis=-1
    )
    return mover, other


def clipped_relu(x: jax.Array) -> jax.Array:
    return jnp.clip(x, 0.0, 1.0)


class NNUE(nn.Module):
    """The NNUE-style network (``architectures``): one wide first layer over piece-square inputs from
    both perspectives (shared weights), clipped to [0, 1] and joined (the mover's first), two small
    clipped-ReLU layers, then the output unit and a sigmoid."""

    width: int
    hidden: int
    material_input: bool = False

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        """obs: [..., 2N] encoded positions -> [...] win probabilities in (0, 1)."""
        mover, other = nnue_features(obs)
        first = nn.Dense(self.width, name="accumulator")
        x = jnp.concatenate([clipped_relu(first(mover)), clipped_relu(first(other))], axis=-1)
        x = clipped_relu(nn.Dense(self.hidden, name="hidden_0")(x))
        x = clipped_relu(nn.Dense(self.hidden, name="hidden_1")(x))
        return jax.nn.sigmoid(_output_logit(x, obs, self.material_input, "output"))


def network(spec: EvaluatorSpec) -> nn.Module:
    """The flax module of ``spec`` (an MLP, a CNN, a transformer or the NNUE network):
    ``network(spec).apply({"params": params}, obs [..., 2N]) -> [...]`` win probabilities."""
    if spec.architecture == "cnn":
        return CNN(spec.board_size, spec.cnn_channels, spec.cnn_dense, spec.material_input)
    if spec.architecture == "transformer":
        return Transformer(
            spec.num_squares,
            spec.transformer_layers,
            spec.transformer_heads,
            spec.transformer_width,
            spec.material_input,
        )
    if spec.architecture == "nnue":
        return NNUE(spec.nnue_width, spec.nnue_hidden, spec.material_input)
    return MLP(layers=spec.layers, width=spec.width, material_input=spec.material_input)


def layer_names(spec: EvaluatorSpec) -> tuple[str, ...]:
    """Names of the layers (the top-level parameter keys) in order, hidden layers first and the
    output layer last."""
    return tuple(architectures.param_shapes(spec))


def param_shapes(spec: EvaluatorSpec) -> dict[str, Any]:
    """The shape of every parameter of one member (``architectures.param_shapes``). The MLP's:
    ``{layer: {"kernel": (in, out), "bias": (out,)}}``, and ``"material_weight": (1,)`` in the output
    layer with ``material_input``."""
    return architectures.param_shapes(spec)


# ---------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------


def _square_bits(board: jax.Array, num_squares: int) -> jax.Array:
    """[] uint32 bitboard -> [N] float32 of 0/1, square 0 first."""
    shifts = jnp.arange(num_squares, dtype=jnp.uint32)
    return ((board >> shifts) & jnp.uint32(1)).astype(jnp.float32)


def _encode(num_squares: int, state: State) -> jax.Array:
    black = state.color == BLACK
    own_men = jnp.where(black, state.black_men, state.white_men)
    own_kings = jnp.where(black, state.black_kings, state.white_kings)
    opp_men = jnp.where(black, state.white_men, state.black_men)
    opp_kings = jnp.where(black, state.white_kings, state.black_kings)
    men = _square_bits(own_men, num_squares) - _square_bits(opp_men, num_squares)
    kings = _square_bits(own_kings, num_squares) - _square_bits(opp_kings, num_squares)
    planes = jnp.concatenate([men, kings])
    # 180-degree rotation for White: (row, col) -> (size-1-row, size-1-col) is square i -> N-1-i.
    rotated = jnp.concatenate([men[::-1], kings[::-1]])
    return jnp.where(black, planes, rotated)


def encode(rules: Rules, state: State) -> jax.Array:
    """f32[2N]: men (+1 own, -1 opponent) then kings (+1/-1), seen from the side to move.

    When White is to move the board is rotated 180 degrees (square ``i`` -> ``N - 1 - i``), so the
    side to move always looks down the board like Black. One game; ``jax.vmap`` for batches.
    """
    return _encode(rules.num_squares, state)


# ---------------------------------------------------------------------------
# Parameters and populations
# ---------------------------------------------------------------------------


def init_params(key: jax.Array, spec: EvaluatorSpec) -> Params:
    """Fresh parameters of one member (flax defaults: LeCun-normal kernels, zero biases)."""
    return network(spec).init(key, jnp.zeros((spec.input_size,), jnp.float32))["params"]


def init_population(key: jax.Array, spec: EvaluatorSpec, size: int) -> Params:
    """``size`` fresh members from one key: the member pytree with a leading ``[P]`` axis."""
    if size < 1:
        raise ValueError(f"population size must be >= 1, got {size!r}")
    return jax.vmap(lambda k: init_params(k, spec))(jax.random.split(key, size))


def value(spec: EvaluatorSpec, params: Params, state_or_obs: State | jax.Array) -> jax.Array:
    """f32[...]: the chance that the side to move wins, for one member.

    ``state_or_obs`` is a ``State`` (one position: f32[]) or encoded observations ``[..., 2N]``
    (f32[...]: e.g. ``functools.partial(value, spec)`` maps a member over a batch of positions).
    """
    obs = state_or_obs
    if isinstance(state_or_obs, State):
        obs = _encode(spec.num_squares, state_or_obs)
    return network(spec).apply({"params": params}, obs)


@functools.cache
def value_fn(spec: EvaluatorSpec) -> Callable[[Params, State, jax.Array], jax.Array]:
    """``(params, state, key) -> f32[]``: ``value`` in the leaf-evaluator signature of the search.

    Cached per spec, so the same function object (a static jit argument) is reused and compiled once.
    """

    def evaluate(params: Params, state: State, key: jax.Array) -> jax.Array:
        del key  # deterministic evaluator
        return value(spec, params, state)

    return evaluate


@functools.partial(jax.jit, static_argnums=0)
def population_values(spec: EvaluatorSpec, pop_params: Params, obs: jax.Array) -> jax.Array:
    """[P, M] win probabilities of P members on their own M encoded positions ``obs`` [P, M, 2N]."""
    return jax.vmap(lambda p, o: network(spec).apply({"params": p}, o))(pop_params, obs)


def select_members(pop_params: Params, indices: jax.Array | Sequence[int]) -> Params:
    """The members at ``indices`` ([Q] ints) as a population with a leading ``[Q]`` axis."""
    indices = jnp.asarray(indices, dtype=jnp.int32)
    return jax.tree.map(lambda x: x[indices], pop_params)


def width_masks(spec: EvaluatorSpec, width: jax.Array) -> Params:
    """An MLP's parameters' 0/1 masks (float32, the params' structure) that keep the first ``width``
    ([] int, traced) units of every hidden layer: a unit past it has no weights in or out, so the
    network is the ``width``-unit MLP (PBT's evolving width, at the spec's shapes)."""
    if spec.architecture != "mlp":
        raise ValueError(f"only an MLP's width can be masked, got architecture {spec.architecture!r}")
    kept = (jnp.arange(spec.width) < width).astype(jnp.float32)
    masks: dict[str, dict[str, jax.Array]] = {}
    rows = jnp.ones(spec.input_size, jnp.float32)
    for i in range(spec.layers):
        masks[f"layer_{i}"] = {"kernel": rows[:, None] * kept[None, :], "bias": kept}
        rows = kept
    output = {"kernel": kept[:, None], "bias": jnp.ones(1, jnp.float32)}
    if spec.material_input:
        output["material_weight"] = jnp.ones(1, jnp.float32)
    masks[f"layer_{spec.layers}"] = output
    return masks


def masked_to_width(spec: EvaluatorSpec, params: Params, width: jax.Array) -> Params:
    """``params`` with every weight of the hidden units past ``width`` zeroed (``width_masks``)."""
    return jax.tree.map(jnp.multiply, params, width_masks(spec, width))


def resized_to_width(
    spec: EvaluatorSpec, params: Params, fresh: Params, width: jax.Array, new_width: jax.Array
) -> Params:
    """``params`` of a ``width``-unit MLP (units past it zeroed) as a ``new_width``-unit one. Shrunk: the
    last units dropped. Grown: each new unit takes ``fresh``'s weights into it (from the inputs and
    every kept unit of the layer below) while its weights out stay zero, so the function is unchanged
    until training moves them (Net2Net's function-preserving growth, with the new units' outgoing
    weights at zero)."""
    new_units = (jnp.arange(spec.width) >= width).astype(jnp.float32)
    grown = {}
    for name, layer in params.items():
        hidden = name != f"layer_{spec.layers}"
        grown[name] = {
            leaf: value + fresh[name][leaf] * new_units if hidden else value for leaf, value in layer.items()
        }
    return masked_to_width(spec, grown, new_width)


@functools.cache
def _unravel(spec: EvaluatorSpec) -> tuple[int, Callable[[jax.Array], Params]]:
    """(D, unravel) of one member's layout, built once per spec."""
    template = jax.tree.map(
        lambda s: jnp.zeros(s, jnp.float32),
        param_shapes(spec),
        is_leaf=lambda x: isinstance(x, tuple),
    )
    flat, unravel = ravel_pytree(template)
    return flat.shape[0], unravel


def num_params(spec: EvaluatorSpec) -> int:
    """D: parameters of one member."""
    return _unravel(spec)[0]


def flatten_population(pop_params: Params) -> jax.Array:
    """[P, D] float32 genomes: each member's parameters raveled in ``ravel_pytree`` order."""
    return jax.vmap(lambda p: ravel_pytree(p)[0])(pop_params)


def unflatten_population(spec: EvaluatorSpec, flat: jax.Array) -> Params:
    """The inverse of ``flatten_population``: [P, D] genomes -> population pytree."""
    size, unravel = _unravel(spec)
    if flat.ndim != 2 or flat.shape[1] != size:
        raise ValueError(f"expected genomes of shape [P, {size}] for {spec}, got {tuple(flat.shape)}")
    return jax.vmap(unravel)(flat)
