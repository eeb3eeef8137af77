"""Use an exported agent without JAX: NumPy only (plus the safetensors reader).

>>> agent = NumpyAgent.load("agent.safetensors")
>>> agent.value_of_fen("B:W13,14,15,16,17,18:B1,2,3,4,5,6")   # chance that the side to move wins

The input encoding is the library's (``evaluator.encode``, version ``stm-men-kings-rot180-v1``):
men then kings over the dark squares, +1 own / -1 opponent, rotated 180 degrees when White is to move.
An agent written with ``material_input`` (metadata ``material_input = "true"``) adds
``material_weight`` x the input's material balance (men 1, kings 1.5, side to move minus opponent)
to the output logit, as ``evaluator.MLP`` does.
A CNN, transformer or NNUE agent (metadata ``architecture``; see ``architectures``) runs through
the same layers written out in NumPy: 3x3 'SAME' convolutions over the board planes, pre-LayerNorm
multi-head self-attention blocks, and the NNUE network's two perspectives, as flax computes them.
This module deliberately imports nothing from JAX, so it runs wherever NumPy does.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

import numpy as np
from safetensors import SafetensorError, safe_open

from neurocheckers.networks.architectures import (
    ARCHITECTURES,
    CNN_PLANES,
    LAYER_NORM_EPSILON,
    METADATA_KEYS,
    EvaluatorSpec,
    board_layout,
    dark_squares,
    nest_tensors,
    parse_channels,
    tensor_shapes,
)
from neurocheckers.rules.fen import read_fen

FORMAT = "neurocheckers-agent"
"""Value of the ``format`` metadata entry of an agent file."""
FORMAT_VERSION = "1"
"""Version of the agent file layout; bumped when it changes incompatibly."""
# A copy of ``evaluator.INPUT_ENCODING`` and its board sizes (that module imports JAX);
# tests/test_cli.py checks that the encodings agree.
SUPPORTED_ENCODING = "stm-men-kings-rot180-v1"
BOARD_SIZES = (6, 8)
KING_VALUE = 1.5  # a copy of ``rules.outcome.KING_VALUE`` (JAX); tests/test_material_input.py checks it


@dataclasses.dataclass(frozen=True)
class NumpyAgent:
    """An evaluator as NumPy arrays. An MLP's are ``kernels[i]`` [in, out] and ``biases[i]`` [out],
    and ``material_weight`` [1] for a network with ``material_input`` (None without). A CNN or a
    transformer has empty ``kernels`` and ``biases``: its ``spec`` names it and ``tensors`` holds its
    weights by agent-file name (``material_weight`` is still its output's, or None)."""

    kernels: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    board_size: int
    metadata: dict[str, str]
    material_weight: np.ndarray | None = None
    spec: EvaluatorSpec | None = None
    tensors: Mapping[str, np.ndarray] | None = None

    @classmethod
    def load(cls, path: str | os.PathLike) -> NumpyAgent:
        """Read an agent file written by ``agent_file.save_agent`` (checked by :func:`read_agent_file`)."""
        checked = read_agent_file(path)
        spec, tensors = checked.spec, checked.tensors
        if spec is not None and spec.architecture != "mlp":
            weight = tensors.get("output/material_weight")
            return cls((), (), checked.board_size, checked.metadata, weight, spec, tensors)
        count = checked.layers + 1
        kernels = tuple(tensors[f"layer_{i}/kernel"] for i in range(count))
        biases = tuple(tensors[f"layer_{i}/bias"] for i in range(count))
        material_weight = tensors.get(f"layer_{checked.layers}/material_weight")
        return cls(kernels, biases, checked.board_size, checked.metadata, material_weight, spec, tensors)

    def value(self, observations: np.ndarray) -> np.ndarray:
        """[..., 2N] encoded positions -> [...] chance that the side to move wins."""
        obs = np.asarray(observations, dtype=np.float32)
        if self.spec is not None and self.spec.architecture != "mlp":
            weights = nest_tensors(self.tensors or {})
            features = _FEATURES[self.spec.architecture](self.spec, weights, obs)
            output = weights["output"]
            logits = features @ output["kernel"] + output["bias"]
        else:
            x = obs
            for kernel, bias in zip(self.kernels[:-1], self.biases[:-1], strict=True):
                x = np.maximum(x @ kernel + bias, 0.0)
            logits = x @ self.kernels[-1] + self.biases[-1]
        if self.material_weight is not None:
            men, kings = np.split(obs, 2, axis=-1)
            material = men.sum(axis=-1) + np.float32(KING_VALUE) * kings.sum(axis=-1)
            logits = logits + material[..., None] * self.material_weight
        return 1.0 / (1.0 + np.exp(-logits[..., 0]))

    def value_of_fen(self, fen: str) -> float:
        return float(self.value(encode_fen(fen, self.board_size)))


@dataclasses.dataclass(frozen=True)
class AgentFileContents:
    """An agent file's checked contents: its metadata, network shape and weights by tensor name
    (``layer_{i}/kernel`` [in, out] and ``layer_{i}/bias`` [out]; ``layer_{L}/material_weight`` [1]
    when ``material_input``)."""

    metadata: dict[str, str]
    board_size: int
    layers: int
    width: int
    tensors: dict[str, np.ndarray]
    material_input: bool = False
    spec: EvaluatorSpec | None = None
    """The network's spec (architecture and shape); ``layers`` and ``width`` are an MLP's."""


def read_agent_file(path: str | os.PathLike) -> AgentFileContents:
    """Read and check an agent file without JAX (``agent_file.load_agent`` builds on this).

    Raises ``ValueError`` naming the file and the problem for a file that cannot be read as
    safetensors, is not an agent file, has another format or encoding version, lacks or garbles the
    network shape in its metadata, or holds weights whose names, shapes or values do not fit it.
    """
    where = os.fspath(path)
    if os.path.isdir(where):  # safetensors would say "No such device (os error 19)"
        raise ValueError(f"{where} is a folder, not an agent file")
    try:
        with safe_open(where, framework="numpy") as f:
            metadata = dict(f.metadata() or {})
            tensors = {name: f.get_tensor(name) for name in f.keys()}  # noqa: SIM118 (not a dict)
    except (SafetensorError, OSError) as error:
        raise ValueError(f"{where}: not a readable safetensors file ({error})") from None
    if metadata.get("format") != FORMAT:
        raise ValueError(
            f"{where} is not a neurocheckers agent file: metadata 'format' is "
            f"{metadata.get('format')!r}, expected {FORMAT!r}"
        )
    if metadata.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{where}: format_version {metadata.get('format_version')!r} is not supported "
            f"(this code reads {FORMAT_VERSION!r})"
        )
    if metadata.get("input_encoding") != SUPPORTED_ENCODING:
        raise ValueError(
            f"{where}: input_encoding {metadata.get('input_encoding')!r} differs from this code's "
            f"{SUPPORTED_ENCODING!r}"
        )
    board_size = _positive_int(metadata, "board_size", where)
    if board_size not in BOARD_SIZES:
        raise ValueError(f"{where}: metadata 'board_size' must be 6 or 8, got {board_size}")
    layers = _positive_int(metadata, "layers", where)
    width = _positive_int(metadata, "width", where)
    material_input = _material_input(metadata, where)
    spec = _spec(metadata, where, EvaluatorSpec(layers, width, board_size, material_input))
    shape = ("an " if spec.architecture == "mlp" else "a ") + spec.describe()

    # Input: men then kings over the N = board_size**2 / 2 dark squares; output: one logit.
    expected = tensor_shapes(spec)
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        raise ValueError(f"{where}: weights do not fit {shape}: missing {missing}, unexpected {unexpected}")
    for name, want in expected.items():
        array = tensors[name]
        if array.shape != want:
            raise ValueError(f"{where}: {name} has shape {array.shape}, expected {want} for {shape}")
        if array.dtype != np.float32:
            raise ValueError(f"{where}: {name} has dtype {array.dtype}, expected float32")
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{where}: {name} holds non-finite values")
    return AgentFileContents(metadata, board_size, layers, width, tensors, material_input, spec)


def _spec(metadata: Mapping[str, str], path: str, mlp: EvaluatorSpec) -> EvaluatorSpec:
    """The spec of the file's network: ``mlp`` (its MLP fields, read already) with the architecture
    and its settings from ``metadata`` (absent: an MLP, as files from before the entry)."""
    architecture = metadata.get("architecture", "mlp")
    if architecture not in ARCHITECTURES:
        raise ValueError(
            f"{path}: metadata 'architecture' must be one of {', '.join(ARCHITECTURES)}, got {architecture!r}"
        )
    network: dict[str, object] = {"architecture": architecture}
    for key in METADATA_KEYS[architecture]:
        if key != "cnn_channels":
            network[key] = _positive_int(metadata, key, path)
            continue
        try:
            network[key] = parse_channels(metadata.get(key, ""))
        except ValueError:
            raise ValueError(
                f"{path}: metadata 'cnn_channels' must be comma-separated positive integers, "
                f"got {metadata.get(key)!r}"
            ) from None
    try:
        return dataclasses.replace(mlp, **network)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def _material_input(metadata: Mapping[str, str], path: str) -> bool:
    """The ``material_input`` entry: absent (a file from before it existed) or "false" -> False."""
    raw = metadata.get("material_input", "false")
    if raw not in ("true", "false"):
        raise ValueError(f"{path}: metadata 'material_input' must be 'true' or 'false', got {raw!r}")
    return raw == "true"


def _positive_int(metadata: Mapping[str, str], key: str, path: str) -> int:
    raw = metadata.get(key)
    try:
        number = int(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{path}: metadata {key!r} must be a positive integer, got {raw!r}") from None
    if number < 1:
        raise ValueError(f"{path}: metadata {key!r} must be a positive integer, got {raw!r}")
    return number


def encode_fen(fen: str, board_size: int) -> np.ndarray:
    """[2N] float32 encoding of a PDN FEN position, from the side to move (NumPy only).

    The FEN is read and checked by ``rules.fen.read_fen`` (the library's one FEN reader, which does
    not import JAX); a bad one raises ``ValueError`` naming what is wrong.
    """
    position = read_fen(fen, board_size)
    n = dark_squares(board_size)
    bit = np.uint64(1) << np.arange(n, dtype=np.uint64)

    def present(bits: int) -> np.ndarray:
        return ((np.uint64(bits) & bit) != 0).astype(np.float32)

    black = (present(position.black_men), present(position.black_kings))
    white = (present(position.white_men), present(position.white_kings))
    own, other = (black, white) if position.black_to_move else (white, black)
    men, kings = (own[i] - other[i] for i in range(2))
    if not position.black_to_move:
        men, kings = men[::-1], kings[::-1]
    return np.concatenate([men, kings])


# ---------------------------------------------------------------------------
# NumPy forward passes of the CNN and the transformer (``evaluator.CNN`` and ``evaluator.Transformer``)
# ---------------------------------------------------------------------------


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, np.float32(0.0))


def board_planes(obs: np.ndarray, board_size: int) -> np.ndarray:
    """[..., S, S, 5] float32 board planes of encoded positions [..., 2N], as ``evaluator.board_planes``."""
    men, kings = np.split(obs, 2, axis=-1)
    planes = np.stack([_relu(men), _relu(kings), _relu(-men), _relu(-kings), np.ones_like(men)], axis=-1)
    padded = np.concatenate([planes, np.zeros_like(planes[..., :1, :])], axis=-2)
    board = padded[..., np.asarray(board_layout(board_size)), :]
    return board.reshape(*board.shape[:-2], board_size, board_size, CNN_PLANES)


def _conv_same(x: np.ndarray, kernel: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """A 'SAME' convolution (cross-correlation, as ``lax.conv``) of ``x`` [..., H, W, C] with
    ``kernel`` [k, k, C, O] (k odd), zero-padded: [..., H, W, O]."""
    size = kernel.shape[0]
    pad = size // 2
    height, width = x.shape[-3], x.shape[-2]
    padded = np.pad(x, [(0, 0)] * (x.ndim - 3) + [(pad, pad), (pad, pad), (0, 0)])
    out = np.broadcast_to(bias, (*x.shape[:-1], kernel.shape[-1])).astype(np.float32)
    for row in range(size):
        for col in range(size):
            out = out + padded[..., row : row + height, col : col + width, :] @ kernel[row, col]
    return out


def _cnn_features(spec: EvaluatorSpec, weights: Mapping, obs: np.ndarray) -> np.ndarray:
    x = board_planes(obs, spec.board_size)
    for i in range(len(spec.cnn_channels)):
        x = _relu(_conv_same(x, weights[f"conv_{i}"]["kernel"], weights[f"conv_{i}"]["bias"]))
    x = x.reshape(*x.shape[:-3], -1)
    return _relu(x @ weights["dense"]["kernel"] + weights["dense"]["bias"])


def _layer_norm(x: np.ndarray, weights: Mapping) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    variance = np.square(x - mean).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + np.float32(LAYER_NORM_EPSILON)) * weights["scale"] + weights[
        "bias"
    ]


def _attention(x: np.ndarray, weights: Mapping) -> np.ndarray:
    """Multi-head self-attention of tokens ``x`` [..., N, W], as flax's ``MultiHeadDotProductAttention``."""

    def project(name: str) -> np.ndarray:  # [..., N, heads, head width]
        return np.einsum("...nw,whd->...nhd", x, weights[name]["kernel"]) + weights[name]["bias"]

    query, key, value = project("query"), project("key"), project("value")
    query = query / np.sqrt(np.float32(query.shape[-1]))
    logits = np.einsum("...qhd,...khd->...hqk", query, key)
    attention = np.exp(logits - logits.max(axis=-1, keepdims=True))
    attention = attention / attention.sum(axis=-1, keepdims=True)
    mixed = np.einsum("...hqk,...khd->...qhd", attention, value)
    return np.einsum("...qhd,hdw->...qw", mixed, weights["out"]["kernel"]) + weights["out"]["bias"]


def piece_kinds(obs: np.ndarray) -> np.ndarray:
    """int [..., N] token kinds (0 empty, 1 own man, 2 opponent man, 3 own king, 4 opponent king)."""
    men, kings = np.split(obs, 2, axis=-1)
    return (men > 0) * 1 + (men < 0) * 2 + (kings > 0) * 3 + (kings < 0) * 4


def _transformer_features(spec: EvaluatorSpec, weights: Mapping, obs: np.ndarray) -> np.ndarray:
    x = weights["embed_piece"]["embedding"][piece_kinds(obs)] + weights["embed_square"]["embedding"]
    for i in range(spec.transformer_layers):
        block = weights[f"block_{i}"]
        x = x + _attention(_layer_norm(x, block["norm_attention"]), block["attention"])
        hidden = _relu(
            _layer_norm(x, block["norm_mlp"]) @ block["mlp_hidden"]["kernel"] + block["mlp_hidden"]["bias"]
        )
        x = x + hidden @ block["mlp_output"]["kernel"] + block["mlp_output"]["bias"]
    return _layer_norm(x, weights["norm_final"]).mean(axis=-2)


def _nnue_features(spec: EvaluatorSpec, weights: Mapping, obs: np.ndarray) -> np.ndarray:
    """The NNUE network's last hidden layer (``evaluator.NNUE``): both perspectives' piece-square
    inputs through the shared first layer, clipped and joined, then two clipped dense layers."""
    men, kings = np.split(obs, 2, axis=-1)
    own_men, own_kings, opp_men, opp_kings = _relu(men), _relu(kings), _relu(-men), _relu(-kings)
    mover = np.concatenate([own_men, own_kings, opp_men, opp_kings], axis=-1)
    other = np.concatenate([opp_men, opp_kings, own_men, own_kings], axis=-1)
    other = np.concatenate([part[..., ::-1] for part in np.split(other, 4, axis=-1)], axis=-1)
    first = weights["accumulator"]

    def clip(x: np.ndarray) -> np.ndarray:
        return np.clip(x, np.float32(0.0), np.float32(1.0))

    x = np.concatenate(
        [clip(mover @ first["kernel"] + first["bias"]), clip(other @ first["kernel"] + first["bias"])],
        axis=-1,
    )
    for name in ("hidden_0", "hidden_1"):
        x = clip(x @ weights[name]["kernel"] + weights[name]["bias"])
    return x


_FEATURES = {"cnn": _cnn_features, "transformer": _transformer_features, "nnue": _nnue_features}
"""The features each non-MLP architecture hands its output unit, [..., F] from encoded positions."""
