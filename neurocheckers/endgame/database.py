"""An endgame database on disk: per slice, win/draw/loss in 2 bits a position and distances in a
separate file, with a manifest of counts and checksums. Files are written atomically."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from neurocheckers.endgame.index import Slice, SliceIndex, slice_of
from neurocheckers.formats import atomic_write_bytes
from neurocheckers.rules.presets import Rules, get_rules

LOSS, DRAW, WIN = 0, 1, 2
"""Values for the side to move."""
VALUE_NAMES = ("loss", "draw", "win")
OUTSIDE = -1
"""The value :meth:`EndgameDB.lookup` gives a position whose slice the database does not hold."""
MANIFEST = "manifest.json"
FORMAT = 1


class EndgameError(ValueError):
    """A database that cannot be read or a position it cannot answer (one line, for users)."""


def pack_values(values: np.ndarray) -> np.ndarray:
    """[ceil(n / 4)] uint8: four 2-bit values a byte, the first in the low bits."""
    padded = np.zeros(-(-len(values) // 4) * 4, dtype=np.uint8)
    padded[: len(values)] = values
    quads = padded.reshape(-1, 4)
    return quads[:, 0] | quads[:, 1] << 2 | quads[:, 2] << 4 | quads[:, 3] << 6


def unpack_values(packed: np.ndarray, count: int) -> np.ndarray:
    """[count] int8, the inverse of :func:`pack_values`."""
    shifts = np.array([0, 2, 4, 6], dtype=np.uint8)
    return ((packed[:, None] >> shifts) & 3).reshape(-1)[:count].astype(np.int8)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class EndgameDB:
    """A database folder: ``manifest.json`` and, per slice, ``NAME.wdl`` and ``NAME.dist``."""

    def __init__(self, folder: str | Path, rules: Rules | str | None = None, create: bool = False):
        """Open the database in ``folder`` (of ``rules``, when given); with ``create`` an empty one of
        ``rules`` where there is none yet. ``EndgameError`` for a folder without one, or of other rules."""
        self.folder = Path(folder)
        path = self.folder / MANIFEST
        if path.exists():
            try:
                self.manifest = json.loads(path.read_text())
                stored = get_rules(self.manifest["rules"])
            except (OSError, ValueError, KeyError, TypeError) as e:
                raise EndgameError(f"{path} is not an endgame manifest: {e}") from None
            if rules is not None and get_rules(rules) != stored:
                raise EndgameError(
                    f"{self.folder} holds a database for {stored.name}, not {get_rules(rules).name}"
                )
            self.rules = stored
        elif rules is None or not create:
            raise EndgameError(f"{self.folder} holds no endgame database (no {MANIFEST})")
        else:
            self.rules = get_rules(rules)
            self.manifest = {"format": FORMAT, "rules": self.rules.name, "slices": {}}
        self._cache: dict[Slice, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def slices(self) -> list[Slice]:
        return [Slice.from_name(name) for name in self.manifest["slices"]]

    def holds(self, s: Slice) -> bool:
        return s.name in self.manifest["slices"]

    def write(self, s: Slice, values: np.ndarray, distances: np.ndarray, stats: dict) -> None:
        """Store one solved slice and record it (with ``stats``) in the manifest."""
        dtype = np.uint8 if distances.max(initial=0) < 256 else np.uint16
        packed = pack_values(values).tobytes()
        dist = distances.astype(dtype).tobytes()
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(self.folder / f"{s.name}.wdl", packed)
        atomic_write_bytes(self.folder / f"{s.name}.dist", dist)
        counts = np.bincount(values, minlength=3)
        self.manifest["slices"][s.name] = {
            "positions": len(values),
            "losses": int(counts[LOSS]),
            "draws": int(counts[DRAW]),
            "wins": int(counts[WIN]),
            "max_distance": int(distances.max(initial=0)),
            "distance_dtype": np.dtype(dtype).name,
            "wdl_sha256": _sha256(packed),
            "dist_sha256": _sha256(dist),
            **stats,
        }
        self._cache[s] = (values.astype(np.int8), distances)
        self.save_manifest()

    def save_manifest(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.manifest, indent=1, sort_keys=True) + "\n"
        atomic_write_bytes(self.folder / MANIFEST, text.encode())

    def load(self, s: Slice) -> tuple[np.ndarray, np.ndarray]:
        """([n] int8 values, [n] distances) of slice ``s``, checked against the manifest's sums."""
        if s not in self._cache:
            entry = self.manifest["slices"].get(s.name)
            if entry is None:
                raise EndgameError(f"{self.folder} does not hold slice {s.name}")
            try:
                packed = (self.folder / f"{s.name}.wdl").read_bytes()
                dist = (self.folder / f"{s.name}.dist").read_bytes()
            except OSError as e:
                raise EndgameError(f"cannot read slice {s.name} of {self.folder}: {e.strerror}") from None
            if _sha256(packed) != entry["wdl_sha256"] or _sha256(dist) != entry["dist_sha256"]:
                raise EndgameError(f"slice {s.name} of {self.folder} does not match its checksum")
            values = unpack_values(np.frombuffer(packed, dtype=np.uint8), entry["positions"])
            self._cache[s] = (values, np.frombuffer(dist, dtype=entry["distance_dtype"]))
        return self._cache[s]

    def lookup(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """([B] int8 values, [B] int32 distances) of [B, 4] mover-view positions: ``LOSS`` at
        distance 0 for a mover without pieces, ``OUTSIDE`` for a slice the database lacks."""
        boards = np.asarray(boards, dtype=np.uint32).reshape(-1, 4)
        values = np.full(len(boards), OUTSIDE, dtype=np.int8)
        distances = np.zeros(len(boards), dtype=np.int32)
        counts = slice_of(boards)
        values[counts[:, 0] + counts[:, 1] == 0] = LOSS
        keys, inverse = np.unique(counts, axis=0, return_inverse=True)
        for key_row, key in enumerate(keys):
            s = Slice(*(int(k) for k in key))
            if s.men + s.kings == 0 or not self.holds(s):
                continue
            rows = np.flatnonzero(inverse.reshape(-1) == key_row)
            stored_values, stored_distances = self.load(s)
            index = SliceIndex(self.rules, s).rank(boards[rows])
            values[rows] = stored_values[index]
            distances[rows] = stored_distances[index]
        return values, distances
