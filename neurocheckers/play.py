"""A person against an agent, or any player, in the terminal: the game loop of ``neurocheckers
play``; the computer's turns and their words are ``match.turns``'s, shared with the web board.

``play_game`` reads lines through ``read_line`` and writes through ``write``, so tests drive it with
scripted input. An agent thinks until a wall-clock limit a move, with one of three searches:

- ``alphabeta`` (the default off 8x8): the timed search of ``players.timed``
  (``timed:SECONDSs:FILE``: iterative-deepening alpha-beta with capture extensions, the network
  scoring the leaves);
- ``compiled``, the default on 8x8 (``default_search``): the compiled (numba) search with the
  agent's network at the leaves (``compiled:SECONDSs:FILE``, MLP and NNUE agents), and an endgame
  database probed in its search when one is given (``endgame``);
- ``mcts``: the anytime MCTS of ``players.anytime`` (``anytime_search``, whose search sizes are
  compiled before the first move).

The three, and any other player spec (``play_game``'s ``player``: an engine, a policy, a
registered plug-in), play through the player protocol (``players.protocol``): ``warm_up`` before the
first move, then the ``new_game`` mover (``turns.player_turn``) each turn. Each move line says the
depth it reached, and what the endgame database decided (``database_word``). Thinking time is spent
thinking, not compiling.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax

from neurocheckers.analysis.games import result_text
from neurocheckers.compiled import endgame as search_db
from neurocheckers.match.session import GameLine
from neurocheckers.match.turns import (
    SEARCHES,
    chance_text,
    compiled_agent_player,
    default_search,
    parse_color,
    player_turn,
    prepare_step,
    search_text,
)
from neurocheckers.networks.agent_file import Agent
from neurocheckers.players.anytime import DEFAULT_SEARCH, AnytimeMCTSPlayer
from neurocheckers.players.timed import MAX_SECONDS, agent_player
from neurocheckers.rules.engine import init
from neurocheckers.rules.notation import (
    board_text,
    legal_moves,
    parse_move,
    to_fen,
)
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, WHITE, State
from neurocheckers.search.mcts import MCTSConfig

QUIT_WORDS = ("quit", "exit", "q", "resign")
HELP = (
    "type a move in standard notation: on 6x6 (simple6, american6) 5-8 for a step, 1x8 for a capture,\n"
    "1x8x15 for a multi-jump (american6); on 8x8 (american8) 9-14, 9x18, 1x10x19\n"
    "commands: moves (list the legal moves), board (draw the board again), undo (take back your last\n"
    "move and the agent's reply), help, quit"
)


def _side(color: int) -> str:
    return "Black" if int(color) == BLACK else "White"


def _outcome(state: State, human: int) -> str:
    """The end announcement after ``board_text``'s own "game over" line."""
    result = int(state.result)
    if result == 0:
        return "it is a draw."
    return "you win!" if (BLACK if result > 0 else WHITE) == human else "the agent wins."


@dataclasses.dataclass(kw_only=True)
class _Game(GameLine):
    """A game in progress (``match.session.GameLine``: the plies played, the position, the end rules)
    and whether to draw the board again."""

    show_board: bool = True
    mover: Any = None
    """The computer's mover of this game (``new_game``: its table and the game's positions), None
    before its first move and after an undo."""


@dataclasses.dataclass(frozen=True)
class _Thinker:
    """The computer's side: a player of the protocol (the agent's timed, compiled or anytime MCTS
    search, or any spec), and whether a network scores its leaves (the agent's)."""

    player: Any
    rules: Rules
    seconds: float
    network: bool
    seed: int = 0


def _prepare(thinker: _Thinker) -> str:
    """Compile or start the computer's search before the first move; says what was prepared."""
    thinker.player.warm_up(thinker.rules)
    prepare_step(thinker.rules)
    return f"{thinker.player.search_label} warmed up"


def _agent_plays(game: _Game, thinker: _Thinker, write: Callable[[str], Any]) -> None:
    """The computer's turn: search, announce the move and play it."""
    state, player = game.state, thinker.player
    game.mover = game.mover or player.new_game(thinker.seed)
    seconds = thinker.seconds if player.equal_time else None
    searched = player_turn(player, game.mover, thinker.rules, state, seconds)
    said = search_text(searched)
    if searched.database is not None:  # the database's word replaces the network's guess
        said += f", {searched.database}"
    elif searched.info is not None:
        said += f", {chance_text(searched.info, network=thinker.network)}"
    write(f"agent ({_side(state.color)}) plays {searched.move.notation} ({said})")
    game.play_move(searched.move, by_human=False)
    game.show_board = True


def _undo(game: _Game, human: int, write: Callable[[str], Any]) -> None:
    """Take back the person's last move and everything after it (the agent's reply)."""
    try:
        taken = game.undo_person()
    except ValueError:
        write("nothing to undo: you have not moved yet.")
        return
    game.mover = None  # the computer's game (its table, its positions) starts again from here
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


def _agent_search(
    agent: Agent, rules: Rules, seconds: float, search: str | None, agent_path: str | None,
    endgame: search_db.SearchDB | None, config: MCTSConfig = DEFAULT_SEARCH, max_simulations: int = 1 << 16,
) -> Any:  # fmt: skip
    """The player of the agent's ``search`` (see ``play_game``), its settings checked."""
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
    if search == "alphabeta":
        return agent_player(agent, rules, seconds, name=f"timed:{seconds:g}s")
    if search == "compiled":
        return compiled_agent_player(agent_path, rules, seconds, endgame)
    return AnytimeMCTSPlayer(f"mcts:{seconds:g}s", agent, rules, seconds, config, max_simulations)


def play_game(
    agent: Agent | None,
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
    player: Any = None,
) -> dict[str, Any]:
    """Play one game between a person (through ``read_line(prompt)`` and ``write(text)``) and
    ``agent``, or ``player`` (any player of the protocol; ``agent`` then None).

    The person types moves in standard notation or a command (``help``, ``moves``, ``board``,
    ``undo``, ``quit``); a malformed or illegal move is answered with the legal moves. End of input
    (``EOFError``) quits. The agent thinks ``seconds`` per move with ``search`` (``SEARCHES``: the
    compiled search, which needs the agent's file ``agent_path``, the timed alpha-beta search, both
    at most ``MAX_SECONDS``, or MCTS with ``config`` up to ``max_simulations``; None:
    ``default_search``); a ``player`` plays by its own spec (``seconds`` if it is an ``equal``
    one). ``names`` are the (person, computer) names written in the returned game dict, the
    ``analysis.games`` format (``save_games`` writes it); a game quit before its end has the result
    ``"*"``. ``endgame`` (``load_endgame``) is probed by the compiled search, the only one that
    reads it.
    """
    human = parse_color(human_color)
    if not seconds > 0:
        raise ValueError(f"seconds must be > 0, got {seconds!r}")
    if player is None:
        player = _agent_search(agent, rules, seconds, search, agent_path, endgame, config, max_simulations)
    thinker = _Thinker(player, rules, seconds, agent is not None, seed)
    write("preparing the agent...")
    write(f"ready ({_prepare(thinker)}). You play {_side(human)}; type 'help' for help.")
    start = jax.device_get(init(rules))
    game = _Game(rules=rules, start=start)
    while not bool(game.state.terminated):
        if int(game.state.color) != human:
            _agent_plays(game, thinker, write)
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
