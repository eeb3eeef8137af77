"""Strategies are plug-ins: one module and one registry line make a strategy that ``evolve`` runs;
the memetic pool is a strategy of its own; DQN's section is checked by one set of rules."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest
from tiny import TINY_RUN

from neurocheckers.experiment import strategy_registry
from neurocheckers.experiment.config import ConfigError, load_config, make_config
from neurocheckers.experiment.strategy_registry import EVOLUTION, StrategyEntry, register

TOY_STRATEGY = textwrap.dedent(
    '''
    """Random search: each epoch's members are Gaussian samples around the boss (ask); nothing is
    learnt from their fitness (tell), the boss's promotion alone moves the search."""
    import jax

    from neurocheckers.evolution.boss_ga import Generation, no_state
    from neurocheckers.experiment.strategy_registry import EVOLUTION, StrategyEntry, register


    def ask(setup, state, key):
        leaves, tree = jax.tree.flatten(state.boss)
        size = setup.settings.population
        noise = [
            setup.settings.mutation_rate * jax.random.normal(k, (size, *leaf.shape), leaf.dtype)
            for leaf, k in zip(leaves, jax.random.split(key, len(leaves)))
        ]
        return jax.tree.unflatten(tree, [leaf + n for leaf, n in zip(leaves, noise)]), state.es_state


    def tell(setup, state, told, key):
        return told.population, told.es_state, {}


    RANDOM_SEARCH = Generation(no_state, ask, tell)
    register(StrategyEntry("random_search", EVOLUTION, RANDOM_SEARCH, sections=("boss_ga",)))
    '''
)


@pytest.fixture
def toy_strategy(tmp_path, monkeypatch):
    """The toy module written to ``tmp_path`` and imported (which registers it); removed after."""
    (tmp_path / "toy_random_search.py").write_text(TOY_STRATEGY)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("toy_random_search")
    yield module
    strategy_registry.unregister("random_search")
    sys.modules.pop("toy_random_search", None)


def test_a_strategy_from_one_module_runs_through_evolve(toy_strategy, tmp_path):
    from neurocheckers.agent_file import load_agent
    from neurocheckers.experiment.folder import config_summary, read_run_config, run_metrics
    from neurocheckers.experiment.run import create_run, run
    from neurocheckers.formats import read_lineage

    config = load_config(None, [*TINY_RUN, "strategy=random_search", "epochs=2", "name=toy"])
    run_dir = run(create_run(config, tmp_path / "runs"))
    rows = run_metrics(run_dir)
    assert [int(r["epoch"]) for r in rows] == [0, 1]
    assert all(r["fitness_mean"] and r["games"] == "8" for r in rows)  # 4 members x 2 games
    assert all(r["learner_loss_before"] == "" for r in rows)  # no learner quarter
    assert read_run_config(run_dir)[0].strategy == "random_search"
    assert "strategy random_search" in config_summary(config, config.simulations)
    lineage = read_lineage(run_dir)
    assert len(lineage) == 1 + sum(int(r["boss_changed"]) for r in rows)
    agent = load_agent(run_dir / "lineage" / lineage[-1]["file"])
    assert agent.spec.layers == 1 and agent.spec.width == 4


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
