"""Strategies are plug-ins: one module and one registry line make a strategy that ``evolve`` runs,
imported from outside the package (a config's ``plugins``, ``evolve --plugin``, or an installed
package's entry point); its metric columns decide what ``metrics.csv`` holds; the memetic pool is a
strategy of its own; DQN's section is checked by one set of rules."""

from __future__ import annotations

import dataclasses
import importlib
import re
import sys
import textwrap

import pytest
from tiny import TINY_RUN

from neurocheckers.cli import main
from neurocheckers.experiment import strategy_registry
from neurocheckers.experiment.config import ConfigError, load_config, make_config
from neurocheckers.experiment.strategy_entries import NETWORK_ES_COLUMNS, SEARCH_TUNE_COLUMNS, SPSA_COLUMNS
from neurocheckers.experiment.strategy_registry import (
    EVOLUTION,
    EVOLUTION_COLUMNS,
    PluginError,
    StrategyEntry,
    register,
)
from neurocheckers.formats import METRIC_COLUMNS

TOY_STRATEGY = textwrap.dedent(
    '''
    """Random search: each epoch's members are Gaussian samples around the boss (ask); nothing is
    learnt from their fitness (tell), the boss's promotion alone moves the search. Its own config
    section, its checks and its summary line live here, beside its algorithm and its registration."""
    import jax
    import jax.numpy as jnp

    from neurocheckers.evolution.boss_ga import Generation, no_state
    from neurocheckers.experiment.files import ConfigError
    from neurocheckers.experiment.strategy_registry import EVOLUTION, EVOLUTION_COLUMNS
    from neurocheckers.experiment.strategy_registry import StrategyEntry, register
    from neurocheckers.sections import Section


    class RandomSearchSettings(Section, section="random_search"):
        """Random search's own keys: the [random_search] table of a config."""

        noise: float = 0.1
        """Random search: the standard deviation of the members' Gaussian noise around the boss."""

        def problems(self) -> list[str]:
            return [] if self.noise > 0 else [f"noise must be > 0, got {self.noise}"]


    def check(config):  # a rule across sections
        if config.fitness != "boss":
            raise ConfigError(f"random_search samples around the boss: it needs fitness = 'boss'")


    def summary(config, simulations):
        return f"{config.name}: random search, noise {config.noise:g}, P={config.population}"


    def ask(setup, state, key):
        leaves, tree = jax.tree.flatten(state.boss)
        size = setup.settings.population
        noise = [
            setup.settings.noise * jax.random.normal(k, (size, *leaf.shape), leaf.dtype)
            for leaf, k in zip(leaves, jax.random.split(key, len(leaves)))
        ]
        return jax.tree.unflatten(tree, [leaf + n for leaf, n in zip(leaves, noise)]), state.es_state


    def tell(setup, state, told, key):  # its own metric: a metrics.csv column of its entry alone
        return told.population, told.es_state, {"noise_scale": jnp.float32(setup.settings.noise)}


    RANDOM_SEARCH = Generation(no_state, ask, tell)
    ENTRY = StrategyEntry(
        "random_search",
        EVOLUTION,
        RANDOM_SEARCH,
        sections=("boss_ga", RandomSearchSettings),
        validate=check,
        summary=summary,
        metric_columns=(*EVOLUTION_COLUMNS, "noise_scale"),
        doc="random search around the boss",
    )
    register(ENTRY)
    '''
)
TOY = "toy_random_search"


@pytest.fixture
def toy_path(tmp_path, monkeypatch):
    """The toy module written to ``tmp_path`` (on ``sys.path``), not imported; unregistered after."""
    (tmp_path / f"{TOY}.py").write_text(TOY_STRATEGY)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    strategy_registry.unregister("random_search")
    sys.modules.pop(TOY, None)


@pytest.fixture
def toy_strategy(toy_path):
    """The toy module, imported (which registers it)."""
    return importlib.import_module(TOY)


def test_a_strategy_from_one_module_runs_through_evolve(toy_path, tmp_path, capsys):
    """``evolve --plugin`` imports the module (nothing else does): its own section's key reaches its
    algorithm, its summary and the run folder's config, which records the plug-in, so the folder
    reads anywhere; the entry's own column follows the columns every run has."""
    from neurocheckers.experiment.folder import RunError, config_summary, read_run_config, run_metrics
    from neurocheckers.experiment.run import create_run, run
    from neurocheckers.formats import read_lineage
    from neurocheckers.networks.agent_file import load_agent

    config_file = tmp_path / "toy.toml"
    table = "[random_search]\nnoise = 0.25\n"
    config_file.write_text(_toml([*TINY_RUN, "strategy=random_search", "epochs=2"]) + table)
    assert TOY not in sys.modules
    out = tmp_path / "runs"
    assert main(["evolve", str(config_file), "--plugin", TOY, "--out", str(out), "--no-plot"]) == 0
    (run_dir,) = out.iterdir()
    config = read_run_config(run_dir)[0]
    assert (config.strategy, config.plugins, config.noise) == ("random_search", TOY, 0.25)
    assert config_summary(config, config.simulations).endswith("random search, noise 0.25, P=4")
    assert '"noise": 0.25' in (run_dir / "config.json").read_text()
    rows = run_metrics(run_dir)
    assert [int(r["epoch"]) for r in rows] == [0, 1]
    assert list(rows[0]) == [*METRIC_COLUMNS, "noise_scale"]
    assert all(r["fitness_mean"] and r["games"] == "8" for r in rows)  # 4 members x 2 games
    assert all(r["noise_scale"] == "0.25" for r in rows)  # the section's key, read by the algorithm
    assert all(r["learner_loss_before"] == "" for r in rows)  # no learner quarter
    lineage = read_lineage(run_dir)
    assert len(lineage) == 1 + sum(int(r["boss_changed"]) for r in rows)
    agent = load_agent(run_dir / "lineage" / lineage[-1]["file"])
    assert agent.spec.layers == 1 and agent.spec.width == 4

    undeclared = dataclasses.replace(strategy_registry.strategy("random_search"), metric_columns=None)
    register(undeclared, replace=True)  # the same epoch (compiled already), its metric not declared
    with pytest.raises(RunError, match="'random_search': its epoch returned the metric 'noise_scale', which"):
        run(create_run(config, tmp_path / "undeclared"))


def test_a_plugins_section_is_checked_and_read_by_it_alone(toy_strategy, capsys):
    """The plug-in's section: its ``problems``, its strategy's cross-section check, its keys refused
    by the strategies that do not read them, listed by ``evolve --help``; without the plug-in the
    config has no such keys."""
    base = [*TINY_RUN, "strategy=random_search"]
    assert load_config(None, [*base, "random_search.noise=0.5"]).noise == 0.5
    assert load_config(None, base).noise == 0.1  # the section's default
    with pytest.raises(ConfigError, match=r"^noise must be > 0, got 0.0$"):
        load_config(None, [*base, "noise=0"])
    with pytest.raises(ConfigError, match="random_search samples around the boss: it needs fitness"):
        load_config(None, [*base, "fitness=fixed", "benchmark_opponent=random"])
    with pytest.raises(
        ConfigError, match=r"noise = 0.5 is a key of \[random_search\], which strategy 'boss_ga'"
    ):
        load_config(None, [*TINY_RUN, "noise=0.5"])
    with pytest.raises(
        ConfigError, match=r"'run.noise' in --set: \[run\] has no key 'noise'; it is a key of"
    ):
        load_config(None, [*base, "run.noise=0.5"])
    assert main(["evolve", "--help"]) == 0
    assert "noise = 0.1: Random search: the standard deviation" in capsys.readouterr().out
    strategy_registry.unregister("random_search")
    with pytest.raises(ConfigError, match="unknown config key.s.: noise;"):
        load_config(None, [*TINY_RUN, "noise=0.5"])


def test_a_section_takes_no_key_or_name_the_config_has():
    """A plug-in's section is refused when it takes a key, or a section name, the config has."""
    from neurocheckers.sections import Section

    class Clashing(Section, section="toy_clash"):
        population: int = 8

    class Renamed(Section, section="dqn"):
        toy_key: int = 1

    for section, what in ((Clashing, "key 'population'"), (Renamed, r"section name \[dqn\]")):
        with pytest.raises(
            ValueError, match=f"strategy 'toy': its section {section.__name__} takes the {what}"
        ):
            register(StrategyEntry("toy", EVOLUTION, None, sections=(section,)))
    with pytest.raises(ValueError, match="'toy': no registered strategy declares the config section 'nope'"):
        register(StrategyEntry("toy", EVOLUTION, None, sections=("nope",)))
    assert "toy" not in strategy_registry.strategy_names()


def _toml(items: list[str]) -> str:
    """A TOML file of ``key=value`` items (the rules' name quoted)."""
    return "\n".join(f'{k} = "{v}"' if k in ("rules", "strategy") else f"{k} = {v}" for k, v in (
        item.split("=", 1) for item in items)) + "\n"  # fmt: skip


def test_the_config_imports_its_plugins(toy_path):
    config = load_config(None, [*TINY_RUN, "strategy=random_search", f"plugins={TOY}"])
    assert config.strategy == "random_search" and TOY in sys.modules
    strategy_registry.unregister("random_search")  # as in a fresh process reading config.json
    sys.modules.pop(TOY)
    assert make_config(config.to_dict()) == config and TOY in sys.modules
    (toy_path / "listed.toml").write_text(
        _toml(TINY_RUN) + f'strategy = "random_search"\nplugins = ["{TOY}", "json"]\n'
    )
    assert load_config(toy_path / "listed.toml").plugins == f"{TOY},json"


@pytest.mark.parametrize(
    ("plugins", "message"),
    [
        ("no_such_plugin", "plugins: plug-in module 'no_such_plugin' not found (install it, or put its"),
        (
            "my/strategy.py",
            "plugins: a plug-in is a module name like my_pkg.my_strategy, got 'my/strategy.py'",
        ),
        (
            "broken_plugin",
            "plugins: plug-in module 'broken_plugin' failed to load: RuntimeError: half-written",
        ),
        (
            "needs_a_missing_package",
            "plugins: plug-in module 'needs_a_missing_package' cannot be imported: "
            "No module named 'not_there'",
        ),
    ],
)
def test_a_plugin_that_cannot_be_imported_is_named(tmp_path, monkeypatch, plugins, message):
    (tmp_path / "broken_plugin.py").write_text("raise RuntimeError('half-written')\n")
    (tmp_path / "needs_a_missing_package.py").write_text("import not_there\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}"):
        load_config(None, [*TINY_RUN, f"plugins={plugins}"])


def test_evolve_names_a_plugin_it_cannot_import(tmp_path, capsys):
    assert main(["evolve", "x.toml", "--plugin", "no_such_plugin", "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "neurocheckers: error: --plugin: plug-in module 'no_such_plugin' not found (install it, or put its "
        "folder on PYTHONPATH)"
    )
    assert not (tmp_path / "runs").exists()


def test_strategies_and_evolve_help_list_the_registry(toy_path, capsys):
    assert main(["evolve", "--plugin", TOY, "--help"]) == 0  # --plugin is imported before the help
    help_lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert main(["strategies"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(strategy_registry.strategy_names())
    assert lines[-1].split(None, 3) == [
        "random_search",
        "evolution",
        "boss_ga,random_search",
        "random search around the boss",
    ]
    assert all(line.strip() in help_lines for line in lines)


def _installed(folder, dist: str, entry_points: str) -> None:
    """A fake installed package ``dist`` in ``folder`` (its .dist-info) with ``entry_points``."""
    info = folder / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{strategy_registry.PLUGIN_GROUP}]\n{entry_points}\n")


def test_installed_packages_register_through_entry_points(toy_path, tmp_path, monkeypatch):
    _installed(toy_path, "toy_strategies", f"random_search = {TOY}:ENTRY")
    strategy_registry.load_entry_points()
    assert strategy_registry.strategy("random_search").doc == "random search around the boss"
    broken = tmp_path / "broken"
    broken.mkdir()
    _installed(broken, "broken_strategies", "nope = no_such_plugin")
    monkeypatch.syspath_prepend(str(broken))
    with pytest.raises(
        PluginError, match=r"^plug-in entry point nope = 'no_such_plugin' of neurocheckers\.s"
    ):
        strategy_registry.load_entry_points()


def test_a_fresh_process_loads_the_installed_plugins(toy_path, tmp_path):
    """A fresh process loads the installed plug-ins at its first registry lookup, after the built-in
    strategies; one that cannot be loaded is named in one line by the commands that read the registry."""
    import os
    import subprocess

    def neurocheckers(*args: str) -> subprocess.CompletedProcess:
        path = os.pathsep.join([str(toy_path), str(tmp_path / "broken"), os.environ.get("PYTHONPATH", "")])
        return subprocess.run(
            [sys.executable, "-m", "neurocheckers", *args],
            env={**os.environ, "PYTHONPATH": path},
            capture_output=True,
            text=True,
            timeout=120,
        )

    _installed(toy_path, "toy_strategies", f"random_search = {TOY}:ENTRY")
    listed = neurocheckers("strategies").stdout.splitlines()
    names = [line.split()[0] for line in listed]
    assert names == [*strategy_registry.strategy_names(), "random_search"], names

    (tmp_path / "broken").mkdir()
    _installed(tmp_path / "broken", "broken_strategies", "nope = no_such_plugin")
    (tmp_path / "tiny.toml").write_text(_toml(TINY_RUN))
    expected = (
        "neurocheckers: error: plug-in entry point nope = 'no_such_plugin' of neurocheckers.strategies "
        "cannot be loaded: ModuleNotFoundError: No module named 'no_such_plugin'"
    )
    for args in (["strategies"], ["evolve", str(tmp_path / "tiny.toml"), "--out", str(tmp_path / "runs")]):
        done = neurocheckers(*args)
        assert (done.returncode, done.stderr.strip()) == (2, expected), args
    assert not (tmp_path / "runs").exists()


def test_an_entry_declares_its_columns():
    for name in strategy_registry.strategy_names():  # built-in runs keep their metrics.csv as it was
        own = {  # a strategy added since: its columns after them
            "spsa": SPSA_COLUMNS,
            "cma_search": SEARCH_TUNE_COLUMNS,
            "ga_search": SEARCH_TUNE_COLUMNS,
            "es_network": NETWORK_ES_COLUMNS,
        }.get(name, ())
        own = tuple(dict.fromkeys(c for c in own if c not in METRIC_COLUMNS))
        assert strategy_registry.strategy(name).metrics_header() == (*METRIC_COLUMNS, *own)
    assert StrategyEntry("e", EVOLUTION, None).metric_columns == EVOLUTION_COLUMNS  # the kind's
    with pytest.raises(ValueError, match="'e': the run loop fills metrics.csv column 'wall_seconds'"):
        StrategyEntry("e", EVOLUTION, None, metric_columns=("wall_seconds",))
    entry = StrategyEntry("e", EVOLUTION, None, unlogged=("debug",))
    entry.check_metrics(["fitness_mean", "promoted_points", "debug"])
    with pytest.raises(
        ValueError, match="'e': its epoch returned the metric 'loss', which its registry entry"
    ):
        entry.check_metrics(["fitness_mean", "loss"])


def test_a_plugin_reads_only_its_sections(toy_strategy):
    with pytest.raises(ConfigError, match=r"envs = 8 is a key of \[dqn\], which strategy 'random_search'"):
        load_config(None, [*TINY_RUN, "strategy=random_search", "envs=8"])


def test_names_are_registered_once():
    assert load_config(None, TINY_RUN).strategy in strategy_registry.strategy_names(EVOLUTION)
    with pytest.raises(ValueError, match="'boss_ga' is already registered"):
        register(StrategyEntry("boss_ga", EVOLUTION, algorithm=None))
    with pytest.raises(ConfigError, match="strategy must be one of boss_ga, memetic_pool, SimpleGA"):
        load_config(None, [*TINY_RUN, "strategy=nope"])


def test_the_memetic_pool_is_a_strategy_and_old_configs_name_it():
    config = load_config(None, [*TINY_RUN, "strategy=memetic_pool"])
    assert config.train_batch == 256  # the strategy's default minibatch
    old = load_config(None, [*TINY_RUN, "learner_pool=true", "train_batch=4"])
    assert (old.strategy, old.train_batch) == ("memetic_pool", 4)
    assert load_config(None, [*TINY_RUN, "boss_ga.learner_pool=false"]).strategy == "boss_ga"
    stored = {**load_config(None, TINY_RUN).to_dict(), "learner_pool": True, "train_batch": 8}
    assert make_config(stored).strategy == "memetic_pool"  # a run folder's config.json of before
    with pytest.raises(ConfigError, match="strategy 'memetic_pool' needs train_batch > 0"):
        load_config(None, [*TINY_RUN, "strategy=memetic_pool", "train_batch=0"])


def test_dqn_settings_follow_the_configs_rules():
    from neurocheckers.learners.dqn_settings import DQNSettings

    config = load_config(None, ["strategy=dqn", "epsilon_decay_epochs=0"])  # 0: no decay
    assert config.epsilon_decay_epochs == 0
    with pytest.raises(ConfigError, match="epsilon_decay_epochs must be >= 0, got -1"):
        load_config(None, ["strategy=dqn", "epsilon_decay_epochs=-1"])
    with pytest.raises(ValueError, match=r"DQNSettings\.epsilon_decay_epochs must be >= 0, got -1"):
        DQNSettings(epsilon_decay_epochs=-1)
