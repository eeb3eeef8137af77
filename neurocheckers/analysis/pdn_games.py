"""PDN game files, and one loader and one writer for either game-file format.

``load_game_file`` reads a ``.pdn`` file as PDN and any other file as the JSON format of
``analysis.games``, and returns the same ``GameFile`` either way (game dicts as described there);
``save_game_file`` writes by the same rule. The PDN text itself is read and written by
``rules.pdn`` (no JAX); here the moves are checked with the rules engine.

Tags written: ``Event``, ``Black``, ``White``, ``Result``, ``GameType``, ``Variant`` (the preset),
then for a game from a set-up position ``SetUp "1"`` and ``FEN``, and ``StartPly`` /
``StartQuietPlies`` when its draw counters were running (``State.ply``,
``State.plies_without_capture``; user-defined tags, which PDN allows and other programs ignore).
Results are PDN's default ones, the first number Black's (the first mover's): ``1-0``, ``0-1``,
``1/2-1/2``, ``*``.

GameType (PDN 3.0, pdn.fmjd.org, "GameType tag"): ``21`` is English draughts (American checkers),
short for ``21,B,8,8,N1,0``: Black starts, an 8x8 board, numeric notation with square 1 at the
bottom right seen from the starting player, the bottom-left corner a playing square. The 6x6 presets
are written ``21,B,6,6,N1,0``: the same game type and notation on a 6x6 board. PDN has no type for
``simple6``'s rules (optional one-jump captures), so the ``Variant`` tag names the preset; a file
without it is read as ``american8`` on 8x8 and ``american6`` on 6x6.

``file_verdicts`` replays each game of a file and says what an endgame database makes of its last
position (``neurocheckers verdicts``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

from neurocheckers.analysis.games import GameFile, load_games, replay_game, result_text, save_games
from neurocheckers.experiment.files import atomic_write_text
from neurocheckers.rules.engine import init
from neurocheckers.rules.notation import to_fen
from neurocheckers.rules.pdn import PdnGame, read_pdn, write_pdn
from neurocheckers.rules.presets import AMERICAN6, AMERICAN8, NAMED_RULES, Rules, get_rules

PDN_SUFFIX = ".pdn"
"""Game files whose name ends so (any case) are PDN; others are JSON."""
GAME_TYPES = {8: "21", 6: "21,B,6,6,N1,0"}
"""The PDN GameType written for each board size (see the module docstring)."""
DEFAULT_EVENT = "neurocheckers"
"""The Event tag of a game that names none."""
REQUIRED = ("black", "white", "start_fen", "moves", "result", "plies")


@functools.cache
def initial_fen(rules: Rules) -> str:
    """The FEN of the rules' starting position."""
    return to_fen(jax.device_get(init(rules)))


def is_pdn(path: str | os.PathLike) -> bool:
    return Path(path).suffix.lower() == PDN_SUFFIX


def pdn_of_game(rules: Rules, game: dict[str, Any], event: str = DEFAULT_EVENT) -> PdnGame:
    """The PDN of one game dict; its ``event`` key, else ``event``, is the Event tag, and the tags
    it carries from a PDN file (``tags``) are kept after the ones written here."""
    tags = {
        "Event": str(game.get("event", event)),
        "Black": game["black"],
        "White": game["white"],
        "Result": game["result"],
        "GameType": GAME_TYPES[rules.board_size],
        "Variant": rules.name,
    }
    if game["start_fen"] != initial_fen(rules):
        tags.update(SetUp="1", FEN=game["start_fen"])
    if game.get("start_ply") or game.get("start_quiet"):
        tags.update(StartPly=str(game.get("start_ply", 0)), StartQuietPlies=str(game.get("start_quiet", 0)))
    for name, value in game.get("tags", {}).items():
        tags.setdefault(name, value)
    return PdnGame(tags, tuple(game["moves"]), game["result"])


def save_pdn(
    path: str | os.PathLike, rules: Rules | str, games: Sequence[dict[str, Any]], event: str = DEFAULT_EVENT
) -> Path:
    """Write ``games`` (dicts of ``analysis.games``) as a PDN file, atomically. Returns the path."""
    rules = get_rules(rules)
    for index, game in enumerate(games):
        missing = set(REQUIRED) - set(game)
        if missing:
            raise ValueError(f"game {index + 1} lacks {', '.join(sorted(missing))}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, write_pdn([pdn_of_game(rules, game, event) for game in games]))
    return path


def rules_of_tags(tags: dict[str, str]) -> Rules:
    """The preset of a PDN game: its ``Variant`` tag when that names a preset, else its
    ``GameType`` (American checkers, type 21, on 8x8 or 6x6; none means 8x8). ``ValueError`` for
    another game type or board."""
    if tags.get("Variant", "").strip() in NAMED_RULES:
        return NAMED_RULES[tags["Variant"].strip()]
    game_type = tags.get("GameType", "21").strip()
    parts = [p.strip() for p in game_type.split(",")]
    if parts[0] != "21":
        raise ValueError(f"GameType {game_type!r} is not American checkers (21), the only type read")
    if len(parts) < 4 or parts[2:4] == ["8", "8"]:
        return AMERICAN8
    if parts[2:4] == ["6", "6"]:
        return AMERICAN6
    raise ValueError(f"GameType {game_type!r}: only 8x8 and 6x6 boards are read")


def _counter(tags: dict[str, str], name: str) -> int:
    text = tags.get(name, "0").strip()
    if not text.isdigit():
        raise ValueError(f"tag {name} must be an integer >= 0, got {text!r}")
    return int(text)


def game_of_pdn(rules: Rules, pdn: PdnGame) -> dict[str, Any]:
    """The game dict of a PDN game under ``rules``, its moves replayed and written in full
    (``9x27`` becomes ``9x18x27``). The result is the moves' own when they end the game, else the
    file's (a game resigned or adjudicated). ``ValueError`` naming the bad move, or a result the
    moves contradict."""
    tags = pdn.tags
    game: dict[str, Any] = {
        "black": tags.get("Black", "?"),
        "white": tags.get("White", "?"),
        "start_fen": tags.get("FEN", "").strip() or initial_fen(rules),
        "moves": list(pdn.moves),
    }
    for key, tag in (("start_ply", "StartPly"), ("start_quiet", "StartQuietPlies")):
        if tag in tags:
            game[key] = _counter(tags, tag)
    states, moves = replay_game(rules, game)
    replayed = result_text(states[-1])
    if "*" not in (replayed, pdn.result) and replayed != pdn.result:
        raise ValueError(f"the result is {pdn.result}, but the moves end in {replayed}")
    game.update(
        moves=[m.notation for m in moves],
        result=pdn.result if replayed == "*" else replayed,
        plies=sum(len(m.actions) for m in moves),
        event=tags.get("Event", "?"),
        tags=dict(tags),
    )
    return game


def load_pdn(path: str | os.PathLike, rules: Rules | str | None = None) -> GameFile:
    """Read a PDN file, replaying every game to check it, under ``rules`` (default: each game's
    tags, see ``rules_of_tags``; all games must agree). A game that fails is skipped, and
    ``GameFile.skipped`` says why in one line naming the file, the game (counting from 1) and the
    problem, e.g. an illegal move and the legal ones; the games after it keep their numbers in the
    file (``GameFile.numbers``). When no game is left, that line is raised as a ``ValueError``."""
    where = os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig", errors="replace")
    except FileNotFoundError:
        raise ValueError(f"{where}: no such game file") from None
    except OSError as error:
        raise ValueError(f"{where}: cannot be read ({error.strerror or error})") from None
    try:
        parsed = read_pdn(text)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    if not parsed:
        raise ValueError(f"{where}: no games in this PDN file")
    fixed = get_rules(rules) if rules is not None else None
    chosen: Rules | None = fixed
    games, numbers, skipped = [], [], []
    for number, pdn in enumerate(parsed, start=1):
        try:
            own = fixed or rules_of_tags(pdn.tags)
            if chosen is not None and own != chosen:
                raise ValueError(f"its rules are {own.name}, an earlier game's {chosen.name}")
            games.append(game_of_pdn(own, pdn))
            numbers.append(number)
            chosen = own
        except ValueError as error:
            skipped.append(f"{where}: game {number}: {error}")
    if not games:
        raise ValueError(skipped[0])
    return GameFile(rules=chosen, games=tuple(games), skipped=tuple(skipped), numbers=tuple(numbers))


def save_game_file(
    path: str | os.PathLike, rules: Rules | str, games: Sequence[dict[str, Any]], event: str = DEFAULT_EVENT
) -> Path:
    """Write ``games`` as PDN when ``path`` ends in ``.pdn`` (``event`` is their Event tag), else as
    the JSON game file of ``analysis.games.save_games``. Returns the path."""
    if is_pdn(path):
        return save_pdn(path, rules, games, event)
    return save_games(path, rules, games)


def load_game_file(path: str | os.PathLike) -> GameFile:
    """The games of a game file of either format: PDN when ``path`` ends in ``.pdn``, else the JSON
    of ``analysis.games``. Raises a one-line ``ValueError`` naming the file and the problem."""
    return load_pdn(path) if is_pdn(path) else load_games(path)


def _final_board(rules: Rules, game: dict[str, Any]) -> list[int]:
    """The game's last position as ``GameRecords.final_boards`` has it: four bitboards and the mover."""
    last = replay_game(rules, game)[0][-1]
    fields = (last.black_men, last.black_kings, last.white_men, last.white_kings, last.color)
    return [int(x) for x in fields]


def _players(games: Sequence[dict[str, Any]]) -> tuple[str, str, list[bool]]:
    """Players A and B of a file's games and whether A played Black in each: the first game's Black
    and White when only those two play; else Black and White themselves."""
    a, b = games[0]["black"], games[0]["white"]
    if all({g["black"], g["white"]} == {a, b} for g in games) and a != b:
        return a, b, [g["black"] == a for g in games]
    return "Black", "White", [True] * len(games)


def file_verdicts(game_file: GameFile, db: Any) -> dict[str, Any]:
    """What the endgame database ``db`` (an ``endgame.EndgameDB`` of the file's rules) says of the last
    position of each game of ``game_file`` (``match_report.endgame_verdicts``: ``covered``,
    ``drawn``, ``drawn_a_wins``, ``drawn_b_wins``, ``drawn_draws``, ``disagree``, ``values``), A and
    B the two players (``_players``), with the file's ``wins`` (A's), ``draws``, ``losses`` and
    ``unfinished`` games, the database's ``max_pieces`` and, per kind of game, how many ended with
    more pieces than it holds (``beyond``: no verdict) or in a slice it lacks (``not_held``)."""
    from neurocheckers.analysis.match_report import endgame_verdicts

    games = game_file.games
    boards = np.array([_final_board(game_file.rules, g) for g in games], dtype=np.uint32).reshape(-1, 5)
    a, b, a_is_black = _players(games)
    black_points = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5, "*": 0.5}
    score = np.array([black_points[g["result"]] if black else 1 - black_points[g["result"]]
                      for g, black in zip(games, a_is_black, strict=True)])  # fmt: skip
    finished = np.array([g["result"] != "*" for g in games], dtype=bool)
    verdicts = endgame_verdicts(db, boards, score, finished, np.array(a_is_black))
    max_pieces = max(s.pieces for s in db.slices)
    pieces = np.array([sum(bin(int(x)).count("1") for x in row[:4]) for row in boards], dtype=int)
    held = np.array([v is not None for v in verdicts["values"]])
    drawn = finished & (score == 0.5)
    kinds = {"draws": drawn, "decisive": finished & ~drawn, "unfinished": ~finished}
    return {
        "rules": game_file.rules.name,
        "player_a": a,
        "player_b": b,
        "games": len(games),
        "wins": int((finished & (score == 1.0)).sum()),
        "draws": int(drawn.sum()),
        "losses": int((finished & (score == 0.0)).sum()),
        "unfinished": int((~finished).sum()),
        "max_pieces": max_pieces,
        # a game won by taking every piece is held (a mover without pieces has lost) at any count
        "beyond": {kind: int((rows & ~held & (pieces > max_pieces)).sum()) for kind, rows in kinds.items()},
        "not_held": {  # an unfinished game has no verdict (``endgame_verdicts``), held or not
            kind: int((kinds[kind] & (pieces <= max_pieces) & ~held).sum()) for kind in ("draws", "decisive")
        },
        "numbers": [n for n, _ in game_file.numbered()],
        **verdicts,
    }


def format_file_verdicts(verdicts: dict[str, Any]) -> str:
    """``file_verdicts`` in words: the players and results, ``match_report.format_verdicts``' line,
    and the games the database gives no verdict."""
    from neurocheckers.analysis.match_report import format_verdicts

    v, beyond, missing = verdicts, verdicts["beyond"], verdicts["not_held"]
    lines = [
        f"{v['games']} games of {v['rules']}: A = {v['player_a']}, B = {v['player_b']}",
        f"  A wins {v['wins']}, draws {v['draws']}, A losses {v['losses']}, unfinished {v['unfinished']}",
        format_verdicts(v),
        f"  of the {v['draws']} draws it holds the last position of {v['drawn']};"
        f" {v['covered'] - v['drawn']} of the {v['wins'] + v['losses']} decisive games",
        f"  no verdict (the last position has more than {v['max_pieces']} pieces): {beyond['draws']} draws,"
        f" {beyond['decisive']} decisive games, {beyond['unfinished']} unfinished",
    ]
    if any(missing.values()):
        lines.append(
            f"  outside the slices it holds (fewer pieces): {missing['draws']} draws,"
            f" {missing['decisive']} decisive games"
        )
    return "\n".join(lines)


def file_perfect_accuracy(game_file: GameFile, oracle: Any) -> dict[str, Any]:
    """Every whole move of every game of ``game_file`` judged against perfect play (``oracle``, a
    ``solve.oracle.PerfectPlay`` of the file's rules): players A's and B's ``PerfectAccuracy``
    (``_players``), as ``{"player_a": ..., "a": ..., "player_b": ..., "b": ...}``."""
    from neurocheckers.analysis.games import replay_game
    from neurocheckers.analysis.perfect_play import grade_games
    from neurocheckers.compiled.board import Position

    games = game_file.games
    a, b, a_is_black = _players(games)
    lines = [[Position.from_state(s) for s in replay_game(game_file.rules, g)[0]] for g in games]
    accuracy_a, accuracy_b = grade_games(oracle, lines, a_is_black)
    return {"player_a": a, "a": accuracy_a, "player_b": b, "b": accuracy_b}
