"""The one registry of strategies: each ``StrategyEntry`` owns a strategy's name, its kind, the config
sections it reads, its settings dataclass, its validation, its metric columns, its summary line, its
defaults and its algorithm. The config, the trainers, the run folder, the run loop and the command
line read names and behaviour from here; no other module lists strategy names.

A new strategy is one module and one line::

    # my_strategy.py: an evolution strategy is a boss_ga.Generation (ask/tell around the shared
    # "play the boss" fitness step); a learner is a trainers.Learner
    MY_GENERATION = Generation(init=..., ask=..., tell=...)
    register(StrategyEntry("my_strategy", EVOLUTION, algorithm=MY_GENERATION))

The built-in strategies' lines are in ``strategy_entries`` (loaded on the first lookup). No JAX here:
the algorithm and settings of a built-in entry are ``"module:name"`` references, imported only when a
run builds its trainer.
"""

from __future__ import annotations

import dataclasses
import importlib
import types
from collections.abc import Callable, Mapping
from typing import Any

from neurocheckers.formats import METRIC_COLUMNS

EVOLUTION = "evolution"
"""A strategy that evolves a population around the boss (``boss_ga.Generation``); its lineage is the
bosses."""
LEARNER = "learner"
"""A strategy that trains one network (``trainers.Learner``); its lineage is its snapshots."""
KINDS = (EVOLUTION, LEARNER)


@dataclasses.dataclass(frozen=True)
class StrategyEntry:
    """One strategy as every layer above the algorithms sees it.

    Fields:
      name: the config's ``strategy`` value.
      kind: ``EVOLUTION`` or ``LEARNER``.
      algorithm: what runs it, or its ``"module:name"``: a ``boss_ga.Generation`` (evolution) or a
        ``trainers.Learner`` (learner).
      settings: the frozen settings dataclass built from the config's keys of the same names, or its
        ``"module:name"``; None: ``evolution.settings.EvolutionSettings`` (evolution only).
      sections: the config sections of strategy-specific keys it reads (``boss_ga``, ``td_lambda``,
        ``dqn``); a key of another such section set away from its default is refused.
      validate: ``validate(config)``: raises ``ConfigError`` for values this strategy cannot run.
      metric_columns: the ``metrics.csv`` columns its epochs fill (besides ``epoch`` and timing).
      summary: ``summary(config, simulations) -> str``: the run's one-line description.
      defaults: config values it implies where the config gives none.
      legacy: keys of older configs (``section.key``) whose value meant this strategy: a config that
        gives one that value (and no other strategy) is read as this strategy, any other value of
        it is dropped.
    """

    name: str
    kind: str
    algorithm: Any
    settings: Any = None
    sections: tuple[str, ...] = ()
    validate: Callable[[Any], None] | None = None
    metric_columns: tuple[str, ...] = ()
    summary: Callable[[Any, int], str] | None = None
    defaults: Mapping[str, Any] = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))
    legacy: Mapping[str, Any] = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))

    def __post_init__(self) -> None:
        if not self.name or not self.name.isidentifier():
            raise ValueError(f"a strategy name is one word (letters, digits, _), got {self.name!r}")
        if self.kind not in KINDS:
            kinds = ", ".join(KINDS)
            raise ValueError(f"strategy {self.name!r}: kind must be one of {kinds}, got {self.kind!r}")
        unknown = [c for c in self.metric_columns if c not in METRIC_COLUMNS]
        if unknown:
            raise ValueError(f"strategy {self.name!r}: metrics.csv has no column {unknown[0]!r}")
        for name in ("defaults", "legacy"):
            object.__setattr__(self, name, types.MappingProxyType(dict(getattr(self, name))))

    def loaded_algorithm(self) -> Any:
        """The algorithm, imported when the entry holds its reference."""
        return resolve(self.algorithm)

    def loaded_settings(self) -> type:
        """The settings dataclass, imported when the entry holds its reference."""
        if self.settings is None:
            return resolve("neurocheckers.evolution.settings:EvolutionSettings")
        return resolve(self.settings)


_REGISTRY: dict[str, StrategyEntry] = {}


def resolve(reference: Any) -> Any:
    """``reference`` itself, or the object a ``"module:name"`` string names (imported now)."""
    if not isinstance(reference, str):
        return reference
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def register(entry: StrategyEntry, replace: bool = False) -> StrategyEntry:
    """Add ``entry`` to the registry; ``ValueError`` when its name is taken (unless ``replace``)."""
    _load_builtins()
    if entry.name in _REGISTRY and not replace and _REGISTRY[entry.name] != entry:
        raise ValueError(f"strategy {entry.name!r} is already registered")
    _REGISTRY[entry.name] = entry
    return entry


def unregister(name: str) -> None:
    """Remove the strategy ``name`` (a plug-in's test cleans up with it)."""
    _REGISTRY.pop(name, None)


def strategy(name: str) -> StrategyEntry:
    """The entry of ``name``; ``KeyError`` naming the registered strategies."""
    _load_builtins()
    if name not in _REGISTRY:
        raise KeyError(f"strategy must be one of {', '.join(_REGISTRY)}, got {name!r}")
    return _REGISTRY[name]


def strategy_names(kind: str | None = None) -> tuple[str, ...]:
    """The registered names, in registration order (of one ``kind``, or all)."""
    _load_builtins()
    return tuple(name for name, entry in _REGISTRY.items() if kind is None or entry.kind == kind)


def legacy_keys() -> dict[str, tuple[str, Any]]:
    """Every registered ``legacy`` key (``section.key``) with the strategy it names and its value."""
    _load_builtins()
    return {key: (name, value) for name, entry in _REGISTRY.items() for key, value in entry.legacy.items()}


def is_learner(name: str) -> bool:
    """Whether the strategy ``name`` is a learner (its lineage is its snapshots)."""
    return strategy(name).kind == LEARNER


_BUILTINS_LOADED = False


def _load_builtins() -> None:
    """Register the built-in strategies (``strategy_entries``) once, before the first lookup."""
    global _BUILTINS_LOADED
    if not _BUILTINS_LOADED:
        _BUILTINS_LOADED = True
        importlib.import_module("neurocheckers.experiment.strategy_entries")
