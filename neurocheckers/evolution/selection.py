"""Selection that measures strength rather than luck: paired openings drawn per epoch, a confirmation
match before a promotion, a hall of fame of past bosses and fixed benchmark opponents.

Pure functions for ``boss_ga.evolve_epoch``. Openings come from the committed set of the rules
(``rules.openings``); an epoch draws what it needs with its own key, the same for every member, so
members are compared on the same starts (common random numbers), each start with both colours.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from neurocheckers.formats import parse_fixed_opponent
from neurocheckers.match.arena import PopulationSearch
from neurocheckers.networks.evaluator import EvaluatorSpec, value_fn
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import State
from neurocheckers.search import baselines
from neurocheckers.search.baselines import AlphaBetaConfig
from neurocheckers.search.mcts import search
from neurocheckers.search.types import Policy

Z_95 = 1.96
"""The normal quantile of a two-sided 95% interval (as ``stats.paired_interval``)."""


def draw_openings(key: jax.Array, openings: State, count: int) -> State:
    """``count`` openings of ``openings`` ([M] states) in a random order drawn from ``key``: distinct
    while ``count <= M``, then the same order again."""
    m = jax.tree.leaves(openings)[0].shape[0]
    order = jax.random.permutation(key, m)
    chosen = order[jnp.arange(count) % m]
    return jax.tree.map(lambda x: x[chosen], openings)


def paired_score_bounds(scores: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(mean, low, high)``, each [N]: ``stats.paired_interval`` of every row of ``scores`` ([N, G]
    points, games ``2i`` and ``2i + 1`` sharing an opening), in JAX. Each pair is one observation;
    the variance counts one extra pair scoring 0 and one scoring 1, so a match of all wins still
    gets a nonzero width."""
    n, games = scores.shape
    pairs = scores.reshape(n, games // 2, 2).mean(axis=-1)
    mean = pairs.mean(axis=-1)
    padded = jnp.concatenate([pairs, jnp.zeros((n, 1)), jnp.ones((n, 1))], axis=-1)
    half = Z_95 * jnp.sqrt(jnp.var(padded, axis=-1, ddof=1) / (games // 2))
    return mean, jnp.maximum(0.0, mean - half), jnp.minimum(1.0, mean + half)


def confirmed_pick(eligible: jax.Array, scores: jax.Array) -> tuple[jax.Array, ...]:
    """``(pick, promote, score, low)`` of a confirmation match: among the C candidates (best ranked
    first) that are ``eligible`` ([C] bool) and whose paired ``scores`` ([C, G]) against the boss have
    a lower 95% bound above 1/2, the one with the best score (ties to the better ranked); ``promote``
    says whether there is one. Without one, ``pick`` is 0, the best ranked candidate. ``score`` and
    ``low`` are the picked candidate's."""
    mean, low, _ = paired_score_bounds(scores)
    passed = eligible & (low > 0.5)
    pick = jnp.argmax(jnp.where(passed, mean, -jnp.inf))
    return pick, jnp.any(passed), mean[pick], low[pick]


@struct.dataclass
class HallOfFame:
    """The last H bosses, as a ring buffer.

    Fields:
      bosses: params with a leading [H] axis; boss number ``i`` (counting the first boss as 0) is in
        slot ``i % H``.
      count: [] int32, bosses entered so far; slots ``0 .. min(count, H) - 1`` are filled.
    """

    bosses: Any
    count: jax.Array


def hall_of_fame_init(boss: Any, size: int) -> HallOfFame:
    """A hall of ``size`` slots holding ``boss`` (the first boss) alone."""
    bosses = jax.tree.map(lambda x: jnp.zeros((size, *x.shape), x.dtype).at[0].set(x), boss)
    return HallOfFame(bosses=bosses, count=jnp.int32(1))


def hall_of_fame_add(hall: HallOfFame, boss: Any, add: jax.Array) -> HallOfFame:
    """``hall`` with ``boss`` entered (over the oldest entry once full) when ``add`` ([] bool)."""
    size = jax.tree.leaves(hall.bosses)[0].shape[0]
    slot = hall.count % size
    bosses = jax.tree.map(
        lambda stack, x: stack.at[slot].set(jnp.where(add, x, stack[slot])), hall.bosses, boss
    )
    return HallOfFame(bosses=bosses, count=hall.count + add.astype(jnp.int32))


def hall_of_fame_sample(hall: HallOfFame, key: jax.Array) -> Any:
    """One boss drawn uniformly from the filled slots of ``hall``."""
    size = jax.tree.leaves(hall.bosses)[0].shape[0]
    slot = jax.random.randint(key, (), 0, jnp.minimum(hall.count, size))
    return jax.tree.map(lambda stack: stack[slot], hall.bosses)


@functools.cache
def fixed_opponent_policy(rules: Rules, spec: str) -> Policy:
    """The policy of a fixed opponent spec (``formats.FIXED_OPPONENTS``; its ``params`` are unused)."""
    kind, depth = parse_fixed_opponent(spec)
    if kind == "random":
        return baselines.random_policy(rules)
    if kind == "greedy-material":
        return baselines.greedy_policy(rules, baselines.material_value_fn(rules))
    return baselines.alphabeta_policy(rules, depth)


@functools.cache
def member_policy(rules: Rules, spec: EvaluatorSpec, search_config: PopulationSearch) -> Policy:
    """How a member (or boss) of a run chooses its moves: ``search_config`` (MCTS or alpha-beta) over
    its own network."""
    evaluate = value_fn(spec)
    if isinstance(search_config, AlphaBetaConfig):
        return baselines.alphabeta_policy(rules, search_config.depth, evaluate)

    def policy(params: Any, state: State, key: jax.Array) -> jax.Array:
        return search(rules, search_config, evaluate, params, state, key).action

    return policy
