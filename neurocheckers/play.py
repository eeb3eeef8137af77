"""A person against an agent in the terminal: the game loop of ``neurocheckers play``.

``play_game`` reads lines through ``read_line`` and writes through ``write``, so tests drive it with
scripted input. The agent thinks until a wall-clock limit a move, with one of two searches:

- ``alphabeta`` (the default): the timed search of ``timed_player`` (``timed:SECONDSs:FILE``:
  iterative-deepening alpha-beta with capture extensions, the network scoring the leaves), compiled
  before the first move by a tiny search (``prepare_timed``); ``timed_turn`` plays a whole turn;
- ``mcts``: ``anytime_search``, whose search sizes are compiled before the first move
  (``prepare_agent``); ``agent_turn`` plays a whole turn;
- ``compiled``, the default on 8x8 (``default_search``): the compiled (numba) search with the
  agent's network at the leaves (``compiled:SECONDSs:FILE``, MLP and NNUE agents), loaded before
  the first move, and an endgame database probed in its search when one is given (``endgame``);
  ``compiled_turn`` plays a whole turn. Each move line says the depth it reached, and what the
  database decided (``database_word``).

Either way thinking time is spent thinking, not compiling.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from neurocheckers.agent_file import Agent
from neurocheckers.analysis.games import result_text
from neurocheckers.compiled import endgame as search_db
from neurocheckers.compiled import search as compiled_search
from neurocheckers.compiled.board import Position
from neurocheckers.compiled.driver import SearchOptions
from neurocheckers.compiled_player import CompiledGame, CompiledPlayer, parse_compiled
from neurocheckers.evaluator import value_fn
from neurocheckers.game_session import GameLine
from neurocheckers.player_kinds import SearchReport
from neurocheckers.rules.engine import init
from neurocheckers.rules.notation import (
    Move,
    action_squares,
    apply_move,
    board_text,
    legal_actions,
    legal_moves,
    parse_move,
    to_fen,
)
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, WHITE, State
from neurocheckers.search.alphabeta import WIN_SCORE
from neurocheckers.search.anytime import anytime_search
from neurocheckers.search.mcts import MCTSConfig
from neurocheckers.search.timed import EXTENSION, MAX_DEPTH, SearchInfo
from neurocheckers.timed_player import MAX_SECONDS, TimedPlayer, agent_player

COLORS = {"black": BLACK, "white": WHITE}
"""``--human`` values and the colour each stands for."""
DEFAULT_SEARCH = MCTSConfig()
"""The MCTS agent's search settings; ``anytime_search`` grows the simulation count from 16."""
SEARCHES = ("compiled", "alphabeta", "mcts")
"""``--search`` values: the compiled search (the 8x8 default), the timed alpha-beta search (the
default elsewhere) or the anytime MCTS."""
PROVEN_SCORE = WIN_SCORE - MAX_DEPTH - EXTENSION
"""A timed search's score at least this large (in absolute value) is a proven win (or loss)."""
COMPILED_PROVEN_SCORE = compiled_search.WIN_BOUND / compiled_search.UNIT
"""A compiled search's score (men) beyond this is a won or lost game: the database's wins count
their whole distance to the end, so they fall short of ``PROVEN_SCORE``."""
WARM_UP_NODES = 64
"""The node budget of ``prepare_timed``'s search: enough to compile, too small to take time."""
MIN_TURN_SECONDS = 0.001
"""The least time a later jump's search of a timed turn is given once the turn's time is spent."""
QUIT_WORDS = ("quit", "exit", "q", "resign")
HELP = (
    "type a move in standard notation: on 6x6 (simple6, american6) 5-8 for a step, 1x8 for a capture,\n"
    "1x8x15 for a multi-jump (american6); on 8x8 (american8) 9-14, 9x18, 1x10x19\n"
    "commands: moves (list the legal moves), board (draw the board again), undo (take back your last\n"
    "move and the agent's reply), help, quit"
)


@dataclasses.dataclass(frozen=True)
class AgentMove:
    """The agent's whole turn: the move, simulations run over its searches, seconds spent thinking,
    and its estimated chance of winning before the move (None for a forced move)."""

    move: Move
    simulations: int
    seconds: float
    win_chance: float | None


def _side(color: int) -> str:
    return "Black" if int(color) == BLACK else "White"


def parse_color(color: str | int) -> int:
    """``BLACK`` or ``WHITE`` from ``"black"``/``"white"`` (or the int itself); ``ValueError`` otherwise."""
    if isinstance(color, str) and color.strip().lower() in COLORS:
        return COLORS[color.strip().lower()]
    if color in (BLACK, WHITE) and not isinstance(color, (str, bool)):
        return int(color)
    raise ValueError(f"the human's colour must be black or white, got {color!r}")


def prepare_agent(
    agent: Agent,
    rules: Rules,
    seconds: float,
    config: MCTSConfig = DEFAULT_SEARCH,
    max_simulations: int = 1 << 16,
) -> int:
    """Compile the searches ``anytime_search`` may use within ``seconds`` per move; returns the
    largest simulation count compiled.

    ``anytime_search`` only grows the search into a size already compiled or cheap to compile, so
    without this it would stay at ``config.num_simulations`` whenever compiling takes longer than a
    move. Sizes double from ``config.num_simulations`` while a run takes under ``seconds / 2.2``
    (``anytime_search``'s own growth test).
    """
    evaluate = value_fn(agent.spec)
    state = jax.device_get(init(rules))
    key = jax.random.key(0)
    sims = config.num_simulations
    while True:
        sized = dataclasses.replace(config, num_simulations=sims)
        # seconds=0 runs exactly one search of this size (compiling it the first time).
        anytime_search(rules, sized, evaluate, agent.params, state, key, 0.0, max_simulations)
        started = time.perf_counter()
        anytime_search(rules, sized, evaluate, agent.params, state, key, 0.0, max_simulations)
        took = time.perf_counter() - started
        if 2.2 * took > seconds or sims * 2 > max_simulations:
            return sims
        sims *= 2


def agent_turn(
    agent: Agent,
    rules: Rules,
    state: State,
    key: jax.Array,
    seconds: float,
    config: MCTSConfig = DEFAULT_SEARCH,
    max_simulations: int = 1 << 16,
) -> AgentMove:
    """The agent's move in ``state``: one search per action until ``seconds`` have passed (a
    multi-jump's later jumps share what is left of the time); a single legal action is played at once."""
    evaluate = value_fn(agent.spec)
    started = time.perf_counter()
    deadline = started + seconds
    searched: list[Any] = []

    def choose(current: State, done: int) -> int:
        legal = legal_actions(current)
        if len(legal) == 1:
            return legal[0]
        left = max(deadline - time.perf_counter(), 0.0)
        searched.append(anytime_search(rules, config, evaluate, agent.params, current,
                                       jax.random.fold_in(key, done), left, max_simulations))  # fmt: skip
        return int(searched[-1].action)

    move = _whole_turn(rules, state, choose)
    simulations = sum(int(found.visit_counts.sum()) for found in searched)
    win_chance = float(searched[0].root_value) if searched else None
    return AgentMove(move, simulations, time.perf_counter() - started, win_chance)


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


def compiled_turn(
    game: CompiledGame, rules: Rules, state: State, seconds: float | None = None
) -> SearchedMove:
    """The compiled search's whole turn (``host_turn``) with the endgame database's word on it
    (``SearchedMove.database``)."""
    searched = host_turn(game, rules, state, seconds, "compiled search")
    word = database_word(game.player.endgame, state, searched.info)
    return dataclasses.replace(searched, database=word)


def host_turn(
    game: Callable[..., int],
    rules: Rules,
    state: State,
    seconds: float | None = None,
    search: str = "compiled search",
) -> SearchedMove:
    """A host player's whole turn in ``state``: ``game(state, seconds) -> action`` (a game of the
    ``player_kinds`` protocol, its ``infos`` read for the search reports) called for each action."""
    started = time.perf_counter()
    infos = getattr(game, "infos", [])
    seen = len(infos)
    move = _whole_turn(rules, state, lambda current, done: int(game(current, seconds)))
    reports = [SearchReport.of(info) for info in infos[seen:]]
    first = next((r for r in reports if r.depth > 0), None)
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


def prepare_timed(player: TimedPlayer, rules: Rules) -> None:
    """Compile ``player``'s search before its first move: one search of ``WARM_UP_NODES`` nodes from
    the start (its one jitted iteration serves every depth and position afterwards), and the step
    that plays the move it finds."""
    start = jax.device_get(init(rules))
    info = player.deepening.search(start, jax.random.key(0), nodes=WARM_UP_NODES)
    src, dst, capture = action_squares(rules, start, info.action)
    apply_move(rules, start, Move((info.action,), (src, dst), capture))


def timed_turn(
    player: TimedPlayer, rules: Rules, state: State, key: jax.Array, seconds: float | None = None
) -> SearchedMove:
    """``player``'s whole turn in ``state``, one search an action (a single legal action is played at
    once). A node budget applies to each search; a time budget (``seconds``, else the player's own)
    to the whole turn: a multi-jump's later jumps share what is left of it."""
    budget = player.seconds if seconds is None else seconds
    if player.nodes is None and budget is None:
        raise ValueError(f"{player.name!r} needs a think time (seconds)")
    started = time.perf_counter()
    infos: list[SearchInfo] = []

    def choose(current: State, done: int) -> int:
        subkey = jax.random.fold_in(key, done)
        if player.nodes is not None:
            infos.append(player.deepening.search(current, subkey, nodes=player.nodes))
        else:
            left = max(budget - (time.perf_counter() - started), MIN_TURN_SECONDS)
            infos.append(player.deepening.search(current, subkey, seconds=left))
        return infos[-1].action

    move = _whole_turn(rules, state, choose)
    first = next((info for info in infos if info.depth > 0), None)
    nodes = sum(info.nodes for info in infos)
    return SearchedMove(move, first, nodes, time.perf_counter() - started)


def proven(score: float) -> int:
    """+1 when a timed search's score (the mover's view) is a proven win, -1 a proven loss, else 0."""
    return 1 if score >= PROVEN_SCORE else -1 if score <= -PROVEN_SCORE else 0


def timed_win_chance(info: SearchInfo, network: bool = True) -> float | None:
    """The mover's chance of winning from a timed search's score: 1 or 0 when proven, else, with a
    network scoring the leaves (``2 v - 1``), ``v``; None for other leaf scores (material, heuristic)."""
    if proven(info.score):
        return 1.0 if info.score > 0 else 0.0
    return min(max((info.score + 1.0) / 2.0, 0.0), 1.0) if network else None


def search_text(turn: SearchedMove) -> str:
    """What the search did, e.g. ``alpha-beta to depth 9 (41,230 nodes in 0.98 s)``."""
    if turn.info is None:
        return "forced"
    return f"{turn.search} to depth {turn.info.depth:g} ({turn.nodes:,} nodes in {turn.seconds:.2f} s)"


def chance_text(info: SearchInfo, network: bool = True) -> str:
    """The mover's outlook from a timed search's score: a proven win or loss, the win chance (network
    leaves), or the score in men (material or heuristic leaves)."""
    if proven(info.score):
        return "a proven win" if info.score > 0 else "a proven loss"
    chance = timed_win_chance(info, network)
    return f"win chance {chance:.0%}" if chance is not None else f"score {info.score:+.2f}"


def _outcome(state: State, human: int) -> str:
    """The end announcement after ``board_text``'s own "game over" line."""
    result = int(state.result)
    if result == 0:
        return "it is a draw."
    return "you win!" if (BLACK if result > 0 else WHITE) == human else "the agent wins."


@dataclasses.dataclass(kw_only=True)
class _Game(GameLine):
    """A game in progress (``game_session.GameLine``: the plies played, the position, the end rules)
    and whether to draw the board again."""

    show_board: bool = True
    mover: Any = None
    """The compiled search's mover of this game (its table and the game's positions), None before
    its first move and after an undo."""


@dataclasses.dataclass(frozen=True)
class _Thinker:
    """The agent and how it searches: ``compiled`` or ``timed`` (the alpha-beta search) when set,
    else MCTS."""

    agent: Agent
    rules: Rules
    seconds: float
    config: MCTSConfig
    max_simulations: int
    timed: TimedPlayer | None
    compiled: CompiledPlayer | None = None


def _prepare(thinker: _Thinker) -> str:
    """Compile the agent's search before the first move; says what was compiled."""
    if thinker.compiled is not None:
        thinker.compiled.warm_up()
        prepare_step(thinker.rules)
        return "compiled search loaded"
    if thinker.timed is not None:
        prepare_timed(thinker.timed, thinker.rules)
        return "alpha-beta search compiled"
    largest = prepare_agent(thinker.agent, thinker.rules, thinker.seconds, thinker.config,
                            thinker.max_simulations)  # fmt: skip
    return f"up to {largest} simulations compiled"


def _agent_plays(game: _Game, thinker: _Thinker, key: jax.Array, write: Callable[[str], Any]) -> None:
    """The agent's turn: search, announce the move and play it."""
    state, rules = game.state, thinker.rules
    key = jax.random.fold_in(key, int(state.ply))
    if thinker.compiled is not None or thinker.timed is not None:
        if thinker.compiled is not None:
            game.mover = game.mover or thinker.compiled.new_game()
            searched = compiled_turn(game.mover, rules, state)
        else:
            searched = timed_turn(thinker.timed, rules, state, key)
        move = searched.move
        said = search_text(searched)
        if searched.database is not None:  # the database's word replaces the network's guess
            said += f", {searched.database}"
        elif searched.info is not None:
            said += f", {chance_text(searched.info)}"
    else:
        turn = agent_turn(thinker.agent, rules, state, key, thinker.seconds, thinker.config,
                          thinker.max_simulations)  # fmt: skip
        move = turn.move
        chance = "forced" if turn.win_chance is None else f"its win chance {turn.win_chance:.0%}"
        said = f"{turn.simulations} simulations in {turn.seconds:.2f} s, {chance}"
    write(f"agent ({_side(state.color)}) plays {move.notation} ({said})")
    game.play_move(move, by_human=False)
    game.show_board = True


def _undo(game: _Game, human: int, write: Callable[[str], Any]) -> None:
    """Take back the person's last move and everything after it (the agent's reply)."""
    try:
        taken = game.undo_person()
    except ValueError:
        write("nothing to undo: you have not moved yet.")
        return
    game.mover = None  # the compiled search's game starts again from here
    moves = GameLine(game.rules, taken[0].before, taken).turns()
    write("took back " + " ".join(t.move.notation for t in moves) + ".")
    game.show_board = True


def _human_says(game: _Game, rules: Rules, human: int, line: str, write: Callable[[str], Any]) -> bool:
    """Act on one line the person typed (a command or a move); True when they quit."""
    command = line.strip().lower()
    if not command:
        return False
    if command in QUIT_WORDS:
        write("you quit; the game is abandoned.")
        return True
    if command in ("help", "?", "h"):
        write(HELP)
    elif command in ("moves", "m"):
        write("legal moves: " + ", ".join(m.notation for m in legal_moves(rules, game.state)))
    elif command == "board":
        write(board_text(rules, game.state))
    elif command == "undo":
        _undo(game, human, write)
    else:
        try:
            move = parse_move(rules, game.state, command)
        except ValueError as error:
            write(str(error))
            return False
        write(f"you play {move.notation}")
        game.play_move(move, by_human=True)
    return False


def play_game(
    agent: Agent,
    rules: Rules,
    seconds: float = 1.0,
    human_color: str | int = "black",
    read_line: Callable[[str], str] = input,
    write: Callable[[str], Any] = print,
    seed: int = 0,
    config: MCTSConfig = DEFAULT_SEARCH,
    max_simulations: int = 1 << 16,
    names: tuple[str, str] = ("human", "agent"),
    search: str | None = None,
    agent_path: str | None = None,
    endgame: search_db.SearchDB | None = None,
) -> dict[str, Any]:
    """Play one game between a person (through ``read_line(prompt)`` and ``write(text)``) and ``agent``.

    The person types moves in standard notation or a command (``help``, ``moves``, ``board``,
    ``undo``, ``quit``); a malformed or illegal move is answered with the legal moves. End of input
    (``EOFError``) quits. The agent thinks ``seconds`` per move with ``search`` (``SEARCHES``: the
    compiled search, which needs the agent's file ``agent_path``, the timed alpha-beta search, both
    at most ``MAX_SECONDS``, or MCTS with ``config`` up to ``max_simulations``; None:
    ``default_search``). ``names`` are the (person, agent) names written in the returned game dict,
    the ``analysis.games`` format (``save_games`` writes it); a game quit before its end has the
    result ``"*"``. ``endgame`` (``load_endgame``) is probed by the compiled search, the only one
    that reads it.
    """
    human = parse_color(human_color)
    if not seconds > 0:
        raise ValueError(f"seconds must be > 0, got {seconds!r}")
    search = default_search(rules, agent_path, seconds, endgame is not None) if search is None else search
    if search not in SEARCHES:
        raise ValueError(f"search must be one of {', '.join(SEARCHES)}, got {search!r}")
    if endgame is not None and search != "compiled":
        raise ValueError(f"an endgame database needs the compiled search, not {search}")
    if search != "mcts" and seconds > MAX_SECONDS:
        raise ValueError(f"seconds must be at most {MAX_SECONDS:g} for the {search} search, got {seconds}")
    if agent.rules != rules:
        raise ValueError(f"the agent plays {agent.rules.name!r}, not {rules.name!r}")
    if search == "compiled" and agent_path is None:
        raise ValueError("the compiled search needs the agent's file (agent_path)")
    timed = agent_player(agent, rules, seconds, name=f"timed:{seconds:g}s") if search == "alphabeta" else None
    compiled = compiled_agent_player(agent_path, rules, seconds, endgame) if search == "compiled" else None
    thinker = _Thinker(agent, rules, seconds, config, max_simulations, timed, compiled)
    write("preparing the agent...")
    write(f"ready ({_prepare(thinker)}). You play {_side(human)}; type 'help' for help.")
    start = jax.device_get(init(rules))
    game = _Game(rules=rules, start=start)
    key = jax.random.key(seed)
    while not bool(game.state.terminated):
        if int(game.state.color) != human:
            _agent_plays(game, thinker, key, write)
            continue
        if game.show_board:
            write(board_text(rules, game.state))
            game.show_board = False
        try:
            line = read_line(f"your move ({_side(human)}): ")
        except EOFError:
            write("no more input: quitting.")
            break
        if _human_says(game, rules, human, line, write):
            break
    else:  # the game ended by the rules, not by the person quitting
        write(board_text(rules, game.state))
        write(_outcome(game.state, human))
    human_name, agent_name = names
    return {
        "black": human_name if human == BLACK else agent_name,
        "white": human_name if human == WHITE else agent_name,
        "start_fen": to_fen(start),
        "moves": [t.move.notation for t in game.turns()],
        "result": result_text(game.state),  # "*" when quit before the end
        "plies": len(game.plies),
    }
