"""The one registry of strategies: each ``StrategyEntry`` owns a strategy's name, its kind, the config
sections it reads, its settings dataclass, its validation, its metric columns, its summary line, its
defaults and its algorithm. The config, the trainers, the run folder, the run loop and the command
line read names and behaviour from here; no other module lists strategy names.

A new strategy is one module and one line::

    # my_strategy.py: an evolution strategy is a boss_ga.Generation (ask/tell around the shared
    # "play the boss" fitness step); a learner is a trainers.Learner
    MY_GENERATION = Generation(init=..., ask=..., tell=...)
    register(StrategyEntry("my_strategy", EVOLUTION, algorithm=MY_GENERATION))

The built-in strategies' lines are in ``strategy_entries`` (loaded on the first lookup). A user's
strategy needs no edit of the package: its module is a plug-in, imported (which registers it) through
the Python entry-point group ``neurocheckers.strategies`` of an installed package (loaded with the
built-ins), or named by a config's ``plugins`` key / ``evolve --plugin`` (``load_plugins``). No JAX
here: the algorithm and settings of a built-in entry are ``"module:name"`` references, imported only
when a run builds its trainer.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.metadata
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from neurocheckers.formats import FITNESS_COLUMNS, METRIC_COLUMNS, STRENGTH_COLUMNS

EVOLUTION = "evolution"
"""A strategy that evolves a population around the boss (``boss_ga.Generation``); its lineage is the
bosses."""
LEARNER = "learner"
"""A strategy that trains one network (``trainers.Learner``); its lineage is its snapshots."""
KINDS = (EVOLUTION, LEARNER)

GAME_COLUMNS = ("games", "wins", "draws", "losses", "plies", "boss_changed", "boss_id", "boss_age")
"""What every strategy's epoch fills: its games, and its lineage (a boss, or a learner's snapshot)."""
EVOLUTION_COLUMNS = (
    *FITNESS_COLUMNS,
    "best_member",
    "best_points",
    "confirm_score",
    "confirm_low",
    "hall_of_fame_score",
    "benchmark_score",
    *GAME_COLUMNS,
)
"""What the shared fitness step (``boss_ga.play_the_boss``) fills in every evolution epoch (the
selection columns stay empty with their settings off): an evolution entry's default columns."""
KIND_COLUMNS = {EVOLUTION: EVOLUTION_COLUMNS, LEARNER: GAME_COLUMNS}
"""The ``metric_columns`` of an entry that gives none, by kind."""
KIND_UNLOGGED = {EVOLUTION: ("promoted_points",), LEARNER: ()}
"""What every epoch of a kind returns besides its columns: an evolution epoch's promoted boss's points
(the lineage's ``points``)."""
RUN_LOOP_COLUMNS = ("epoch", *STRENGTH_COLUMNS, "plies_per_second", "wall_seconds")
"""The ``metrics.csv`` columns the run loop fills itself (the epoch, the strength probe, timing)."""
PLUGIN_GROUP = "neurocheckers.strategies"
"""The entry-point group whose entries (``name = "module"`` or ``"module:ENTRY"``) are plug-ins."""


class PluginError(ValueError):
    """A plug-in that cannot be loaded; the one-line message names it."""


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
      sections: the config sections of strategy-specific keys it reads, in the config's order: each a
        ``sections.Section`` class (or its ``"module:Class"`` reference), or the name of one that another
        entry declares (``"boss_ga"``). The config is built from every registered entry's sections
        (``experiment.config.config_class``), so a strategy's own keys are one class in its module: a
        key of such a section set away from its default is refused by the strategies that do not read
        it, and a section's ``problems(config) -> list[str]`` is asked for what is impossible in it.
      validate: ``validate(config)``: raises ``ConfigError`` for values this strategy cannot run.
      metric_columns: the ``metrics.csv`` columns its epochs fill (besides ``RUN_LOOP_COLUMNS``);
        None: its kind's (``KIND_COLUMNS``). A column ``metrics.csv`` lacks is added after the
        others in this strategy's runs.
      unlogged: other metrics its epochs return, kept out of ``metrics.csv`` (diagnostics); an epoch
        that returns a name neither here nor among its columns stops the run, naming it.
      summary: ``summary(config, simulations) -> str``: the run's one-line description.
      defaults: config values it implies where the config gives none.
      pure_epoch: whether its epoch is a pure function of (state, key) with nothing on the host
        between epochs: the run loop may then scan ``epochs_per_call`` epochs in one device call and
        vmap the seeds of ``evolve --seeds`` (``experiment.run``).
      legacy: keys of older configs (``section.key``) whose value meant this strategy: a config that
        gives one that value (and no other strategy) is read as this strategy, any other value of
        it is dropped.
      doc: one line for ``neurocheckers strategies``.
    """

    name: str
    kind: str
    algorithm: Any
    settings: Any = None
    sections: tuple[str, ...] = ()
    validate: Callable[[Any], None] | None = None
    metric_columns: tuple[str, ...] | None = None
    unlogged: tuple[str, ...] = ()
    summary: Callable[[Any, int], str] | None = None
    defaults: Mapping[str, Any] = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))
    legacy: Mapping[str, Any] = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))
    pure_epoch: bool = True
    doc: str = ""

    def __post_init__(self) -> None:
        if not self.name or not self.name.isidentifier():
            raise ValueError(f"a strategy name is one word (letters, digits, _), got {self.name!r}")
        if self.kind not in KINDS:
            kinds = ", ".join(KINDS)
            raise ValueError(f"strategy {self.name!r}: kind must be one of {kinds}, got {self.kind!r}")
        columns = KIND_COLUMNS[self.kind] if self.metric_columns is None else tuple(self.metric_columns)
        object.__setattr__(self, "metric_columns", columns)
        object.__setattr__(self, "unlogged", tuple(self.unlogged))
        for column in (*columns, *self.unlogged):
            if not column.isidentifier():
                raise ValueError(
                    f"strategy {self.name!r}: a metric is one word (letters, digits, _), got {column!r}"
                )
        taken = [c for c in columns if c in RUN_LOOP_COLUMNS]
        if taken:
            raise ValueError(f"strategy {self.name!r}: the run loop fills metrics.csv column {taken[0]!r}")
        for name in ("defaults", "legacy"):
            object.__setattr__(self, name, types.MappingProxyType(dict(getattr(self, name))))

    def metrics_header(self) -> tuple[str, ...]:
        """The ``metrics.csv`` columns of this strategy's runs: ``METRIC_COLUMNS`` (every built-in
        strategy's, so their files stay as they were), then its own columns the file has no place for."""
        return METRIC_COLUMNS + tuple(c for c in self.metric_columns if c not in METRIC_COLUMNS)

    def check_metrics(self, names: Iterable[str]) -> None:
        """``ValueError`` naming a metric an epoch returned that this entry does not declare (in
        ``metric_columns`` or ``unlogged``; an evolution epoch's promoted points are declared)."""
        declared = {*self.metric_columns, *self.unlogged, *KIND_UNLOGGED[self.kind]}
        unknown = sorted(set(names) - declared)
        if unknown:
            raise ValueError(
                f"strategy {self.name!r}: its epoch returned the metric {unknown[0]!r}, which its registry "
                "entry does not declare: add it to metric_columns (written to metrics.csv) or unlogged"
            )

    def loaded_algorithm(self) -> Any:
        """The algorithm, imported when the entry holds its reference."""
        return resolve(self.algorithm)

    def loaded_settings(self) -> type:
        """The settings dataclass, imported when the entry holds its reference; an evolution entry
        that names none gets ``evolution.settings.EvolutionSettings`` with its own sections' keys
        (those the class lacks) added, so its algorithm reads them as ``setup.settings.KEY``."""
        if self.settings is not None:
            return resolve(self.settings)
        base = resolve("neurocheckers.evolution.settings:EvolutionSettings")
        return settings_with(base, tuple(s for s in self.section_classes() if s not in base.__mro__))

    def section_classes(self) -> tuple[type, ...]:
        """The ``sections`` as classes (a reference imported, a name found among the other entries')."""
        return tuple(section_class(item) for item in self.sections)

    def section_names(self) -> tuple[str, ...]:
        """The names of the config sections it reads (``boss_ga``, ``td_lambda`` ...)."""
        return tuple(item if _is_name(item) else resolve(item).SECTION for item in self.sections)


_REGISTRY: dict[str, StrategyEntry] = {}


def _is_name(item: Any) -> bool:
    return isinstance(item, str) and ":" not in item


def section_class(item: Any) -> type:
    """The ``sections.Section`` class of an entry's ``sections`` item: the class, its reference, or
    the name of a section another registered entry declares; ``ValueError`` naming one that is none."""
    if not _is_name(item):
        found = resolve(item)
        is_section = isinstance(found, type) and dataclasses.is_dataclass(found)
        if not (is_section and getattr(found, "SECTION", None)):
            raise ValueError(f"a strategy's section is a sections.Section class, got {item!r}")
        return found
    for entry in _REGISTRY.values():
        for other in entry.sections:
            if not _is_name(other) and item == resolve(other).SECTION:
                return resolve(other)
    raise ValueError(f"no registered strategy declares the config section {item!r}")


def declared_sections(builtin_only: bool = False) -> tuple[type, ...]:
    """Every section class the registered entries declare, each once, in registration order: the
    strategies' part of the experiment config (the built-ins' alone with ``builtin_only``)."""
    if builtin_only:
        _load_builtin_entries()
    else:
        _load_builtins()
    found: dict[type, None] = {}
    for entry in _REGISTRY.values():
        for item in entry.sections:
            if not _is_name(item):
                found[section_class(item)] = None
    return tuple(found)


@functools.cache
def settings_with(base: type, sections: tuple[type, ...]) -> type:
    """The frozen dataclass ``base`` with the keys of ``sections`` added (``base`` when there are
    none); one class for each pair, so that settings built twice compare and hash alike."""
    if not sections:
        return base
    name = "".join(s.__name__ for s in sections) + base.__name__
    return dataclasses.make_dataclass(name, [], bases=(base, *sections), frozen=True)


def resolve(reference: Any) -> Any:
    """``reference`` itself, or the object a ``"module:name"`` string names (imported now)."""
    if not isinstance(reference, str):
        return reference
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def register(entry: StrategyEntry, replace: bool = False) -> StrategyEntry:
    """Add ``entry`` to the registry; ``ValueError`` when its name is taken (unless ``replace``), or
    when a section of it is not a section, or declares a key the config has already."""
    _load_builtin_entries()
    if entry.name in _REGISTRY and not replace and _REGISTRY[entry.name] != entry:
        raise ValueError(f"strategy {entry.name!r} is already registered")
    _check_sections(entry)
    _REGISTRY[entry.name] = entry
    return entry


def _keys(section: type) -> set[str]:
    return {f.name for f in dataclasses.fields(section)}


def _check_sections(entry: StrategyEntry) -> None:
    """``ValueError`` for a section of ``entry`` that is none, or whose name or keys another
    registered section (or the config's own, ``sections.CORE_SECTIONS``) holds already."""
    from neurocheckers.sections import CORE_SECTIONS, sections_of

    try:
        classes = entry.section_classes()
    except ValueError as e:
        raise ValueError(f"strategy {entry.name!r}: {e}") from None
    others = {c for other in _REGISTRY.values() if other.name != entry.name for c in other.section_classes()}
    for section in classes:
        if section in others:
            continue
        for other in (*CORE_SECTIONS, *others):
            clash = _keys(section) & _keys(other)
            if clash or section.SECTION in sections_of(other):
                what = f"key {sorted(clash)[0]!r}" if clash else f"section name [{section.SECTION}]"
                raise ValueError(
                    f"strategy {entry.name!r}: its section {section.__name__} takes the {what}, "
                    f"which {other.__name__} holds already"
                )


def load_plugins(modules: Iterable[str]) -> None:
    """Import each plug-in module (``"my_pkg.my_strategy"``), which registers its strategies; one
    already imported is not imported again. ``PluginError`` naming a module that cannot be imported."""
    for module in modules:
        if not all(part.isidentifier() for part in module.split(".")):
            raise PluginError(f"a plug-in is a module name like my_pkg.my_strategy, got {module!r}")
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name is not None and (module == e.name or module.startswith(e.name + ".")):
                raise PluginError(
                    f"plug-in module {module!r} not found (install it, or put its folder on PYTHONPATH)"
                ) from None
            raise PluginError(f"plug-in module {module!r} cannot be imported: {e}") from None
        except PluginError:
            raise
        except Exception as e:  # the plug-in's own error, told in one line
            raise PluginError(f"plug-in module {module!r} failed to load: {type(e).__name__}: {e}") from None


def load_entry_points() -> None:
    """Load every plug-in of the installed packages' ``PLUGIN_GROUP`` entry points: a module (whose
    import registers its strategies) or a ``StrategyEntry`` (registered here). ``PluginError`` naming
    the entry point that cannot be loaded."""
    for point in importlib.metadata.entry_points(group=PLUGIN_GROUP):
        where = f"entry point {point.name} = {point.value!r} of {PLUGIN_GROUP}"
        try:
            loaded = point.load()
        except Exception as e:
            raise PluginError(f"plug-in {where} cannot be loaded: {type(e).__name__}: {e}") from None
        if isinstance(loaded, StrategyEntry):
            register(loaded)
        elif not isinstance(loaded, types.ModuleType):
            raise PluginError(
                f"plug-in {where} names a {type(loaded).__name__}, not a module or a StrategyEntry"
            )


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
"""Whether the built-in entries are registered (True while they load: their ``register`` calls)."""
_LOADED = False
"""Whether the built-ins and the installed plug-ins are registered (True while they are loading too:
their own ``register`` calls look the registry up)."""


def _load_builtins() -> None:
    """Register the built-in strategies (``strategy_entries``), then the installed plug-ins
    (``load_entry_points``), once, before the first lookup; after a failure (a plug-in that cannot
    be loaded) the next lookup tries again, and names it again."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    try:
        _load_builtin_entries()
        load_entry_points()  # after every built-in line: `neurocheckers strategies` lists them first
    except BaseException:
        _LOADED = False
        raise


def _load_builtin_entries() -> None:
    """Register the built-in strategies (``strategy_entries``) once, and nothing else: the config
    class is built from their sections when its module is imported, before any plug-in may load."""
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    try:
        importlib.import_module("neurocheckers.experiment.strategy_entries")
    except BaseException:
        _BUILTINS_LOADED = False
        raise
