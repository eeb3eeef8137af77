"""py-draughts' alpha-beta engine as an opponent: ``pydraughts:D`` (depth D) and ``pydraughts:Ns``
(N seconds a move), ``american8`` only.

py-draughts (pip ``py-draughts``, import name ``draughts``) ships ``SimpleEngine``: negamax with
alpha-beta, iterative deepening, a transposition table, quiescence search over captures and move
ordering, rating positions by material (men 1, kings 2.5) and piece-square tables. This module lets
it pick the moves of one side of our games; every game is still played and judged by OUR engine and
rules. py-draughts' own draw rules (40 plies of quiet king moves without a capture or promotion,
threefold repetition) differ from ours (40 plies in a row without a capture), and its board is
rebuilt from our position before every search, without the game's history: its draw rules only
shape its search, never a game's result.

Mapping, verified by the tests (``tests/test_pydraughts.py``):

* py-draughts' ``AmericanBoard`` puts White on its squares 21-32 and lets White move first; our Black
  (``BLACK``, the first mover) starts on our squares 1-12. Our square ``s`` is its square
  ``33 - s`` (a half turn of the board), our Black its White and our White its Black. Its ``Move``
  lists 0-based indices (``square_list``, ``captured_list``): index ``i`` is our square ``32 - i``.
* py-draughts offers captures as optional in American checkers; ours forces them. The board
  subclass of :func:`board_of` (``legal_moves`` keeps only the captures when there is one) makes the
  whole tree search play by forced capture: ``SimpleEngine`` reads ``board.legal_moves`` at the
  root and at every node, and pushes and pops moves on the board it is given (no copies).
* A py-draughts ``Move`` is a whole turn, a multi-jump included; ours is one step or one single jump
  an action. :class:`PyDraughtsGame` translates the engine's move into one action a jump, checks
  the whole sequence in our engine, plays the first and keeps the rest for the following calls
  (``State.continuing`` set), which need no search.

Each game gets its own ``SimpleEngine`` (``PyDraughtsBot.new_game``): its transposition table and
history heuristic carry over from move to move within a game, never across games, so that a game
is reproducible on its own. A depth search is deterministic; a timed one is not (where it stops
depends on the clock).

py-draughts is GPL-3 and optional: it is imported on first use, never when this module is, and its
absence is a ``ValueError`` saying how to install it (``pip install -e ".[engines]"``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import re
from typing import Any

import jax

from neurocheckers.players.protocol import HostPlayer
from neurocheckers.rules.engine import step
from neurocheckers.rules.notation import to_fen
from neurocheckers.rules.presets import AMERICAN8, Rules
from neurocheckers.rules.state import BLACK, State
from neurocheckers.rules.tables import tables
from neurocheckers.search.limits import MAX_MOVE_SECONDS, MAX_PYDRAUGHTS_DEPTH

PREFIX = "pydraughts:"
SPECS = "pydraughts:D | pydraughts:Ns"
"""The py-draughts player specs (``american8`` only): depth ``D`` in 1..``MAX_DEPTH``, or ``N``
seconds a move (``0.5s``; at most ``MAX_SECONDS``)."""
INSTALL_HINT = 'pip install -e ".[engines]"'
MAX_DEPTH = MAX_PYDRAUGHTS_DEPTH
MAX_SECONDS = MAX_MOVE_SECONDS
TIMED_DEPTH_CAP = 30
"""The depth limit of a timed spec: iterative deepening stops at the clock long before it."""
NUM_SQUARES = 32
_SECONDS = re.compile(r"(\d+(?:\.\d*)?|\.\d+)s")


def draughts_module() -> Any:
    """py-draughts' ``draughts`` module (its log messages silenced); ``ValueError`` saying how to
    install it when it is missing."""
    try:
        module = importlib.import_module("draughts")
    except ImportError:
        raise ValueError(f"py-draughts players need py-draughts: {INSTALL_HINT}") from None
    # py-draughts logs through loguru, whose default sink prints DEBUG and up: a line for every board
    # built and for every depth of every search.
    with contextlib.suppress(ImportError):
        importlib.import_module("loguru").logger.disable("draughts")
    return module


@functools.cache
def _forced_board_class() -> type:
    """``AmericanBoard`` with forced captures, defined on first use (py-draughts is imported then)."""
    draughts = draughts_module()

    class ForcedCaptureAmericanBoard(draughts.AmericanBoard):
        """American checkers as we play it: a capture, when there is one, must be taken.

        ``root_from`` (an index of py-draughts, or None) restricts the moves of the root position (the
        board before any push) to the captures starting there: a multi-jump under way must go on
        with the piece that is jumping. ``copy()`` makes a board of this class without it.
        """

        root_from: int | None = None

        @property
        def legal_moves(self) -> list:
            moves = super().legal_moves
            captures = [m for m in moves if m.captured_list]
            if self.root_from is not None and not self._moves_stack:
                return [m for m in captures if m.square_list[0] == self.root_from]
            return captures or moves

    return ForcedCaptureAmericanBoard


def _mirror(bits: int | Any) -> int:
    """A 32-square bitboard turned by half a turn: our bit ``i`` (square ``i + 1``) becomes bit
    ``31 - i``, py-draughts' index of our square's image ``33 - (i + 1)`` (and back)."""
    return int(f"{int(bits):032b}"[::-1], 2)


def _fen_list(men: int, kings: int) -> str:
    items = [(i + 1, "") for i in range(NUM_SQUARES) if men >> i & 1]
    items += [(i + 1, "K") for i in range(NUM_SQUARES) if kings >> i & 1]
    return ",".join(f"{k}{s}" for s, k in sorted(items))


def _board(state: State, root_from: int | None = None) -> Any:
    """The forced-capture board of ``state``'s pieces and side to move (see :func:`board_of`)."""
    their_white = _fen_list(_mirror(state.black_men), _mirror(state.black_kings))
    their_black = _fen_list(_mirror(state.white_men), _mirror(state.white_kings))
    side = "W" if int(state.color) == BLACK else "B"
    board = _forced_board_class().from_fen(f"{side}:W{their_white}:B{their_black}")
    board.root_from = root_from
    return board


def board_of(state: State) -> Any:
    """The forced-capture py-draughts board of our position (one game's host ``State``): our Black is
    its White, our square ``s`` its square ``33 - s``, the same side to move. A multi-jump under
    way (``state.continuing``) is not part of it: its root offers every capture."""
    return _board(state)


def _squares_of(move: Any) -> list[int]:
    """Our squares (1-based) visited by a py-draughts move."""
    return [NUM_SQUARES - i for i in move.square_list]


def actions_of(move: Any) -> list[int]:
    """Our actions (``direction * 32 + square - 1``) of a py-draughts move, one a step or jump;
    ``ValueError`` when two consecutive squares are neither a step nor a jump apart."""
    t = tables(8)
    path = _squares_of(move)
    actions = []
    for src, dst in zip(path, path[1:], strict=False):
        ways = [d for d in range(4) if dst - 1 in (t.neighbor[d, src - 1], t.jump_landing[d, src - 1])]
        if len(ways) != 1:
            raise ValueError(f"py-draughts move {move} goes from our square {src} to {dst} in one leap")
        actions.append(ways[0] * NUM_SQUARES + src - 1)
    return actions


@functools.cache
def _jitted_step(rules: Rules):
    return jax.jit(functools.partial(step, rules))


def _is_legal(state: State, action: int) -> bool:
    """Whether ``action`` is legal in a host ``state``, from ``legal_bits`` (no device work)."""
    direction, square = divmod(int(action), NUM_SQUARES)
    return 0 <= direction < 4 and bool(int(state.legal_bits[direction]) >> square & 1)


def _same_position(state: State, board: Any) -> bool:
    """Whether our ``state`` and py-draughts' ``board`` hold the same pieces, the same side to move."""
    ours = (state.black_men, state.black_kings, state.white_men, state.white_kings)
    theirs = (board.white_men, board.white_kings, board.black_men, board.black_kings)
    white_to_move = board.turn.name == "WHITE"
    return all(_mirror(a) == b for a, b in zip(ours, theirs, strict=True)) and white_to_move == (
        int(state.color) == BLACK
    )


def _play_through(state: State, board: Any, move: Any, actions: list[int]) -> None:
    """Play ``actions`` (the move) in our engine from ``state``: ``RuntimeError`` naming the position
    and the move unless each is legal, the same side jumps on until the last, and the position
    reached is the one py-draughts reaches by pushing the move on ``board``."""
    step_fn = _jitted_step(AMERICAN8)
    where = to_fen(state) + (
        f" (jumping on from square {int(state.continuing).bit_length()})" if int(state.continuing) else ""
    )
    current = state
    for k, action in enumerate(actions):
        if not _is_legal(current, action):
            raise RuntimeError(f"py-draughts plays {move} in {where}: its action {k + 1} is illegal here")
        current = jax.device_get(step_fn(current, action))
        if bool(int(current.continuing)) != (k < len(actions) - 1):
            raise RuntimeError(f"py-draughts plays {move} in {where}: our engine ends the turn elsewhere")
    board.push(move)
    if not _same_position(current, board):
        raise RuntimeError(f"py-draughts plays {move} in {where}: the positions reached differ")


@dataclasses.dataclass(frozen=True)
class PyDraughtsBot(HostPlayer):
    """py-draughts' ``SimpleEngine`` named by a spec."""

    name: str
    """The spec, e.g. ``pydraughts:6`` or ``pydraughts:0.5s``."""
    depth: int
    """The engine's ``depth_limit`` (``TIMED_DEPTH_CAP`` for a timed spec)."""
    seconds: float | None
    """The engine's ``time_limit`` in seconds a move; None for a depth spec."""

    def new_game(self, seed: int = 0) -> PyDraughtsGame:
        """The engine of one new game (a fresh ``SimpleEngine``); ``seed`` is unused."""
        return PyDraughtsGame(self)


class PyDraughtsGame:
    """The bot playing one game: ``game(state) -> our action``, called at each of its turns."""

    def __init__(self, bot: PyDraughtsBot) -> None:
        self.bot = bot
        self.nodes = 0
        """Nodes searched so far in this game (the sum of the engine's ``nodes``)."""
        self.searches = 0
        """Engine calls so far in this game."""
        self._engine = self._new_engine()
        self._pending: list[int] = []  # the jumps still to play of the multi-jump chosen last

    def _new_engine(self) -> Any:
        return draughts_module().SimpleEngine(depth_limit=self.bot.depth, time_limit=self.bot.seconds)

    def __call__(self, state: State, seconds: float | None = None) -> int:
        """Our action in ``state`` (one game's host ``State``, the bot's side to move); 0 once the game
        is over, as our policies answer. The next jump of a multi-jump chosen earlier comes without a
        search; otherwise the engine searches the position and its whole move is checked in our
        engine (``RuntimeError`` naming the position and the move if it is not legal here)."""
        if bool(state.terminated):
            return 0
        continuing = int(state.continuing)
        if continuing and self._pending and self._continues(state, self._pending[0]):
            return self._pending.pop(0)
        actions = self._search(state, continuing)
        self._pending = actions[1:]
        return actions[0]

    @staticmethod
    def _continues(state: State, action: int) -> bool:
        """Whether the pending ``action`` is this position's next jump (it moves the jumping piece)."""
        return int(state.continuing) == 1 << (action % NUM_SQUARES) and _is_legal(state, action)

    def _search(self, state: State, continuing: int) -> list[int]:
        """The engine's whole move in ``state`` as our actions, checked in our engine.

        A multi-jump under way without a pending jump (a game handed over mid-jump, e.g. after
        random opening plies) is searched with the root restricted to the jumping piece's captures,
        by a throwaway engine: the game's transposition table may hold this position's unrestricted
        best move, which the search would return, and must not learn the restricted one.
        """
        root_from = NUM_SQUARES - continuing.bit_length() if continuing else None
        board = _board(state, root_from)
        engine = self._new_engine() if continuing else self._engine
        try:
            move = engine.get_best_move(board)
        except ValueError as error:  # py-draughts finds no legal move where ours does
            raise RuntimeError(f"py-draughts has no move in {to_fen(state)}: {error}") from None
        finally:
            self.nodes += int(engine.nodes)
            self.searches += 1
        try:
            actions = actions_of(move)
        except ValueError as error:
            raise RuntimeError(f"{error}, in {to_fen(state)}") from None
        _play_through(state, board, move, actions)
        return actions


def is_pydraughts_spec(spec: str) -> bool:
    return spec.strip().startswith(PREFIX)


def parse_pydraughts(spec: str, rules: Rules) -> PyDraughtsBot:
    """The bot of a ``pydraughts:D`` or ``pydraughts:Ns`` spec; ``ValueError`` (one line naming the
    bad value) for a depth outside 1..20, seconds outside (0, 60], rules other than ``american8``,
    or py-draughts not installed."""
    text = spec.strip()
    if not text.startswith(PREFIX):
        raise ValueError(f"bad player spec {spec!r}; expected one of: {SPECS}")
    value = text[len(PREFIX) :]
    if value.endswith("s"):
        seconds = float(value[:-1]) if _SECONDS.fullmatch(value) else 0.0
        if not 0 < seconds <= MAX_SECONDS:
            raise ValueError(
                f"bad player spec {spec!r}: the time {value!r} must be seconds in (0, {MAX_SECONDS:g}],"
                " written like 0.5s"
            )
        bot = PyDraughtsBot(text, TIMED_DEPTH_CAP, seconds)
    else:
        if not (re.fullmatch(r"\d+", value) and 1 <= int(value) <= MAX_DEPTH):
            raise ValueError(
                f"bad player spec {spec!r}: the depth {value!r} must be an integer in 1..{MAX_DEPTH}"
            )
        bot = PyDraughtsBot(text, int(value), None)
    if rules.name != AMERICAN8.name:
        raise ValueError(
            f"{text!r} plays py-draughts' American checkers, american8 only; got --rules {rules.name}"
        )
    draughts_module()
    return bot
