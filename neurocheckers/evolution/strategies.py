"""Run evosax's own strategies on a member's flat genome, by their evosax names (the experiment's
strategy registry names the ones a run may use; ``neurocheckers strategies`` lists them).

evosax works on a flat vector: ``make_strategy`` ravels one example member with
``jax.flatten_util.ravel_pytree`` and hands evosax that flat ``[N]`` vector as its solution template;
``es_ask`` unravels the ``[P, N]`` population back into flax params with a leading ``[P]`` axis and
``es_tell`` ravels them again.

Sign convention: OUR fitness is points, higher is better; evosax minimises. The conversion happens in
exactly one place, ``_to_evosax_fitness`` (a negation), which every fitness passed to evosax goes
through. ``_from_evosax_fitness`` is its inverse, used only to report evosax's archived best back in
our sign.

Typical loop::

    es, es_params = make_strategy("Open_ES", 64, member_params, std=0.05, learning_rate=0.01)
    state = es_init(key_init, es, es_params, member_params)
    for gen in range(G):
        pop, state = es_ask(key_ask, es, state, es_params)      # pop: flax params, leaves [P, ...]
        fitness = evaluate(pop)                                  # [P] points, higher is better
        state, metrics = es_tell(key_tell, es, pop, fitness, state, es_params)

The functions are jittable with the ``FlatStrategy`` marked static (it hashes by identity).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax
from evosax import algorithms
from evosax.algorithms.base import EvolutionaryAlgorithm
from evosax.algorithms.population_based.base import PopulationBasedAlgorithm
from jax.flatten_util import ravel_pytree

Params = Any


def evosax_class(name: str) -> type | None:
    """The evosax algorithm class named ``name`` (e.g. "SNES"), or None when evosax has none."""
    cls = getattr(algorithms, name, None)
    return cls if isinstance(cls, type) and issubclass(cls, EvolutionaryAlgorithm) else None


def is_evosax(name: str) -> bool:
    """Whether ``name`` is an evosax algorithm's name."""
    return evosax_class(name) is not None


@dataclasses.dataclass(frozen=True, eq=False)
class FlatStrategy:
    """An evosax strategy on a flat genome, with the functions to go to and from flax params.

    Hashes by identity, so it can be a static argument of ``jax.jit`` (like evosax's own objects).

    Fields:
      name: the strategy's evosax name.
      strategy: the evosax algorithm object, built with a flat [N] solution template.
      num_dims: N, the genome length.
      population_size: P.
      ravel: one member's params -> [N] float32.
      unravel: [N] -> one member's params.
    """

    name: str
    strategy: Any
    num_dims: int
    population_size: int
    ravel: Callable[[Params], jax.Array]
    unravel: Callable[[jax.Array], Params]

    @property
    def is_population_based(self) -> bool:
        """Whether evosax's ``init`` wants a seeded population (SimpleGA) rather than a mean."""
        return isinstance(self.strategy, PopulationBasedAlgorithm)


def _to_evosax_fitness(fitness: jax.Array) -> jax.Array:
    """THE one place our fitness (points, higher is better) becomes evosax's (minimised): negation."""
    return -jnp.asarray(fitness, jnp.float32)


def _from_evosax_fitness(fitness: jax.Array) -> jax.Array:
    """Inverse of ``_to_evosax_fitness``, to report evosax's archived values in our sign."""
    return -fitness


def make_strategy(
    name: str, population_size: int, example_member_params: Params, **hyper: Any
) -> tuple[FlatStrategy, Any]:
    """Build an evosax strategy over the flat genome of ``example_member_params``.

    Args:
      name: an evosax algorithm's name ("SimpleGA", "Open_ES", "SNES", "CMA_ES" are tested).
      population_size: P (Open_ES needs it even: antithetic sampling).
      example_member_params: one member's params (no population axis); only its structure is used.
      **hyper: conveniences
        ``std``: the sampling/mutation standard deviation (a constant ``std_schedule`` for SimpleGA
          and Open_ES; ``std_init`` for SNES and CMA_ES);
        ``learning_rate``: for Open_ES and SNES, replaces the default optimizer by ``optax.sgd`` with
          this rate (evosax's defaults: 1e-3 for Open_ES, 1.0 for SNES);
        ``elite_ratio``: for SimpleGA and CMA_ES, the fraction of the population kept as parents;
      and otherwise any keyword of the evosax constructor (e.g. ``optimizer``, ``std_schedule``,
      ``use_antithetic_sampling``, ``fitness_shaping_fn``) or any field of its default params
      (e.g. ``crossover_rate`` for SimpleGA, ``std_min`` for CMA_ES).

    Returns:
      (FlatStrategy, es_params): es_params is the evosax params struct (a pytree).
    """
    cls = evosax_class(name)
    if cls is None:
        raise ValueError(f"unknown strategy {name!r}: evosax has no algorithm of that name")
    flat, unravel = ravel_pytree(example_member_params)
    num_dims = int(flat.size)

    hyper = dict(hyper)
    std = hyper.pop("std", None)
    learning_rate = hyper.pop("learning_rate", None)
    elite_ratio = hyper.pop("elite_ratio", None)

    ctor_names = set(inspect.signature(cls.__init__).parameters) - {"self", "population_size", "solution"}
    ctor_kwargs = {k: hyper.pop(k) for k in list(hyper) if k in ctor_names}
    if std is not None and "std_schedule" in ctor_names:
        ctor_kwargs.setdefault("std_schedule", optax.constant_schedule(float(std)))
    if learning_rate is not None:
        if "optimizer" not in ctor_names:
            raise ValueError(f"{name} takes no learning_rate")
        ctor_kwargs.setdefault("optimizer", optax.sgd(learning_rate=learning_rate))

    strategy = cls(
        population_size=population_size, solution=jnp.zeros((num_dims,), flat.dtype), **ctor_kwargs
    )
    if elite_ratio is not None:
        if not 0.0 < elite_ratio <= 1.0:
            raise ValueError(f"elite_ratio must be in (0, 1], got {elite_ratio}")
        strategy.elite_ratio = float(elite_ratio)  # read by default_params (CMA_ES) and ask (SimpleGA)

    es_params = strategy.default_params
    fields = {f.name for f in dataclasses.fields(es_params)}
    if std is not None and "std_init" in fields:
        hyper.setdefault("std_init", jnp.asarray(std, jnp.float32))
    unknown = set(hyper) - fields
    if unknown:
        raise ValueError(
            f"unknown hyperparameters {sorted(unknown)} for {name}; constructor keywords: "
            f"{sorted(ctor_names)}, params fields: {sorted(fields)}, conveniences: std, learning_rate, "
            "elite_ratio"
        )
    es_params = es_params.replace(**hyper)

    ravel = lambda member: ravel_pytree(member)[0]  # noqa: E731
    adapter = FlatStrategy(name, strategy, num_dims, population_size, ravel, unravel)
    return adapter, es_params


def _ravel_population(es: FlatStrategy, pop_params: Params) -> jax.Array:
    return jax.vmap(es.ravel)(pop_params)


def es_init(
    key: jax.Array,
    es: FlatStrategy,
    es_params: Any,
    member_params: Params,
    population: Params | None = None,
    fitness: jax.Array | None = None,
) -> Any:
    """The strategy's initial state, centred on ``member_params``.

    Distribution-based strategies (Open_ES, SNES, CMA_ES) take ``member_params`` as their mean.
    Population-based ones (SimpleGA) need an evaluated population: by default P copies of
    ``member_params`` with the worst possible fitness, so the first ``es_ask`` samples mutants of it;
    pass ``population`` ([P] params) and ``fitness`` ([P], ours) to seed it with an evaluated one.
    """
    mean = es.ravel(member_params)
    if not es.is_population_based:
        if population is not None or fitness is not None:
            raise ValueError(f"{es.name} is initialised from a mean; population/fitness are not used")
        return es.strategy.init(key, mean, es_params)
    if population is None:
        flat_pop = jnp.broadcast_to(mean, (es.population_size, es.num_dims))
    else:
        flat_pop = _ravel_population(es, population)
    if fitness is None:
        fitness = jnp.full((es.population_size,), -jnp.inf, jnp.float32)
    return es.strategy.init(key, flat_pop, _to_evosax_fitness(fitness), es_params)


def es_ask(key: jax.Array, es: FlatStrategy, state: Any, es_params: Any) -> tuple[Params, Any]:
    """(population, state): the candidates as flax params with a leading [P] axis, and the new state."""
    flat_pop, state = es.strategy.ask(key, state, es_params)
    return jax.vmap(es.unravel)(flat_pop), state


def es_tell(
    key: jax.Array,
    es: FlatStrategy,
    population: Params,
    fitness: jax.Array,
    state: Any,
    es_params: Any,
) -> tuple[Any, dict[str, jax.Array]]:
    """Tell the strategy OUR fitness ([P] points, higher is better) of ``population`` ([P] params).

    Returns:
      (state, metrics): metrics are [] values in our sign: ``best_fitness_in_generation``,
      ``mean_fitness``, ``best_fitness`` (the best so far, from evosax's archive) and
      ``generation_counter``.
    """
    fitness = jnp.asarray(fitness, jnp.float32)
    state, _ = es.strategy.tell(
        key, _ravel_population(es, population), _to_evosax_fitness(fitness), state, es_params
    )
    metrics = {
        "best_fitness_in_generation": jnp.nanmax(fitness),
        "mean_fitness": jnp.nanmean(fitness),
        "best_fitness": _from_evosax_fitness(state.best_fitness),
        "generation_counter": state.generation_counter,
    }
    return state, metrics


def es_best(es: FlatStrategy, state: Any) -> tuple[Params, jax.Array]:
    """(member_params, fitness): the best member evosax has archived so far, with its fitness (ours)."""
    return es.unravel(state.best_solution), _from_evosax_fitness(state.best_fitness)
