"""The evaluator's architectures (``evaluator = "mlp" | "cnn" | "transformer" | "nnue"``): each
network's shapes match its flax parameters, its JAX and NumPy forward passes agree on random positions (kings
and both colours to move included), a position and its colour-flipped mirror get the same value,
agent files keep the architecture, the genetic operators act on whole layers of any of them, and the
config threads the settings through to the evolution's spec with one-line errors for bad ones."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.evolution import crossover_layers, layer_paths, mutate_one_layer
from neurocheckers.evolution.boss_ga import make_setup
from neurocheckers.experiment.config import ConfigError, load_config
from neurocheckers.experiment.folder import config_summary
from neurocheckers.formats import RESERVED_AGENT_KEYS
from neurocheckers.networks import agent_file, architectures, evaluator
from neurocheckers.networks.numpy_agent import NumpyAgent, encode_fen
from neurocheckers.rules import AMERICAN8, BLACK, SIMPLE6, WHITE, from_position
from neurocheckers.rules.notation import to_fen

TINY = {
    "cnn_channels": (3, 4),
    "cnn_dense": 5,
    "transformer_layers": 2,
    "transformer_heads": 2,
    "nnue_width": 8,
    "nnue_hidden": 4,
}
ARCHITECTURES = ("mlp", "cnn", "transformer", "nnue")
# Jitted once per spec (and batch shape): compiling whole functions is much cheaper than running
# the networks op by op.
INIT = jax.jit(evaluator.init_params, static_argnums=1)
VALUES = jax.jit(evaluator.value, static_argnums=0)
MUTATE = jax.jit(mutate_one_layer)
CROSS = jax.jit(crossover_layers)


def _spec(architecture: str, board_size: int = 6, material_input: bool = False) -> evaluator.EvaluatorSpec:
    return evaluator.EvaluatorSpec(
        2, 6, board_size, material_input, architecture=architecture, transformer_width=8, **TINY
    )


def _random_params(spec: evaluator.EvaluatorSpec, seed: int = 0):
    """Fresh parameters with every leaf moved by noise: LayerNorm scales and biases, biases and the
    material weight all take part (a fresh network has them at 1 or 0)."""
    rng = np.random.default_rng(seed)
    return jax.tree.map(
        lambda x: jnp.asarray(x + 0.3 * rng.standard_normal(x.shape), jnp.float32),
        INIT(jax.random.key(seed), spec),
    )


def _encode_all(rules, states):
    """[B, 2N] encodings of ``states`` (one jitted, vmapped encode)."""
    batch = jax.tree.map(lambda *xs: jnp.stack(xs), *states)
    return jax.jit(jax.vmap(lambda s: evaluator.encode(rules, s)))(batch)


def _bits(indices) -> int:
    return sum(1 << int(i) for i in indices)


def _random_positions(rules, count: int, seed: int = 0):
    """``count`` (position, colour-flipped mirror) pairs: men off their crowning rows, kings anywhere,
    up to 4 pieces a side, either colour to move."""
    rng = np.random.default_rng(seed)
    n, half = rules.num_squares, rules.board_size // 2
    pairs = []
    for _ in range(count):
        middle = half + rng.permutation(n - 2 * half)
        men = middle[: rng.integers(1, 5) + rng.integers(0, 4)]
        black_men, white_men = men[::2], men[1::2]
        kings = [s for s in rng.permutation(n) if s not in set(men)][: rng.integers(0, 4)]
        black_kings, white_kings = kings[::2], kings[1::2]
        color = int(rng.integers(0, 2))
        bm, bk, wm, wk = (_bits(x) for x in (black_men, black_kings, white_men, white_kings))

        def rotate(squares):
            return _bits(n - 1 - s for s in squares)

        state = from_position(rules, bm, bk, wm, wk, color=color)
        mirror = from_position(
            rules,
            rotate(white_men),
            rotate(white_kings),
            rotate(black_men),
            rotate(black_kings),
            color=WHITE if color == BLACK else BLACK,
        )
        pairs.append((state, mirror))
    return pairs


@pytest.mark.parametrize("material_input", [False, True])
@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_shapes_match_the_flax_parameters(architecture, material_input):
    spec = _spec(architecture, material_input=material_input)
    params = jax.eval_shape(lambda: evaluator.init_params(jax.random.key(0), spec))  # shapes only
    assert jax.tree.map(lambda x: tuple(x.shape), params) == evaluator.param_shapes(spec)
    assert evaluator.num_params(spec) == spec.num_params == sum(x.size for x in jax.tree.leaves(params))
    names = evaluator.layer_names(spec)
    assert set(layer_paths(params)) == set(names)  # the operators' layers are the spec's
    assert names[-1] == ("output" if architecture != "mlp" else "layer_2")
    if material_input:
        assert params[names[-1]]["material_weight"].shape == (1,)


def test_layer_norm_epsilon_is_flax_s():
    assert nn.LayerNorm().epsilon == architectures.LAYER_NORM_EPSILON


@pytest.mark.parametrize("board_size", [6, 8])
def test_board_planes_put_each_piece_on_its_square(board_size):
    last = board_size * board_size // 2
    # Black to move: own man on square 1 (row 0, col 1), opponent king on the last square (row S-1,
    # col S-2).
    fen = f"B:WK{last}:B1"
    planes = np.asarray(evaluator.board_planes(jnp.asarray(encode_fen(fen, board_size)), board_size))
    assert planes.shape == (board_size, board_size, 5)
    assert planes[0, 1, 0] == 1 and planes[board_size - 1, board_size - 2, 3] == 1
    assert planes[..., :4].sum() == 2
    dark = (np.add.outer(np.arange(board_size), np.arange(board_size)) % 2) == 1
    np.testing.assert_array_equal(planes[..., 4], dark.astype(np.float32))


@pytest.mark.parametrize(
    "architecture, material_input",
    [("mlp", False), ("cnn", False), ("cnn", True), ("transformer", False), ("transformer", True)],
)
def test_jax_and_numpy_agree_and_the_mirror_gets_the_same_value(tmp_path, architecture, material_input):
    spec = _spec(architecture, material_input=material_input)
    params = _random_params(spec)
    pairs = _random_positions(SIMPLE6, 12, seed=3)
    states = [s for pair in pairs for s in pair]
    assert {int(s.color) for s in states} == {BLACK, WHITE}
    assert any(int(s.black_kings) and int(s.white_kings) for s in states)
    obs = _encode_all(SIMPLE6, states)
    jax_values = np.asarray(VALUES(spec, params, obs))
    if not material_input:  # the search's leaf evaluator, on one State
        one = jax.jit(evaluator.value_fn(spec))(params, states[5], jax.random.key(0))
        np.testing.assert_allclose(float(one), jax_values[5], atol=1e-6)
    assert np.all((jax_values > 0) & (jax_values < 1)) and np.ptp(jax_values) > 1e-3

    # The colour-flipped mirror (colours swapped, board turned) is worth the same to its mover.
    np.testing.assert_allclose(jax_values[0::2], jax_values[1::2], atol=1e-6)

    path = tmp_path / f"{architecture}.safetensors"
    agent_file.save_agent(path, SIMPLE6, spec, params, {"note": "test"})
    numpy_agent = NumpyAgent.load(path)
    np.testing.assert_allclose(numpy_agent.value(np.asarray(obs)), jax_values, atol=1e-5)
    from_fen = [numpy_agent.value_of_fen(to_fen(s)) for s in states[:6]]
    np.testing.assert_allclose(from_fen, jax_values[:6], atol=1e-5)

    loaded = agent_file.load_agent(path, SIMPLE6)
    assert loaded.spec == spec
    np.testing.assert_allclose(np.asarray(VALUES(spec, loaded.params, obs)), jax_values, atol=1e-6)


@pytest.mark.parametrize("architecture", ["cnn", "transformer"])
def test_an_eight_by_eight_network_agrees_with_numpy(tmp_path, architecture):
    spec = _spec(architecture, board_size=8, material_input=True)
    params = _random_params(spec, seed=5)
    states = [s for pair in _random_positions(AMERICAN8, 4, seed=7) for s in pair]
    obs = _encode_all(AMERICAN8, states)
    path = tmp_path / "agent8.safetensors"
    agent_file.save_agent(path, AMERICAN8, spec, params)
    np.testing.assert_allclose(
        NumpyAgent.load(path).value(np.asarray(obs)), np.asarray(VALUES(spec, params, obs)), atol=1e-5
    )


def test_agent_files_record_the_architecture_and_refuse_bad_entries(tmp_path):
    spec = _spec("transformer")
    params = _random_params(spec)
    path = tmp_path / "t.safetensors"
    agent_file.save_agent(path, SIMPLE6, spec, params)
    meta = agent_file.load_agent(path).metadata
    assert (meta["architecture"], meta["transformer_layers"], meta["transformer_heads"]) == (
        "transformer",
        "2",
        "2",
    )
    assert meta["transformer_width"] == "8" and "cnn_channels" not in meta
    assert set(spec.metadata()) <= set(RESERVED_AGENT_KEYS)
    assert set(_spec("cnn").metadata()) == {"architecture", "cnn_channels", "cnn_dense"}
    assert _spec("cnn").metadata()["cnn_channels"] == "3,4"
    assert _spec("mlp").metadata() == {}  # MLP files stay as they were
    with pytest.raises(ValueError, match="reserved"):
        agent_file.save_agent(path, SIMPLE6, spec, params, {"architecture": "mlp"})

    from safetensors import safe_open
    from safetensors.numpy import save_file

    with safe_open(str(path), framework="numpy") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118
        good = dict(f.metadata())
    for edit, message in (
        ({"architecture": "rnn"}, "'architecture' must be one of mlp, cnn, transformer, nnue, got 'rnn'"),
        ({"transformer_heads": "3"}, "transformer_heads must divide transformer_width"),
        ({"transformer_layers": "x"}, "metadata 'transformer_layers' must be a positive integer"),
        ({"transformer_layers": "3"}, r"missing \['block_2/"),
        ({"architecture": "cnn", "cnn_channels": "4,a", "cnn_dense": "5"}, "'cnn_channels' must be"),
    ):
        bad = tmp_path / "bad.safetensors"
        save_file(tensors, str(bad), metadata={**good, **edit})
        with pytest.raises(ValueError, match=message):
            NumpyAgent.load(bad)


@pytest.mark.parametrize("architecture", ["cnn", "transformer"])
def test_operators_mutate_and_cross_whole_layers(architecture):
    spec = _spec(architecture, material_input=True)
    a, b = _random_params(spec, 1), _random_params(spec, 2)
    names = layer_paths(a)
    assert set(names) == set(evaluator.layer_names(spec))

    def same(x, y, name):
        pairs = zip(jax.tree.leaves(x[name]), jax.tree.leaves(y[name]), strict=True)
        return all(np.array_equal(p, q) for p, q in pairs)

    mutated = set()
    for seed in range(6):
        mutant = MUTATE(jax.random.key(seed), a, 0.1)
        changed = [name for name in names if not same(mutant, a, name)]
        assert len(changed) == 1
        mutated.update(changed)
        child = CROSS(jax.random.key(seed), a, b)
        assert all(same(child, a, name) or same(child, b, name) for name in names)  # whole layers
    assert len(mutated) > 1


def test_config_threads_the_architecture_to_the_evolution_spec():
    base = ["population=4", "games_per_epoch=2", "simulations=2", "max_plies=20"]
    config = load_config(None, [*base, "evaluator=cnn", "cnn_channels=4,8", "cnn_dense=6"])
    spec = make_setup(config.evolution_settings()).spec
    assert (spec.architecture, spec.cnn_channels, spec.cnn_dense) == ("cnn", (4, 8), 6)
    assert "CNN 4,8 + dense 6" in config_summary(config, 2)
    config = load_config(
        None, [*base, "evaluator=transformer", "transformer_layers=1", "transformer_width=16"]
    )
    spec = make_setup(config.evolution_settings()).spec
    assert (spec.architecture, spec.transformer_layers, spec.transformer_width) == ("transformer", 1, 16)
    assert load_config(None, ["cnn_channels=[8, 16]"]).cnn_channels == "8,16"  # a TOML list is fine
    assert make_setup(load_config(None, base).evolution_settings()).spec.architecture == "mlp"


@pytest.mark.parametrize(
    "override, message",
    [
        (["evaluator=rnn"], "evaluator must be one of mlp, cnn, transformer, nnue, got 'rnn'"),
        (["cnn_channels=8,x"], "cnn_channels must be comma-separated positive integers, got '8,x'"),
        (["cnn_channels=0"], "cnn_channels must be comma-separated positive integers, got '0'"),
        (["cnn_dense=0"], "cnn_dense must be >= 1, got 0"),
        (
            ["transformer_heads=3"],
            "transformer_heads must divide transformer_width, got 3 heads for width 32",
        ),
        (["transformer_layers=0"], "transformer_layers must be >= 1, got 0"),
        (["evaluator=transformer", "strategy=CMA_ES"], 'CMA_ES" evolves at most 10000 weights'),
    ],
)
def test_config_errors_name_the_bad_setting(override, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace("[", r"\[")) as info:
        load_config(None, override)
    assert "\n" not in str(info.value)
