"""Use an exported agent without JAX: NumPy only (plus the safetensors reader).

>>> agent = NumpyAgent.load("agent.safetensors")
>>> agent.value_of_fen("B:W13,14,15,16,17,18:B1,2,3,4,5,6")   # chance that the side to move wins

The input encoding is the library's (``evaluator.encode``, version ``stm-men-kings-rot180-v1``):
men then kings over the dark squares, +1 own / -1 opponent, rotated 180 degrees when White is to move.
This module deliberately imports nothing from JAX, so it runs wherever NumPy does.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
from safetensors import safe_open

SUPPORTED_ENCODING = "stm-men-kings-rot180-v1"


@dataclasses.dataclass(frozen=True)
class NumpyAgent:
    """An MLP evaluator as NumPy arrays: ``kernels[i]`` [in, out] and ``biases[i]`` [out]."""

    kernels: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    board_size: int
    metadata: dict[str, str]

    @classmethod
    def load(cls, path: str) -> NumpyAgent:
        with safe_open(str(path), framework="numpy") as f:
            metadata = dict(f.metadata() or {})
            tensors = {name: f.get_tensor(name) for name in f.keys()}  # noqa: SIM118 (not a dict)
        if metadata.get("format") != "neurocheckers-agent":
            raise ValueError(f"{path} is not a neurocheckers agent file")
        if metadata.get("input_encoding") != SUPPORTED_ENCODING:
            raise ValueError(
                f"{path} uses input encoding {metadata.get('input_encoding')!r}, not {SUPPORTED_ENCODING}"
            )
        layers = int(metadata["layers"])
        kernels = tuple(tensors[f"layer_{i}/kernel"] for i in range(layers + 1))
        biases = tuple(tensors[f"layer_{i}/bias"] for i in range(layers + 1))
        return cls(kernels, biases, int(metadata["board_size"]), metadata)

    def value(self, observations: np.ndarray) -> np.ndarray:
        """[..., 2N] encoded positions -> [...] chance that the side to move wins."""
        x = np.asarray(observations, dtype=np.float32)
        for kernel, bias in zip(self.kernels[:-1], self.biases[:-1], strict=True):
            x = np.maximum(x @ kernel + bias, 0.0)
        logits = x @ self.kernels[-1] + self.biases[-1]
        return 1.0 / (1.0 + np.exp(-logits[..., 0]))

    def value_of_fen(self, fen: str) -> float:
        return float(self.value(encode_fen(fen, self.board_size)))


def encode_fen(fen: str, board_size: int) -> np.ndarray:
    """[2N] float32 encoding of a PDN FEN position, from the side to move (NumPy only)."""
    n = board_size * board_size // 2
    parts = fen.strip().rstrip(".").split(":")
    to_move = parts[0].strip().upper()
    if to_move not in ("B", "W"):
        raise ValueError(f"malformed FEN {fen!r}: it must start with B or W")
    men = np.zeros(n, np.float32)
    kings = np.zeros(n, np.float32)
    for part in parts[1:]:
        part = part.strip()
        if not part:
            continue
        sign = 1.0 if part[0].upper() == to_move else -1.0
        for item in filter(None, (x.strip() for x in part[1:].split(","))):
            m = re.fullmatch(r"(K?)(\d+)(?:-K?(\d+))?", item)
            if not m:
                raise ValueError(f"malformed FEN {fen!r}: bad square {item!r}")
            for square in range(int(m.group(2)), int(m.group(3) or m.group(2)) + 1):
                if not 1 <= square <= n:
                    raise ValueError(f"malformed FEN {fen!r}: square {square} is off the board")
                (kings if m.group(1) else men)[square - 1] = sign
    if to_move == "W":
        men, kings = men[::-1], kings[::-1]
    return np.concatenate([men, kings])
