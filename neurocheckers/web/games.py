"""The game files of the served folder for the Games page: which files there are, each game's positions
with the best agent's win chances, and a game as PDN."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jax
import numpy as np

from neurocheckers.analysis.games import FORMAT as GAMES_FORMAT
from neurocheckers.analysis.games import GameFile, replay_game
from neurocheckers.analysis.pdn_games import load_game_file, pdn_of_game
from neurocheckers.networks.agent_file import load_agent
from neurocheckers.networks.evaluator import value_fn
from neurocheckers.players.registry import spec_agent_file
from neurocheckers.rules.pdn import write_pdn
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK
from neurocheckers.web.agents import find_agent_file
from neurocheckers.web.board import position_json
from neurocheckers.web.folder import GAME_SUFFIXES, listed, reads_files, relative_name, walk_served


def _is_game_file(path: Path) -> bool:
    if path.suffix == ".json":
        with open(path, "rb") as f:
            return GAMES_FORMAT.encode() in f.read(512)
    return path.suffix in GAME_SUFFIXES


def game_files(root: str | Path) -> list[str]:
    """The game files under ``root`` (``match --save-games``, ``play --save``, PDN)."""
    return listed(
        root,
        [
            folder / f
            for folder, _, files in walk_served(root)
            for f in files
            if Path(f).suffix in GAME_SUFFIXES and inside_root(root, folder / f) and _is_game_file(folder / f)
        ],
    )


def inside_root(root: str | Path, path: Path) -> bool:
    """Whether ``path``, links followed, is inside ``root`` (nothing outside is ever opened)."""
    base = Path(root).resolve()
    return base in path.resolve().parents


@reads_files
def open_games(path: Path) -> GameFile:
    """The games of a game file: the one place the web app reads game files. A file is parsed (and
    its games checked by replaying them: seconds for a long PDN) once while it stays unchanged."""
    status = path.stat()
    return _parsed_game_file(str(path.resolve()), status.st_mtime_ns, status.st_size)


@functools.lru_cache(maxsize=32)
def _parsed_game_file(path: str, modified_ns: int, size: int) -> GameFile:
    """``load_game_file`` of ``path`` as it was at ``modified_ns`` with ``size`` bytes."""
    return load_game_file(Path(path))


@functools.cache
def _values_of_positions(spec):
    return jax.jit(jax.vmap(value_fn(spec), in_axes=(None, 0, None)))


def _black_chances(rules: Rules, agent_path: Path, states: list) -> list[float]:
    """The agent's chance that Black wins, position by position (the result once a game is over)."""
    agent = load_agent(agent_path, rules)
    stacked = jax.tree.map(lambda *xs: np.stack(xs), *states)
    values = np.asarray(_values_of_positions(agent.spec)(agent.params, stacked, jax.random.key(0)))
    chances = []
    for state, v in zip(states, values, strict=True):
        if bool(state.terminated):
            chances.append(0.5 + 0.5 * int(state.result))
        else:
            chances.append(float(v) if int(state.color) == BLACK else 1.0 - float(v))
    return chances


@reads_files
def game_view(root: str | Path, rules: Rules, game: dict[str, Any]) -> dict[str, Any]:
    """One saved game for the Games page: its positions move by move, the moves, and the agent's
    evaluation of each position when a player spec names an agent file found in the served folder."""
    states, moves = replay_game(rules, game)
    evaluation, note = None, "no player names an agent file: material only"
    for name in (game.get("black", ""), game.get("white", "")):
        file = spec_agent_file(str(name))
        if file is None:
            continue
        try:
            path = find_agent_file(root, file)
            evaluation = {
                "agent": relative_name(root, path),
                "black_chance": _black_chances(rules, path, states),
            }
            break
        except ValueError as error:  # not in the folder, or not an agent of these rules
            note = f"no evaluation: {error}"
    return {
        "black": game.get("black"),
        "white": game.get("white"),
        "result": game.get("result"),
        "moves": [m.notation for m in moves],
        "positions": [position_json(rules, s) for s in states],
        "evaluation": evaluation,
        "note": None if evaluation else note,
    }


@reads_files
def game_pdn(rules: Rules, game: dict[str, Any]) -> str:
    """One game of a game file as PDN text (``analysis.pdn_games.pdn_of_game``)."""
    return write_pdn([pdn_of_game(rules, game)])
