"""Matches between a run's bosses, the building block of the lineage table, the round-robin and
run comparisons.

Every match is ``games`` games between two bosses, colours balanced, each side with its own network
shape and the search its run trained with (MCTS with the run's simulation count, or alpha-beta at its
depth), and ``opening_plies`` random plies first so that repeated games differ.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from neurocheckers.analysis.lineage import LineageEntry
from neurocheckers.experiment.folder import RunError
from neurocheckers.formats import read_metrics
from neurocheckers.players.policies import Player

Progress = Callable[[int, int], None]
"""``(done, total)``: called after every match."""


def check_games(games: int, what: str = "--games") -> None:
    """Matches need an even number of games >= 2, so both colours are played equally often."""
    if games < 2 or games % 2:
        raise ValueError(f"{what} must be an even number >= 2, got {games}")


def check_simulations(simulations: int | None, default: int) -> int:
    """``simulations``, or the run's ``default`` when None; ``ValueError`` below 1."""
    if simulations is None:
        return default
    if simulations < 1:
        raise ValueError(f"--simulations must be >= 1, got {simulations}")
    return simulations


def run_rules(config: Any):
    """The rules preset a run's config names."""
    from neurocheckers.rules import get_rules

    return get_rules(config.rules)


def boss_spec(rules, entry: LineageEntry, simulations: int) -> str:
    """The player spec of lineage ``entry``'s boss with the search its run trained with: alpha-beta at
    the run's depth for ``search = "alphabeta"`` runs, else MCTS with ``simulations`` per move."""
    from neurocheckers.networks.agent_file import load_agent
    from neurocheckers.players.jax_players import trained_player_spec

    return trained_player_spec(str(entry.path), load_agent(entry.path, rules).metadata, simulations)


def boss_player(rules, entry: LineageEntry, simulations: int) -> Player:
    """The boss of lineage ``entry`` as a player (``boss_spec``'s search), named ``boss #ID``."""
    from neurocheckers.players.jax_players import parse_player

    player = parse_player(boss_spec(rules, entry, simulations), rules)
    return dataclasses.replace(player, name=f"boss #{entry.boss_id}")


def match_points(rules, a: Player, b: Player, key, games: int, max_plies: int, opening_plies: int) -> float:
    """A's points out of ``games`` against B (A moves first in half of them)."""
    return match_games(rules, a, b, key, games, max_plies, opening_plies)[0]


def match_games(
    rules, a: Player, b: Player, key, games: int, max_plies: int, opening_plies: int, names=None
) -> tuple[float, list[dict]]:
    """``match_points``'s match, and its games as game-file dicts (``analysis.games``) when ``names``
    ((A's name, B's name) for the files) is given, else no games."""
    import jax

    from neurocheckers.analysis.games import games_from_actions
    from neurocheckers.match.arena import a_is_black_in_game, play_match

    records = play_match(
        rules, a.policy, a.params, b.policy, b.params, key, games, max_plies, opening_plies,
        record_actions=names is not None,
    )  # fmt: skip
    records = jax.device_get(records)
    points = float(np.sum(records.score))
    if names is None:
        return points, []
    a_black = np.asarray(a_is_black_in_game(np.arange(games)))
    black = [names[0] if is_a else names[1] for is_a in a_black]
    white = [names[1] if is_a else names[0] for is_a in a_black]
    return points, games_from_actions(rules, np.asarray(records.actions), black, white)


def match_key(seed: int, *path: int):
    """The key of one match: ``seed`` folded with the match's place (table, row, ...)."""
    import jax

    key = jax.random.key(seed)
    for index in path:
        key = jax.random.fold_in(key, index)
    return key


def run_elapsed(run_dir: str | Path) -> np.ndarray:
    """[E] seconds of the original run at the end of each epoch (cumulative ``wall_seconds``)."""
    rows = sorted(read_metrics(run_dir), key=lambda r: int(r["epoch"]))
    if not rows:
        raise RunError(f"{run_dir} has no finished epoch")
    return np.cumsum([float(r["wall_seconds"]) for r in rows])
