"""SPSA over the compiled search's parameters (issue 56 item 3): fishtest's gains and update, integer
parameters rounded at random in proportion, a run through ``evolve`` whose snapshots carry the tuned
search (which ``export`` keeps and ``compiled:`` plays), resumed as if never stopped."""

from __future__ import annotations

import csv
import dataclasses

import jax
import numpy as np
import pytest

from neurocheckers.cli import main
from neurocheckers.compiled.driver import tunable_fields
from neurocheckers.experiment.config import ConfigError, load_config
from neurocheckers.experiment.strategy_entries import SEARCH_PARAMETERS
from neurocheckers.learners import spsa
from neurocheckers.match.engine_pairs import PairResult
from neurocheckers.networks import agent_file, evaluator
from neurocheckers.players.compiled import parse_compiled
from neurocheckers.rules.presets import AMERICAN8

NAMES = "lmr_min_move,next_iteration_share"


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    """A small 8x8 MLP agent file."""
    path = tmp_path_factory.mktemp("spsa") / "agent.safetensors"
    spec = evaluator.EvaluatorSpec(1, 8, AMERICAN8.board_size)
    agent_file.save_agent(path, AMERICAN8, spec, evaluator.init_params(jax.random.key(0), spec))
    return str(path)


def _settings(agent: str, **values) -> spsa.SPSASettings:
    base = {"rules": "american8", "spsa_agent": agent, "spsa_parameters": NAMES, "epochs": 100}
    return spsa.SPSASettings(**{**base, **values})


def test_the_registry_names_every_tunable_parameter():
    assert tuple(tunable_fields()) == SEARCH_PARAMETERS


def test_the_gains_end_at_c_end_and_r_end(agent):
    settings = _settings(agent, spsa_c_end=2.0, spsa_r_end=0.01)
    c_last, r_last = spsa.gains(settings, settings.epochs)
    np.testing.assert_allclose(c_last, [2.0, 2.0 * 0.05])  # c_end steps of each parameter (1 and 0.05)
    np.testing.assert_allclose(r_last, [0.01, 0.01])
    c_first, r_first = spsa.gains(settings, 1)
    assert np.all(c_first > c_last) and np.all(r_first * c_first**2 > r_last * c_last**2)
    c_small, _ = spsa.gains(_settings(agent, spsa_c_end=0.1), 100)
    assert c_small[0] == 0.5  # an integer parameter moves at least half a step


def test_integers_round_at_random_in_proportion():
    rng = np.random.default_rng(0)
    drawn = [
        spsa.options_of(("lmr_min_move", "aspiration"), np.array([3.25, 0.123]), rng) for _ in range(4000)
    ]
    moves = np.array([d["lmr_min_move"] for d in drawn])
    assert set(moves) == {3, 4} and abs(moves.mean() - 3.25) < 0.03
    assert all(d["aspiration"] == pytest.approx(0.123) for d in drawn)
    assert spsa.options_of(("lmr_min_move", "aspiration"), np.array([40.0, -1.0])) == {
        "lmr_min_move": 12,
        "aspiration": 0.0,
    }  # clipped to the ranges


def test_one_iteration_moves_theta_by_the_batchs_wins_less_losses(agent, monkeypatch):
    settings = _settings(agent)
    state = spsa.init(settings, jax.random.key(0))
    played = []

    def fake_pairs(rules, plus, minus, pairs, nodes, **kwargs):
        played.append((plus.options, minus.options, kwargs["first_opening"]))
        return PairResult(np.array([0, 0, 1, 3, 0]), np.array([1, 2, 5]), 100, 1.0)  # W - L = 4

    monkeypatch.setattr(spsa, "play_pairs", fake_pairs)
    key = jax.random.key(7)
    new, metrics = spsa.epoch_on_host(settings, state, key)
    c_k, r_k = spsa.gains(settings, 1)
    step = np.asarray(new.theta, np.float64) - np.asarray(state.theta, np.float64)
    delta = np.sign(step)
    np.testing.assert_allclose(np.abs(step), r_k * c_k * 4, rtol=1e-5)
    plus, minus, first = played[0]
    assert first == 0 and plus["next_iteration_share"] == pytest.approx(0.7 + c_k[1] * delta[1], abs=1e-6)
    assert abs(plus["lmr_min_move"] - minus["lmr_min_move"]) in (1, 2, 3)
    assert (metrics["wins"], metrics["losses"], metrics["games"]) == (5, 1, 8) and int(new.epoch) == 1
    again, _ = spsa.epoch_on_host(settings, state, key)
    np.testing.assert_array_equal(np.asarray(again.theta), np.asarray(new.theta))  # same state and key
    assert played[1][:2] == played[0][:2]


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([], "strategy 'spsa' tunes the search of an agent: set spsa_agent"),
        (["spsa_agent=a.safetensors", "spsa_parameters=depth"], "no tunable search parameter 'depth'"),
        (["spsa_agent=a.safetensors", "spsa_pairs=0"], "spsa_pairs must be >= 1, got 0"),
        (["spsa_agent=a.safetensors", "seconds_per_move=0.1"], "needs seconds_per_move = 0"),
    ],
)
def test_bad_spsa_configs_are_one_line(items, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, ["rules=american8", "strategy=spsa", *items])


def _rows(run_dir):
    with open(run_dir / "metrics.csv") as f:
        return list(csv.DictReader(f))


def test_an_spsa_run_snapshots_the_tuned_search_and_resumes(agent, tmp_path):
    config = tmp_path / "spsa.toml"
    config.write_text(
        'rules = "american8"\nstrategy = "spsa"\nepochs = 2\nsnapshot_every = 1\ncheckpoint_every = 1\n'
        f'[spsa]\nspsa_agent = "{agent}"\nspsa_parameters = "{NAMES}"\nspsa_pairs = 1\nspsa_nodes = 200\n'
        "spsa_r_end = 5.0\nspsa_iterations = 2\n"
    )
    assert main(["evolve", str(config), "--out", str(tmp_path / "whole"), "--no-plot"]) == 0
    (whole,) = (tmp_path / "whole").iterdir()
    rows = _rows(whole)
    assert [r["epoch"] for r in rows] == ["0", "1"] and all(r["games"] == "2" for r in rows)
    assert all(r["tuned_lmr_min_move"] and r["tuned_next_iteration_share"] for r in rows)
    assert main(["plot", str(whole)]) == 0 and (whole / "fitness.png").is_file()  # the tuning's figure
    assert main(["export", str(whole), "--out", str(tmp_path / "tuned.safetensors")]) == 0
    player = parse_compiled(f"compiled:200n:{tmp_path / 'tuned.safetensors'}", AMERICAN8)
    last = rows[-1]
    tuned = {"lmr_min_move": float(last["tuned_lmr_min_move"]), "next_iteration_share": float(
        last["tuned_next_iteration_share"])}  # fmt: skip
    assert {k: getattr(player.options, k) for k in tuned} == pytest.approx(tuned)

    assert main(["evolve", str(config), "--epochs", "1", "--out", str(tmp_path / "parts"), "--no-plot"]) == 0
    (part,) = (tmp_path / "parts").iterdir()
    assert main(["evolve", "--resume", str(part), "--epochs", "2", "--no-plot"]) == 0
    keep = [c for c in rows[0] if c not in ("wall_seconds", "plies_per_second")]
    assert [{c: r[c] for c in keep} for r in _rows(part)] == [{c: r[c] for c in keep} for r in rows]
    assert dataclasses.is_dataclass(spsa.SPSASettings)


@pytest.mark.filterwarnings("ignore:os.fork")  # Ray starts its own processes; they exec at once
def test_an_spsa_run_on_ray_plays_the_same_iterations(agent, tmp_path):
    """``spsa_ray_address = "local"``: each epoch's pairs in two Ray tasks give the same run as in this
    process (the games at a node budget are deterministic, and pair i is opening i wherever it runs)."""
    import os

    try:
        import ray
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("ray is not installed; CI installs the test and ray extras (README)")
        pytest.skip("the ray extra is not installed (pip install -e '.[test,ray]')")
    base = ["rules=american8", "strategy=spsa", f"spsa_agent={agent}", f"spsa_parameters={NAMES}",
            "epochs=2", "spsa_pairs=2", "spsa_nodes=200", "spsa_workers=2", "spsa_r_end=5.0"]  # fmt: skip
    from neurocheckers.experiment.run import create_run, run

    here = create_run(load_config(None, [*base, "spsa_workers=1"]), tmp_path / "here")
    run(here)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)  # "local" uses it as it is
    try:
        on_ray = create_run(load_config(None, [*base, "spsa_ray_address=local"]), tmp_path / "ray")
        run(on_ray)
    finally:
        ray.shutdown()
    keep = ("games", "wins", "draws", "losses", "plies", "tuned_lmr_min_move", "tuned_next_iteration_share")
    assert [{c: r[c] for c in keep} for r in _rows(on_ray)] == [{c: r[c] for c in keep} for r in _rows(here)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spsa_reaches_the_optimum_of_a_toy_noisy_fitness(seed):
    """SPSA's gains, perturbations, rounding and update (the functions an epoch uses) on a simulated
    match whose decisive games (15%, the rest drawn, as between strong engines) lean to the side
    nearer a known optimum: from (0, 0.7), 600 iterations of 8 pairs end within 0.12 of (0.6, 0.5)."""
    names, optimum, scale = ("aspiration", "next_iteration_share"), np.array([0.6, 0.5]), np.array([1.0, 0.7])
    settings = spsa.SPSASettings(
        rules="american8", spsa_agent="toy", spsa_parameters=",".join(names), epochs=600,
        spsa_pairs=8, spsa_c_end=2.0, spsa_r_end=0.05,
    )  # fmt: skip

    def strength(values: dict) -> float:
        return -float(np.sum(((np.array([values[n] for n in names]) - optimum) / scale) ** 2))

    rng = np.random.default_rng(seed)
    theta = np.array([0.0, 0.7])
    for k in range(1, settings.epochs + 1):
        delta = rng.choice([-1.0, 1.0], size=2)
        c_k, r_k = spsa.gains(settings, k)
        plus, minus = (spsa.options_of(names, theta + sign * c_k * delta, rng) for sign in (1, -1))
        win = 0.15 / (1 + np.exp(-2.0 * (strength(plus) - strength(minus))))  # of the 15% decisive
        outcome = rng.random(2 * settings.spsa_pairs)
        net = int(np.sum(outcome < win)) - int(np.sum((outcome >= win) & (outcome < 0.15)))
        theta = spsa.spsa_update(names, theta, delta, c_k, r_k, net)
    assert np.all(np.abs(theta - optimum) < 0.12), theta
