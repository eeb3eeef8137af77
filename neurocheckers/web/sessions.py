"""The server's games (``session.GameSession``) by id: held in memory and saved in the served folder,
so a game survives a restart of the server.

Each game is one JSON file (never pickle) in ``GAMES_DIR`` of the served folder, written all or
nothing after every change: its settings, its start position (FEN and draw counters) and its plies
(action, who played it). A game the server does not hold is read back from its file on its first
request, the opponent made again and the plies replayed. A folder the server cannot write keeps its
games in memory only (logged once a game). Only ids the server makes (``g`` and 12 hex digits) are
looked up on disk.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from neurocheckers.endgame.database import EndgameDB
from neurocheckers.formats import atomic_write_text
from neurocheckers.rules.notation import legal_actions, parse_fen, to_fen
from neurocheckers.rules.presets import get_rules
from neurocheckers.web.board import side_name
from neurocheckers.web.folder import LOG, NotFound
from neurocheckers.web.session import GameSession, build_session, new_session, play_ply, session_view

GAMES_DIR = Path(".neurocheckers-web") / "games"
"""Where, in the served folder, the games are saved (a hidden folder: never listed as game files)."""
GAME_FORMAT = "neurocheckers-web-game/1"
"""The ``format`` of a saved game's JSON."""
KEPT_FILES = 256
"""The most saved games kept on disk (the oldest removed beyond it)."""
_GAME_ID = re.compile(r"g[0-9a-f]{12}")


def game_record(session: GameSession) -> dict[str, Any]:
    """A game as JSON-ready data: settings, start position, plies, resignation, last evaluation."""
    start = session.start
    return {
        "format": GAME_FORMAT,
        "id": session.id,
        "rules": session.rules.name,
        "human": side_name(session.human).lower(),
        "opponent": session.opponent.spec,
        "think_seconds": session.think_seconds,
        "seed": session.seed,
        "start": {"fen": to_fen(start), "ply": int(start.ply), "quiet": int(start.plies_without_capture)},
        "plies": [[p.action, p.by_human] for p in session.plies],
        "resigned": session.resigned,
        "evaluation": session.evaluation,
    }


def game_of_record(
    root: str | Path,
    record: dict[str, Any],
    endgame: dict[str, EndgameDB] | None = None,
    engines: Mapping[str, str] | None = None,
) -> GameSession:
    """The game a ``game_record`` saved, its opponent made again (a compiled one probing the database
    of its rules among ``endgame``) and its plies replayed; ``ValueError`` when the record is not one
    or a ply is not legal."""
    if not isinstance(record, dict) or record.get("format") != GAME_FORMAT:
        raise ValueError(f"not a saved game of this server (format {GAME_FORMAT})")
    rules = get_rules(record["rules"])
    start = record["start"]
    state = parse_fen(rules, start["fen"], int(start["ply"]), int(start["quiet"]))
    human = 0 if record["human"] == side_name(0).lower() else 1
    session = build_session(
        root, record["id"], rules, human, record["opponent"], float(record["think_seconds"]),
        int(record["seed"]), state, (endgame or {}).get(rules.name), engines,
    )  # fmt: skip
    for action, by_human in record["plies"]:
        if int(action) not in legal_actions(session.state):
            raise ValueError(f"ply {len(session.plies) + 1}: action {action} is not legal there")
        play_ply(session, int(action), bool(by_human))
    session.resigned = record["resigned"]
    session.evaluation = record["evaluation"]
    return session


class Sessions:
    """The server's games by id (the oldest dropped from memory beyond ``limit``; saved games come
    back from disk), each used under its lock, and the endgame databases by rules name (a game gets
    the one of its rules). ``save`` False keeps the games in memory only."""

    def __init__(
        self,
        root: str | Path,
        limit: int = 64,
        endgame: dict[str, EndgameDB] | None = None,
        save: bool = True,
        engines: Mapping[str, str] | None = None,
    ):
        self.root = Path(root)
        self.limit = limit
        self.endgame = dict(endgame or {})
        self.engines = dict(engines or {})
        """The external engines games may play, by name (``serve --engine NAME=PATH``)."""
        self.folder = self.root / GAMES_DIR if save else None
        self.games: dict[str, GameSession] = {}
        self._lock = threading.Lock()

    def _hold(self, session: GameSession) -> GameSession:
        """Hold ``session`` in memory (the one already held under its id wins)."""
        session.endgame = self.endgame.get(session.rules.name)
        with self._lock:
            session = self.games.setdefault(session.id, session)
            while len(self.games) > self.limit:
                self.games.pop(next(iter(self.games)))
        return session

    def _save(self, session: GameSession) -> None:
        """Write the game's file (all or nothing); a folder that cannot be written is logged."""
        if self.folder is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.folder / f"{session.id}.json", json.dumps(game_record(session)))
        except OSError as error:
            LOG.warning("game %s kept in memory only: %s", session.id, error.strerror or error)

    def _prune(self) -> None:
        """Remove the oldest saved games beyond ``KEPT_FILES``."""
        try:
            files = sorted(self.folder.glob("g*.json"), key=lambda f: f.stat().st_mtime)
            for old in files[:-KEPT_FILES]:
                old.unlink()
        except OSError as error:
            LOG.warning("old saved games not removed: %s", error.strerror or error)

    def create(self, **settings: Any) -> GameSession:
        session = self._hold(new_session(self.root, **settings, endgame=self.endgame, engines=self.engines))
        self._save(session)
        if self.folder is not None:
            self._prune()
        return session

    def _load(self, game_id: str) -> GameSession | None:
        """The saved game ``game_id`` read back, None when there is no file for it."""
        if self.folder is None or not _GAME_ID.fullmatch(game_id):
            return None
        path = self.folder / f"{game_id}.json"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return None
        try:
            return game_of_record(self.root, json.loads(text), self.endgame, self.engines)
        except (ValueError, KeyError, TypeError) as error:
            reason = str(error.args[0]) if error.args else type(error).__name__
            raise NotFound(f"game {game_id!r} was saved but cannot be read back: {reason}") from None

    def get(self, game_id: str) -> GameSession:
        with self._lock:
            session = self.games.get(game_id)
        if session is None:
            loaded = self._load(game_id)
            if loaded is None:
                raise NotFound(f"no game {game_id!r} on this server")
            session = self._hold(loaded)
        return session

    def read(self, game_id: str, reader: Callable[..., Any], *args: Any) -> Any:
        """``reader(session, *args)`` under the game's lock (the game unchanged)."""
        session = self.get(game_id)
        with session.lock:
            return reader(session, *args)

    def act(self, game_id: str, action: Any = None, *args: Any) -> dict[str, Any]:
        """``action(session, *args)`` (when given) under the game's lock, saved, then the game's view."""
        session = self.get(game_id)
        with session.lock:
            if action is not None:
                action(session, *args)
                self._save(session)
            return session_view(session)
