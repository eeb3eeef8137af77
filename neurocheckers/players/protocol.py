"""The player protocol: what every player answers, so that callers (the match loops, the game
session, the web, the command line, the gauntlet) ask the player, never its class.

Every player has:

- ``name``: its spec (``alphabeta:3``, ``compiled:0.1s:FILE``);
- ``batched``: whether the arena plays many games of it at once (our JAX policies,
  ``policies.Player``) rather than one game at a time on the host;
- ``equal_time``: whether each move gets the match clock's equal-time allowance (``...:equal``);
- ``mirrors_openspiel``: whether each of its games must also run in OpenSpiel (OpenSpiel's bots,
  which move on OpenSpiel's own states);
- ``warm_up(rules)``: compile or start what it needs before any move is timed;
- ``nodes``: its node budget a move (None: a time budget, or none);
- ``endgame``: the endgame database its search probes (None: none), and ``with_endgame(load)``: the
  player probing the database ``load()`` gives when its search can and its spec named none;
- ``search_label``: what its search is called where a move is described ("alpha-beta to depth 9");
- ``new_game(seed)``: one game's mover, ``game(state, seconds=None) -> action``, called at each of
  its turns (every jump of a multi-jump included; ``seconds``: the equal-time allowance), with
  ``game.infos`` listing a ``registry.SearchReport`` (or anything with the same fields) a search.

``HostPlayer`` holds the defaults of a player that moves on the host; a new engine subclasses it
(``tests/fake_engine.py``) and registers one ``registry.PlayerKind``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar


class HostPlayer:
    """The defaults of a player that moves on the host, one game at a time (see the module
    docstring): not batched, no equal-time mode, no OpenSpiel mirror, nothing to warm up."""

    batched: ClassVar[bool] = False
    mirrors_openspiel: ClassVar[bool] = False
    equal_time = False
    nodes = None
    endgame = None

    @property
    def search_label(self) -> str:
        """What the player's search is called where a move is described (its spec by default)."""
        return self.name

    def warm_up(self, rules: Any) -> None:
        """Compile or start what the player needs before any move is timed (nothing by default)."""

    def with_endgame(self, load: Callable[[], Any]) -> Any:
        """The player probing the endgame database ``load()`` gives, when its search probes one and
        its spec named none; itself by default (a search that probes none)."""
        return self
