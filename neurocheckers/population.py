"""A whole population's games at once: every member against one boss (``play_population``) or
against a fixed opponent (``play_population_against``), each member searching over its own network,
split across host devices by members (``sharding.over_leading_shards``). The games are
``arena.play_games``'s, so a member's game is the match game of the same number."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp

from neurocheckers.match.arena import (
    GameRecords,
    PopulationSearch,
    a_is_black_in_game,
    paired_opening_starts,
    play_games,
)
from neurocheckers.networks.evaluator import EvaluatorSpec, value_fn
from neurocheckers.rules.playout import default_max_plies
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import State
from neurocheckers.search.baselines import AlphaBetaConfig, alphabeta_policy
from neurocheckers.search.mcts import search
from neurocheckers.search.types import Policy
from neurocheckers.sharding import over_leading_shards


@functools.cache
def _member_or_boss_value_fn(spec: EvaluatorSpec):
    """A leaf evaluator over ``(member, boss, use_member)``: each search uses its own player's MLP."""
    evaluate = value_fn(spec)

    def evaluate_either(params, state, key):
        member, boss, use_member = params
        return jnp.where(use_member, evaluate(member, state, key), evaluate(boss, state, key))

    return evaluate_either


def member_or_boss_policy(rules: Rules, spec: EvaluatorSpec, search_config: PopulationSearch) -> Policy:
    """A policy over params ``(member, boss, use_member)`` that searches with ``search_config``, its
    leaves rated by the member's network where ``use_member``, else by the boss's."""
    evaluate = _member_or_boss_value_fn(spec)
    if isinstance(search_config, AlphaBetaConfig):
        return alphabeta_policy(rules, search_config.depth, evaluate)

    def mcts_policy(params: Any, state: State, key: jax.Array) -> jax.Array:
        return search(rules, search_config, evaluate, params, state, key).action

    return mcts_policy


@functools.partial(
    jax.jit,
    static_argnames=(
        "rules",
        "spec",
        "search_config",
        "games_per_member",
        "max_plies",
        "opening_plies",
        "record",
    ),
)
def play_population(
    rules: Rules,
    spec: EvaluatorSpec,
    search_config: PopulationSearch,
    population: Any,
    boss: Any,
    key: jax.Array,
    games_per_member: int,
    max_plies: int | None = None,
    opening_plies: int = 0,
    record: bool = False,
    openings: State | None = None,
) -> GameRecords:
    """Every member of ``population`` ([P] leading axis) plays ``games_per_member`` games against
    ``boss``, the first half with the first move; both sides search with ``search_config`` (an
    ``MCTSConfig`` or an ``AlphaBetaConfig``, see ``member_or_boss_policy``).

    Records have shape [P, G]. One search runs per game and ply; its leaves are rated by the mover's
    own network (the member's or the boss's). ``max_plies`` defaults to ``default_max_plies(rules)``.
    With ``openings`` ([M] states) every member plays paired openings instead: its games ``2i`` and
    ``2i + 1`` start from opening ``i``, the member Black in the first (``paired_opening_starts``),
    so all members meet the same starts with both colours.
    """
    max_plies = default_max_plies(rules) if max_plies is None else max_plies
    num_members = jax.tree.leaves(population)[0].shape[0]
    member_ids = jnp.arange(num_members, dtype=jnp.int32)
    play = functools.partial(
        _play_members,
        rules,
        spec,
        search_config,
        games_per_member,
        max_plies,
        opening_plies,
        record,
    )
    play = over_leading_shards(play, num_members, (False, True, False, True, True))
    return play(population, boss, member_ids, key, openings)


def _member_games_layout(
    num_members: int, games_per_member: int, member_ids: jax.Array, openings: State | None
) -> tuple[jax.Array, jax.Array, State | None]:
    """(a_is_black [P, G], game ids [P, G], starts [P, G] or None) of every member's games: the first
    half with the first move from the initial position, or paired openings when ``openings`` is
    given."""
    shape = (num_members, games_per_member)
    game_ids = member_ids[:, None] * games_per_member + jnp.arange(games_per_member, dtype=jnp.int32)
    if openings is None:
        a_is_black = jnp.broadcast_to(jnp.arange(games_per_member) < games_per_member // 2, shape)
        return a_is_black, game_ids, None
    game_numbers = jnp.broadcast_to(jnp.arange(games_per_member, dtype=jnp.int32), shape)
    return a_is_black_in_game(game_numbers), game_ids, paired_opening_starts(openings, game_numbers)


def _play_members(
    rules: Rules,
    spec: EvaluatorSpec,
    search_config: PopulationSearch,
    games_per_member: int,
    max_plies: int,
    opening_plies: int,
    record: bool,
    population: Any,
    boss: Any,
    member_ids: jax.Array,
    key: jax.Array,
    openings: State | None,
) -> GameRecords:
    num_members = member_ids.shape[0]
    a_is_black, game_ids, starts = _member_games_layout(num_members, games_per_member, member_ids, openings)
    policy = member_or_boss_policy(rules, spec, search_config)

    def member_games(member, states, use_member, keys):
        params = (member, boss, use_member)
        return jax.vmap(policy, in_axes=((None, None, 0), 0, 0))(params, states, keys)

    def both_networks(states: State, a_to_move: jax.Array, keys: jax.Array) -> jax.Array:
        return jax.vmap(member_games)(population, states, a_to_move, keys)

    def choose(states: State, a_to_move: jax.Array, keys: jax.Array) -> jax.Array:
        if games_per_member % 2 or rules.multi_jump:
            return both_networks(states, a_to_move, keys)
        return _members_then_boss(policy, population, boss, states, a_to_move, keys)

    return play_games(
        rules, choose, a_is_black, game_ids, key, max_plies, opening_plies, record, starts=starts
    )


@functools.partial(
    jax.jit,
    static_argnames=(
        "rules",
        "member_policy",
        "opponent_policy",
        "games_per_member",
        "max_plies",
        "opening_plies",
        "record",
    ),
)
def play_population_against(
    rules: Rules,
    member_policy: Policy,
    population: Any,
    opponent_policy: Policy,
    opponent_params: Any,
    key: jax.Array,
    games_per_member: int,
    openings: State,
    max_plies: int | None = None,
    opening_plies: int = 0,
    record: bool = False,
) -> GameRecords:
    """Every member of ``population`` ([P] leading axis), choosing moves with ``member_policy``, plays
    ``games_per_member`` paired-openings games (``play_population`` with ``openings``) against one
    fixed opponent (``opponent_policy`` with ``opponent_params``, e.g. a material alpha-beta).

    Records have shape [P, G]. Both policies run for every game at every ply and the mover's choice
    is kept, as in ``play_match``. With ``record`` the records keep every position (for learners).
    """
    max_plies = default_max_plies(rules) if max_plies is None else max_plies
    num_members = jax.tree.leaves(population)[0].shape[0]

    def play(population, member_ids, key, openings, opponent_params):
        a_is_black, game_ids, starts = _member_games_layout(
            member_ids.shape[0], games_per_member, member_ids, openings
        )

        def choose(states: State, a_to_move: jax.Array, keys: jax.Array) -> jax.Array:
            keys_b = jax.vmap(jax.vmap(jax.random.fold_in, in_axes=(0, None)), in_axes=(0, None))(keys, 1)
            games = jax.vmap(member_policy, in_axes=(None, 0, 0))
            actions_a = jax.vmap(games)(population, states, keys)
            opponent = jax.vmap(jax.vmap(opponent_policy, in_axes=(None, 0, 0)), in_axes=(None, 0, 0))
            actions_b = opponent(opponent_params, states, keys_b)
            return jnp.where(a_to_move, actions_a, actions_b)

        return play_games(
            rules, choose, a_is_black, game_ids, key, max_plies, opening_plies, record, starts=starts
        )

    play = over_leading_shards(play, num_members, (False, False, True, True, True))
    member_ids = jnp.arange(num_members, dtype=jnp.int32)
    return play(population, member_ids, key, openings, opponent_params)


def _members_then_boss(
    policy: Policy, population: Any, boss: Any, states: State, a_to_move: jax.Array, keys: jax.Array
) -> jax.Array:
    """[P, G] actions: each member's searches over its own network, the boss's over the boss's.

    ``member_or_boss_policy`` evaluates both networks at every leaf and keeps the mover's (a
    vmapped select runs both sides): evaluating only the mover's cut a base-case epoch's CPU time by
    about a quarter (docs/benchmarks.md). Here each member's games are sorted so that its own moves come first
    (finished games in between: their actions are ignored), the first half searches over the
    member's network and the second over the boss's, all members' boss games as one batch. Each
    game's search is the same computation as before, so the games are bit for bit the same.

    Only for rules without multi-jumps and an even G, where every member moves in exactly half of
    its live games at every ply: the side to move changes at every ply in every game, the G games
    start as G/2 pairs (the same start, the member Black in one and White in the other: the initial
    position or a paired opening, ``_member_games_layout``), and a pair's games stay in step.
    """
    num_members, games = a_to_move.shape
    half = games // 2
    group = jnp.where(states.terminated, 1, jnp.where(a_to_move, 0, 2))  # member, finished, boss
    order = jnp.argsort(group, axis=1, stable=True)
    rows = jnp.arange(num_members)[:, None]
    ordered = jax.tree.map(lambda x: x[rows, order], states)
    ordered_keys = keys[rows, order]
    own = jax.tree.map(lambda x: x[:, :half], ordered)
    boss_games = jax.tree.map(lambda x: x[:, half:].reshape((-1,) + x.shape[2:]), ordered)

    def member_moves(member, states, keys):
        return jax.vmap(policy, in_axes=((None, None, None), 0, 0))((member, boss, True), states, keys)

    mine = jax.vmap(member_moves)(population, own, ordered_keys[:, :half])
    # The flag is a constant, so XLA drops the member's side of the select: one network per leaf.
    theirs = jax.vmap(policy, in_axes=((None, None, None), 0, 0))(
        (boss, boss, False), boss_games, ordered_keys[:, half:].reshape(-1)
    )
    actions = jnp.concatenate([mine, theirs.reshape(num_members, games - half)], axis=1)
    return jnp.zeros_like(actions).at[rows, order].set(actions)
