"""The analysis panel of the Games and Play pages: ``analysis.game_analysis`` of a saved game or of
the game being played, with the server's settings (``serve --analysis-nodes``), the rules' best agent
of the served folder at the search's leaves (when the compiled search reads its network, else
material) and the server's endgame databases (``serve --endgame``), perfect play over them on a
board it covers. Analyses are kept (the newest ``KEPT``), so that a panel opened again is instant.
"""

from __future__ import annotations

import collections
import threading
from pathlib import Path
from typing import Any

from neurocheckers.analysis.game_analysis import (
    AnalysisOptions,
    analyse_states,
    leaf_network,
    perfect_play,
)
from neurocheckers.analysis.games import replay_game
from neurocheckers.compiled import network
from neurocheckers.endgame.database import EndgameDB
from neurocheckers.rules.notation import to_fen
from neurocheckers.rules.presets import Rules
from neurocheckers.web import agents as agent_listing
from neurocheckers.web.folder import LOG, relative_name
from neurocheckers.web.opponents import search_database
from neurocheckers.web.session import GameSession, whole_turns

DEFAULT_NODES = 20_000
"""The search's node budget a position (``serve --analysis-nodes``)."""
KEPT = 32
"""Analyses kept in memory."""


class Analyst:
    """The server's analyses of games (see the module docstring); one at a time, under a lock (they
    share the perfect-play tables and a core)."""

    def __init__(self, root: str | Path, endgame: dict[str, EndgameDB], nodes: int = DEFAULT_NODES):
        self.root = Path(root)
        self.endgame = endgame
        self.options = AnalysisOptions(nodes=nodes)
        self._perfect: dict[str, Any] = {}
        self._done: collections.OrderedDict[tuple, dict[str, Any]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def _leaves(self, rules: Rules) -> tuple[network.LeafNetwork, str]:
        """The rules' best agent's network, or material (with why, when the agent cannot be read)."""
        best = agent_listing.best_agents(self.root).get(rules.name)
        if best is None:
            return network.MATERIAL, ""
        try:
            leaves = leaf_network(self.root / best, rules)
            return leaves, relative_name(self.root, self.root / best)
        except ValueError as error:
            return (
                network.MATERIAL,
                f"material leaves: {best} cannot be read by the compiled search ({error})",
            )

    def _databases(self, rules: Rules):
        db = self.endgame.get(rules.name)
        if db is None:
            return None, None
        searchable = search_database(db)
        if rules.name not in self._perfect:
            self._perfect[rules.name] = perfect_play(rules, searchable)
        return searchable, self._perfect[rules.name]

    def analyse(self, rules: Rules, states: list, moves: list[str]) -> dict[str, Any]:
        """The page's view of the analysis of the positions ``states`` and ``moves`` between them."""
        key = (rules.name, to_fen(states[0]), int(states[0].ply), tuple(moves))
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                return self._done[key]
            leaves, name = self._leaves(rules)
            endgame, perfect = self._databases(rules)
            analysis = analyse_states(rules, states, moves, self.options, leaves, endgame, perfect)
            view = analysis.to_json()
            if leaves is not network.MATERIAL:
                view["leaves"] = name
            elif name:
                view["note"] = name
            self._done[key] = view
            while len(self._done) > KEPT:
                self._done.popitem(last=False)
            LOG.info("analysed a %s game of %d moves", rules.name, len(moves))
            return view

    def analyse_saved(self, rules: Rules, game: dict[str, Any]) -> dict[str, Any]:
        """The analysis of a game of a game file."""
        states, played = replay_game(rules, game)
        return self.analyse(rules, states, [m.notation for m in played])


def session_positions(session: GameSession) -> tuple[Rules, list, list[str]]:
    """The Play page's game as whole turns: its rules, the positions at each turn's start and the
    moves between them (``session.whole_turns``)."""
    return (session.rules, *whole_turns(session))


__all__ = ["DEFAULT_NODES", "Analyst", "session_positions"]
