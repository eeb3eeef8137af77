"""PBT's tournament: a round-robin among the members over paired committed openings, at the learners'
search without exploration (alpha-beta at each mover's own depth when the depth evolves), which
``pbt.exploit_step`` ranks them by."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp

from neurocheckers.learners.common import (
    MemberNetworks,
    TracedDepth,
    best_moves,
    learner_rules,
    learner_spec,
    record_length,
)
from neurocheckers.match.arena import a_is_black_in_game, paired_opening_starts, play_games
from neurocheckers.networks.evaluator import value_fn
from neurocheckers.population import member_or_boss_policy
from neurocheckers.rules.openings import load_openings, opening_states
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import State
from neurocheckers.search.alphabeta import alphabeta_stack, color_sign
from neurocheckers.search.baselines import NETWORK_ROOT_MARGIN, pick_best, value_heuristic
from neurocheckers.search.play_settings import population_search
from neurocheckers.search.types import Policy
from neurocheckers.sharding import over_leading_shards

if TYPE_CHECKING:
    from neurocheckers.learners.pbt_settings import PBTSettings


@functools.cache
def committed_openings(rules: Rules) -> State:
    """The committed openings of ``rules`` ([K] host arrays), which the tournaments draw from."""
    with jax.ensure_compile_time_eval():  # host arrays, though the first call may come while tracing
        return jax.device_get(opening_states(rules, load_openings(rules)))


def traced_depth_policy(settings: PBTSettings) -> Policy:
    """A tournament game's player over ``(a, b, a_to_move, depths)``: ``member_or_boss_policy``'s
    alpha-beta, its leaves rated by the mover's network, at the mover's depth (``depths``: [2], a's
    and b's, traced, at most ``max_depth``: the stack search takes a traced depth below a static
    number of levels, and searches as a static depth of its value does)."""
    rules, evaluate = learner_rules(settings), value_fn(learner_spec(settings))

    def evaluate_either(params: Any, state: State, key: jax.Array) -> jax.Array:
        a, b, a_to_move = params
        return jnp.where(a_to_move, evaluate(a, state, key), evaluate(b, state, key))

    def policy(params: Any, state: State, key: jax.Array) -> jax.Array:
        a, b, a_to_move, depths = params
        heuristic = value_heuristic(evaluate_either, (a, b, a_to_move), key)
        depth = jnp.where(a_to_move, depths[0], depths[1])
        final = alphabeta_stack(
            rules, state, depth, heuristic, NETWORK_ROOT_MARGIN, max_levels=settings.max_depth
        )
        scores, legal = color_sign(state.color) * final.root_scores, state.legal_action_mask
        return jnp.where(jnp.any(legal), pick_best(key, scores, legal), 0).astype(jnp.int32)

    return policy


def tournament_openings(settings: PBTSettings, key: jax.Array) -> State:
    """The ``tournament_openings`` openings every pair plays, drawn from the committed set with ``key``."""
    openings = committed_openings(learner_rules(settings))
    count = jax.tree.leaves(openings)[0].shape[0]
    order = jax.random.permutation(jax.random.fold_in(key, 0), count)
    chosen = order[jnp.arange(settings.tournament_openings) % count]
    return jax.tree.map(lambda x: jnp.asarray(x)[chosen], openings)


def present_depths(settings: PBTSettings, depths: jax.Array) -> jax.Array:
    """[max_depth] bool: the depths some member searches at (``depths``: [M])."""
    return jnp.zeros(settings.max_depth, bool).at[depths - 1].set(True)


def vmapped_choose(settings: PBTSettings, params: Any, first: jax.Array, second: jax.Array, depths):
    """``choose(states, a_to_move, keys)`` ([P, G] each) of the games of pairs ``first`` x ``second``
    ([P] members): each game's search vmapped, its leaves rated by the mover's network (MCTS members,
    or any search; with ``depths`` [M], alpha-beta at each mover's depth)."""
    traced = depths is not None
    if traced:
        policy = traced_depth_policy(settings)
    else:
        search = population_search(settings)
        policy = member_or_boss_policy(learner_rules(settings), learner_spec(settings), search)
    shared = (None, None, 0, None) if traced else (None, None, 0)  # the policy's params, per game
    a_params, b_params = (jax.tree.map(lambda x, ids=ids: x[ids], params) for ids in (first, second))
    pair_depths = jnp.stack([depths[first], depths[second]], axis=1) if traced else first  # else unused

    def pair_games(a, b, depths, states, a_to_move, keys):
        params = (a, b, a_to_move, depths) if traced else (a, b, a_to_move)
        return jax.vmap(policy, in_axes=(shared, 0, 0))(params, states, keys)

    def choose(states: State, a_to_move: jax.Array, keys: jax.Array) -> jax.Array:
        return jax.vmap(pair_games)(a_params, b_params, pair_depths, states, a_to_move, keys)

    return choose


def packed_choose(settings: PBTSettings, params: Any, first: jax.Array, second: jax.Array, depths):
    """``vmapped_choose``'s moves (alpha-beta members), from one full-width search of all the pairs'
    games, sorted by mover, each mover's leaves scored by its network in dense chunks of its own
    (``common.MemberNetworks``, as PBT's self-play): the same moves, 4x faster on 8x8."""
    present = None if depths is None else present_depths(settings, depths)

    def choose(states: State, a_to_move: jax.Array, keys: jax.Array) -> jax.Array:
        mover = jnp.where(a_to_move, first[:, None], second[:, None]).reshape(-1)
        order = jnp.argsort(mover, stable=True)
        games = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:])[order], states)
        networks = MemberNetworks(params, mover[order], settings.members)
        depth = None if depths is None else TracedDepth(depths[mover[order]], present)
        moves = best_moves(settings, networks, games, keys.reshape(-1)[order], depth)
        return jnp.zeros_like(mover).at[order].set(moves).reshape(a_to_move.shape)

    return choose


def tournament(
    settings: PBTSettings,
    params: Any,
    key: jax.Array,
    depths: jax.Array | None = None,
    packed: bool = True,
) -> jax.Array:
    """[M, M] points per game of member i against member j (the diagonal 1/2): a round-robin where
    every pair plays the same ``tournament_openings`` openings (drawn from the committed set with
    ``key``) with both colours, at the learners' search without exploration (with ``depth_evolves``,
    alpha-beta at each mover's depth of ``depths`` [M]). Alpha-beta members' games are searched in
    one batch (``packed_choose``), others (and all with ``packed`` False) vmapped (``vmapped_choose``)."""
    m, games = settings.members, 2 * settings.tournament_openings
    first, second = (jnp.asarray(x, jnp.int32) for x in jnp.triu_indices(m, 1))
    pairs = first.shape[0]
    traced = depths is not None and settings.depth_evolves
    choose_of = packed_choose if packed and settings.search == "alphabeta" else vmapped_choose

    def play(params, depths, pair_first, pair_second, pair_ids, key, drawn):
        shape = (pair_ids.shape[0], games)
        numbers = jnp.broadcast_to(jnp.arange(games, dtype=jnp.int32), shape)
        choose = choose_of(settings, params, pair_first, pair_second, depths if traced else None)
        records = play_games(
            learner_rules(settings),
            choose,
            a_is_black_in_game(numbers),
            pair_ids[:, None] * games + numbers,
            key,
            record_length(settings),
            0,
            False,
            starts=paired_opening_starts(drawn, numbers),
        )
        return records.score

    play = over_leading_shards(play, pairs, (True, True, False, False, False, True, True))
    depths = jnp.full(m, settings.depth, jnp.int32) if depths is None else depths
    pair_ids = jnp.arange(pairs, dtype=jnp.int32)
    drawn = tournament_openings(settings, key)
    score = jnp.mean(play(params, depths, first, second, pair_ids, key, drawn), axis=1)
    points = jnp.full((m, m), 0.5).at[first, second].set(score)
    return points.at[second, first].set(1.0 - score)
