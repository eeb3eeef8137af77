"""Evolution with alpha-beta search (``search = "alphabeta"``, ``depth``) and ``material_input``:
the population arena plays the same games as a match of two alpha-beta players, epochs are
reproducible, runs record the search in their agent files, and bad settings are refused in one line.
"""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
import pytest

from neurocheckers.analysis.gauntlet import player_spec
from neurocheckers.analysis.lineage import export_boss
from neurocheckers.cli import main
from neurocheckers.evolution.boss_ga import evolve_epoch, init, make_setup
from neurocheckers.experiment.config import ConfigError, load_config
from neurocheckers.experiment.folder import config_summary
from neurocheckers.experiment.run import create_run, run
from neurocheckers.formats import read_lineage, read_metrics
from neurocheckers.match.arena import play_match
from neurocheckers.networks.agent_file import load_agent, save_agent
from neurocheckers.networks.evaluator import EvaluatorSpec, init_params, init_population, value_fn
from neurocheckers.networks.numpy_agent import NumpyAgent
from neurocheckers.population import play_population
from neurocheckers.rules import SIMPLE6
from neurocheckers.search.baselines import AlphaBetaConfig, alphabeta_policy
from neurocheckers.search.mcts import MCTSConfig
from neurocheckers.search.play_settings import epoch_key

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
TINY = [
    "population=4",
    "games_per_epoch=2",
    "layers=1",
    "width=4",
    "train_steps=2",
    "max_plies=40",
    "opening_plies=2",
    "search=alphabeta",
    "depth=2",
    "material_input=true",
    "checkpoint_every=2",
    "epochs=3",
    "name=absearch",
]


@pytest.fixture(scope="module")
def tiny_setup():
    return make_setup(load_config(None, TINY).evolution_settings())


def test_settings_choose_the_search_and_the_network(tiny_setup):
    assert tiny_setup.search == AlphaBetaConfig(depth=2)
    assert tiny_setup.spec.material_input
    mcts = make_setup(load_config(None, [*TINY, "search=mcts", "simulations=3"]).evolution_settings())
    assert mcts.search == MCTSConfig(num_simulations=3)
    with pytest.raises(ValueError, match="depth"):
        AlphaBetaConfig(depth=0)


@pytest.mark.parametrize(
    "override, message",
    [
        (["search=minimax"], "search must be one of mcts, alphabeta, got 'minimax'"),
        (["depth=0"], "depth must be in 1..14, got 0"),
        (["depth=15"], "depth must be in 1..14, got 15"),
        (["search=alphabeta", "seconds_per_move=0.1"], "seconds_per_move"),
        (["material_input=1"], "material_input must be bool, got 1"),
    ],
)
def test_config_errors_name_the_bad_key(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, override)


def test_evolve_refuses_a_bad_depth_in_one_line(tmp_path, capsys):
    config = EXPERIMENTS / "strength" / "alphabeta.toml"
    assert main(["evolve", str(config), "--set", "depth=0", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "depth" in err[0] and "Traceback" not in err[0]
    assert list(tmp_path.iterdir()) == []


def test_example_configs_change_only_their_own_keys():
    base = load_config(EXPERIMENTS / "base.toml")
    assert (base.search, base.material_input) == ("mcts", False)
    for name, changed in (
        ("alphabeta", {"search": "alphabeta", "depth": 2}),
        ("material_input", {"material_input": True}),
    ):
        config = load_config(EXPERIMENTS / "strength" / f"{name}.toml")
        for key, value in changed.items():
            assert getattr(config, key) == value, (name, key)
        differ = {k for k, v in config.to_dict().items() if v != getattr(base, k)}
        # Every strength experiment also rates its boss as it goes (strength_every).
        assert differ - {"name", "epochs", "strength_every"} <= set(changed), name


def test_population_arena_plays_the_games_of_two_alphabeta_players():
    """Member i against the boss with depth-2 alpha-beta over their own networks: the same games as
    a match of ``alphabeta_policy`` with each network (networks leave no ties to break at random)."""
    spec = EvaluatorSpec.for_rules(SIMPLE6, layers=1, width=4, material_input=True)
    population = init_population(jax.random.key(1), spec, 2)
    boss = init_params(jax.random.key(2), spec)
    depth, plies = 2, 24
    records = play_population(
        SIMPLE6, spec, AlphaBetaConfig(depth), population, boss, jax.random.key(0), 2, plies, record=True
    )
    policy = alphabeta_policy(SIMPLE6, depth, value_fn(spec))
    for member in range(2):
        params = jax.tree.map(lambda x, m=member: x[m], population)
        match = play_match(SIMPLE6, policy, params, policy, boss, jax.random.key(5), 2, plies, record=True)
        # Game 0: the member has the first move in both arenas; game 1: the boss has.
        assert list(np.asarray(records.a_is_black[member])) == list(np.asarray(match.a_is_black))
        np.testing.assert_array_equal(records.positions[member], match.positions)
        np.testing.assert_array_equal(records.length[member], match.length)
        np.testing.assert_array_equal(records.score[member], match.score)
    assert len({bytes(np.asarray(records.positions[m, 0])) for m in range(2)}) == 2  # members differ


def test_alphabeta_epochs_are_reproducible_and_feed_the_learners(tiny_setup):
    def two_epochs(seed):
        state = init(tiny_setup, jax.random.key(seed))
        rows = []
        for epoch in range(2):
            state, metrics = evolve_epoch(tiny_setup, state, epoch_key(seed, epoch))
            rows.append(jax.device_get(metrics))
        return state, rows

    state, rows = two_epochs(4)
    again, rows_again = two_epochs(4)
    for row, row_again in zip(rows, rows_again, strict=True):
        for name, value in row.items():
            np.testing.assert_array_equal(value, row_again[name], err_msg=name)
    for a, b in zip(jax.tree.leaves(state.population), jax.tree.leaves(again.population), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    games = 4 * 2
    assert all(int(r["games"]) == games and int(r["plies"]) > 0 for r in rows)
    # The learners trained on recorded positions: a real loss, and they moved away from the elites.
    assert all(0 < float(r["learner_loss_before"]) < 1 for r in rows)
    elite = jax.tree.map(lambda x: np.asarray(x[0]), state.population)
    learner = jax.tree.map(lambda x: np.asarray(x[3]), state.population)
    assert not np.array_equal(elite["layer_1"]["material_weight"], learner["layer_1"]["material_weight"])


@pytest.fixture(scope="module")
def alphabeta_run(tmp_path_factory):
    config = load_config(None, [*TINY, "promotion_threshold=0.01"])  # every epoch promotes a boss
    return run(create_run(config, tmp_path_factory.mktemp("runs"))), config


def test_a_run_records_its_search_and_the_gauntlet_plays_it_that_way(alphabeta_run, tmp_path):
    run_dir, config = alphabeta_run
    assert len(read_metrics(run_dir)) == config.epochs
    lineage = read_lineage(run_dir)
    assert len(lineage) == config.epochs + 1
    boss = load_agent(run_dir / "lineage" / lineage[-1]["file"], SIMPLE6)
    assert (boss.metadata["search"], boss.metadata["depth"]) == ("alphabeta", "2")
    assert boss.spec.material_input
    out, _ = export_boss(run_dir, tmp_path / "best.safetensors")
    exported = load_agent(out, SIMPLE6)
    assert (exported.metadata["search"], exported.metadata["depth"]) == ("alphabeta", "2")
    assert exported.metadata["material_input"] == "true"
    assert NumpyAgent.load(out).material_weight is not None
    assert player_spec(str(out), SIMPLE6) == f"alphabeta:2:{out}"
    assert "alpha-beta depth 2" in config_summary(config, config.simulations)
    # An agent trained with MCTS still maps to mcts:FILE:SIMS.
    mcts = tmp_path / "mcts.safetensors"
    save_agent(mcts, SIMPLE6, exported.spec, exported.params, {"search": "mcts", "simulations": "5"})
    assert player_spec(str(mcts), SIMPLE6) == f"mcts:{mcts}:5"


def test_checkpoints_written_before_the_new_keys_still_count(alphabeta_run, tmp_path):
    """A checkpoint whose config lacks keys added later (here ``depth``, at its default) belongs to
    the run; one with another value does not."""
    import json
    import shutil

    from safetensors import safe_open
    from safetensors.numpy import save_file

    from neurocheckers.experiment.folder import CHECKPOINT, checkpoint_epoch

    run_dir, config = alphabeta_run
    copy = Path(shutil.copytree(run_dir, tmp_path / "copy"))
    with safe_open(str(copy / CHECKPOINT), framework="numpy") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 (not a dict)
        metadata = dict(f.metadata())
    stored = json.loads(metadata["config"])
    assert stored.pop("depth") == 2
    for entry, expected in ((stored, config.epochs), ({**stored, "depth": 3}, None)):
        save_file(tensors, str(copy / CHECKPOINT), metadata={**metadata, "config": json.dumps(entry)})
        assert checkpoint_epoch(copy) == expected
