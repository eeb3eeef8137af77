"""The opponent of a game on the Play page: a player spec (an agent file alone is the compiled search
on 8x8, the timed search elsewhere) resolved against the served folder, checked, and its search
compiled before its first move. A compiled opponent probes the endgame database of its rules that
the server opened (``serve --endgame``), unless its spec names one."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from pathlib import Path

from neurocheckers.compiled.endgame import SearchDB
from neurocheckers.endgame.database import EndgameDB, EndgameError
from neurocheckers.match.host import AnyPlayer, parse_any_player
from neurocheckers.match.turns import load_endgame, prepare_step
from neurocheckers.networks.agent_file import Agent, load_agent
from neurocheckers.players.anytime import AnytimeMCTSPlayer
from neurocheckers.players.external import named_engine_spec
from neurocheckers.players.openspiel import is_engine_spec
from neurocheckers.players.registry import kind_of, spec_agent_file, with_agent_file
from neurocheckers.rules.presets import Rules
from neurocheckers.search.limits import MAX_MOVE_SECONDS
from neurocheckers.search.mcts import MCTSConfig
from neurocheckers.web.agents import find_agent_file
from neurocheckers.web.folder import LOG, relative_name

MAX_THINK_SECONDS = MAX_MOVE_SECONDS
"""The longest thinking time a game may ask for (a player's longest move, ``search.limits``)."""
MAX_THINK_NODES = 5_000_000
"""The largest node budget a ``timed:NODESn:EVAL`` opponent may have: about ``MAX_THINK_SECONDS`` of
search at the 100,000 nodes a second of a small network on a CPU."""
AGENT_FILE_SUFFIX = ".safetensors"


class SessionError(ValueError):
    """A request the game cannot follow (an illegal move, not your turn, a bad setting); the game is
    unchanged."""


class DatabaseUnreadable(SessionError):
    """The server's endgame database could not be loaded for the compiled search."""


@dataclasses.dataclass(frozen=True)
class Opponent:
    """The player the person faces: its spec (agent file resolved), the player (any of the protocol:
    an ``mcts:FILE:SIMS`` agent is the anytime MCTS, starting from SIMS simulations), and the agent
    its spec names (None without one)."""

    spec: str
    player: AnyPlayer
    agent: Agent | None


def opponent_spec(spec: str, think_seconds: float, search: str = "timed") -> str:
    """The spec an opponent setting stands for: an agent file alone (``FILE.safetensors``) is
    ``search`` (``timed``: the alpha-beta search, or ``compiled``) for the think time,
    ``SEARCH:SECONDSs:FILE``; any other spec is itself."""
    spec = spec.strip()
    if ":" not in spec and spec.endswith(AGENT_FILE_SUFFIX):
        return f"{search}:{think_seconds:g}s:{spec}"
    return spec


def _is_agent_file(spec: str) -> bool:
    return opponent_spec(spec, 1.0) != spec.strip()


_SEARCH_DBS: dict[Path, SearchDB] = {}
"""The compiled search's copies of the server's endgame databases, by folder: loaded once a process
(``american8`` up to 5 pieces: 16 CPU seconds, 584 MB), at the first compiled game of their
rules, and shared by every game (the search only reads them)."""
_SEARCH_DBS_LOCK = threading.Lock()


def search_database(db: EndgameDB) -> SearchDB:
    """The compiled search's copy of the server's database ``db``; ``SessionError`` (one line, no
    path: the page shows none) when it cannot be read."""
    folder = db.folder.resolve()
    with _SEARCH_DBS_LOCK:
        if folder not in _SEARCH_DBS:
            try:
                _SEARCH_DBS[folder] = load_endgame(str(db.folder), db.rules)
            except EndgameError as error:
                LOG.warning("endgame database of %s for the compiled search: %s", db.rules.name, error)
                unreadable = f"the server's endgame database for {db.rules.name} cannot be read"
                raise DatabaseUnreadable(unreadable) from None
        return _SEARCH_DBS[folder]


def served_program_spec(spec: str, rules: Rules, engines: Mapping[str, str]) -> str:
    """``spec`` as the server plays it: a player that runs a program of its own (``starts_program``)
    runs only one of ``engines`` (name -> program, named when the server started), never a path a
    request names; ``SessionError`` naming the allowed engines. Other specs are themselves."""
    kind = kind_of(spec)
    if kind is None or not kind.starts_program:
        return spec
    try:
        kind.check_rules(spec, rules)
        return named_engine_spec(spec, engines)
    except ValueError as error:
        raise SessionError(str(error)) from None


def make_opponent(
    root: str | Path, spec: str, rules: Rules, think_seconds: float = 1.0, endgame: EndgameDB | None = None,
    engines: Mapping[str, str] | None = None,
) -> Opponent:  # fmt: skip
    """The opponent of ``spec`` (``opponent_spec``) for ``rules``, its agent file looked up in the
    served folder ``root``; ``SessionError`` naming what is wrong. An agent file alone plays the
    compiled search on 8x8 when it evaluates the agent's network (an MLP or NNUE), else the timed one.
    A compiled search whose spec names no database probes ``endgame`` (the server's, of ``rules``).
    An external engine is one of ``engines`` (``served_program_spec``), shown by its name."""
    if _is_agent_file(spec) and rules.board_size == 8:
        try:
            compiled = opponent_spec(spec, think_seconds, "compiled")
            return make_opponent(root, compiled, rules, think_seconds, endgame)
        except DatabaseUnreadable:
            raise
        except SessionError:
            pass  # a network the compiled search does not evaluate: the timed search
    spec = opponent_spec(spec, think_seconds)
    if is_engine_spec(spec):
        raise SessionError(f"{spec!r}: OpenSpiel's bots cannot play on this page (use match)")
    named, spec = spec, served_program_spec(spec, rules, engines or {})
    file = spec_agent_file(spec)
    agent = None
    if file is not None:  # a file outside the served folder is refused (PathRefused), not a bad spec
        path = find_agent_file(root, file)
        spec = with_agent_file(spec, path)
    try:
        if file is not None:
            agent = load_agent(path, rules)
        player = parse_any_player(spec, rules)
    except ValueError as error:
        raise SessionError(str(error)) from None
    if player.nodes is not None and player.nodes > MAX_THINK_NODES:
        raise SessionError(f"{spec!r}: a node budget must be at most {MAX_THINK_NODES:,} here")
    if endgame is not None:  # a search that probes a database probes the server's, unless it names one
        player = player.with_endgame(lambda: search_database(endgame))
    if spec != named:  # a named engine: its name, never its path, in the page and the saved game
        player = dataclasses.replace(player, name=named)
    shown = named if file is None else with_agent_file(spec, relative_name(root, path))
    if spec.startswith("mcts:") and agent is not None:  # against a person: the anytime MCTS
        config = MCTSConfig(num_simulations=int(spec.rsplit(":", 1)[1]))
        player = AnytimeMCTSPlayer(shown, agent, rules, think_seconds, config)
    return Opponent(shown, player, agent)


def prepare_opponent(opponent: Opponent, rules: Rules) -> None:
    """Compile or start the opponent's search before its first move: the player's own ``warm_up``
    (the protocol's) and the step that plays its moves (``turns.prepare_step``)."""
    opponent.player.warm_up(rules)
    prepare_step(rules)
