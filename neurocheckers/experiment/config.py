"""Experiment configuration: a frozen dataclass, loaded from TOML, with one-line field docs."""

from __future__ import annotations

import dataclasses
import functools
import math
import tomllib
import typing
from pathlib import Path
from typing import Any

from neurocheckers.experiment.config_checks import (
    LOSSES,
    SEARCHES,
    validate_evaluator,
    validate_learner,
    validate_sections,
    validate_selection,
)
from neurocheckers.experiment.files import ConfigError, read_toml
from neurocheckers.experiment.strategy_registry import (
    LEARNER,
    PluginError,
    declared_sections,
    legacy_keys,
    load_plugins,
    strategy,
    strategy_names,
)
from neurocheckers.rules.presets import PRESETS
from neurocheckers.search.limits import MAX_ALPHABETA_DEPTH, MAX_SIMULATIONS
from neurocheckers.sections import CORE_SECTIONS, declaring_class, sections_of
from neurocheckers.stats import check_seed

if typing.TYPE_CHECKING:
    from neurocheckers.evolution.settings import EvolutionSettings


def __getattr__(name: str) -> tuple[str, ...]:
    """``STRATEGIES`` (every registered strategy) and ``LEARNERS`` (those that train one network by
    self-play), read from the strategy registry when asked (a plug-in may have registered more)."""
    if name == "STRATEGIES":
        return strategy_names()
    if name == "LEARNERS":
        return strategy_names(LEARNER)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _config_bases(strategy_sections: tuple[type, ...]) -> tuple[type, ...]:
    """The bases of a config class: its sections, last first (a dataclass's fields follow its bases
    from the last), so that its keys run ``CORE_SECTIONS`` then ``strategy_sections`` in order."""
    return (*reversed(strategy_sections), *reversed(CORE_SECTIONS))


@dataclasses.dataclass(frozen=True)
class ExperimentConfig(*_config_bases(declared_sections(builtin_only=True))):
    """One experiment: the config's own sections (``sections.CORE_SECTIONS``) and every built-in
    strategy's (its registry entry's ``sections``), each key declared there once. Every field can be
    set in TOML (flat, or in its section's table) or with ``--set key=value`` (or ``--set
    section.key=value``). A config whose plug-ins declare sections of their own is an instance of a
    subclass with their keys too (``config_class``)."""

    def __post_init__(self) -> None:
        validate(self)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def __eq__(self, other: object) -> bool:
        """Configs are equal when their keys and values are: a plug-in's config class is made anew
        where its module is imported again (a folder's config read in a later process)."""
        if not isinstance(other, ExperimentConfig):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def evolution_settings(self, simulations: int | None = None) -> EvolutionSettings:
        """What the evolution layer needs of this config (its strategy's keys among them);
        ``simulations`` overrides the count (e.g. one calibrated from ``seconds_per_move``)."""
        entry = strategy(self.strategy)
        settings = entry.loaded_settings()  # EvolutionSettings, with a plug-in's own keys
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        fields = {f.name: fields[f.name] for f in dataclasses.fields(settings) if f.name in fields}
        if simulations is not None:
            fields["simulations"] = int(simulations)
        return settings(**fields, generation=entry.loaded_algorithm())


@functools.cache
def _config_with(sections: tuple[type, ...]) -> type:
    """``ExperimentConfig`` with the keys of ``sections`` after its own (itself when none)."""
    if not sections:
        return ExperimentConfig
    return dataclasses.make_dataclass(
        "ExperimentConfig",
        [],
        bases=(*reversed(sections), ExperimentConfig),
        frozen=True,
        eq=False,  # ExperimentConfig's, by keys and values (not the first section's, by its class)
        namespace={
            "__doc__": ExperimentConfig.__doc__,
            "__module__": __name__,
            "__eq__": ExperimentConfig.__eq__,
            "__hash__": ExperimentConfig.__hash__,
        },
    )


def config_class() -> type[ExperimentConfig]:
    """The config class of the strategies registered now: ``ExperimentConfig``, or its subclass with
    the keys of the sections that plug-ins declare (in the order they were registered); ``ConfigError``
    naming an installed plug-in that cannot be loaded."""
    own = set(ExperimentConfig.__mro__)
    try:
        declared = declared_sections()  # the installed plug-ins' too, loaded on the first call
    except PluginError as e:
        raise ConfigError(str(e)) from None
    return _config_with(tuple(s for s in declared if s not in own))


def config_types() -> dict[str, Any]:
    """Every config key of ``config_class`` with its declared type."""
    return {f.name: f.type for f in dataclasses.fields(config_class())}


@functools.cache
def _config_hints(config_type: type) -> dict[str, type]:
    """A config class's field types, resolved once (resolving them is slow: listing runs validates
    every run folder's config)."""
    return typing.get_type_hints(config_type)


def _type_of(name: str, config_type: type | None = None) -> type:
    return _config_hints(config_type or config_class())[name]


def validate(config: ExperimentConfig) -> None:
    """Raise ``ConfigError`` for wrong types or impossible values, before anything is compiled."""
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        expected = _type_of(f.name, type(config))
        ok = isinstance(value, expected) and not (expected is int and isinstance(value, bool))
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            raise ConfigError(f"{f.name} must be {expected.__name__}, got {value!r}")
        if expected is float and not math.isfinite(value):
            raise ConfigError(f"{f.name} must be a finite number, got {value!r}")

    def need(condition: bool, message: str) -> None:
        if not condition:
            raise ConfigError(message)

    c = config
    need(c.rules in PRESETS, f"rules must be one of {', '.join(PRESETS)}, got {c.rules!r}")
    need(c.layers >= 1, f"layers must be >= 1, got {c.layers}")
    need(c.width >= 1, f"width must be >= 1, got {c.width}")
    need(
        c.population >= 4 and c.population % 4 == 0,
        f"population must be a positive multiple of 4, got {c.population}",
    )
    need(
        c.games_per_epoch >= 2 and c.games_per_epoch % 2 == 0,
        f"games_per_epoch must be even and >= 2, got {c.games_per_epoch}",
    )
    need(c.epochs >= 1, f"epochs must be >= 1, got {c.epochs}")
    try:
        check_seed(c.seed)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    need(
        1 <= c.simulations <= MAX_SIMULATIONS,
        f"simulations must be in 1..{MAX_SIMULATIONS}, got {c.simulations}",
    )
    # Games are numbered member x games_per_epoch + game in int32.
    need(
        c.population * c.games_per_epoch < 2**31,
        f"population x games_per_epoch must be below 2**31, got {c.population} x {c.games_per_epoch}",
    )
    need(c.seconds_per_move >= 0, f"seconds_per_move must be >= 0, got {c.seconds_per_move}")
    need(c.mutation_rate >= 0, f"mutation_rate must be >= 0, got {c.mutation_rate}")
    need(c.learning_rate >= 0, f"learning_rate must be >= 0, got {c.learning_rate}")
    need(c.train_steps >= 0, f"train_steps must be >= 0, got {c.train_steps}")
    need(c.loss in LOSSES, f"loss must be one of {', '.join(LOSSES)}, got {c.loss!r}")
    load_config_plugins(c.plugins)  # before the strategy is looked up: they may register it
    need(
        c.strategy in strategy_names(),
        f"strategy must be one of {', '.join(strategy_names())}, got {c.strategy!r}",
    )
    need(
        0 < c.promotion_threshold <= 1, f"promotion_threshold must be in (0, 1], got {c.promotion_threshold}"
    )
    need(c.opening_plies >= 0, f"opening_plies must be >= 0, got {c.opening_plies}")
    need(c.max_plies >= 1, f"max_plies must be >= 1, got {c.max_plies}")
    need(c.checkpoint_every >= 1, f"checkpoint_every must be >= 1, got {c.checkpoint_every}")
    need(c.epochs_per_call >= 1, f"epochs_per_call must be >= 1, got {c.epochs_per_call}")
    need(
        c.epochs_per_call == 1 or strategy(c.strategy).pure_epoch,
        f"epochs_per_call = {c.epochs_per_call}: strategy {c.strategy!r} does host work between epochs, "
        "so its epochs cannot run in one call; use 1",
    )
    need(c.search in SEARCHES, f"search must be one of {', '.join(SEARCHES)}, got {c.search!r}")
    need(1 <= c.depth <= MAX_ALPHABETA_DEPTH, f"depth must be in 1..{MAX_ALPHABETA_DEPTH}, got {c.depth}")
    need(
        c.search == "mcts" or c.seconds_per_move == 0,
        f"seconds_per_move calibrates MCTS simulations: it must be 0 with search = {c.search!r}",
    )
    need(bool(c.name) and "/" not in c.name, f"name must be a non-empty word without '/', got {c.name!r}")
    validate_selection(c)
    validate_learner(c)
    validate_evaluator(c)
    validate_sections(c)
    entry = strategy(c.strategy)
    if entry.validate is not None:
        entry.validate(c)  # the strategy's own rules (strategy_entries)


def _parse_value(key: str, text: str) -> Any:
    """A ``--set`` value: parsed as TOML when possible (numbers, booleans), else a plain string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _read_toml(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    path = path.resolve()
    if path in seen:
        raise ConfigError(f"config inheritance loops through {path}")
    data = flat_keys(read_toml(path, "config file", ConfigError), str(path))
    parent = data.pop("inherit", None)
    if parent is None:
        return data
    if not isinstance(parent, str):
        raise ConfigError(f"inherit in {path} must be a file name, got {parent!r}")
    base = _read_toml(path.parent / parent, seen + (path,))
    base.update(data)
    return base


def section_of(key: str, config_type: type | None = None) -> str:
    """The section (``sections``) that declares config ``key`` (of ``config_type``, default
    ``config_class()``)."""
    return declaring_class(config_type or config_class(), key).SECTION


def section_names() -> tuple[str, ...]:
    """The sections, in the config's order: run, game, network, search, learning, boss_ga, td_lambda,
    dqn, pbt, then the plug-ins'."""
    return tuple(sections_of(config_class()))


def flat_keys(data: dict[str, Any], where: str) -> dict[str, Any]:
    """``data`` with its section tables (``[boss_ga]``) and dotted keys (``boss_ga.population``, from
    ``--set``) made flat keys; ``ConfigError`` naming a key put in a section that does not hold it."""
    flat: dict[str, Any] = {}
    config_type = config_class()  # once: each call looks the registry up
    names, types = tuple(sections_of(config_type)), {f.name: f.type for f in dataclasses.fields(config_type)}
    for key, value in data.items():
        if isinstance(value, dict) and key in names:
            items = [(f"{key}.{k}", v) for k, v in value.items()]
        elif "." in key:
            items = [(key, value)]
        else:
            flat[key] = value
            continue
        for dotted, item in items:
            section, _, name = dotted.rpartition(".")
            if section not in names:
                known = ", ".join(names)
                raise ConfigError(f"{dotted!r} in {where}: no section {section!r}; sections: {known}")
            if dotted in legacy_keys():
                flat[name] = item
                continue
            if name not in types or section_of(name, config_type) != section:
                home = f"; it is a key of [{section_of(name, config_type)}]" if name in types else ""
                raise ConfigError(f"{dotted!r} in {where}: [{section}] has no key {name!r}{home}")
            flat[name] = item
    return flat


def check_strategy_keys(values: dict[str, Any], name: str) -> None:
    """``ConfigError`` for a key given a value other than its default in a strategy-specific section
    (one some registered strategy reads: ``boss_ga``, ``td_lambda``, ``dqn``) that the strategy
    ``name`` does not read."""
    specific = {section for other in strategy_names() for section in strategy(other).section_names()}
    unread = specific - set(strategy(name).section_names())
    config_type, types = config_class(), config_types()
    for key, value in values.items():
        section = section_of(key, config_type) if key in types else None
        if section in unread and value != getattr(config_type, key):
            raise ConfigError(
                f"{key} = {value!r} is a key of [{section}], which strategy {name!r} does not read"
            )


def read_legacy_keys(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with the keys of older configs (the registry's ``legacy`` keys) read as today's:
    e.g. ``learner_pool = true`` with the default strategy (the boss GA) is the strategy that flag
    became (the memetic pool); any other value of such a key did nothing, and is dropped."""
    values = dict(values)
    default = values.get("strategy", ExperimentConfig.strategy) == ExperimentConfig.strategy
    for dotted, (name, meaning) in legacy_keys().items():
        key = dotted.rpartition(".")[2]
        if key not in values:
            continue
        given = values.pop(key)
        if type(given) is not type(meaning):
            raise ConfigError(f"{key} must be {type(meaning).__name__}, got {given!r}")
        if given == meaning and default:
            values["strategy"] = name
    return values


def plugin_modules(text: str) -> tuple[str, ...]:
    """The module names of a config's ``plugins`` (comma-separated)."""
    return tuple(name.strip() for name in text.split(",") if name.strip())


def load_config_plugins(text: Any) -> None:
    """Import the installed plug-ins (entry points, once) and the modules a config's ``plugins``
    names (``strategy_registry.load_plugins``); ``ConfigError`` naming one that cannot be imported.
    A value of another type is left for ``validate`` to name."""
    try:
        strategy_names()  # the first lookup loads the installed packages' plug-ins
    except PluginError as e:
        raise ConfigError(str(e)) from None
    if isinstance(text, str):
        try:
            load_plugins(plugin_modules(text))
        except PluginError as e:
            raise ConfigError(f"plugins: {e}") from None


def with_plugins(config: ExperimentConfig, modules: tuple[str, ...]) -> ExperimentConfig:
    """``config`` whose ``plugins`` also name ``modules`` (after its own), so that the run folder's
    config imports them wherever it is read (a resumed run, a sweep worker, the web app)."""
    known = plugin_modules(config.plugins)
    added = tuple(dict.fromkeys(m for m in modules if m not in known))
    return dataclasses.replace(config, plugins=",".join((*known, *added))) if added else config


def _plugins_as_text(values: dict[str, Any]) -> dict[str, Any]:
    """``plugins`` given as a TOML list of module names becomes its text form ("a.b,c")."""
    plugins = values.get("plugins")
    if isinstance(plugins, list):
        if not all(isinstance(name, str) for name in plugins):
            raise ConfigError(f"plugins must be a list of module names, got {plugins!r}")
        values = {**values, "plugins": ",".join(plugins)}
    return values


def make_config(values: dict[str, Any]) -> ExperimentConfig:
    """An ``ExperimentConfig`` from a flat dict (its plug-ins imported first, older keys read as
    today's, the strategy's defaults where a key is not given), rejecting unknown keys by name."""
    values = _plugins_as_text(values)
    load_config_plugins(values.get("plugins", ""))
    values = read_legacy_keys(values)
    config_type = config_class()
    types = config_types()
    unknown = sorted(set(values) - set(types))
    if unknown:
        raise ConfigError(f"unknown config key(s): {', '.join(unknown)}; known keys: {', '.join(types)}")
    name = values.get("strategy", ExperimentConfig.strategy)
    if isinstance(name, str) and name in strategy_names():
        values = {**strategy(name).defaults, **values}
    for key, value in values.items():
        if _type_of(key, config_type) is float and isinstance(value, int) and not isinstance(value, bool):
            values[key] = float(value)
    values = _channels_as_text(values)
    return config_type(**values)


def _channels_as_text(values: dict[str, Any]) -> dict[str, Any]:
    """``cnn_channels`` given as a TOML list (``[16, 32]``) or one number (``--set cnn_channels=16``)
    becomes its text form ("16,32"); anything else is left for ``validate`` to name."""
    channels = values.get("cnn_channels")
    if isinstance(channels, int) and not isinstance(channels, bool):
        channels = [channels]
    if isinstance(channels, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in channels):
        values["cnn_channels"] = ",".join(str(x) for x in channels)
    return values


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``--set key=value`` items as config values (TOML numbers and booleans, else strings)."""
    values: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set needs key=value, got {item!r}")
        values[key.strip()] = _parse_value(key.strip().rpartition(".")[2], text.strip())
    return flat_keys(values, "--set")


def load_config(
    path: str | Path | None = None, overrides: list[str] | None = None, **fields: Any
) -> ExperimentConfig:
    """Load a TOML config (following ``inherit = "base.toml"``), then apply ``key=value``
    overrides and keyword fields. The experiment name defaults to the file's stem."""
    values: dict[str, Any] = {}
    if path is not None:
        values["name"] = Path(path).stem
        values.update(_read_toml(Path(path)))
    values.update(parse_overrides(overrides or []))
    values.update({k: v for k, v in fields.items() if v is not None})
    config = make_config(values)  # unknown keys and bad values first, by name
    check_strategy_keys(read_legacy_keys(values), config.strategy)
    return config
