"""Game files: whole games in standard notation, as JSON (never pickle).

A file looks like::

    {"format": "neurocheckers-games", "version": 1, "rules": "simple6",
     "games": [{"black": "mcts:a.safetensors:64", "white": "random",
                "start_fen": "B:W13,14,15,16,17,18:B1,2,3,4,5,6",
                "moves": ["5-8", "14-11", "8x15", ...], "result": "1-0", "plies": 31}]}

Each move is a whole turn (a multi-jump is one move, ``1x10x19``); ``result`` is ``"1-0"`` (Black
won), ``"0-1"`` (White won), ``"1/2-1/2"`` (draw) or ``"*"`` (unfinished, e.g. stopped at a ply cap);
``plies`` counts engine actions (each jump of a multi-jump is one). A game from a set-up position
whose draw counters were running has ``start_ply`` and ``start_quiet`` (``State.ply`` and
``State.plies_without_capture`` at the start; 0 when absent). Games may carry extra keys, which
are kept as they are. ``load_games`` replays every game and refuses a file whose moves are illegal or
whose result disagrees with the moves.

Writers: ``games_from_actions`` turns the arena's per-game actions into game dicts and ``save_games``
writes them (``match --save-games`` and lineage replays); ``show`` draws a saved game. The same
games as PDN, and one loader for either format, are in ``analysis.pdn_games``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

from neurocheckers.rules.engine import init, step
from neurocheckers.rules.notation import (
    Move,
    action_squares,
    apply_move,
    legal_actions,
    parse_fen,
    parse_move,
    to_fen,
)
from neurocheckers.rules.presets import Rules, get_rules
from neurocheckers.rules.state import State

FORMAT = "neurocheckers-games"
"""Value of a game file's ``format`` key."""
VERSION = 1
"""Version of the file layout; bumped when it changes incompatibly."""
RESULTS = {1: "1-0", -1: "0-1", 0: "1/2-1/2"}
"""PDN result of a finished game by ``State.result``; ``"*"`` marks an unfinished game."""
UNFINISHED = "*"


@dataclasses.dataclass(frozen=True)
class GameFile:
    """A loaded game file: its rules, its games (dicts as described in the module docstring), and
    why any game of a collection was skipped (one line each, naming the game)."""

    rules: Rules
    games: tuple[dict[str, Any], ...]
    skipped: tuple[str, ...] = ()
    numbers: tuple[int, ...] = ()
    """Each game's number in the file, counting from 1: a skipped game keeps its number, so the ones
    after it are not renumbered. Empty: 1, 2, ... in order."""

    def numbered(self) -> list[tuple[int, dict[str, Any]]]:
        """``(number in the file, game)`` of every game read, in file order."""
        return list(zip(self.numbers or range(1, len(self.games) + 1), self.games, strict=True))

    def game(self, number: int) -> dict[str, Any] | None:
        """The game numbered ``number`` in the file, None when none has that number (or it was skipped)."""
        return next((game for n, game in self.numbered() if n == number), None)

    def number_spans(self) -> str:
        """The numbers of the games read: ``1..4``, or ``1, 3..5`` around a skipped game."""
        spans: list[list[int]] = []
        for n, _ in self.numbered():
            if spans and spans[-1][1] == n - 1:
                spans[-1][1] = n
            else:
                spans.append([n, n])
        return ", ".join(str(a) if a == b else f"{a}..{b}" for a, b in spans)


def result_text(state: State) -> str:
    """The PDN result of ``state``: ``1-0``, ``0-1``, ``1/2-1/2``, or ``*`` while it goes on."""
    return RESULTS[int(state.result)] if bool(state.terminated) else UNFINISHED


def _result(end: State, ended: int | None) -> str:
    """``result_text(end)``, or the result ``ended`` a host match loop gave a game the replay leaves
    going on (a repetition)."""
    if bool(end.terminated) or ended is None:
        return result_text(end)
    return RESULTS[int(ended)]


@functools.cache
def _replay_fn(rules: Rules):
    """A jitted ``(starts [N], actions [N, L]) -> (states before each ply [N, L], legal [N, L],
    final states [N])``."""

    def one_game(start: State, actions: jax.Array):
        def body(state: State, action: jax.Array):
            legal = state.legal_action_mask[jax.numpy.maximum(action, 0)] & ~state.terminated
            after = step(rules, state, jax.numpy.maximum(action, 0))
            # -1 marks the end: the state stays put (step also leaves a finished game unchanged).
            after = jax.tree.map(lambda a, b: jax.numpy.where(action >= 0, a, b), after, state)
            return after, (state, legal)

        final, (before, legal) = jax.lax.scan(body, start, actions)
        return before, legal, final

    return jax.jit(jax.vmap(one_game))


def _names(names: str | Sequence[str], count: int, what: str) -> list[str]:
    if isinstance(names, str):
        return [names] * count
    names = list(names)
    if len(names) != count:
        raise ValueError(f"{what} has {len(names)} names for {count} games")
    return [str(n) for n in names]


def games_from_actions(
    rules: Rules | str,
    actions: np.ndarray | jax.Array,
    black_names: str | Sequence[str],
    white_names: str | Sequence[str],
    starts: State | None = None,
    ended: Sequence[int | None] | None = None,
) -> list[dict[str, Any]]:
    """Game dicts (the file format's ``games`` entries) of games played from the initial position,
    or from ``starts`` ([N] states, e.g. a paired-openings match's ``arena.paired_opening_starts``).

    ``actions``: [N, L] int, each game's actions ply by ply (random opening plies included), -1 after
    its end (as ``GameRecords.actions`` of ``arena.play_match(..., record_actions=True)``).
    ``black_names`` / ``white_names``: one name for all games, or [N] names (who had Black / White).
    A game still going on after its last action gets the result ``"*"``. A game from a start whose
    draw counters are not zero also records them (``start_ply``, ``start_quiet``: ``State.ply`` and
    ``State.plies_without_capture``), so that replaying it ends it the same way. Raises
    ``ValueError`` naming the game and ply of an action that is illegal or follows the end of its
    game. ``ended``: [N] results of games a match loop ended by a rule the batched engine does not
    apply (threefold repetition: +1 Black won, -1 White won, 0 drawn; None for a game it did not end),
    used where the replay leaves a game going on.
    """
    rules = get_rules(rules)
    actions = np.asarray(actions)
    if actions.ndim != 2:
        raise ValueError(f"actions must have shape [N, L], got {actions.shape}")
    count, length = actions.shape
    blacks = _names(black_names, count, "black_names")
    whites = _names(white_names, count, "white_names")
    if count == 0:
        return []
    actions = actions.astype(np.int32)
    if starts is None:
        starts = jax.tree.map(lambda x: np.broadcast_to(x, (count, *np.shape(x))), init(rules))
    before, legal, final = jax.device_get(_replay_fn(rules)(starts, actions))
    starts = jax.device_get(starts)
    games = []
    for i in range(count):
        moves: list[str] = []
        path: list[int] = []
        capture = False
        plies = 0
        for t in range(length):
            action = int(actions[i, t])
            if action < 0:
                if np.any(actions[i, t:] >= 0):
                    raise ValueError(f"game {i + 1}: an action follows the end marker -1 at ply {t}")
                break
            state = jax.tree.map(lambda x, i=i, t=t: x[i, t], before)
            if bool(state.terminated):
                raise ValueError(f"game {i + 1}: action {action} at ply {t} follows the end of the game")
            if not bool(legal[i, t]):
                raise ValueError(f"game {i + 1}: action {action} at ply {t} is illegal")
            src, dst, is_capture = action_squares(rules, state, action)
            if int(state.continuing) == 0 and path:  # a new turn begins
                moves.append(("x" if capture else "-").join(map(str, path)))
                path, capture = [], False
            path = path or [src]
            path.append(dst)
            capture = capture or is_capture
            plies += 1
        if path:
            moves.append(("x" if capture else "-").join(map(str, path)))
        end = jax.tree.map(lambda x, i=i: x[i], final)
        start = jax.tree.map(lambda x, i=i: x[i], starts)
        game = {
            "black": blacks[i],
            "white": whites[i],
            "start_fen": to_fen(start),
            "moves": moves,
            "result": _result(end, None if ended is None else ended[i]),
            "plies": plies,
        }
        if int(start.ply) or int(start.plies_without_capture):
            game.update(start_ply=int(start.ply), start_quiet=int(start.plies_without_capture))
        games.append(game)
    return games


_MOVE = re.compile(r"^\d+([-x]\d+)+$")


def find_move(rules: Rules, state: State, text: str) -> Move:
    """The legal move written ``text`` in ``state``, found by following its squares (one ``step``
    per action, cheaper than listing every move); falls back to ``parse_move`` for shorthand and for
    its error, a ``ValueError`` listing the legal moves. A capture written with ``-`` (as PDN 2.0
    allows, ``26-17``) is read as ``26x17``."""
    cleaned = text.strip().lower()
    if _MOVE.match(cleaned) and not bool(state.terminated):
        squares = [int(s) for s in re.split(r"[-x]", cleaned)]
        current, taken, capture = state, [], False
        for src, dst in zip(squares, squares[1:], strict=False):
            if taken and not int(current.continuing):
                break  # the turn ended before the path did
            found = [a for a in legal_actions(current) if action_squares(rules, current, a)[:2] == (src, dst)]
            if len(found) != 1:
                break
            is_capture = action_squares(rules, current, found[0])[2]
            capture = capture or is_capture
            taken.append(found[0])
            current = apply_move(rules, current, Move((found[0],), (src, dst), is_capture))
        else:
            move = Move(tuple(taken), tuple(squares), capture)
            if not int(current.continuing) and move.notation == cleaned:
                return move
    try:
        return parse_move(rules, state, text)
    except ValueError as error:
        if "-" not in cleaned or "x" in cleaned:
            raise
        written = error
    try:
        return find_move(rules, state, cleaned.replace("-", "x"))
    except ValueError:
        raise written from None


def replay_game(rules: Rules, game: dict[str, Any]) -> tuple[list[State], list[Move]]:
    """Replay ``game`` (a dict of the file format): the states before and after each move
    ([M + 1] host ``State``s) and the M ``Move``s. The start's draw counters are the game's
    ``start_ply`` and ``start_quiet`` (0 when absent). Raises ``ValueError`` naming the bad move."""
    try:
        state = parse_fen(rules, game["start_fen"], game.get("start_ply", 0), game.get("start_quiet", 0))
    except ValueError as error:
        raise ValueError(f"bad start_fen: {error}") from None
    states, moves = [state], []
    for number, text in enumerate(game["moves"], start=1):
        if bool(state.terminated):
            raise ValueError(f"move {number} ({text!r}) follows the end of the game")
        try:
            move = find_move(rules, state, text)
        except ValueError as error:
            raise ValueError(f"move {number}: {error}") from None
        state = apply_move(rules, state, move)
        states.append(state)
        moves.append(move)
    return states, moves


def _check_game(rules: Rules, game: Any) -> None:
    """Raise ``ValueError`` naming what is wrong with one game dict."""
    if not isinstance(game, dict):
        raise ValueError(f"a game must be an object, got {type(game).__name__}")
    for key, kind in (("black", str), ("white", str), ("start_fen", str), ("result", str), ("plies", int)):
        if not isinstance(game.get(key), kind) or isinstance(game.get(key), bool):
            raise ValueError(f"{key!r} must be a {kind.__name__}, got {game.get(key)!r}")
    for key in ("start_ply", "start_quiet"):
        if key in game and (not isinstance(game[key], int) or isinstance(game[key], bool) or game[key] < 0):
            raise ValueError(f"{key!r} must be an integer >= 0, got {game[key]!r}")
    moves = game.get("moves")
    if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
        raise ValueError(f"'moves' must be a list of strings, got {moves!r}"[:200])
    if game["result"] not in (*RESULTS.values(), UNFINISHED):
        raise ValueError(f"'result' must be one of 1-0, 0-1, 1/2-1/2, *; got {game['result']!r}")
    states, played = replay_game(rules, game)
    replayed = result_text(states[-1])
    if game["result"] != replayed:
        raise ValueError(f"'result' is {game['result']!r}, but the moves end in {replayed!r}")
    plies = sum(len(m.actions) for m in played)
    if game["plies"] != plies:
        raise ValueError(f"'plies' is {game['plies']}, but the moves take {plies}")


def save_games(path: str | os.PathLike, rules: Rules | str, games: Sequence[dict[str, Any]]) -> Path:
    """Write ``games`` (dicts from ``games_from_actions`` or of the same form) for ``rules`` to the JSON
    file ``path`` (atomically: a reader never sees half a file). Returns the path."""
    rules = get_rules(rules)
    for index, game in enumerate(games):
        missing = {"black", "white", "start_fen", "moves", "result", "plies"} - set(game)
        if missing:
            raise ValueError(f"game {index + 1} lacks {', '.join(sorted(missing))}")
    document = {"format": FORMAT, "version": VERSION, "rules": rules.name, "games": list(games)}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(document, indent=1) + "\n")
    os.replace(partial, path)
    return path


def load_games(path: str | os.PathLike) -> GameFile:
    """Read a game file written by ``save_games``, replaying every game to check it.

    Raises ``ValueError`` naming the file and the problem: not JSON, another format or version, an
    unknown rules preset, a malformed game, an illegal move, or a result the moves do not give.
    """
    where = os.fspath(path)
    try:
        document = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ValueError(f"{where}: no such game file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{where}: not a readable JSON file ({error})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        found = document.get("format") if isinstance(document, dict) else type(document).__name__
        raise ValueError(f"{where}: 'format' is {found!r}, expected {FORMAT!r}")
    if document.get("version") != VERSION:
        raise ValueError(f"{where}: version {document.get('version')!r} is not supported (this code reads 1)")
    try:
        rules = get_rules(document.get("rules"))
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    games = document.get("games")
    if not isinstance(games, list):
        raise ValueError(f"{where}: 'games' must be a list")
    for index, game in enumerate(games):
        try:
            _check_game(rules, game)
        except ValueError as error:
            raise ValueError(f"{where}: game {index + 1}: {error}") from None
    return GameFile(rules=rules, games=tuple(games))
