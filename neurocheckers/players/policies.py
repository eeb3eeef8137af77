"""Every way of choosing moves behind one interface, built once per setting (no files read here).

A ``Player`` is a pure policy ``(params, state, key) -> action`` for one game plus its parameters;
the arena vmaps it over games, and ``Player.new_game`` plays it one game at a time as the host
players of ``players.registry`` play (the web's opponents). Policies are cached per setting, so
repeated matches reuse compiled code. ``players.parse_player`` builds them from command-line specs
and agent files.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, ClassVar

import jax

from neurocheckers.networks.evaluator import EvaluatorSpec, value_fn
from neurocheckers.rules.engine import init
from neurocheckers.rules.presets import Rules
from neurocheckers.search import baselines, heuristic
from neurocheckers.search.mcts import MCTSConfig, ValueFn, search
from neurocheckers.search.types import Policy


@dataclasses.dataclass(frozen=True)
class Player:
    """A named policy and its parameters (``None`` for knowledge-free players): a batched player of
    the protocol (``players.protocol``), which the arena plays many games of at once."""

    name: str
    policy: Policy
    params: Any = None
    batched: ClassVar[bool] = True
    equal_time: ClassVar[bool] = False
    mirrors_openspiel: ClassVar[bool] = False
    nodes: ClassVar[None] = None
    endgame: ClassVar[None] = None

    @property
    def search_label(self) -> str:
        """What the policy is called where a move is described: its spec."""
        return self.name

    def with_endgame(self, load: Callable[[], Any]) -> Player:
        """Itself: a policy probes the database its spec names, if any."""
        return self

    def warm_up(self, rules: Rules) -> None:
        """Compile the policy for one game at a time (as ``new_game`` and the host loop play it)."""
        start = jax.device_get(init(rules))
        jax.block_until_ready(jitted_policy(self.policy)(self.params, start, jax.random.key(0)))

    def new_game(self, seed: int = 0) -> Callable[..., int]:
        """The policy as a host player's game (``players.protocol``): ``game(state, seconds=None)
        -> action`` on one game's ``State``, jitted once a policy, its key ``seed`` folded with the
        ply; ``seconds`` is unused (a policy's search has a fixed size)."""
        policy, key = jitted_policy(self.policy), jax.random.key(seed)
        return lambda state, seconds=None: int(
            policy(self.params, state, jax.random.fold_in(key, int(state.ply)))
        )


@functools.cache
def jitted_policy(policy: Policy) -> Callable:
    """``policy`` jitted for one game at a time (once a policy)."""
    return jax.jit(policy)


@functools.cache
def random_player_policy(rules: Rules) -> Policy:
    return baselines.random_policy(rules)


@functools.cache
def alphabeta_player_policy(rules: Rules, depth: int, evaluator: ValueFn | None = None) -> Policy:
    """Depth-``depth`` alpha-beta with the material count, or ``evaluator`` at the leaves."""
    return baselines.alphabeta_policy(rules, depth, evaluator)


@functools.cache
def heuristic_alphabeta_policy(rules: Rules, depth: int) -> Policy:
    """Depth-``depth`` alpha-beta with the hand-written evaluation (``search.heuristic``) at the leaves."""
    return heuristic.heuristic_alphabeta_policy(rules, depth)


@functools.cache
def greedy_player_policy(rules: Rules, evaluator: ValueFn) -> Policy:
    return baselines.greedy_policy(rules, evaluator)


@functools.cache
def material_value(rules: Rules) -> ValueFn:
    return baselines.material_value_fn(rules)


@functools.cache
def rollout_value(rules: Rules) -> ValueFn:
    return baselines.rollout_value_fn(rules)


@functools.cache
def mcts_player_policy(rules: Rules, config: MCTSConfig, evaluator: ValueFn) -> Policy:
    def policy(params, state, key):
        return search(rules, config, evaluator, params, state, key).action

    return policy


def mcts_player(rules: Rules, spec: EvaluatorSpec, params: Any, simulations: int, name: str) -> Player:
    """An MCTS player with an evaluator network, ``simulations`` per move."""
    policy = mcts_player_policy(rules, MCTSConfig(num_simulations=simulations), value_fn(spec))
    return Player(name, policy, params)
