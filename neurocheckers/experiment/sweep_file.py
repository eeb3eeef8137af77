"""Sweep files: a list of experiment configs, or a grid of values over them, loaded and checked.

A sweep file names configs (paths relative to itself), optional ``[set]`` values applied to every
run and an optional ``[grid]`` that expands every listed config over all combinations of values::

    [sweep]
    name = "study_grid"                       # default: the file's stem
    configs = ["base.toml", "layers3.toml"]   # and/or base = "base.toml"
    [set]
    epochs = 64
    [grid]
    seed = [0, 1]                             # labels like "base_seed=0"

``experiment.sweep`` runs them.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path
from typing import Any

from neurocheckers.experiment.config import (
    ConfigError,
    ExperimentConfig,
    config_types,
    load_config,
    make_config,
    parse_overrides,
)
from neurocheckers.experiment.files import read_toml

TABLES = ("sweep", "set", "grid")
SWEEP_KEYS = ("name", "configs", "base")
SAFE_NAME = re.compile(r"[^A-Za-z0-9._=+-]")
"""Characters a sweep name or label may not hold (a label's are replaced by "-")."""


class SweepError(ValueError):
    """A sweep file or sweep folder that cannot be used; the message names the bad entry or value."""


@dataclasses.dataclass(frozen=True)
class SweepEntry:
    """One run of a sweep: its label (unique in the sweep, also the config's name) and config."""

    label: str
    config: ExperimentConfig


@dataclasses.dataclass(frozen=True)
class Sweep:
    """A named list of entries, in the order they are run."""

    name: str
    entries: tuple[SweepEntry, ...]


# --- loading -----------------------------------------------------------------------------------


def _format_value(value: Any) -> str:
    """A grid value as it appears in a label: TOML-like, filesystem-safe."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return SAFE_NAME.sub("-", str(value))


def grid_entries(config: ExperimentConfig, grid: dict[str, list[Any]]) -> tuple[SweepEntry, ...]:
    """``config`` expanded over every combination of ``grid`` values (first key outermost), each
    labelled ``{name}_{key}={value}...``; an empty grid gives the config itself."""
    if not grid:
        return (SweepEntry(config.name, config),)
    entries = []
    for combo in itertools.product(*grid.values()):
        values = dict(zip(grid, combo, strict=True))
        label = config.name + "".join(f"_{k}={_format_value(v)}" for k, v in values.items())
        try:
            entries.append(SweepEntry(label, make_config({**config.to_dict(), **values, "name": label})))
        except ConfigError as e:
            raise SweepError(f"sweep entry {label!r}: {e}") from None
    return tuple(entries)


def _table(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    table = data.get(key, {})
    if not isinstance(table, dict):
        raise SweepError(f"{key} in {path} must be a table ([{key}]), got {table!r}")
    return table


def _check_keys(table: dict[str, Any], where: str, path: Path) -> None:
    """Reject keys that are not config fields, and ``name`` (entries are named by the sweep)."""
    known = [name for name in config_types() if name != "name"]  # a loaded plug-in's keys too
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise SweepError(
            f"unknown config key(s) in [{where}] of {path}: {', '.join(unknown)}; "
            f"known keys: {', '.join(known)}"
        )


def load_sweep(path: str | Path) -> Sweep:
    """Read a sweep file; every entry's config is built and validated now, before anything runs."""
    path = Path(path)
    data = read_toml(path, "sweep file", SweepError)
    unknown = sorted(set(data) - set(TABLES))
    if unknown:
        raise SweepError(
            f"unknown key(s) in {path}: {', '.join(unknown)}; a sweep file has [sweep], [set] and [grid]"
        )
    head = _table(data, "sweep", path)
    unknown = sorted(set(head) - set(SWEEP_KEYS))
    if unknown:
        raise SweepError(
            f"unknown key(s) in [sweep] of {path}: {', '.join(unknown)}; known keys: {', '.join(SWEEP_KEYS)}"
        )
    name = head.get("name", path.stem)
    if not isinstance(name, str) or not name or SAFE_NAME.search(name):
        raise SweepError(f"sweep name in {path} must be a word of letters, digits, . _ = + -, got {name!r}")
    configs = head.get("configs", [])
    if not isinstance(configs, list) or not all(isinstance(c, str) for c in configs):
        raise SweepError(f"configs in {path} must be a list of file names, got {configs!r}")
    base = head.get("base")
    if base is not None and not isinstance(base, str):
        raise SweepError(f"base in {path} must be a file name, got {base!r}")
    refs = [*configs, *([base] if base is not None else [])]
    if not refs:
        raise SweepError(f'sweep {path} is empty: give [sweep] configs = [...] or base = "..."')

    overrides = _table(data, "set", path)
    _check_keys(overrides, "set", path)
    grid = _table(data, "grid", path)
    _check_keys(grid, "grid", path)
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SweepError(f"grid.{key} in {path} must be a non-empty list of values, got {values!r}")
        for value in values:
            if not isinstance(value, str | int | float | bool):
                raise SweepError(
                    f"grid.{key} in {path}: values must be numbers, strings or booleans, got {value!r}"
                )

    entries: list[SweepEntry] = []
    sources: dict[str, str] = {}
    for ref in refs:
        try:
            config = load_config(path.parent / ref)  # relative to the sweep file, not the cwd
            config = make_config({**config.to_dict(), **overrides})
        except ConfigError as e:
            raise SweepError(f"sweep {path}, config {ref!r}: {e}") from None
        for entry in grid_entries(config, grid):
            if entry.label in sources:
                raise SweepError(
                    f"sweep {path}: two entries are labelled {entry.label!r} (from {sources[entry.label]!r} "
                    f"and {ref!r}); give each config its own name"
                )
            sources[entry.label] = ref
            entries.append(entry)
    return Sweep(name, tuple(entries))


def with_epochs(sweep: Sweep, epochs: int) -> Sweep:
    """Every entry set to run ``epochs`` epochs (stored in its config, so a resume agrees)."""
    try:
        return dataclasses.replace(
            sweep,
            entries=tuple(
                dataclasses.replace(e, config=make_config({**e.config.to_dict(), "epochs": epochs}))
                for e in sweep.entries
            ),
        )
    except ConfigError as e:
        raise SweepError(f"--epochs: {e}") from None


def with_overrides(sweep: Sweep, items: list[str]) -> Sweep:
    """Every entry with the ``--set key=value`` ``items`` applied (stored in its config, so a resume
    with other values is refused); ``SweepError`` naming a bad item."""
    try:
        values = parse_overrides(items)
        entries = tuple(
            dataclasses.replace(e, config=make_config({**e.config.to_dict(), **values}))
            for e in sweep.entries
        )
    except ConfigError as e:
        raise SweepError(f"--set: {e}") from None
    return dataclasses.replace(sweep, entries=entries)
