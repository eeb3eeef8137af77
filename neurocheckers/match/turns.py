"""A player's whole turn, the words that describe it, and the colour words: what ``play`` (the
terminal game) and the web board share. ``player_turn`` plays any player of the protocol
(``players.protocol``: the timed, compiled and anytime MCTS searches, engines, policies) through its
game's mover (``host_turn``), with the word of the endgame database its search probes
(``database_word``); every turn is one ``SearchedMove``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from neurocheckers.compiled import endgame as search_db
from neurocheckers.compiled import search as compiled_search
from neurocheckers.compiled.board import Position
from neurocheckers.compiled.driver import SearchOptions
from neurocheckers.players.compiled import CompiledPlayer, parse_compiled
from neurocheckers.players.registry import SearchReport
from neurocheckers.rules.engine import init
from neurocheckers.rules.notation import (
    Move,
    action_squares,
    apply_move,
    legal_moves,
)
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, WHITE, State
from neurocheckers.search.alphabeta import WIN_SCORE
from neurocheckers.search.timed import EXTENSION, MAX_DEPTH, SearchInfo

COLORS = {"black": BLACK, "white": WHITE}
"""``--human`` values and the colour each stands for."""
SEARCHES = ("compiled", "alphabeta", "mcts")
"""``--search`` values: the compiled search (the 8x8 default), the timed alpha-beta search (the
default elsewhere) or the anytime MCTS."""
PROVEN_SCORE = WIN_SCORE - MAX_DEPTH - EXTENSION
"""A timed search's score at least this large (in absolute value) is a proven win (or loss)."""
COMPILED_PROVEN_SCORE = compiled_search.WIN_BOUND / compiled_search.UNIT
"""A compiled search's score (men) beyond this is a won or lost game: the database's wins count
their whole distance to the end, so they fall short of ``PROVEN_SCORE``."""


def parse_color(color: str | int) -> int:
    """``BLACK`` or ``WHITE`` from ``"black"``/``"white"`` (or the int itself); ``ValueError`` otherwise."""
    if isinstance(color, str) and color.strip().lower() in COLORS:
        return COLORS[color.strip().lower()]
    if color in (BLACK, WHITE) and not isinstance(color, (str, bool)):
        return int(color)
    raise ValueError(f"the human's colour must be black or white, got {color!r}")


@dataclasses.dataclass(frozen=True)
class SearchedMove:
    """A search's whole turn: the move, the first search that chose among several actions (None when
    every action was forced), the nodes of all its searches, the seconds spent, and the search's name."""

    move: Move
    info: SearchInfo | SearchReport | None
    nodes: int
    seconds: float
    search: str = "alpha-beta"
    """How ``search_text`` names the search."""
    database: str | None = None
    """What the endgame database decided, from the mover's view (``database_word``), else None."""


def default_search(rules: Rules, agent_path: str | None, seconds: float, database: bool = False) -> str:
    """``compiled`` on 8x8 (on any board with a ``database``, which only the compiled search reads)
    when the compiled search evaluates the agent file's network (an MLP or an NNUE agent), else
    ``alphabeta``."""
    if (rules.board_size != 8 and not database) or agent_path is None:
        return "alphabeta"
    try:
        compiled_agent_player(agent_path, rules, seconds)
    except ValueError:
        return "alphabeta"
    return "compiled"


def compiled_agent_player(
    agent_path: str, rules: Rules, seconds: float, endgame: search_db.SearchDB | None = None
) -> CompiledPlayer:
    """``compiled:SECONDSs:FILE`` with a table of the search's default size (a game at a time) and
    the endgame database ``endgame`` (loaded once by the caller: ``load_endgame``) probed in its
    search; ``ValueError`` (one line) for a network it does not evaluate."""
    player = parse_compiled(f"compiled:{seconds:g}s:{agent_path}", rules, SearchOptions())
    return dataclasses.replace(player, endgame=endgame)


def load_endgame(folder: str, rules: Rules) -> search_db.SearchDB:
    """The endgame database in ``folder`` as the compiled search reads it; ``EndgameError`` (one
    line, naming the folder) for none, an empty one or one of other rules. ``american8`` up to 5
    pieces: 16 CPU seconds, 584 MB held, 4.2 GB at the peak of loading."""
    return search_db.load(folder, rules)


def database_word(endgame: search_db.SearchDB | None, state: State, info: Any) -> str | None:
    """What the endgame database decided of a compiled search's turn in ``state``, from the mover's
    view: the position's own value when the database holds it (``database: won in 7 moves``,
    ``database: drawn``), else a won or lost game proven in the searched lines (``proven win in the
    searched lines``: the database's positions or the game's end); None without a database or when
    neither holds."""
    if endgame is None:
        return None
    position = Position.from_state(state)
    entry = int(search_db.probe(endgame.array, *position.relative(), np.int64(position.color)))
    if entry >= 0:
        value, moves = entry & 3, entry >> 2
        if value == search_db.WIN or value == search_db.LOSS:
            unit = "move" if moves == 1 else "moves"
            return f"database: {'won' if value == search_db.WIN else 'lost'} in {moves} {unit}"
        return "database: drawn"
    if info is not None and abs(info.score) > COMPILED_PROVEN_SCORE:
        return f"proven {'win' if info.score > 0 else 'loss'} in the searched lines"
    return None


def player_turn(
    player: Any, game: Callable[..., int], rules: Rules, state: State, seconds: float | None = None
) -> SearchedMove:
    """``player``'s whole turn in ``state`` through ``game`` (its ``new_game`` mover; ``seconds``:
    the equal-time allowance), described by its ``search_label``, with the word of the endgame
    database its search probes (``SearchedMove.database``)."""
    searched = host_turn(game, rules, state, seconds, player.search_label)
    return dataclasses.replace(searched, database=database_word(player.endgame, state, searched.info))


def host_turn(
    game: Callable[..., int],
    rules: Rules,
    state: State,
    seconds: float | None = None,
    search: str = "compiled search",
) -> SearchedMove:
    """A host player's whole turn in ``state``: ``game(state, seconds) -> action`` (a game of the
    ``players.registry`` protocol, its ``infos`` read for the search reports) called for each action."""
    started = time.perf_counter()
    infos = getattr(game, "infos", [])
    seen = len(infos)
    move = _whole_turn(rules, state, lambda current, done: int(game(current, seconds)))
    reports = [SearchReport.of(info) for info in infos[seen:]]
    first = next((r for r in reports if r.searched), None)
    return SearchedMove(move, first, sum(r.nodes for r in reports), time.perf_counter() - started, search)


def _whole_turn(rules: Rules, state: State, choose: Callable[[State, int], int]) -> Move:
    """The whole turn of ``choose(position, actions so far) -> action`` from ``state``."""
    actions: list[int] = []
    path: list[int] = []
    capture = False
    current = state
    while True:
        action = choose(current, len(actions))
        src, dst, is_capture = action_squares(rules, current, action)
        path = path or [src]
        path.append(dst)
        capture = capture or is_capture
        actions.append(action)
        current = apply_move(rules, current, Move((action,), (src, dst), is_capture))
        if not int(current.continuing) or bool(current.terminated):
            return Move(tuple(actions), tuple(path), capture)


def prepare_step(rules: Rules) -> None:
    """Compile the step that plays a host player's move (``apply_move``), which ``host_turn`` times
    with the move: uncompiled, the first move of a game took about 0.8 s more than its search."""
    start = jax.device_get(init(rules))
    apply_move(rules, start, legal_moves(rules, start)[0])


def proven(score: float) -> int:
    """+1 when a timed search's score (the mover's view) is a proven win, -1 a proven loss, else 0."""
    return 1 if score >= PROVEN_SCORE else -1 if score <= -PROVEN_SCORE else 0


def timed_win_chance(info: SearchInfo | SearchReport, network: bool = True) -> float | None:
    """The mover's chance of winning from a search's report: its own estimate where it makes one
    (the anytime MCTS), else from its score: 1 or 0 when proven, else, with a network scoring the
    leaves (``2 v - 1``), ``v``; None for other leaf scores (material, heuristic)."""
    if getattr(info, "win_chance", None) is not None:
        return info.win_chance
    if proven(info.score):
        return 1.0 if info.score > 0 else 0.0
    return min(max((info.score + 1.0) / 2.0, 0.0), 1.0) if network else None


def search_text(turn: SearchedMove) -> str:
    """What the search did, e.g. ``alpha-beta to depth 9 (41,230 nodes in 0.98 s)``."""
    if turn.info is None:
        return "forced"
    if turn.info.depth == 0:  # a search without depths: the anytime MCTS's simulations
        return f"{turn.search}, {turn.nodes:,} simulations in {turn.seconds:.2f} s"
    return f"{turn.search} to depth {turn.info.depth:g} ({turn.nodes:,} nodes in {turn.seconds:.2f} s)"


def chance_text(info: SearchInfo | SearchReport, network: bool = True) -> str:
    """The mover's outlook from a search's report: a proven win or loss, the win chance (the search's
    own, or from network leaves), or the score in men (material or heuristic leaves)."""
    if getattr(info, "win_chance", None) is None and proven(info.score):
        return "a proven win" if info.score > 0 else "a proven loss"
    chance = timed_win_chance(info, network)
    return f"win chance {chance:.0%}" if chance is not None else f"score {info.score:+.2f}"
