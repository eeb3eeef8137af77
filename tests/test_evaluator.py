"""Tests of the evaluator (encoding, MLP, population helpers) and of agent files.

6x6 geometry (row 0 at the top, Black moving down; bit i = square i + 1):
  row 0: 1,2,3 at cols 1,3,5    row 1: 4,5,6 at cols 0,2,4    row 2: 7,8,9 at cols 1,3,5
  row 3: 10,11,12 at cols 0,2,4 row 4: 13,14,15 at 1,3,5      row 5: 16,17,18 at cols 0,2,4
The 180-degree rotation maps square index i (0-based) to 17 - i.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from safetensors.numpy import save_file

from neurocheckers.networks import agent_file, evaluator
from neurocheckers.rules import AMERICAN8, BLACK, PRESETS, SIMPLE6, WHITE, from_position, init

SPEC = evaluator.EvaluatorSpec(layers=3, width=8, board_size=6)


def _bits(*indices: int) -> int:
    return sum(1 << i for i in indices)


@pytest.fixture(scope="module")
def population():
    return evaluator.init_population(jax.random.key(0), SPEC, 4)


# ---------------------------------------------------------------------------
# Spec
# ---------------------------------------------------------------------------


def test_spec_sizes_and_validation():
    assert SPEC.input_size == 36
    assert evaluator.EvaluatorSpec(5, 64, 8).input_size == 64
    assert evaluator.EvaluatorSpec.for_rules(AMERICAN8, 7, 16) == evaluator.EvaluatorSpec(7, 16, 8)
    assert evaluator.layer_names(SPEC) == ("layer_0", "layer_1", "layer_2", "layer_3")
    for bad, name in (((0, 8, 6), "layers"), ((3, 0, 6), "width"), ((3, 8, 7), "board_size")):
        with pytest.raises(ValueError, match=name):
            evaluator.EvaluatorSpec(*bad)
    with pytest.raises(ValueError, match="layers"):
        evaluator.EvaluatorSpec(2.5, 8, 6)  # type: ignore[arg-type]


def test_param_shapes_match_init():
    params = evaluator.init_params(jax.random.key(1), SPEC)
    shapes = jax.tree.map(lambda x: tuple(x.shape), params)
    assert shapes == evaluator.param_shapes(SPEC)
    assert evaluator.num_params(SPEC) == 36 * 8 + 8 + 2 * (8 * 8 + 8) + 8 + 1


# ---------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------


def test_encoding_black_to_move():
    # Black: man on square 1 (bit 0), king on 6 (bit 5). White: man on 18 (bit 17), king on 11 (bit 10).
    state = from_position(SIMPLE6, _bits(0), _bits(5), _bits(17), _bits(10), color=BLACK)
    obs = np.asarray(evaluator.encode(SIMPLE6, state))
    men, kings = obs[:18], obs[18:]
    assert obs.shape == (36,) and obs.dtype == np.float32
    assert men[0] == 1 and men[17] == -1 and np.count_nonzero(men) == 2
    assert kings[5] == 1 and kings[10] == -1 and np.count_nonzero(kings) == 2


def test_encoding_white_to_move_is_rotated():
    state = from_position(SIMPLE6, _bits(0), _bits(5), _bits(17), _bits(10), color=WHITE)
    obs = np.asarray(evaluator.encode(SIMPLE6, state))
    men, kings = obs[:18], obs[18:]
    # Own (White) pieces are +1, seen rotated: square i appears at 17 - i.
    assert men[17 - 17] == 1 and men[17 - 0] == -1 and np.count_nonzero(men) == 2
    assert kings[17 - 10] == 1 and kings[17 - 5] == -1 and np.count_nonzero(kings) == 2


def test_start_position_looks_the_same_to_both_sides():
    start = init(SIMPLE6)
    as_black = evaluator.encode(SIMPLE6, start)
    as_white = evaluator.encode(SIMPLE6, start.replace(color=jnp.int32(WHITE)))
    np.testing.assert_array_equal(as_black, as_white)
    np.testing.assert_array_equal(as_black[:6], 1)
    np.testing.assert_array_equal(as_black[12:18], -1)


@pytest.mark.parametrize("name", list(PRESETS))
def test_colour_swapped_mirror_encodes_identically(name):
    """A position and its 180-degree rotation with colours swapped look the same to the side to move."""
    rules = PRESETS[name]
    n = rules.num_squares
    rng = np.random.default_rng(3)
    half = rules.board_size // 2
    squares = half + rng.permutation(n - 2 * half)[:8]  # off both crowning rows: no man may stand there
    bm, bk, wm, wk = (_bits(*squares[i : i + 2]) for i in (0, 2, 4, 6))

    def rotate(bits: int) -> int:
        return _bits(*(n - 1 - i for i in range(n) if bits >> i & 1))

    state = from_position(rules, bm, bk, wm, wk, color=BLACK)
    mirror = from_position(rules, rotate(wm), rotate(wk), rotate(bm), rotate(bk), color=WHITE)
    np.testing.assert_array_equal(evaluator.encode(rules, state), evaluator.encode(rules, mirror))


# ---------------------------------------------------------------------------
# Values and populations
# ---------------------------------------------------------------------------


def test_value_is_a_probability_and_accepts_state_or_obs(population):
    params = evaluator.select_members(population, [2])
    params = jax.tree.map(lambda x: x[0], params)
    state = init(SIMPLE6)
    from_state = evaluator.value(SPEC, params, state)
    from_obs = evaluator.value(SPEC, params, evaluator.encode(SIMPLE6, state))
    assert from_state.shape == () and 0.0 < float(from_state) < 1.0
    np.testing.assert_allclose(from_state, from_obs)
    fn = evaluator.value_fn(SPEC)
    assert fn is evaluator.value_fn(SPEC)  # cached: one static jit argument per spec
    np.testing.assert_allclose(fn(params, state, jax.random.key(0)), from_state)


def test_population_values_equal_member_values(population):
    obs = jax.random.uniform(jax.random.key(5), (4, 3, SPEC.input_size), minval=-1, maxval=1)
    together = np.asarray(evaluator.population_values(SPEC, population, obs))
    assert together.shape == (4, 3)
    for p in range(4):
        member = jax.tree.map(lambda x, p=p: x[p], population)
        for m in range(3):
            np.testing.assert_allclose(together[p, m], evaluator.value(SPEC, member, obs[p, m]), rtol=1e-5)
    # Members differ (one key was split, not reused).
    assert len({round(float(v), 6) for v in together[:, 0]}) == 4


def test_select_members(population):
    chosen = evaluator.select_members(population, jnp.array([3, 1, 3]))
    for name in evaluator.layer_names(SPEC):
        np.testing.assert_array_equal(chosen[name]["kernel"][0], population[name]["kernel"][3])
        np.testing.assert_array_equal(chosen[name]["kernel"][1], population[name]["kernel"][1])
        assert chosen[name]["bias"].shape[0] == 3


def test_flatten_unflatten_round_trip(population):
    flat = evaluator.flatten_population(population)
    assert flat.shape == (4, evaluator.num_params(SPEC))
    back = evaluator.unflatten_population(SPEC, flat)
    assert jax.tree.structure(back) == jax.tree.structure(population)
    for a, b in zip(jax.tree.leaves(back), jax.tree.leaves(population), strict=True):
        np.testing.assert_array_equal(a, b)
    # A change in the flat genome shows up in exactly one place of the pytree.
    changed = evaluator.unflatten_population(SPEC, flat.at[1, 0].add(1.0))
    diffs = sum(
        int(jnp.sum(a != b)) for a, b in zip(jax.tree.leaves(changed), jax.tree.leaves(back), strict=True)
    )
    assert diffs == 1
    with pytest.raises(ValueError, match="genomes"):
        evaluator.unflatten_population(SPEC, flat[:, :-1])


# ---------------------------------------------------------------------------
# Agent files
# ---------------------------------------------------------------------------


def test_agent_file_round_trip(tmp_path, population):
    params = jax.tree.map(lambda x: x[1], population)
    path = tmp_path / "agent.safetensors"
    agent_file.save_agent(path, "simple6", SPEC, params, {"run": "r1", "generation": "7"})
    agent = agent_file.load_agent(path, rules=SIMPLE6)
    assert agent.spec == SPEC and agent.rules == SIMPLE6
    assert agent.metadata["run"] == "r1" and agent.metadata["generation"] == "7"
    assert agent.metadata["format_version"] == agent_file.FORMAT_VERSION
    assert agent.metadata["input_encoding"] == evaluator.INPUT_ENCODING
    for a, b in zip(jax.tree.leaves(agent.params), jax.tree.leaves(params), strict=True):
        np.testing.assert_array_equal(a, b)
    state = init(SIMPLE6)
    np.testing.assert_allclose(
        evaluator.value(SPEC, agent.params, state), evaluator.value(SPEC, params, state)
    )


def test_agent_file_refuses_bad_files(tmp_path, population):
    params = jax.tree.map(lambda x: x[0], population)
    good = tmp_path / "good.safetensors"
    agent_file.save_agent(good, SIMPLE6, SPEC, params)

    with pytest.raises(ValueError, match="american8"):
        agent_file.load_agent(good, rules="american8")

    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"not a safetensors file at all")
    with pytest.raises(ValueError, match="safetensors"):
        agent_file.load_agent(garbage)

    def rewrite(name: str, tensors_edit=None, **metadata_edit) -> str:
        agent = agent_file.load_agent(good)
        tensors = {
            f"{layer}/{leaf}": np.asarray(agent.params[layer][leaf])
            for layer in agent.params
            for leaf in agent.params[layer]
        }
        if tensors_edit:
            tensors_edit(tensors)
        path = tmp_path / name
        save_file(tensors, str(path), metadata={**agent.metadata, **metadata_edit})
        return str(path)

    with pytest.raises(ValueError, match="width"):
        agent_file.load_agent(rewrite("wide.safetensors", width="9"))
    with pytest.raises(ValueError, match="format_version"):
        agent_file.load_agent(rewrite("v99.safetensors", format_version="99"))
    with pytest.raises(ValueError, match="input_encoding"):
        agent_file.load_agent(rewrite("enc.safetensors", input_encoding="other"))
    with pytest.raises(ValueError, match="unknown rules preset"):
        agent_file.load_agent(rewrite("rules.safetensors", rules="international10"))
    with pytest.raises(ValueError, match="layers"):
        agent_file.load_agent(rewrite("layers.safetensors", layers="three"))
    with pytest.raises(ValueError, match="missing"):
        agent_file.load_agent(rewrite("missing.safetensors", lambda t: t.pop("layer_3/bias")))

    def wrong_shape(tensors):
        tensors["layer_1/kernel"] = np.zeros((8, 9), np.float32)

    with pytest.raises(ValueError, match="layer_1/kernel"):
        agent_file.load_agent(rewrite("shape.safetensors", wrong_shape))

    with pytest.raises(ValueError, match="reserved"):
        agent_file.save_agent(tmp_path / "x.safetensors", SIMPLE6, SPEC, params, {"width": "3"})
    with pytest.raises(ValueError, match="board_size"):
        agent_file.save_agent(tmp_path / "y.safetensors", AMERICAN8, SPEC, params)


@pytest.mark.parametrize("material_input", [False, True])
def test_a_width_masked_mlp_is_the_narrower_mlp_and_grows_without_changing_its_values(material_input):
    """Masked to 3 of 6 units, a 2-layer MLP gives the values of the 3-unit MLP holding its first
    units' weights; grown back to 5 units its values are unchanged until it trains (the new units'
    weights out are zero) while their weights in are fresh; shrunk, it is the masked network."""
    wide = evaluator.EvaluatorSpec(layers=2, width=6, board_size=6, material_input=material_input)
    narrow = evaluator.EvaluatorSpec(layers=2, width=3, board_size=6, material_input=material_input)
    keys = jax.random.split(jax.random.key(7), 3)
    params, fresh = evaluator.init_params(keys[0], wide), evaluator.init_params(keys[1], wide)
    params["layer_2"]["material_weight" if material_input else "bias"] += 0.3  # not the initial zero
    obs = jax.random.bernoulli(keys[2], 0.3, (64, wide.input_size)).astype(jnp.float32)
    masked = evaluator.masked_to_width(wide, params, 3)
    sliced = {
        "layer_0": {"kernel": params["layer_0"]["kernel"][:, :3], "bias": params["layer_0"]["bias"][:3]},
        "layer_1": {"kernel": params["layer_1"]["kernel"][:3, :3], "bias": params["layer_1"]["bias"][:3]},
        "layer_2": {**params["layer_2"], "kernel": params["layer_2"]["kernel"][:3]},
    }
    expected = evaluator.value(narrow, sliced, obs)
    np.testing.assert_allclose(evaluator.value(wide, masked, obs), expected, rtol=1e-6, atol=1e-7)
    assert not np.allclose(evaluator.value(wide, params, obs), expected, atol=1e-4)  # the mask matters

    grown = evaluator.resized_to_width(wide, masked, fresh, 3, 5)
    np.testing.assert_allclose(evaluator.value(wide, grown, obs), expected, rtol=1e-6, atol=1e-7)
    kernel_in, kernel_out = np.asarray(grown["layer_0"]["kernel"]), np.asarray(grown["layer_2"]["kernel"])
    np.testing.assert_array_equal(kernel_in[:, 3:5], np.asarray(fresh["layer_0"]["kernel"])[:, 3:5])
    np.testing.assert_array_equal(kernel_in[:, :3], np.asarray(params["layer_0"]["kernel"])[:, :3])
    assert not np.any(kernel_in[:, 5:]) and not np.any(kernel_out[3:])
    hidden = np.asarray(grown["layer_1"]["kernel"])
    assert not np.any(hidden[3:5, :3]) and np.array_equal(
        hidden[:5, 3:5], np.asarray(fresh["layer_1"]["kernel"])[:5, 3:5]
    )

    shrunk = evaluator.resized_to_width(wide, params, fresh, 6, 3)
    for got, want in zip(jax.tree.leaves(shrunk), jax.tree.leaves(masked), strict=True):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="only an MLP's width can be masked, got architecture 'nnue'"):
        evaluator.width_masks(
            evaluator.EvaluatorSpec(layers=1, width=4, board_size=6, architecture="nnue"), 2
        )
