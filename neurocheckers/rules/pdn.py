"""PDN (Portable Draughts Notation) game text, in plain Python: importing this module does not import
JAX. It reads and writes the text only; ``analysis.pdn_games`` checks the moves with the engine.

A game is tag pairs then movetext::

    [Event "neurocheckers match"]
    [Black "mcts:agent.safetensors:16"]
    [White "random"]
    [Result "1-0"]
    [GameType "21"]

    1. 11-15 23-19 2. 8-11 22-17 {a comment} 3. 9-13 17x10x1 ... 1-0

:func:`read_pdn` accepts what programs write (the PDN 3.0 reading grammar, pdn.fmjd.org): tags
(``\\"`` escapes), ``{...}`` comments, ``%`` and ``;`` line comments, move numbers ``1.``, ``1...``
and ``1. ...``, moves with ``-``, ``x`` or ``:`` separators and leading zeros, strength marks
(``!``, ``?``, an attached ``*``), NAGs (``$1``), nested variations ``(...)`` (skipped: only the
main line is kept) and many games a file, each ended by a result (``1-0``, ``0-1``, ``1/2-1/2``,
the international ``2-0``, ``0-2``, ``1-1``, or ``*``) or by the next game's tags. Results are
returned in the default form, the first number being the first mover's (Black's in American
checkers; PDN 2.0, sec. 6.1.1.1.1.5): ``1-0``, ``0-1``, ``1/2-1/2`` or ``*``. :func:`write_pdn`
writes games in that form (PDN 3.0 gives English draughts, GameType 21, the "Default" result type).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

RESULTS = {
    "1-0": "1-0",
    "2-0": "1-0",
    "0-1": "0-1",
    "0-2": "0-1",
    "1/2-1/2": "1/2-1/2",
    "1-1": "1/2-1/2",
    "*": "*",
}
"""Result tokens read, and the default-form result each stands for (first number: the first mover)."""
LINE_WIDTH = 80
"""Longest movetext line written (PDN 2.0, sec. 5.2)."""

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<line_comment>(?:(?<=\n)|^)%[^\n]*|;[^\n]*)
  | (?P<tag>\[\s*(?P<tag_name>[A-Za-z0-9_]+)\s*"(?P<tag_value>(?:[^"\\]|\\.)*)"\s*\])
  | (?P<comment>\{[^}]*\})
  | (?P<open>\()
  | (?P<close>\))
  | (?P<setup>/[^/\n]*/)
  | (?P<result>(?:1/2-1/2|2-0|0-2|1-1|1-0|0-1|0-0)(?![\d\w/-]))
  | (?P<number>\d+\.(?:\s*\.\.\.?|\.\.)?)
  | (?P<move>\d+(?:[-x:X]\d+)+)(?P<strength>(?:[!?*]+|\([!?]+\))?)
  | (?P<ellipsis>\.\.\.)
  | (?P<nag>\$\d+)
  | (?P<star>\*)
    """,
    re.VERBOSE,
)


@dataclasses.dataclass(frozen=True)
class PdnGame:
    """One game as text: its tags, its main-line moves and its result."""

    tags: dict[str, str]
    """Tag pairs in file order (a repeated tag keeps its last value)."""
    moves: tuple[str, ...]
    """Whole-turn moves as written, cleaned: ``9-14``, ``9x18``, ``1x10x19`` (``x`` for captures
    written with ``:`` or ``X``, no leading zeros; a capture written with ``-`` keeps its ``-``)."""
    result: str
    """``1-0`` (the first mover won), ``0-1``, ``1/2-1/2`` or ``*`` (unfinished or unknown): the
    terminator, else the ``Result`` tag, else ``*``."""


def _clean_move(text: str) -> str:
    squares = re.split(r"[-x:X]", text)
    separator = "-" if "-" in text else "x"
    return separator.join(str(int(s)) for s in squares)


class _Game:
    """A game being read."""

    def __init__(self) -> None:
        self.tags: dict[str, str] = {}
        self.moves: list[str] = []
        self.terminator: str | None = None

    @property
    def started(self) -> bool:
        return bool(self.tags or self.moves)

    def finish(self, number: int) -> PdnGame:
        # Other Result values (e.g. "?") are read as no result, as PDN 3.0 recommends.
        result = RESULTS.get(self.tags.get("Result", "").strip())
        if self.terminator is not None and result is not None and self.terminator != result:
            ends = self.terminator
            raise ValueError(f"game {number}: the Result tag says {result}, the movetext ends in {ends}")
        return PdnGame(dict(self.tags), tuple(self.moves), self.terminator or result or "*")


def read_pdn(text: str) -> list[PdnGame]:
    """Every game of a PDN text, in order. Raises ``ValueError`` naming the game (counting from 1)
    and what is wrong: an unknown token, an unclosed comment or variation, a set-up command inside a
    game, a double forfeit (``0-0``), or a Result tag that contradicts the game's terminator."""
    games: list[PdnGame] = []
    game = _Game()
    depth = 0  # nesting of variations; their contents are skipped
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        number = len(games) + 1
        if match is None:
            snippet = text[position : position + 20].split("\n")[0]
            if text[position] == "{":
                raise ValueError(f"game {number}: a comment opened with '{{' is never closed")
            raise ValueError(f"game {number}: cannot read {snippet!r}")
        position = match.end()
        kind = match.lastgroup if match.lastgroup != "strength" else "move"
        if kind in ("space", "line_comment", "comment", "nag", "number", "ellipsis"):
            continue
        if kind == "open":
            depth += 1
        elif kind == "close":
            if depth == 0:
                raise ValueError(f"game {number}: ')' closes no variation")
            depth -= 1
        elif depth:
            continue  # a variation's moves, results and set-ups are not the game's
        elif kind == "tag":
            if game.moves or game.terminator:  # tags after moves: the next game has begun
                games.append(game.finish(number))
                game = _Game()
            value = re.sub(r"\\(.)", r"\1", match.group("tag_value"))
            game.tags[match.group("tag_name")] = value
        elif kind == "move":
            game.moves.append(_clean_move(match.group("move")))
        elif kind == "setup":
            raise ValueError(f"game {number}: set-up commands inside a game are not supported")
        elif kind in ("result", "star"):
            token = match.group(kind)
            if token == "0-0":
                raise ValueError(f"game {number}: a double forfeit (0-0) has no winner to record")
            game.terminator = RESULTS[token]
            games.append(game.finish(number))
            game = _Game()
    if depth:
        raise ValueError(f"game {len(games) + 1}: a variation opened with '(' is never closed")
    if game.started:
        games.append(game.finish(len(games) + 1))
    return games


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def movetext(moves: Sequence[str], first_mover_starts: bool, result: str) -> str:
    """Numbered movetext wrapped at ``LINE_WIDTH``: ``1. 11-15 23-19 2. ...`` then the result.
    When the first mover is not to move at the start (a set-up position), it begins ``1... 23-19``."""
    tokens = []
    offset = 0 if first_mover_starts else 1
    for index, move in enumerate(moves):
        turn = index + offset
        if turn % 2 == 0:
            tokens.append(f"{turn // 2 + 1}. {move}")  # a number stays on its move's line
        elif index == 0:
            tokens.append(f"1... {move}")
        else:
            tokens.append(move)
    tokens.append(result)
    lines, line = [], ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > LINE_WIDTH:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    lines.append(line)
    return "\n".join(lines)


def write_pdn(games: Sequence[PdnGame]) -> str:
    """The PDN text of ``games``: each game's tags (in their order), a blank line, its movetext
    (``movetext``; the ``FEN`` tag, when there is one, says who moves first) and a blank line."""
    blocks = []
    for game in games:
        if game.result not in ("1-0", "0-1", "1/2-1/2", "*"):
            raise ValueError(f"result must be 1-0, 0-1, 1/2-1/2 or *, got {game.result!r}")
        tags = "\n".join(f"[{name} {_quote(value)}]" for name, value in game.tags.items())
        fen = game.tags.get("FEN", "B").strip().upper()
        black_first = not fen.startswith("W")
        blocks.append(f"{tags}\n\n{movetext(game.moves, black_first, game.result)}\n")
    return "\n".join(blocks)
