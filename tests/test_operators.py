"""Genetic operators (neurocheckers.evolution.operators) and the evosax adapter (strategies)."""

from __future__ import annotations

from functools import partial

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from neurocheckers.evolution import (
    crossover_layers,
    es_ask,
    es_best,
    es_init,
    es_tell,
    layer_paths,
    make_strategy,
    mutate_one_layer,
    next_generation,
    num_layers,
    pick_partners,
    rank_members,
    train_member,
)

D = 3  # input features of the toy MLP
P = 8  # population size (E = 2 elites)


class MLP(nn.Module):
    """Dense+ReLU hidden layers, then Dense(1)+sigmoid: the agents' architecture in miniature."""

    width: int = 4
    layers: int = 2

    @nn.compact
    def __call__(self, x):
        for _ in range(self.layers):
            x = nn.relu(nn.Dense(self.width)(x))
        return nn.sigmoid(nn.Dense(1)(x))[..., 0]


MODEL = MLP()
BIG = MLP(width=64)  # its 64x64 hidden layer gives 4160 noise samples for the scale check


def APPLY(params, x):  # noqa: N802 - a plain function: hashable, so a static jit argument
    return MODEL.apply(params, x)


MUTATE_MANY = jax.jit(jax.vmap(mutate_one_layer, in_axes=(0, None, None)))
CROSS_MANY = jax.jit(jax.vmap(crossover_layers, in_axes=(0, None, None)))
TRAIN = jax.jit(train_member, static_argnames=("apply_fn", "steps", "loss"))
TRAIN_MINIBATCH = jax.jit(train_member, static_argnames=("apply_fn", "steps", "batch_size", "loss"))


@partial(jax.jit, static_argnums=(1,))
def _init(key, model):
    return model.init(key, jnp.zeros((D,)))


def member(seed: int = 0, model: nn.Module = MODEL):
    return _init(jax.random.key(seed), model)


@partial(jax.jit, static_argnums=(1, 2))
def _init_population(key, size, model):
    return jax.vmap(lambda k: model.init(k, jnp.zeros((D,))))(jax.random.split(key, size))


def population(seed: int = 0, size: int = P, model: nn.Module = MODEL):
    return _init_population(jax.random.key(seed), size, model)


def host(tree):
    """The pytree as numpy arrays (cheap slicing and comparison in the checks)."""
    return jax.tree.map(np.asarray, tree)


def layer(params, name):
    return params["params"][name]


def same(a, b) -> bool:
    """Bit-identical pytrees."""
    return all(
        np.array_equal(np.asarray(x), np.asarray(y))
        for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)
    )


def changed_layers(before, after) -> list[str]:
    return [n for n in layer_paths(before) if not same(layer(before, n), layer(after, n))]


def member_at(pop, i):
    return jax.tree.map(lambda x: np.asarray(x)[i], pop)


# --- layers ---------------------------------------------------------------------------------------


def test_layer_paths_natural_order_and_depth():
    params = member()
    assert layer_paths(params) == ["Dense_0", "Dense_1", "Dense_2"]
    assert num_layers(params) == 3
    assert layer_paths(population()) == ["Dense_0", "Dense_1", "Dense_2"]
    deep = {"params": {f"Dense_{i}": {"kernel": jnp.zeros((1, 1)), "bias": jnp.zeros(1)} for i in range(12)}}
    assert layer_paths(deep) == [f"Dense_{i}" for i in range(12)]  # Dense_2 < Dense_10
    assert num_layers(deep) == 12
    assert layer_paths(deep["params"]) == layer_paths(deep)  # a bare layer dict works too


# --- mutation -------------------------------------------------------------------------------------


def test_mutation_changes_exactly_one_whole_layer():
    params = host(member(model=BIG))
    keys = jax.random.split(jax.random.key(1), 24)
    mutants = host(MUTATE_MANY(keys, params, 0.1))
    chosen = set()
    for i in range(len(keys)):
        mutant = member_at(mutants, i)
        changed = changed_layers(params, mutant)
        assert len(changed) == 1, changed
        name = changed[0]
        chosen.add(name)
        for leaf_name in ("kernel", "bias"):  # kernel AND bias both moved, every entry
            diff = layer(mutant, name)[leaf_name] - layer(params, name)[leaf_name]
            assert np.all(diff != 0), (name, leaf_name)
    assert chosen == set(layer_paths(params))  # uniform choice: 24 draws hit all 3 layers


def test_mutation_noise_scale():
    params = host(member(model=BIG))
    sigma = 0.05
    keys = jax.random.split(jax.random.key(2), 24)
    mutants = host(MUTATE_MANY(keys, params, sigma))
    diffs = []
    for i in range(len(keys)):
        mutant = member_at(mutants, i)
        (name,) = changed_layers(params, mutant)
        if name == "Dense_1":  # the 64x64 layer: 4160 samples of the noise
            d = jax.tree.map(lambda a, b: (a - b).ravel(), layer(mutant, name), layer(params, name))
            diffs.append(np.concatenate(jax.tree.leaves(d)))
    assert diffs, "no draw chose the large layer"
    d = np.concatenate(diffs)
    assert abs(d.mean()) < 0.1 * sigma
    assert d.std() == pytest.approx(sigma, rel=0.05)


# --- crossover ------------------------------------------------------------------------------------


def test_crossover_takes_whole_layers_from_the_parents():
    a, b = host(member(0)), host(member(1))
    keys = jax.random.split(jax.random.key(3), 32)
    children = host(CROSS_MANY(keys, a, b))
    from_a_counts = np.zeros(num_layers(a))
    for i in range(len(keys)):
        child = member_at(children, i)
        for j, name in enumerate(layer_paths(a)):
            from_a = same(layer(child, name), layer(a, name))
            from_b = same(layer(child, name), layer(b, name))
            assert from_a != from_b, name  # whole layer (kernel and bias) from exactly one parent
            from_a_counts[j] += from_a
    assert np.all(from_a_counts > 0) and np.all(from_a_counts < len(keys))


def test_pick_partners_never_self():
    for num_elites in (2, 3, 8):
        keys = jax.random.split(jax.random.key(num_elites), 64)
        partners = np.asarray(jax.jit(jax.vmap(partial(pick_partners, num_elites=num_elites)))(keys))
        assert partners.dtype == np.int32 and partners.shape == (64, num_elites)
        assert np.all(partners != np.arange(num_elites))
        assert partners.min() == 0 and partners.max() == num_elites - 1
    assert np.asarray(pick_partners(jax.random.key(0), 1)).tolist() == [0]


# --- learner --------------------------------------------------------------------------------------


def synthetic_data(seed: int, m: int = 64):
    kx, kw = jax.random.split(jax.random.key(seed))
    x = jax.random.normal(kx, (m, D))
    targets = jax.nn.sigmoid(x @ jax.random.normal(kw, (D,)))
    return x, targets


@pytest.mark.parametrize("loss", ["mae", "mse"])
def test_train_member_reduces_its_loss(loss):
    x, t = synthetic_data(4)
    w = jnp.ones(t.shape)
    new, before, after = TRAIN(APPLY, member(), x, t, w, 0.02, steps=100, loss=loss)
    assert float(after) < 0.7 * float(before)
    assert not same(new, member())


def test_train_member_ignores_masked_rows():
    x, t = synthetic_data(5)
    half = x.shape[0] // 2
    mask = (jnp.arange(x.shape[0]) < half).astype(jnp.float32)
    clean, b1, a1 = TRAIN(APPLY, member(), x, t, mask, 0.02, steps=100, loss="mse")
    garbage_t = t.at[half:].set(1.0)
    garbage_x = x.at[half:].set(50.0)
    garbage, b2, a2 = TRAIN(APPLY, member(), garbage_x, garbage_t, mask, 0.02, steps=100, loss="mse")
    assert float(b1) == float(b2) and float(a1) == float(a2)
    assert same(clean, garbage)
    # the loss is the mean over the valid rows only
    pred = MODEL.apply(member(), x[:half])
    np.testing.assert_allclose(b1, jnp.mean((pred - t[:half]) ** 2), rtol=1e-6)


def test_minibatch_training_learns_and_never_draws_masked_rows():
    x, t = synthetic_data(6)
    half = x.shape[0] // 2
    mask = (jnp.arange(x.shape[0]) < half).astype(jnp.float32)
    key = jax.random.key(3)
    args = dict(learning_rate=0.02, steps=200, batch_size=16, key=key, loss="mse")
    clean, before, after = TRAIN_MINIBATCH(APPLY, member(), x, t, mask, **args)
    assert float(after) < 0.7 * float(before)
    # Masked rows are never drawn: garbage there changes nothing, bit for bit.
    garbage_x, garbage_t = x.at[half:].set(50.0), t.at[half:].set(1.0)
    garbage, before2, after2 = TRAIN_MINIBATCH(APPLY, member(), garbage_x, garbage_t, mask, **args)
    assert same(clean, garbage) and float(before) == float(before2) and float(after) == float(after2)
    # With no valid row at all it stays finite (the loss is 0, nothing to learn).
    empty, _, zero = TRAIN_MINIBATCH(APPLY, member(), x, t, jnp.zeros(t.shape), **args)
    assert float(zero) == 0.0 and same(empty, member())


# --- ranking --------------------------------------------------------------------------------------


def test_rank_members_best_first_ties_to_lower_index():
    fitness = jnp.array([1.0, 3.0, 3.0, -2.0, 1.0, 3.0, 0.0, -0.0])
    assert np.asarray(rank_members(fitness)).tolist() == [1, 2, 5, 0, 4, 6, 7, 3]
    assert rank_members(fitness).dtype == jnp.int32
    assert np.asarray(rank_members(jnp.array([2, 2, 2, 2]))).tolist() == [0, 1, 2, 3]


# --- next_generation ------------------------------------------------------------------------------


def test_next_generation_quarters():
    pop = host(population(7))
    fitness = jnp.array([0.0, 5.0, 1.0, 5.0, 2.0, -1.0, 3.0, 0.5])
    ranking = rank_members(fitness)
    elite_idx = np.asarray(ranking[:2])
    assert elite_idx.tolist() == [1, 3]
    m = 32
    inputs = jax.random.normal(jax.random.key(8), (P, m, D))
    # each member's own positions: member 1 should learn to say 0.9, member 3 to say 0.1
    targets = jnp.full((P, m), 0.5).at[1].set(0.9).at[3].set(0.1)
    weights = jnp.ones((P, m))

    step = jax.jit(
        partial(next_generation, apply_fn=APPLY, train_steps=150, loss="mae"),
    )
    new_pop, metrics = step(
        jax.random.key(9), pop, ranking, inputs, targets, weights,
        mutation_rate=0.1, learning_rate=0.05, fitness=fitness,
    )  # fmt: skip
    new_pop = host(new_pop)
    assert jax.tree.map(jnp.shape, new_pop) == jax.tree.map(jnp.shape, pop)
    elites = [member_at(pop, i) for i in elite_idx]
    new = [member_at(new_pop, i) for i in range(P)]

    # quarter 1: bit-identical elites in rank order
    assert same(new[0], elites[0]) and same(new[1], elites[1])
    # quarter 2: each elite with exactly one layer mutated
    for k in range(2):
        assert len(changed_layers(elites[k], new[2 + k])) == 1
    # quarter 3: each layer whole from the elite or its partner (with E = 2, the other elite)
    for k in range(2):
        child = new[4 + k]
        for name in layer_paths(child):
            assert any(same(layer(child, name), layer(e, name)) for e in elites)
    # quarter 4: each elite trained on its own positions
    for k in range(2):
        learner = new[6 + k]
        assert changed_layers(elites[k], learner) == layer_paths(learner)
    mean_pred = [float(jnp.mean(APPLY(new[6 + k], inputs[elite_idx[k]]))) for k in range(2)]
    assert mean_pred[0] > 0.75 and mean_pred[1] < 0.25, mean_pred

    assert set(metrics) == {"learner_loss_before", "learner_loss_after", "best_fitness", "elite_fitness_mean"}
    assert all(jnp.shape(v) == () and np.isfinite(v) for v in metrics.values())
    assert float(metrics["learner_loss_after"]) < float(metrics["learner_loss_before"])
    assert float(metrics["best_fitness"]) == 5.0 and float(metrics["elite_fitness_mean"]) == 5.0


def test_next_generation_rejects_population_not_divisible_by_4():
    pop = jax.tree.map(lambda x: np.stack([np.asarray(x)] * 6), member())
    with pytest.raises(ValueError, match="6"):
        next_generation(
            jax.random.key(0), pop, jnp.arange(6), jnp.zeros((6, 2, D)), jnp.zeros((6, 2)), jnp.ones((6, 2)),
            apply_fn=APPLY, mutation_rate=0.1, learning_rate=0.01, train_steps=1,
        )  # fmt: skip


# --- evosax strategies ----------------------------------------------------------------------------


def toy_fitness(pop):
    """Points to maximise: -||x - 1||^2 over the flat genome (best 0 at x = 1)."""
    flat = jax.vmap(lambda q: ravel_pytree(q)[0])(pop)
    return -jnp.sum((flat - 1.0) ** 2, axis=-1)


HYPER = {
    "SimpleGA": {"std": 0.1},
    "Open_ES": {"std": 0.1, "learning_rate": 0.05},
    "SNES": {"std": 0.1},
    "CMA_ES": {"std": 0.1},
}


@pytest.mark.parametrize("name", sorted(HYPER))
def test_evosax_strategy_runs_and_improves(name):
    params = member()
    es, es_params = make_strategy(name, 16, params, **HYPER[name])
    assert es.num_dims == ravel_pytree(params)[0].size

    @jax.jit
    def run(key):
        state = es_init(key, es, es_params, params)

        def generation(state, k):
            k_ask, k_tell = jax.random.split(k)
            pop, state = es_ask(k_ask, es, state, es_params)
            state, metrics = es_tell(k_tell, es, pop, toy_fitness(pop), state, es_params)
            return state, (metrics["best_fitness_in_generation"], metrics["best_fitness"])

        state, (per_gen, best_so_far) = jax.lax.scan(generation, state, jax.random.split(key, 20))
        last_pop, _ = es_ask(key, es, state, es_params)
        return per_gen, best_so_far, es_best(es, state), last_pop

    per_gen, best_so_far, (best_params, best_fitness), pop = run(jax.random.key(1))
    assert jax.tree.map(jnp.shape, pop) == jax.tree.map(lambda x: (16, *x.shape), params)
    assert np.all(np.isfinite(per_gen)) and np.isfinite(best_fitness)
    assert np.all(np.diff(np.asarray(best_so_far)) >= 0)  # archive in OUR sign: never gets worse
    # the archived best is a maximiser of OUR fitness (the sign reached evosax correctly)
    best_again = toy_fitness(jax.tree.map(lambda x: x[None], best_params))[0]
    np.testing.assert_allclose(best_again, best_fitness, rtol=1e-5)
    np.testing.assert_allclose(best_fitness, np.max(per_gen), rtol=1e-6)
    start = float(toy_fitness(jax.tree.map(lambda x: x[None], params))[0])
    assert float(best_fitness) > start + 5.0, (start, float(best_fitness))


def test_es_tell_maximises_our_fitness():
    params = member()
    es, es_params = make_strategy("SimpleGA", 8, params, std=0.1)
    state = es_init(jax.random.key(0), es, es_params, params)
    pop, state = es_ask(jax.random.key(1), es, state, es_params)
    fitness = jnp.array([1.0, 2.0, 9.0, 0.0, -3.0, 4.0, 2.0, 1.0])  # member 2 has the most points
    state, metrics = es_tell(jax.random.key(2), es, pop, fitness, state, es_params)
    best_params, best_fitness = es_best(es, state)
    assert same(best_params, member_at(pop, 2)) and float(best_fitness) == 9.0
    assert float(metrics["best_fitness"]) == 9.0


def test_make_strategy_rejects_unknown_names():
    with pytest.raises(ValueError, match="'PSOish': evosax has no algorithm of that name"):
        make_strategy("PSOish", 8, member())
    with pytest.raises(ValueError, match="bogus"):
        make_strategy("SNES", 8, member(), bogus=1.0)
