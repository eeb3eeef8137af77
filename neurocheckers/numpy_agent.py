"""Use an exported agent without JAX: NumPy only (plus the safetensors reader).

>>> agent = NumpyAgent.load("agent.safetensors")
>>> agent.value_of_fen("B:W13,14,15,16,17,18:B1,2,3,4,5,6")   # chance that the side to move wins

The input encoding is the library's (``evaluator.encode``, version ``stm-men-kings-rot180-v1``):
men then kings over the dark squares, +1 own / -1 opponent, rotated 180 degrees when White is to move.
An agent written with ``material_input`` (metadata ``material_input = "true"``) adds
``material_weight`` x the input's material balance (men 1, kings 1.5, side to move minus opponent)
to the output logit, as ``evaluator.MLP`` does.
This module deliberately imports nothing from JAX, so it runs wherever NumPy does.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

import numpy as np
from safetensors import SafetensorError, safe_open

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
    """An MLP evaluator as NumPy arrays: ``kernels[i]`` [in, out] and ``biases[i]`` [out], and
    ``material_weight`` [1] for a network with ``material_input`` (None without)."""

    kernels: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    board_size: int
    metadata: dict[str, str]
    material_weight: np.ndarray | None = None

    @classmethod
    def load(cls, path: str | os.PathLike) -> NumpyAgent:
        """Read an agent file written by ``agent_file.save_agent`` (checked by :func:`read_agent_file`)."""
        checked = read_agent_file(path)
        count = checked.layers + 1
        kernels = tuple(checked.tensors[f"layer_{i}/kernel"] for i in range(count))
        biases = tuple(checked.tensors[f"layer_{i}/bias"] for i in range(count))
        material_weight = checked.tensors.get(f"layer_{checked.layers}/material_weight")
        return cls(kernels, biases, checked.board_size, checked.metadata, material_weight)

    def value(self, observations: np.ndarray) -> np.ndarray:
        """[..., 2N] encoded positions -> [...] chance that the side to move wins."""
        obs = x = np.asarray(observations, dtype=np.float32)
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


def read_agent_file(path: str | os.PathLike) -> AgentFileContents:
    """Read and check an agent file without JAX (``agent_file.load_agent`` builds on this).

    Raises ``ValueError`` naming the file and the problem for a file that cannot be read as
    safetensors, is not an agent file, has another format or encoding version, lacks or garbles the
    network shape in its metadata, or holds weights whose names, shapes or values do not fit it.
    """
    where = os.fspath(path)
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
    shape = f"MLP of {layers} hidden layers x width {width} on a {board_size}x{board_size} board"
    if material_input:
        shape += " with material input"

    # Input: men then kings over the N = board_size**2 / 2 dark squares; output: one logit.
    sizes = [2 * (board_size * board_size // 2)] + [width] * layers + [1]
    expected: dict[str, tuple[int, ...]] = {}
    for i in range(layers + 1):
        expected[f"layer_{i}/kernel"] = (sizes[i], sizes[i + 1])
        expected[f"layer_{i}/bias"] = (sizes[i + 1],)
    if material_input:
        expected[f"layer_{layers}/material_weight"] = (1,)
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        raise ValueError(
            f"{where}: weights do not fit an {shape}: missing {missing}, unexpected {unexpected}"
        )
    for name, want in expected.items():
        array = tensors[name]
        if array.shape != want:
            raise ValueError(f"{where}: {name} has shape {array.shape}, expected {want} for an {shape}")
        if array.dtype != np.float32:
            raise ValueError(f"{where}: {name} has dtype {array.dtype}, expected float32")
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{where}: {name} holds non-finite values")
    return AgentFileContents(metadata, board_size, layers, width, tensors, material_input)


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
    n = board_size * board_size // 2
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
