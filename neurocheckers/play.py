"""A person against an agent in the terminal: the game loop of ``neurocheckers play``.

``play_game`` reads lines through ``read_line`` and writes through ``write``, so tests drive it with
scripted input. The agent searches with ``anytime_search`` until a wall-clock limit; its search sizes
are compiled before the first move (``prepare_agent``), so thinking time is spent thinking.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import jax

from neurocheckers.agent_file import Agent
from neurocheckers.analysis.games import result_text
from neurocheckers.evaluator import value_fn
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
from neurocheckers.search.mcts import MCTSConfig, anytime_search

COLORS = {"black": BLACK, "white": WHITE}
"""``--human`` values and the colour each stands for."""
DEFAULT_SEARCH = MCTSConfig()
"""The agent's search settings; ``anytime_search`` grows the simulation count from 16."""
QUIT_WORDS = ("quit", "exit", "q", "resign")
HELP = (
    "type a move in standard notation: 9-14 for a step, 9x18 for a capture, 1x10x19 for a multi-jump\n"
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
    actions: list[int] = []
    path: list[int] = []
    capture = False
    simulations = 0
    win_chance = None
    current = state
    while True:
        legal = legal_actions(current)
        if len(legal) == 1:
            action = legal[0]
        else:
            left = max(deadline - time.perf_counter(), 0.0)
            found = anytime_search(
                rules, config, evaluate, agent.params, current, jax.random.fold_in(key, len(actions)),
                left, max_simulations,
            )  # fmt: skip
            action = int(found.action)
            simulations += int(found.visit_counts.sum())
            if win_chance is None:
                win_chance = float(found.root_value)
        src, dst, is_capture = action_squares(rules, current, action)
        path = path or [src]
        path.append(dst)
        capture = capture or is_capture
        actions.append(action)
        current = apply_move(rules, current, Move((action,), (src, dst), is_capture))
        if not int(current.continuing) or bool(current.terminated):
            break
    move = Move(tuple(actions), tuple(path), capture)
    return AgentMove(move, simulations, time.perf_counter() - started, win_chance)


@dataclasses.dataclass(frozen=True)
class _Turn:
    """One played move in the history: the position before it, who moved, the move."""

    before: State
    mover: int
    move: Move


def _outcome(state: State, human: int) -> str:
    """The end announcement after ``board_text``'s own "game over" line."""
    result = int(state.result)
    if result == 0:
        return "it is a draw."
    return "you win!" if (BLACK if result > 0 else WHITE) == human else "the agent wins."


@dataclasses.dataclass
class _Game:
    """A game in progress: the position, the moves played so far, whether to draw the board again."""

    state: State
    history: list[_Turn]
    show_board: bool = True


def _agent_plays(game: _Game, agent: Agent, rules: Rules, key: jax.Array, seconds: float,
                 config: MCTSConfig, max_simulations: int, write: Callable[[str], Any]) -> None:  # fmt: skip
    """The agent's turn: search, announce the move and play it."""
    state = game.state
    turn = agent_turn(agent, rules, state, jax.random.fold_in(key, int(state.ply)), seconds, config,
                      max_simulations)  # fmt: skip
    chance = "forced" if turn.win_chance is None else f"its win chance {turn.win_chance:.0%}"
    write(
        f"agent ({_side(state.color)}) plays {turn.move.notation} "
        f"({turn.simulations} simulations in {turn.seconds:.2f} s, {chance})"
    )
    game.history.append(_Turn(state, int(state.color), turn.move))
    game.state = apply_move(rules, state, turn.move)
    game.show_board = True


def _undo(game: _Game, human: int, write: Callable[[str], Any]) -> None:
    """Take back the person's last move and everything after it (the agent's reply)."""
    mine = [i for i, t in enumerate(game.history) if t.mover == human]
    if not mine:
        write("nothing to undo: you have not moved yet.")
        return
    taken = game.history[mine[-1] :]
    game.state = taken[0].before
    game.history = game.history[: mine[-1]]
    write("took back " + " ".join(t.move.notation for t in taken) + ".")
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
        game.history.append(_Turn(game.state, human, move))
        game.state = apply_move(rules, game.state, move)
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
) -> dict[str, Any]:
    """Play one game between a person (through ``read_line(prompt)`` and ``write(text)``) and ``agent``.

    The person types moves in standard notation or a command (``help``, ``moves``, ``board``,
    ``undo``, ``quit``); a malformed or illegal move is answered with the legal moves. End of input
    (``EOFError``) quits. The agent thinks ``seconds`` per move. ``names`` are the (person, agent)
    names written in the returned game dict, the ``analysis.games`` format (``save_games`` writes it);
    a game quit before its end has the result ``"*"``.
    """
    human = parse_color(human_color)
    if not seconds > 0:
        raise ValueError(f"seconds must be > 0, got {seconds!r}")
    if agent.rules != rules:
        raise ValueError(f"the agent plays {agent.rules.name!r}, not {rules.name!r}")
    write("preparing the agent...")
    largest = prepare_agent(agent, rules, seconds, config, max_simulations)
    write(f"ready (up to {largest} simulations compiled). You play {_side(human)}; type 'help' for help.")
    start = jax.device_get(init(rules))
    game = _Game(start, [])
    key = jax.random.key(seed)
    while not bool(game.state.terminated):
        if int(game.state.color) != human:
            _agent_plays(game, agent, rules, key, seconds, config, max_simulations, write)
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
        "moves": [t.move.notation for t in game.history],
        "result": result_text(game.state),  # "*" when quit before the end
        "plies": sum(len(t.move.actions) for t in game.history),
    }
