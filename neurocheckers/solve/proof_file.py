"""A solution on disk: the proven values (claims) and the strategy tables that prove them, in one
compressed NumPy archive read without pickle.

Two tables, one a goal, each a row an OR node: ``nodes`` (the base-5 key of a position's mover view,
``solve.keys``) and ``after`` (the key of the position after the move that keeps the goal, seen from
the next mover). ``win`` holds positions whose mover wins by the move; ``not_lose`` positions whose
mover wins or draws by it. The other side's replies are every legal move: the checker enumerates
them itself, so a table is a strategy closed under the opponent's moves, down to database positions
and positions without a move. A claim is a position's key and its value for its mover.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from neurocheckers.endgame.database import DRAW, LOSS, VALUE_NAMES, WIN
from neurocheckers.formats import atomic_write_bytes

__all__ = ["DRAW", "LOSS", "WIN", "Claim", "Solution", "load_solution", "save_solution"]
FORMAT = 1
TABLES = ("win", "not_lose")


@dataclasses.dataclass(frozen=True)
class Claim:
    """A proven value: the position (its key), its value for the side to move, and a label."""

    key: int
    value: int
    """``LOSS``, ``DRAW`` or ``WIN`` for the side to move."""
    label: str
    """``start``, or the first move that leads to it (``start 9-13``)."""

    @property
    def value_name(self) -> str:
        return VALUE_NAMES[self.value]


@dataclasses.dataclass(frozen=True)
class Solution:
    """Claims and the two strategy tables that prove them."""

    rules: str
    """The rules preset."""
    claims: tuple[Claim, ...]
    tables: dict[str, tuple[np.ndarray, np.ndarray]]
    """Per goal (``TABLES``): ([K] int64 node keys, [K] int64 keys after the proving move)."""
    info: dict = dataclasses.field(default_factory=dict)
    """How it was made: the database, the searches' nodes and times, the machine (JSON)."""

    def records(self) -> int:
        return sum(len(nodes) for nodes, _ in self.tables.values())


def save_solution(solution: Solution, path: str | Path) -> None:
    """Write ``solution`` to ``path`` (an ``.npz``) atomically, each table sorted by node."""
    import io

    arrays = {}
    for name in TABLES:
        nodes, after = solution.tables.get(name, (np.zeros(0, np.int64), np.zeros(0, np.int64)))
        order = np.argsort(nodes, kind="stable")
        arrays[f"{name}_nodes"], arrays[f"{name}_after"] = nodes[order], after[order]
    meta = {
        "format": FORMAT,
        "rules": solution.rules,
        "claims": [dataclasses.asdict(c) for c in solution.claims],
        "info": solution.info,
    }
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    atomic_write_bytes(Path(path), buffer.getvalue())


def load_solution(path: str | Path) -> Solution:
    """The solution in ``path``; ``ValueError`` (one line) when it is not one."""
    try:
        with np.load(Path(path), allow_pickle=False) as archive:
            meta = json.loads(bytes(archive["meta"]).decode())
            tables = {
                name: (archive[f"{name}_nodes"].astype(np.int64), archive[f"{name}_after"].astype(np.int64))
                for name in TABLES
            }
    except (OSError, KeyError, ValueError) as e:
        raise ValueError(f"{path} is not a solution file: {e}") from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path}: solution format {meta.get('format')!r}, expected {FORMAT}")
    claims = tuple(Claim(int(c["key"]), int(c["value"]), str(c["label"])) for c in meta["claims"])
    return Solution(meta["rules"], claims, tables, meta.get("info", {}))
