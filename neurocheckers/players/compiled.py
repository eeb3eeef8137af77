"""The compiled search as a player for matches: ``compiled:BUDGET[:FILE[:DB]]``.

- ``BUDGET``: ``0.1s`` (seconds of wall time a move), ``20000n`` (nodes a move: deterministic) or
  ``equal`` (the match clock's allowance each move, as ``timed:equal``).
- ``FILE``: an agent file (an MLP or NNUE network) whose network scores the search's leaves
  (``compiled.network``); without it, or ``material``, material. A file that carries a tuned search
  (``driver.options_metadata``) is played with it.
- ``DB``: an endgame database folder (``neurocheckers endgame build``) of the game's rules: the
  positions it holds get their exact value in the search (``compiled.endgame``), as ``timed:``'s
  ``FILE:DB`` does.

Like the ``timed:`` players it runs on the host, one game at a time: ``new_game(seed)`` returns the
game's mover, called with the game's ``State`` at each of its turns (each action of a multi-jump
included) and the equal-time allowance, returning our action. The search plays whole moves; the
rest of a multi-jump it chose is kept and returned at the following calls without a search. The
mover keeps its table between the moves of a game, and the positions since the last capture or
man's move (for repetitions) and the quiet counter from the states it is shown.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import ClassVar

import numpy as np

from neurocheckers.compiled import endgame as search_db
from neurocheckers.compiled import network
from neurocheckers.compiled.board import Position, SearchRules
from neurocheckers.compiled.driver import CompiledSearch, SearchOptions, SearchResult, options_from_metadata
from neurocheckers.networks.numpy_agent import NumpyAgent
from neurocheckers.players.protocol import HostPlayer
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import State
from neurocheckers.search.limits import MAX_COMPILED_NODES, MAX_MOVE_SECONDS

PREFIX = "compiled:"
SPECS = (
    "compiled:SECONDSs[:FILE[:DB]] | compiled:NODESn[:FILE[:DB]] | compiled:equal[:FILE[:DB]] (the numba"
    " search; leaves by the agent FILE's network, else material; DB an endgame database folder)"
)
MAX_SECONDS = MAX_MOVE_SECONDS
"""The longest think time a move may be given."""
MAX_NODES = MAX_COMPILED_NODES
FIRST_MOVE_SECONDS = 0.05
"""The equal-time budget before the opponent has moved."""
MIN_SECONDS = 0.001
TABLE_BITS = 16
"""Each game's table: 2**16 entries (1 MiB; with the move rows about 2.3 MiB a game), since a match
plays its whole batch of games at once, each with its own table kept between its moves."""


def is_compiled_spec(spec: str) -> bool:
    return spec.strip().startswith(PREFIX)


def parse_compiled(spec: str, rules: Rules, options: SearchOptions | None = None) -> CompiledPlayer:
    """The player of a ``compiled:BUDGET`` spec; ``ValueError`` (one line) naming what is wrong."""
    parts = spec.strip().split(":")
    if not 2 <= len(parts) <= 4 or parts[0] != "compiled" or not all(parts[2:]):
        raise ValueError(f"bad player spec {spec!r}; expected {SPECS}")
    text = parts[1]
    seconds = nodes = None
    try:
        if text.endswith("s") and 0 < float(text[:-1]) <= MAX_SECONDS:
            seconds = float(text[:-1])
        elif text.endswith("n") and 1 <= int(text[:-1]) <= MAX_NODES:
            nodes = int(text[:-1])
    except ValueError:
        pass
    if text != "equal" and seconds is None and nodes is None:
        raise ValueError(
            f"bad player spec {spec!r}: the budget {text!r} must be seconds in (0, {MAX_SECONDS:g}]"
            f" like 0.1s, nodes in 1..{MAX_NODES} like 20000n, or equal"
        )
    try:
        leaves, tuned = network.MATERIAL, {}
        if len(parts) >= 3 and parts[2] != "material":
            agent = NumpyAgent.load(parts[2])
            leaves, tuned = dataclasses.replace(network.from_agent(agent), name=parts[2]), agent.metadata
        if options is None:  # the agent file's tuned search, else the defaults
            options = options_from_metadata(tuned, SearchOptions(table_bits=TABLE_BITS))
        database = search_db.load(parts[3], rules) if len(parts) == 4 else None
    except ValueError as error:
        raise ValueError(f"bad player spec {spec!r}: {error}") from None
    if leaves.num_squares not in (0, rules.num_squares):
        raise ValueError(f"bad player spec {spec!r}: the agent file is for another board than {rules.name}")
    equal = text == "equal"
    return CompiledPlayer(spec.strip(), SearchRules(rules), seconds, nodes, equal, options, leaves, database)


@dataclasses.dataclass
class CompiledPlayer(HostPlayer):
    """The compiled search named by a ``compiled:`` spec (see the module docstring)."""

    name: str
    """The spec, e.g. ``compiled:0.1s``."""
    search_rules: SearchRules
    """The rules the search plays by (the match's preset)."""
    seconds: float | None = None
    """Wall time a move (None: a node budget or the equal-time mode)."""
    nodes: int | None = None
    """Nodes a move (None: a time budget)."""
    equal_time: bool = False
    """Whether each move gets the match clock's equal-time allowance."""
    options: SearchOptions | None = None
    """The search's switches (None: the defaults)."""
    leaves: network.LeafNetwork = network.MATERIAL
    """What scores the leaves: an agent's network, or material."""
    endgame: search_db.SearchDB | None = None
    """An endgame database probed in the search (shared by the player's games), or None."""
    search_label: ClassVar[str] = "compiled search"

    def with_endgame(self, load: Callable[[], search_db.SearchDB]) -> CompiledPlayer:
        """This player probing the database ``load()`` gives, unless its spec named one."""
        return self if self.endgame is not None else dataclasses.replace(self, endgame=load())

    def new_game(self, seed: int = 0) -> CompiledGame:
        """The mover of one new game (a fresh table); ``seed`` is unused (the search is deterministic
        given its budget in nodes)."""
        return CompiledGame(self)

    def warm_up(self, rules: Rules | None = None) -> None:
        """Load (or compile) the numba functions before any move is timed (the player's own rules)."""
        warm = CompiledSearch(self.search_rules, SearchOptions(table_bits=8), self.leaves, self.endgame)
        warm.search(Position.start(self.search_rules.rules), depth=2)


class CompiledGame:
    """One game's mover: ``game(state, seconds=None) -> action``."""

    def __init__(self, player: CompiledPlayer) -> None:
        self.player = player
        self.search = CompiledSearch(player.search_rules, player.options, player.leaves, player.endgame)
        self.infos: list[SearchResult] = []
        self._pending: list[int] = []
        self._history: list[Position] = []
        self._quiet = 0
        self._after_ours: Position | None = None

    def __call__(self, state: State, seconds: float | None = None) -> int:
        if bool(np.asarray(state.terminated)):
            return 0
        legal = _legal_actions(state)
        if int(np.asarray(state.continuing)) != 0:
            if self._pending and self._pending[0] in legal:
                return self._pending.pop(0)
            raise RuntimeError(f"{self.player.name}: asked to go on with a multi-jump it did not start")
        position = Position.from_state(state)
        self._observe(position, int(np.asarray(state.plies_without_capture)))
        p = self.player
        if p.equal_time:
            seconds = FIRST_MOVE_SECONDS if seconds is None else max(seconds, MIN_SECONDS)
        else:
            seconds = p.seconds
        result = self.search.search(position, seconds=seconds, nodes=p.nodes, ply=int(np.asarray(state.ply)),
                                    quiet=self._quiet, history=self._history)  # fmt: skip
        if not result.actions or result.actions[0] not in legal:
            raise RuntimeError(f"{p.name}: the search's move {result.actions} is not legal in this position")
        self.infos.append(result)
        self._play_ours(position, result.move)
        self._pending = list(result.actions[1:])
        return result.actions[0]

    def _observe(self, position: Position, plies_without_capture: int) -> None:
        """Update the quiet counter and the history from the opponent's move since our last one (the
        preset's counter, captures alone resetting it, is the state's own)."""
        before = self._after_ours
        if before is None:  # the first position this mover is shown
            self._history, self._quiet = [], plies_without_capture
            return
        irreversible = _irreversible(before, position)
        if irreversible:
            self._history = []
        else:
            self._history.append(before)
        if self.player.search_rules.man_moves_reset:
            self._quiet = 0 if irreversible else self._quiet + 1
        else:
            self._quiet = plies_without_capture

    def _play_ours(self, position: Position, move: tuple[int, ...]) -> None:
        from neurocheckers.compiled.game import after

        nxt = after(self.search.geo, position, move)
        if _irreversible(position, nxt):
            self._history, self._quiet = [], 0
        else:
            self._history.append(position)
            self._quiet += 1
        self._after_ours = nxt


def _men(position: Position, color: int) -> int:
    return position.black_men if color == 0 else position.white_men


def _irreversible(before: Position, after: Position) -> bool:
    """Whether the move from ``before`` to ``after`` captured or moved a man."""
    pieces = bin(before.black_men | before.black_kings | before.white_men | before.white_kings).count("1")
    left = bin(after.black_men | after.black_kings | after.white_men | after.white_kings).count("1")
    return left < pieces or _men(before, before.color) != _men(after, before.color)


def _legal_actions(state: State) -> set[int]:
    bits = np.asarray(state.legal_bits, np.uint64)
    n = state.num_squares
    return {d * n + s for d in range(4) for s in range(n) if (int(bits[d]) >> s) & 1}
