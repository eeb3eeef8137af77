"""Players from command-line specs: ``random``, ``greedy:FILE``, ``greedy-material``,
``alphabeta:D``, ``alphabeta:D:FILE``, ``alphabeta:D:heuristic``, ``mcts:FILE:SIMS``,
``mcts-rollout:SIMS``, where FILE is an agent file (``agent_file``), read here. The policies
themselves are in ``policies``.

``alphabeta:D:FILE`` is the same depth-D alpha-beta as ``alphabeta:D`` with the agent's network
scoring the unfinished leaves instead of the material count: the equal-depth test of an evaluator.
``alphabeta:D:heuristic`` scores them with the hand-written evaluation of ``search.heuristic``.
``alphabeta:D:FILE:DB`` adds an endgame database folder (``endgame build``): the positions it holds
are scored exactly instead of by the network.
"""

from __future__ import annotations

from neurocheckers.networks.agent_file import Agent, load_agent
from neurocheckers.networks.evaluator import value_fn
from neurocheckers.players.policies import (
    Player,
    alphabeta_player_policy,
    greedy_player_policy,
    heuristic_alphabeta_policy,
    material_value,
    mcts_player,
    mcts_player_policy,
    random_player_policy,
    rollout_value,
)
from neurocheckers.players.registry import policy_forms
from neurocheckers.rules.presets import Rules
from neurocheckers.search.limits import MAX_ALPHABETA_DEPTH, MAX_SIMULATIONS
from neurocheckers.search.mcts import MCTSConfig


def _positive_int(text: str, what: str, spec: str, maximum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"bad player spec {spec!r}: {what} must be an integer, got {text!r}") from None
    if not 1 <= value <= maximum:
        raise ValueError(f"bad player spec {spec!r}: {what} must be in 1..{maximum}, got {value}")
    return value


def _agent(rules: Rules, path: str, spec: str) -> Agent:
    try:
        return load_agent(path, rules)
    except FileNotFoundError:
        raise ValueError(f"bad player spec {spec!r}: no agent file {path!r}") from None
    except ValueError as e:
        raise ValueError(f"bad player spec {spec!r}: {e}") from None


def trained_player_spec(path: str, metadata: dict[str, str], simulations: int | None = None) -> str:
    """The spec that plays agent file ``path`` with the search its ``metadata`` records:
    ``alphabeta:D:FILE`` when ``search`` is alphabeta (``depth`` D, 2 if missing), else
    ``mcts:FILE:SIMS`` with ``simulations``, or the recorded ``simulations``, or 16."""
    if metadata.get("search") == "alphabeta":
        return f"alphabeta:{metadata.get('depth', '2')}:{path}"
    sims = simulations if simulations is not None else metadata.get("simulations", "16")
    return f"mcts:{path}:{sims}"


def endgame_evaluator(rules: Rules, folder: str, evaluate, params, spec: str):
    """``(value fn, params)`` of a network that defers to the endgame database in ``folder`` where it
    holds the position; ``ValueError`` naming the spec when there is no such database."""
    from neurocheckers.endgame.database import EndgameDB, EndgameError
    from neurocheckers.endgame.device import device_db, with_endgame

    try:
        db = EndgameDB(folder, rules)
    except EndgameError as e:
        raise ValueError(f"bad player spec {spec!r}: {e}") from None
    return with_endgame(evaluate), {"net": params, "endgame": device_db(db)}


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
    if kind == "alphabeta" and len(args) == 2:
        depth = _positive_int(args[0], "the depth", spec, MAX_ALPHABETA_DEPTH)
        if args[1] == "heuristic":
            return Player(f"alphabeta:{depth}:heuristic", heuristic_alphabeta_policy(rules, depth))
        agent = _agent(rules, args[1], spec)
        return Player(spec, alphabeta_player_policy(rules, depth, value_fn(agent.spec)), agent.params)
    if kind == "alphabeta" and len(args) == 3:
        depth = _positive_int(args[0], "the depth", spec, MAX_ALPHABETA_DEPTH)
        agent = _agent(rules, args[1], spec)
        evaluate, params = endgame_evaluator(rules, args[2], value_fn(agent.spec), agent.params, spec)
        return Player(spec, alphabeta_player_policy(rules, depth, evaluate), params)
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
    raise ValueError(f"bad player spec {spec!r}; expected one of: {policy_forms()}")
