"""Evolution strategies tuned by engine games (issue 56 item 3), beside SPSA: evosax's CMA-ES and the
study's GA over the compiled search's parameters, and evosax's OpenAI-ES (antithetic) over a network's
top layers. Each reaches the optimum of a toy noisy fitness; a run goes through ``evolve`` end to end,
resumes as if never stopped, and its snapshots carry what it tuned (which ``export`` keeps)."""

from __future__ import annotations

import csv

import jax
import numpy as np
import pytest

from neurocheckers.cli import main
from neurocheckers.compiled.driver import SearchOptions
from neurocheckers.evolution import engine_tuning, network_es, search_tuners
from neurocheckers.experiment.config import ConfigError, load_config
from neurocheckers.match.engine_pairs import EngineSide
from neurocheckers.networks import agent_file, evaluator
from neurocheckers.networks.numpy_agent import NumpyAgent
from neurocheckers.players.compiled import parse_compiled
from neurocheckers.rules.presets import AMERICAN8

NAMES = ("aspiration", "next_iteration_share")
OPTIMUM = np.array([0.6, 0.5])
DECISIVE = 0.3
"""The toy's decisive games: 30%, the rest drawn."""
SLOPE = 20.0
"""The toy's logistic slope: the decisive games' win share is ``1 / (1 + exp(-SLOPE (s_a - s_b)))``."""


@pytest.fixture(scope="module")
def agent(tmp_path_factory):
    """A small 8x8 MLP agent file."""
    path = tmp_path_factory.mktemp("engine_es") / "agent.safetensors"
    spec = evaluator.EvaluatorSpec(1, 8, AMERICAN8.board_size)
    agent_file.save_agent(path, AMERICAN8, spec, evaluator.init_params(jax.random.key(0), spec))
    return str(path)


def toy_scores(rng, strengths: np.ndarray, reference: float, games: int) -> np.ndarray:
    """Each candidate's score in ``games`` simulated games against the reference: ``DECISIVE`` of them
    decisive, won in proportion to the logistic of the strength difference, the rest drawn."""
    scores = []
    for strength in strengths:
        win = DECISIVE / (1 + np.exp(-SLOPE * (strength - reference)))
        outcome = rng.random(games)
        wins, losses = np.sum(outcome < win), np.sum((outcome >= win) & (outcome < DECISIVE))
        scores.append((wins + 0.5 * (games - wins - losses)) / games)
    return np.array(scores)


def search_strength(genome: np.ndarray) -> float:
    """The toy search's strength: highest at ``OPTIMUM`` (the parameters' values, decoded)."""
    values = engine_tuning.decode(NAMES, genome)
    return -float(np.sum((np.array([values[n] for n in NAMES]) - OPTIMUM) ** 2))


def start_genome() -> np.ndarray:
    """aspiration 0, next_iteration_share 0.7 (the defaults), as shares of their ranges."""
    return engine_tuning.encode(NAMES, SearchOptions())


def decoded(genome: np.ndarray) -> np.ndarray:
    values = engine_tuning.decode(NAMES, genome)
    return np.array([values[n] for n in NAMES])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cma_es_reaches_the_optimum_of_a_toy_noisy_fitness(seed):
    """CMA-ES's ask and tell (the functions an epoch uses): 8 candidates, each 8 games against the mean,
    100 generations from (0, 0.7) end within 0.12 of (0.6, 0.5)."""
    rng, key = np.random.default_rng(seed), jax.random.key(seed)
    state = search_tuners.cma_init(key, start_genome(), 8, 0.2)
    for _ in range(100):
        key, ask_key, tell_key = jax.random.split(key, 3)
        candidates, state = search_tuners.cma_ask(ask_key, state, 8, 0.2)
        strengths = np.array([search_strength(c) for c in candidates])
        scores = toy_scores(rng, strengths, search_strength(np.asarray(state.mean)), 8)
        state = search_tuners.cma_tell(tell_key, state, candidates, scores, 8, 0.2)
    assert np.all(np.abs(decoded(np.asarray(state.mean)) - OPTIMUM) < 0.12), decoded(np.asarray(state.mean))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_ga_reaches_the_optimum_of_a_toy_noisy_fitness(seed):
    """The GA's breeding (elites, one-gene mutants, crossovers, all-gene mutants): 8 members, each 16
    games against the best elite, 150 generations from (0, 0.7): the best ends within 0.12 of (0.6, 0.5)."""
    rng, key = np.random.default_rng(seed), jax.random.key(seed)
    genomes = np.tile(start_genome(), (8, 1)).astype(np.float32)
    fitness = np.zeros(8, np.float32)
    for _ in range(150):
        key, breed_key = jax.random.split(key)
        genomes = np.asarray(search_tuners.ga_breed(breed_key, genomes, fitness, 0.05))
        strengths = np.array([search_strength(g) for g in genomes])
        fitness = toy_scores(rng, strengths, strengths[0], 16).astype(np.float32)
        fitness[0] = 0.5  # the best elite against itself: a drawn pair, not played
    best = decoded(search_tuners.ga_best(genomes, fitness))
    assert np.all(np.abs(best - OPTIMUM) < 0.12), best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_network_es_reaches_the_optimum_of_a_toy_noisy_fitness(seed):
    """OpenAI-ES's antithetic ask and tell over 4 weights: 8 candidates (mean +- sigma z), each 8 games
    against the mean, 150 generations from 0 end within 0.1 of the optimum, each weight."""
    optimum = np.array([0.3, -0.2, 0.5, 0.1])
    rng, key = np.random.default_rng(seed), jax.random.key(seed)
    hyper = (8, 0.05, 0.01)
    state = network_es.es_start(key, np.zeros(4, np.float32), *hyper)
    for _ in range(150):
        key, ask_key, tell_key = jax.random.split(key, 3)
        candidates, state = network_es.es_candidates(ask_key, state, *hyper)
        mean = np.asarray(state.mean)
        assert np.allclose(candidates[:4] + candidates[4:], 2 * mean, atol=1e-5)  # antithetic pairs
        strengths = -np.sum((candidates - optimum) ** 2, axis=1)
        scores = toy_scores(rng, strengths, -float(np.sum((mean - optimum) ** 2)), 8)
        state = network_es.es_update(tell_key, state, candidates, scores, *hyper)
    assert np.all(np.abs(np.asarray(state.mean) - optimum) < 0.1), state.mean


def test_the_genome_is_each_parameter_a_share_of_its_range():
    names = ("lmr_min_move", "aspiration")  # 1..12 (an integer), 0..1
    assert engine_tuning.decode(names, np.array([0.5, 0.123])) == {"lmr_min_move": 6, "aspiration": 0.123}
    assert engine_tuning.decode(names, np.array([2.0, -1.0])) == {"lmr_min_move": 12, "aspiration": 0.0}
    options = SearchOptions(lmr_min_move=12, aspiration=0.25)
    np.testing.assert_allclose(engine_tuning.encode(names, options), [1.0, 0.25])


def test_an_engine_side_plays_a_network_given_as_tensors(agent):
    own = NumpyAgent.load(agent).tensors
    plain = EngineSide(agent).player("american8", 100).leaves.weights
    same = EngineSide(agent, tensors={"layer_1/bias": own["layer_1/bias"]}).player("american8", 100)
    np.testing.assert_array_equal(same.leaves.weights, plain)
    moved = EngineSide(agent, tensors={"layer_1/bias": own["layer_1/bias"] + 1}).player("american8", 100)
    assert not np.array_equal(moved.leaves.weights, plain)
    with pytest.raises(ValueError, match="no tensor 'layer_9/bias'"):
        EngineSide(agent, tensors={"layer_9/bias": np.zeros(1, np.float32)}).player("american8", 100)


def test_candidates_play_the_same_openings_however_split(agent):
    """Each candidate's pairs are the same games in one share or in pieces; one that plays as the
    reference scores a drawn pair, unplayed."""
    reference = EngineSide(agent)
    candidates = [EngineSide(agent, {"lmr_min_move": 1}), reference, EngineSide(agent, {"aspiration": 0.5})]
    whole = engine_tuning.play_candidates("american8", candidates, reference, 2, 100, 5)
    split = engine_tuning.play_candidates("american8", candidates, reference, 2, 100, 5, shares=6)
    for a, b in zip(whole, split, strict=True):
        np.testing.assert_array_equal(a.counts, b.counts)
        assert a.plies == b.plies
    assert whole[1].score == 0.5 and whole[1].plies == 0 and whole[0].plies > 0


CMA = ["strategy=cma_search", "cma_agent=a.safetensors"]
GA = ["strategy=ga_search", "ga_agent=a.safetensors"]
ES = ["strategy=es_network", "es_agent=a.safetensors"]


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (["strategy=cma_search"], "strategy 'cma_search' tunes the search of an agent: set cma_agent"),
        ([*CMA, "cma_parameters=depth"], "cma_parameters: no tunable search parameter 'depth'"),
        ([*CMA, "cma_population=1"], "cma_population must be >= 2, got 1"),
        ([*CMA, "cma_sigma=0"], "cma_sigma must be > 0, got 0"),
        ([*GA, "ga_population=6"], "ga_population must be a multiple of 4, got 6"),
        ([*GA, "ga_pairs=0"], "ga_pairs must be >= 1, got 0"),
        (["strategy=es_network"], "strategy 'es_network' tunes the network of an agent: set es_agent"),
        ([*ES, "es_population=3"], "es_population must be even"),
        ([*ES, "es_layers=-1"], "es_layers must be >= 0, got -1"),
        ([*ES, "es_learning_rate=0"], "es_learning_rate must be > 0"),
        ([*ES, "seconds_per_move=0.1"], "needs seconds_per_move = 0"),
    ],
)
def test_bad_tuner_configs_are_one_line(items, message):
    with pytest.raises(ConfigError, match=message) as raised:
        load_config(None, ["rules=american8", *items])
    assert "\n" not in str(raised.value)


def _rows(run_dir):
    with open(run_dir / "metrics.csv") as f:
        return list(csv.DictReader(f))


def _evolve(config, out, *more):
    assert main(["evolve", str(config), "--out", str(out), "--no-plot", *more]) == 0
    (run_dir,) = out.iterdir()
    return run_dir


def test_a_cma_run_snapshots_the_tuned_search_and_resumes(agent, tmp_path):
    config = tmp_path / "cma.toml"
    config.write_text(
        'rules = "american8"\nstrategy = "cma_search"\nepochs = 2\nsnapshot_every = 1\ncheckpoint_every = 1\n'
        f'[cma_search]\ncma_agent = "{agent}"\ncma_parameters = "lmr_min_move,next_iteration_share"\n'
        "cma_population = 4\ncma_pairs = 1\ncma_nodes = 100\n"
    )
    whole = _evolve(config, tmp_path / "whole")
    rows = _rows(whole)
    assert [r["epoch"] for r in rows] == ["0", "1"] and all(
        r["tune_score"] and r["tuned_lmr_min_move"] for r in rows
    )
    assert main(["plot", str(whole)]) == 0 and (whole / "fitness.png").is_file()
    assert main(["export", str(whole), "--out", str(tmp_path / "tuned.safetensors")]) == 0
    player = parse_compiled(f"compiled:100n:{tmp_path / 'tuned.safetensors'}", AMERICAN8)
    last = rows[-1]
    assert player.options.lmr_min_move == int(float(last["tuned_lmr_min_move"]))
    assert player.options.next_iteration_share == pytest.approx(float(last["tuned_next_iteration_share"]))

    part = _evolve(config, tmp_path / "parts", "--epochs", "1")
    assert main(["evolve", "--resume", str(part), "--epochs", "2", "--no-plot"]) == 0
    keep = [c for c in rows[0] if c not in ("wall_seconds", "plies_per_second")]
    assert [{c: r[c] for c in keep} for r in _rows(part)] == [{c: r[c] for c in keep} for r in rows]


def test_a_network_es_run_exports_its_tuned_layers(agent, tmp_path):
    """``es_layers = 1``: only the output layer moves, and the exported agent is the mean's network."""
    config = tmp_path / "es.toml"
    config.write_text(
        'rules = "american8"\nstrategy = "es_network"\nepochs = 1\nsnapshot_every = 1\n'
        f'[es_network]\nes_agent = "{agent}"\nes_population = 2\nes_pairs = 1\nes_nodes = 100\n'
        "es_learning_rate = 0.05\n"
    )
    run_dir = _evolve(config, tmp_path / "runs")
    assert float(_rows(run_dir)[0]["tune_distance"]) > 0
    assert main(["export", str(run_dir), "--out", str(tmp_path / "tuned.safetensors")]) == 0
    before, after = NumpyAgent.load(agent).tensors, NumpyAgent.load(tmp_path / "tuned.safetensors").tensors
    np.testing.assert_array_equal(after["layer_0/kernel"], before["layer_0/kernel"])
    assert not np.array_equal(after["layer_1/kernel"], before["layer_1/kernel"])
    parse_compiled(f"compiled:100n:{tmp_path / 'tuned.safetensors'}", AMERICAN8)  # the search plays it
