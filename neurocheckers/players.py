"""One interface over every way of choosing moves, and parsing of player specs.

A ``Player`` is a pure policy ``(params, state, key) -> action`` for one game plus its parameters;
the arena vmaps it over games. Policies are built once per setting (cached), so repeated matches
reuse compiled code.

Specs (command line): ``random``, ``greedy:FILE``, ``greedy-material``, ``alphabeta:D``,
``mcts:FILE:SIMS``, ``mcts-rollout:SIMS``, where FILE is an agent file (``agent_file``).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from neurocheckers.agent_file import load_agent
from neurocheckers.arena import Policy
from neurocheckers.evaluator import EvaluatorSpec, value_fn
from neurocheckers.rules.presets import Rules
from neurocheckers.search import baselines
from neurocheckers.search.limits import MAX_ALPHABETA_DEPTH, MAX_SIMULATIONS
from neurocheckers.search.mcts import MCTSConfig, ValueFn, search

SPEC_HELP = "random | greedy:FILE | greedy-material | alphabeta:D | mcts:FILE:SIMS | mcts-rollout:SIMS"


def display_name(spec: str) -> str:
    """A player spec with agent-file paths cut to their file names, for figure titles:
    ``mcts:runs/x/agent.safetensors:16`` -> ``mcts:agent.safetensors:16``."""
    return ":".join(part.rsplit("/", 1)[-1] for part in spec.split(":"))


@dataclasses.dataclass(frozen=True)
class Player:
    """A named policy and its parameters (``None`` for knowledge-free players)."""

    name: str
    policy: Policy
    params: Any = None


@functools.cache
def random_player_policy(rules: Rules) -> Policy:
    return baselines.random_policy(rules)


@functools.cache
def alphabeta_player_policy(rules: Rules, depth: int) -> Policy:
    return baselines.alphabeta_policy(rules, depth)


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


def _positive_int(text: str, what: str, spec: str, maximum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"bad player spec {spec!r}: {what} must be an integer, got {text!r}") from None
    if not 1 <= value <= maximum:
        raise ValueError(f"bad player spec {spec!r}: {what} must be in 1..{maximum}, got {value}")
    return value


def _agent(rules: Rules, path: str, spec: str):
    try:
        return load_agent(path, rules)
    except FileNotFoundError:
        raise ValueError(f"bad player spec {spec!r}: no agent file {path!r}") from None
    except ValueError as e:
        raise ValueError(f"bad player spec {spec!r}: {e}") from None


def parse_player(spec: str, rules: Rules) -> Player:
    """The player described by ``spec`` (see the module docstring); ``ValueError`` naming what is wrong."""
    kind, _, rest = spec.strip().partition(":")
    args = rest.split(":") if rest else []
    if kind == "random" and not args:
        return Player("random", random_player_policy(rules))
    if kind == "greedy-material" and not args:
        return Player("greedy-material", greedy_player_policy(rules, material_value(rules)))
    if kind == "alphabeta" and len(args) == 1:
        depth = _positive_int(args[0], "the depth", spec, MAX_ALPHABETA_DEPTH)
        return Player(f"alphabeta:{depth}", alphabeta_player_policy(rules, depth))
    if kind == "mcts-rollout" and len(args) == 1:
        sims = _positive_int(args[0], "the simulation count", spec, MAX_SIMULATIONS)
        config = MCTSConfig(num_simulations=sims)
        return Player(f"mcts-rollout:{sims}", mcts_player_policy(rules, config, rollout_value(rules)))
    if kind == "greedy" and len(args) == 1:
        agent = _agent(rules, args[0], spec)
        return Player(spec, greedy_player_policy(rules, value_fn(agent.spec)), agent.params)
    if kind == "mcts" and len(args) == 2:
        agent = _agent(rules, args[0], spec)
        sims = _positive_int(args[1], "the simulation count", spec, MAX_SIMULATIONS)
        return mcts_player(rules, agent.spec, agent.params, sims, spec)
    raise ValueError(f"bad player spec {spec!r}; expected one of: {SPEC_HELP}")
