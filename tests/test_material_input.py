"""``material_input``: Blondie24's piece difference fed straight to the output unit. The JAX MLP and
the NumPy loader agree, agent files keep the setting, files without it load as plain networks, and
the genetic operators treat ``material_weight`` as part of the output layer."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import save_file

from neurocheckers.evolution import crossover_layers, layer_paths, mutate_one_layer
from neurocheckers.networks import agent_file, evaluator
from neurocheckers.networks.numpy_agent import KING_VALUE as NUMPY_KING_VALUE
from neurocheckers.networks.numpy_agent import NumpyAgent
from neurocheckers.rules import BLACK, SIMPLE6
from neurocheckers.rules.engine import material_balance
from neurocheckers.rules.notation import parse_fen
from neurocheckers.rules.outcome import KING_VALUE
from neurocheckers.search.baselines import material_value_fn

PLAIN = evaluator.EvaluatorSpec(layers=2, width=4, board_size=6)
MATERIAL = evaluator.EvaluatorSpec(layers=2, width=4, board_size=6, material_input=True)
# Both colours to move, kings on both sides, material from -2.5 to +3 for the side to move.
FENS = (
    "B:W13,14,15,16,17,18:B1,2,3,4,5,6",
    "W:WK3,14,16:B5,K12,K18",
    "B:WK1,13:B2,K17,10",
    "W:W13,15:B4",
    "B:W13,15,16,K18:B4",
    "W:W16:B1,2,3,K4",
)


def _states():
    return [parse_fen(SIMPLE6, fen) for fen in FENS]


def _obs():
    return jnp.stack([evaluator.encode(SIMPLE6, s) for s in _states()])


def _material_params(key_seed: int = 3, weight: float = 0.7):
    """A random material-input network with a non-zero ``material_weight``."""
    params = evaluator.init_params(jax.random.key(key_seed), MATERIAL)
    params["layer_2"]["material_weight"] = jnp.array([weight], jnp.float32)
    return params


def _logit(p):
    p = np.asarray(p, np.float64)
    return np.log(p / (1 - p))


def test_spec_shapes_and_a_fresh_network_equal_the_plain_one():
    assert not PLAIN.material_input
    shapes = evaluator.param_shapes(MATERIAL)
    assert shapes["layer_2"] == {"kernel": (4, 1), "bias": (1,), "material_weight": (1,)}
    assert evaluator.num_params(MATERIAL) == evaluator.num_params(PLAIN) + 1
    with pytest.raises(ValueError, match="material_input"):
        evaluator.EvaluatorSpec(2, 4, 6, material_input=1)  # type: ignore[arg-type]
    plain = evaluator.init_params(jax.random.key(5), PLAIN)
    fresh = evaluator.init_params(jax.random.key(5), MATERIAL)
    assert jax.tree.map(lambda x: tuple(x.shape), fresh) == shapes
    # The same kernels and biases for the same key, and a zero weight: the same values.
    assert float(fresh["layer_2"]["material_weight"][0]) == 0.0
    for layer, leaves in plain.items():
        for name, leaf in leaves.items():
            np.testing.assert_array_equal(np.asarray(fresh[layer][name]), np.asarray(leaf))
    np.testing.assert_array_equal(
        np.asarray(evaluator.value(MATERIAL, fresh, _obs())),
        np.asarray(evaluator.value(PLAIN, plain, _obs())),
    )


def test_material_of_the_input_and_its_weight_on_the_logit():
    obs = _obs()
    material = np.asarray(evaluator.input_material(obs))
    # Side to move minus opponent, men 1 and kings 1.5: the engine's count, seen from the mover.
    np.testing.assert_allclose(material, [0.0, -0.5, 1.0, 1.0, -3.5, -3.5])
    for state, m in zip(_states(), material, strict=True):
        sign = 1.0 if int(state.color) == BLACK else -1.0
        assert m == pytest.approx(sign * float(material_balance(state)))
    assert KING_VALUE == NUMPY_KING_VALUE
    params = _material_params(weight=0.7)
    plain = {
        layer: {k: v for k, v in leaves.items() if k != "material_weight"} for layer, leaves in params.items()
    }
    with_weight = evaluator.value(MATERIAL, params, obs)
    without = evaluator.value(PLAIN, plain, obs)
    np.testing.assert_allclose(_logit(with_weight) - _logit(without), 0.7 * material, atol=1e-4)
    # A State and its encoding give the same value; the population path agrees too.
    state = _states()[1]
    assert float(evaluator.value(MATERIAL, params, state)) == pytest.approx(float(with_weight[1]))
    pop = jax.tree.map(lambda x: jnp.stack([x, x]), params)
    both = evaluator.population_values(MATERIAL, pop, jnp.stack([obs, obs]))
    np.testing.assert_allclose(np.asarray(both[1]), np.asarray(with_weight), rtol=1e-6)


def test_a_network_that_only_counts_material_is_the_material_evaluator():
    params = jax.tree.map(jnp.zeros_like, _material_params())
    params["layer_2"]["material_weight"] = jnp.array([0.5], jnp.float32)
    evaluate = evaluator.value_fn(MATERIAL)
    material = material_value_fn(SIMPLE6, scale=0.5)
    key = jax.random.key(0)
    for state in _states():
        assert float(evaluate(params, state, key)) == pytest.approx(
            float(material(None, state, key)), abs=1e-6
        )


def test_agent_file_and_numpy_loader_keep_material_input(tmp_path):
    params = _material_params()
    path = tmp_path / "material.safetensors"
    agent_file.save_agent(path, SIMPLE6, MATERIAL, params, {"run": "r"})
    agent = agent_file.load_agent(path, SIMPLE6)
    assert agent.spec == MATERIAL and agent.metadata["material_input"] == "true"
    assert float(agent.params["layer_2"]["material_weight"][0]) == pytest.approx(0.7)
    obs = _obs()
    jax_values = np.asarray(evaluator.value(agent.spec, agent.params, obs))
    np.testing.assert_array_equal(jax_values, np.asarray(evaluator.value(MATERIAL, params, obs)))
    numpy_agent = NumpyAgent.load(path)
    assert numpy_agent.material_weight is not None
    np.testing.assert_allclose(numpy_agent.value(np.asarray(obs)), jax_values, atol=1e-5)
    for fen, expected in zip(FENS, jax_values, strict=True):
        assert numpy_agent.value_of_fen(fen) == pytest.approx(float(expected), abs=1e-5), fen
    # The weight matters: without it NumPy would give other values.
    assert len({round(float(v), 4) for v in jax_values}) == len(FENS)
    with pytest.raises(ValueError, match="reserved"):
        agent_file.save_agent(tmp_path / "x.safetensors", SIMPLE6, PLAIN, params, {"material_input": "true"})


def _file(path):
    with safe_open(str(path), framework="numpy") as f:
        return {k: f.get_tensor(k) for k in f.keys()}, dict(f.metadata())  # noqa: SIM118 (not a dict)


def test_files_without_the_key_are_plain_networks_and_bad_ones_are_refused(tmp_path):
    plain_params = evaluator.init_params(jax.random.key(1), PLAIN)
    plain = tmp_path / "plain.safetensors"
    agent_file.save_agent(plain, SIMPLE6, PLAIN, plain_params)
    tensors, metadata = _file(plain)
    assert "material_input" not in metadata  # plain files are written as before the key existed
    assert agent_file.load_agent(plain).spec == PLAIN
    assert NumpyAgent.load(plain).material_weight is None
    np.testing.assert_allclose(
        NumpyAgent.load(plain).value(np.asarray(_obs())),
        np.asarray(evaluator.value(PLAIN, plain_params, _obs())),
        atol=1e-5,
    )
    explicit = tmp_path / "explicit.safetensors"
    save_file(tensors, str(explicit), metadata={**metadata, "material_input": "false"})
    assert agent_file.load_agent(explicit).spec == PLAIN

    material = tmp_path / "material.safetensors"
    agent_file.save_agent(material, SIMPLE6, MATERIAL, _material_params())
    m_tensors, m_metadata = _file(material)
    cases = {
        "missing": (tensors, {**metadata, "material_input": "true"}),
        "unexpected": (m_tensors, {k: v for k, v in m_metadata.items() if k != "material_input"}),
        "'true' or 'false'": (m_tensors, {**m_metadata, "material_input": "yes"}),
    }
    for i, (message, (t, meta)) in enumerate(cases.items()):
        bad = tmp_path / f"bad{i}.safetensors"
        save_file(t, str(bad), metadata=meta)
        for load in (agent_file.load_agent, NumpyAgent.load):
            with pytest.raises(ValueError, match=message):
                load(bad)


def test_operators_treat_the_weight_as_part_of_the_output_layer():
    params = _material_params()
    assert layer_paths(params) == list(evaluator.layer_names(MATERIAL))
    out_changed = hidden_changed = 0
    for seed in range(12):
        child = mutate_one_layer(jax.random.key(seed), params, 0.1)
        weight_moved = not np.array_equal(
            child["layer_2"]["material_weight"], params["layer_2"]["material_weight"]
        )
        kernel_moved = not np.array_equal(child["layer_2"]["kernel"], params["layer_2"]["kernel"])
        assert weight_moved == kernel_moved  # the weight mutates with its layer, and only then
        out_changed += weight_moved
        hidden_changed += not np.array_equal(child["layer_0"]["kernel"], params["layer_0"]["kernel"])
    assert out_changed and hidden_changed
    other = _material_params(key_seed=4, weight=-0.3)
    for seed in range(6):
        child = crossover_layers(jax.random.key(seed), params, other)
        source = params if np.array_equal(child["layer_2"]["kernel"], params["layer_2"]["kernel"]) else other
        np.testing.assert_array_equal(
            child["layer_2"]["material_weight"], source["layer_2"]["material_weight"]
        )
