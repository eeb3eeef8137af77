"""The evaluator's network shapes, without JAX: ``EvaluatorSpec``, its parameter shapes and its
agent-file metadata. ``evaluator`` builds the JAX networks from a spec; ``numpy_agent`` checks agent
files and runs them with NumPy from the same spec, so both sides agree on every tensor's name and shape.

Three architectures read the same input (``evaluator.encode``: men then kings over the N dark
squares, +1 own / -1 opponent, seen from the side to move) and end in a sigmoid:

- ``mlp``: ``layers`` Dense + ReLU blocks of ``width`` units, then Dense(1) (the study's network);
  parameters ``layer_0`` .. ``layer_L``.
- ``cnn``: the board as five planes on the full ``S x S`` board (own men, own kings, opponent men,
  opponent kings, and the side to move's plane: the input is already seen from the mover, so that
  plane is 1 on every dark square, which also shows the convolutions where the playable squares are),
  3x3 'SAME' convolutions of ``cnn_channels`` with ReLU, the whole board flattened, one Dense + ReLU
  layer of ``cnn_dense`` units, then Dense(1) (the 8x8 DQN articles' shape, smaller); parameters
  ``conv_0`` .., ``dense``, ``output``.
- ``transformer``: one token per dark square, embedded by its piece (empty, own man, opponent man,
  own king, opponent king) plus its square; ``transformer_layers`` pre-LayerNorm blocks of
  ``transformer_heads``-head self-attention and a ReLU MLP of ``TRANSFORMER_MLP_RATIO`` x
  ``transformer_width`` units; a final LayerNorm, then a linear head averaged over the squares
  (the TD(lambda) study's shape, smaller); parameters ``embed_piece``, ``embed_square``,
  ``block_0`` .., ``norm_final``, ``output``.
- ``nnue``: a network built for search (NNUE-style): a wide first layer ``accumulator`` of
  ``nnue_width`` units over 4 x N piece-square inputs (own men, own kings, the other side's men, its
  kings), read from two perspectives, the mover's and the other side's (the board turned 180
  degrees and the sides swapped), with the same weights; both clipped to [0, 1] and joined, the
  mover's first, then ``hidden_0`` and ``hidden_1`` of ``nnue_hidden`` units (clipped ReLU), then
  ``output``. The compiled search keeps the first layer's sums as moves are made
  (``compiled.network``).

With ``material_input`` the output layer of every architecture also holds ``material_weight`` [1]:
the input's material balance times that weight is added to the output logit.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

ARCHITECTURES = ("mlp", "cnn", "transformer", "nnue")
"""The evaluator networks, by the name the config (``evaluator``) and agent files use."""
CONV_KERNEL = 3
"""Side of the CNN's square convolution kernels."""
CNN_PLANES = 5
"""Input planes of the CNN: own men, own kings, opponent men, opponent kings, side to move."""
PIECE_KINDS = 5
"""Token kinds of the transformer: empty, own man, opponent man, own king, opponent king."""
NNUE_PLANES = 4
"""Piece-square input planes of the NNUE network: own men, own kings, the other side's men, its kings."""
TRANSFORMER_MLP_RATIO = 4
"""Hidden units of a transformer block's MLP, per unit of width."""
LAYER_NORM_EPSILON = 1e-6
"""flax's ``nn.LayerNorm`` epsilon (tests/test_architectures.py checks it), for the NumPy pass."""
METADATA_KEYS = {
    "mlp": (),
    "cnn": ("cnn_channels", "cnn_dense"),
    "transformer": ("transformer_layers", "transformer_heads", "transformer_width"),
    "nnue": ("nnue_width", "nnue_hidden"),
}
"""Agent-file metadata of each architecture besides ``architecture`` itself (MLP files have none)."""

Shapes = dict[str, Any]
"""A nested ``{name: {... {leaf: shape tuple}}}`` dict: one member's parameter shapes."""


@dataclasses.dataclass(frozen=True)
class EvaluatorSpec:
    """The shape of an evaluator network. Hashable, so it can be a static jit argument.

    The fields of the architectures other than ``architecture`` are checked, then set back to their
    defaults (an MLP's spec always has the default ``cnn_*`` and ``transformer_*``); ``layers`` and
    ``width`` are kept whatever the architecture.
    """

    layers: int
    """Hidden ReLU layers of the MLP (the reference study's base case is 5; its variants 3 and 7)."""
    width: int
    """Units per hidden layer of the MLP."""
    board_size: int
    """Squares per side of the board the network reads (6 or 8)."""
    material_input: bool = False
    """Whether the material balance of the input also feeds the output unit, with its own weight."""
    architecture: str = "mlp"
    """The network: mlp (layers x width), cnn (cnn_*) or transformer (transformer_*)."""
    cnn_channels: tuple[int, ...] = (16, 32)
    """Channels of each 3x3 convolution of the CNN, first layer first."""
    cnn_dense: int = 32
    """Units of the CNN's dense layer after the convolutions."""
    transformer_layers: int = 2
    """Self-attention blocks of the transformer."""
    transformer_heads: int = 4
    """Attention heads per block (they divide transformer_width)."""
    transformer_width: int = 32
    """Width of the transformer's tokens."""
    nnue_width: int = 128
    """Units of the NNUE network's first layer, per perspective (two are joined)."""
    nnue_hidden: int = 32
    """Units of each of the NNUE network's two small layers."""

    def __post_init__(self) -> None:
        if isinstance(self.cnn_channels, list):  # a list from JSON or a caller: stored as a tuple
            object.__setattr__(self, "cnn_channels", tuple(self.cnn_channels))
        error = _spec_error(self)
        if error:
            raise ValueError(f"EvaluatorSpec.{error}")
        # The other architectures' settings go back to their defaults, so that two specs of the same
        # network are equal (and share one compiled value_fn) and an agent file's spec round-trips.
        for name in {key for keys in METADATA_KEYS.values() for key in keys} - set(
            METADATA_KEYS[self.architecture]
        ):
            object.__setattr__(self, name, _FIELD_DEFAULTS[name])

    @classmethod
    def for_rules(
        cls, rules: Any, layers: int, width: int, material_input: bool = False, **network: Any
    ) -> EvaluatorSpec:
        """The spec of a ``layers`` x ``width`` network for the board of ``rules`` (a ``Rules``);
        ``network`` takes the architecture fields (``architecture``, ``cnn_channels``, ...)."""
        return cls(layers, width, rules.board_size, material_input, **network)

    @property
    def num_squares(self) -> int:
        """N dark squares of the board."""
        return dark_squares(self.board_size)

    @property
    def input_size(self) -> int:
        """Length of the encoded input: 2 * N (men, then kings)."""
        return 2 * self.num_squares

    @property
    def num_params(self) -> int:
        """D: parameters of one member."""
        return sum(math.prod(shape) for shape in tensor_shapes(self).values())

    def describe(self) -> str:
        """The network in words, e.g. ``MLP of 5 hidden layers x width 32 on a 6x6 board``."""
        board = f"on a {self.board_size}x{self.board_size} board"
        if self.architecture == "cnn":
            channels = channels_text(self.cnn_channels)
            text = f"CNN of 3x3 convolutions {channels} and dense {self.cnn_dense} {board}"
        elif self.architecture == "transformer":
            text = (
                f"transformer of {self.transformer_layers} blocks x {self.transformer_heads} heads x "
                f"width {self.transformer_width} {board}"
            )
        elif self.architecture == "nnue":
            hidden = self.nnue_hidden
            text = f"NNUE network of 2 x {self.nnue_width} -> {hidden} -> {hidden} {board}"
        else:
            text = f"MLP of {self.layers} hidden layers x width {self.width} {board}"
        return text + (" with material input" if self.material_input else "")

    def metadata(self) -> dict[str, str]:
        """The agent-file entries naming the architecture and its settings ({} for an MLP, whose files
        stay as they were before other architectures existed)."""
        if self.architecture == "mlp":
            return {}
        entries = {"architecture": self.architecture}
        for key in METADATA_KEYS[self.architecture]:
            value = getattr(self, key)
            entries[key] = channels_text(value) if key == "cnn_channels" else str(value)
        return entries


_FIELD_DEFAULTS = {f.name: f.default for f in dataclasses.fields(EvaluatorSpec)}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _spec_error(spec: EvaluatorSpec) -> str:
    """``"field must ..., got ..."`` for the first bad field of ``spec``, or ``""``."""
    counts = ("layers", "width", "cnn_dense", *METADATA_KEYS["transformer"], *METADATA_KEYS["nnue"])
    for name in ("board_size", *counts):
        if not _is_int(getattr(spec, name)):
            return f"{name} must be an int, got {getattr(spec, name)!r}"
    for name in counts:
        if getattr(spec, name) < 1:
            return f"{name} must be >= 1, got {getattr(spec, name)!r}"
    if not isinstance(spec.material_input, bool):
        return f"material_input must be a bool, got {spec.material_input!r}"
    if spec.board_size not in (6, 8):
        return f"board_size must be 6 or 8, got {spec.board_size!r}"
    if spec.architecture not in ARCHITECTURES:
        return f"architecture must be one of {', '.join(ARCHITECTURES)}, got {spec.architecture!r}"
    channels = spec.cnn_channels
    if not (isinstance(channels, tuple) and channels and all(_is_int(c) and c >= 1 for c in channels)):
        return f"cnn_channels must be a non-empty tuple of positive ints, got {channels!r}"
    if spec.transformer_width % spec.transformer_heads:
        return (
            f"transformer_heads must divide transformer_width, got {spec.transformer_heads} heads "
            f"for width {spec.transformer_width}"
        )
    return ""


def channels_text(channels: tuple[int, ...]) -> str:
    """``(16, 32)`` -> ``"16,32"`` (the config's and the agent file's form)."""
    return ",".join(str(c) for c in channels)


def parse_channels(text: str) -> tuple[int, ...]:
    """``"16,32"`` -> ``(16, 32)``; ``ValueError`` naming ``text`` unless it lists positive integers."""
    parts = [part.strip() for part in str(text).split(",")]
    if not all(part.isdigit() and int(part) >= 1 for part in parts):
        raise ValueError(f"cnn_channels must be comma-separated positive integers, got {text!r}")
    return tuple(int(part) for part in parts)


def spec_of_settings(settings: Any, board_size: int) -> EvaluatorSpec:
    """The spec of a config's network (an ``ExperimentConfig`` or ``EvolutionSettings``: ``layers``,
    ``width``, ``material_input``, ``evaluator``, ``cnn_channels`` as text and the other architecture
    fields) on a ``board_size`` board; ``ValueError`` naming a bad setting."""
    return EvaluatorSpec(
        settings.layers,
        settings.width,
        board_size,
        settings.material_input,
        architecture=settings.evaluator,
        cnn_channels=parse_channels(settings.cnn_channels),
        cnn_dense=settings.cnn_dense,
        transformer_layers=settings.transformer_layers,
        transformer_heads=settings.transformer_heads,
        transformer_width=settings.transformer_width,
        **{key: getattr(settings, key) for key in METADATA_KEYS["nnue"] if hasattr(settings, key)},
    )


# ---------------------------------------------------------------------------
# Parameter shapes
# ---------------------------------------------------------------------------


def _dense(inputs: int, outputs: int) -> dict[str, tuple[int, ...]]:
    return {"kernel": (inputs, outputs), "bias": (outputs,)}


def _output(spec: EvaluatorSpec, inputs: int) -> dict[str, tuple[int, ...]]:
    shapes = _dense(inputs, 1)
    if spec.material_input:
        shapes["material_weight"] = (1,)
    return shapes


def _mlp_shapes(spec: EvaluatorSpec) -> Shapes:
    sizes = [spec.input_size] + [spec.width] * spec.layers
    shapes: Shapes = {f"layer_{i}": _dense(sizes[i], sizes[i + 1]) for i in range(spec.layers)}
    shapes[f"layer_{spec.layers}"] = _output(spec, spec.width)
    return shapes


def _cnn_shapes(spec: EvaluatorSpec) -> Shapes:
    sizes = (CNN_PLANES, *spec.cnn_channels)
    shapes: Shapes = {
        f"conv_{i}": {"kernel": (CONV_KERNEL, CONV_KERNEL, sizes[i], sizes[i + 1]), "bias": (sizes[i + 1],)}
        for i in range(len(spec.cnn_channels))
    }
    shapes["dense"] = _dense(spec.board_size**2 * sizes[-1], spec.cnn_dense)
    shapes["output"] = _output(spec, spec.cnn_dense)
    return shapes


def _transformer_shapes(spec: EvaluatorSpec) -> Shapes:
    width, heads = spec.transformer_width, spec.transformer_heads
    head_width = width // heads
    norm = {"scale": (width,), "bias": (width,)}
    projection = {"kernel": (width, heads, head_width), "bias": (heads, head_width)}
    block = {
        "norm_attention": norm,
        "attention": {
            "query": projection,
            "key": projection,
            "value": projection,
            "out": {"kernel": (heads, head_width, width), "bias": (width,)},
        },
        "norm_mlp": norm,
        "mlp_hidden": _dense(width, TRANSFORMER_MLP_RATIO * width),
        "mlp_output": _dense(TRANSFORMER_MLP_RATIO * width, width),
    }
    shapes: Shapes = {
        "embed_piece": {"embedding": (PIECE_KINDS, width)},
        "embed_square": {"embedding": (spec.num_squares, width)},
    }
    shapes.update({f"block_{i}": block for i in range(spec.transformer_layers)})
    shapes["norm_final"] = norm
    shapes["output"] = _output(spec, width)
    return shapes


def _nnue_shapes(spec: EvaluatorSpec) -> Shapes:
    width, hidden = spec.nnue_width, spec.nnue_hidden
    return {
        "accumulator": _dense(NNUE_PLANES * spec.num_squares, width),
        "hidden_0": _dense(2 * width, hidden),
        "hidden_1": _dense(hidden, hidden),
        "output": _output(spec, hidden),
    }


def param_shapes(spec: EvaluatorSpec) -> Shapes:
    """The shape of every parameter of one member, as a nested dict in the layout of the flax
    parameters; its top-level keys are the layers, hidden layers first and the output layer last.
    The MLP's: ``{layer: {"kernel": (in, out), "bias": (out,)}}``, and ``"material_weight": (1,)`` in
    the output layer with ``material_input``."""
    builders = {
        "mlp": _mlp_shapes,
        "cnn": _cnn_shapes,
        "transformer": _transformer_shapes,
        "nnue": _nnue_shapes,
    }
    # Fresh dicts each call: callers may fill them in.
    return _copy(builders[spec.architecture](spec))


def _copy(shapes: Mapping) -> Shapes:
    return {k: _copy(v) if isinstance(v, Mapping) else v for k, v in shapes.items()}


def tensor_shapes(spec: EvaluatorSpec) -> dict[str, tuple[int, ...]]:
    """``{"layer_0/kernel": (in, out), ...}``: every parameter by its agent-file name (the path of
    its keys joined by "/")."""
    flat: dict[str, tuple[int, ...]] = {}

    def walk(prefix: str, node: Mapping) -> None:
        for key, child in node.items():
            name = f"{prefix}/{key}" if prefix else key
            if isinstance(child, Mapping):
                walk(name, child)
            else:
                flat[name] = child

    walk("", param_shapes(spec))
    return flat


def nest_tensors(flat: Mapping[str, Any]) -> dict[str, Any]:
    """The inverse of the flattening in ``tensor_shapes``: ``{"a/b": x}`` -> ``{"a": {"b": x}}``."""
    tree: dict[str, Any] = {}
    for name, value in flat.items():
        *path, leaf = name.split("/")
        node = tree
        for key in path:
            node = node.setdefault(key, {})
        node[leaf] = value
    return tree


def dark_squares(board_size: int) -> int:
    """N, the dark (playable) squares of a ``board_size`` board: half of its squares."""
    return board_size * board_size // 2


def board_layout(board_size: int) -> tuple[int, ...]:
    """For each of the ``S x S`` squares in reading order, the index of its dark square (0 .. N-1),
    or N for a light square (the CNN reads a zero there). Row 0 is at the top; a square is dark when
    ``(row + col) % 2 == 1`` (``rules.tables``)."""
    n = dark_squares(board_size)
    return tuple(
        row * (board_size // 2) + col // 2 if (row + col) % 2 == 1 else n
        for row in range(board_size)
        for col in range(board_size)
    )


def network_summary(config: Any) -> str:
    """The network of a config (an ``ExperimentConfig``) in words, e.g. ``5x32 MLP`` (quoted with every
    figure)."""
    if config.evaluator == "cnn":
        return f"CNN {config.cnn_channels} + dense {config.cnn_dense}"
    if config.evaluator == "transformer":
        return (
            f"transformer {config.transformer_layers} blocks x {config.transformer_heads} heads x "
            f"width {config.transformer_width}"
        )
    if config.evaluator == "nnue":
        return f"NNUE {getattr(config, 'nnue_width', 128)} x 2 -> {getattr(config, 'nnue_hidden', 32)} x 2"
    return f"{config.layers}x{config.width} MLP"
