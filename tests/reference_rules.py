"""Slow, plainly written pure-Python reference rules for the checkers presets.

This module exists only to cross-check the fast JAX engine in tests. It is
deliberately independent of the ``neurocheckers`` package (it imports nothing
from it) and uses nothing beyond the standard library.

Conventions (shared with the engine):

* Boards are 6x6 (18 dark squares) or 8x8 (32 dark squares). Row ``r = 0`` is
  at the top (Black's side), column ``c = 0`` at the left; a square is dark when
  ``(r + c) % 2 == 1``; the square number is ``r * (size // 2) + c // 2 + 1``.
* Black moves first. Black men start on the first ``men_rows`` rows and move
  DOWN (increasing row); White men start on the last rows and move UP. Black
  men crown on the last row, White men on row 0. Kings step and capture one
  square in all four diagonal directions (no flying kings).
* A move is a whole turn: a multi-jump is one move, and every distinct capture
  path is its own move (two paths capturing the same pieces and ending on the
  same square are still two moves).
* Jumped pieces are removed as they are jumped.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

# ---------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RefRules:
    name: str
    size: int
    men_rows: int
    forced_capture: bool
    multi_jump: bool
    stuck_loses: bool
    max_plies: int  # 0 = no limit
    max_plies_without_capture: int  # 0 = no limit
    man_moves_reset: bool = False  # a man's move resets the quiet counter too (the game's 40-move rule)


REF_PRESETS: dict[str, RefRules] = {
    "simple6": RefRules(
        name="simple6",
        size=6,
        men_rows=2,
        forced_capture=False,
        multi_jump=False,
        stuck_loses=False,
        max_plies=60,
        max_plies_without_capture=0,
    ),
    "american6": RefRules(
        name="american6",
        size=6,
        men_rows=2,
        forced_capture=True,
        multi_jump=True,
        stuck_loses=True,
        max_plies=0,
        max_plies_without_capture=50,
    ),
    "american8": RefRules(
        name="american8",
        size=8,
        men_rows=3,
        forced_capture=True,
        multi_jump=True,
        stuck_loses=True,
        max_plies=0,
        max_plies_without_capture=80,
        man_moves_reset=True,
    ),
}
# OpenSpiel's variant: american8's moves, drawn after 40 plies without a capture (men's moves too).
REF_PRESETS["american8-openspiel"] = replace(
    REF_PRESETS["american8"], name="american8-openspiel", max_plies_without_capture=40, man_moves_reset=False
)


# ---------------------------------------------------------------------------
# Positions and moves
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RefPosition:
    black_men: frozenset[int]
    black_kings: frozenset[int]
    white_men: frozenset[int]
    white_kings: frozenset[int]
    black_to_move: bool


@dataclass(frozen=True)
class RefMove:
    path: tuple[int, ...]  # squares visited, start square first
    captures: tuple[int, ...]  # captured squares in jump order; empty for a step

    def notation(self) -> str:
        if self.captures:
            return "x".join(str(s) for s in self.path)
        return f"{self.path[0]}-{self.path[-1]}"


# ---------------------------------------------------------------------------
# Board geometry
# ---------------------------------------------------------------------------


def num_squares(size: int) -> int:
    return size * size // 2


def square_to_rc(size: int, square: int) -> tuple[int, int]:
    """1-based square number -> (row, col)."""
    half = size // 2
    index = square - 1
    row = index // half
    col = 2 * (index % half)
    if row % 2 == 0:
        col += 1
    return row, col


def rc_to_square(size: int, row: int, col: int) -> int | None:
    """(row, col) -> 1-based square number, or None when off board or light."""
    if row < 0 or row >= size or col < 0 or col >= size:
        return None
    if (row + col) % 2 != 1:
        return None
    return row * (size // 2) + col // 2 + 1


# (row step, column step). Black men use the +1 row directions (down),
# White men the -1 row directions (up), kings all four.
_DOWN = ((1, -1), (1, 1))
_UP = ((-1, -1), (-1, 1))
_ALL = _UP + _DOWN


def _directions(piece: str) -> tuple[tuple[int, int], ...]:
    if piece == "b":
        return _DOWN
    if piece == "w":
        return _UP
    return _ALL  # "B" or "W": a king


def _neighbour(size: int, square: int, direction: tuple[int, int], steps: int) -> int | None:
    row, col = square_to_rc(size, square)
    return rc_to_square(size, row + steps * direction[0], col + steps * direction[1])


def _crowns(size: int, piece: str, square: int) -> bool:
    """Does a man of this kind get crowned on arriving at ``square``?"""
    row, _ = square_to_rc(size, square)
    if piece == "b":
        return row == size - 1
    if piece == "w":
        return row == 0
    return False  # already a king


def _colour(piece: str) -> str:
    return piece.lower()


def _king_of(piece: str) -> str:
    return piece.upper()


# ---------------------------------------------------------------------------
# Position helpers
# ---------------------------------------------------------------------------


def _board_of(pos: RefPosition) -> dict[int, str]:
    """Square -> piece code: 'b' black man, 'B' black king, 'w', 'W' for White."""
    board: dict[int, str] = {}
    for square in pos.black_men:
        board[square] = "b"
    for square in pos.black_kings:
        board[square] = "B"
    for square in pos.white_men:
        board[square] = "w"
    for square in pos.white_kings:
        board[square] = "W"
    return board


def _position_of(board: dict[int, str], black_to_move: bool) -> RefPosition:
    return RefPosition(
        black_men=frozenset(s for s, p in board.items() if p == "b"),
        black_kings=frozenset(s for s, p in board.items() if p == "B"),
        white_men=frozenset(s for s, p in board.items() if p == "w"),
        white_kings=frozenset(s for s, p in board.items() if p == "W"),
        black_to_move=black_to_move,
    )


def _check_position(rules: RefRules, pos: RefPosition) -> None:
    groups = [pos.black_men, pos.black_kings, pos.white_men, pos.white_kings]
    seen: set[int] = set()
    total = 0
    for group in groups:
        for square in group:
            if not 1 <= square <= num_squares(rules.size):
                raise ValueError(f"square {square} is not on a {rules.size}x{rules.size} board")
        seen |= set(group)
        total += len(group)
    if len(seen) != total:
        raise ValueError("a square holds more than one piece")


def initial_position(rules: RefRules) -> RefPosition:
    half = rules.size // 2
    n = num_squares(rules.size)
    count = rules.men_rows * half
    return RefPosition(
        black_men=frozenset(range(1, count + 1)),
        black_kings=frozenset(),
        white_men=frozenset(range(n - count + 1, n + 1)),
        white_kings=frozenset(),
        black_to_move=True,
    )


# ---------------------------------------------------------------------------
# FEN
# ---------------------------------------------------------------------------


def _parse_fen_squares(text: str) -> tuple[set[int], set[int]]:
    """Parse "21,22,K30,K1-3" -> (men, kings)."""
    men: set[int] = set()
    kings: set[int] = set()
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        is_king = False
        if item[0] in "Kk":
            is_king = True
            item = item[1:].strip()
        if "-" in item:
            low_text, high_text = item.split("-", 1)
            low, high = int(low_text), int(high_text)
            if low > high:
                raise ValueError(f"bad range {item!r}")
            squares = range(low, high + 1)
        else:
            squares = range(int(item), int(item) + 1)
        for square in squares:
            if square < 1:
                raise ValueError(f"bad square {square}")
            if is_king:
                kings.add(square)
            else:
                men.add(square)
    return men, kings


def position_from_fen(fen: str) -> RefPosition:
    """Parse a PDN FEN such as ``"B:W21,22,K30:B1,2,K9"``.

    The side to move comes first. The two colour sections may come in either
    order; ``K`` marks a king; ranges like ``1-12`` are accepted; a trailing
    ``.`` is ignored.
    """
    text = fen.strip()
    if text.endswith("."):
        text = text[:-1]
    text = text.strip().strip('"').strip()
    fields = [f.strip() for f in text.split(":")]
    if len(fields) != 3:
        raise ValueError(f"bad FEN {fen!r}")
    side = fields[0].upper()
    if side not in ("B", "W"):
        raise ValueError(f"bad side to move in FEN {fen!r}")
    black: tuple[set[int], set[int]] | None = None
    white: tuple[set[int], set[int]] | None = None
    for field in fields[1:]:
        if not field:
            raise ValueError(f"empty section in FEN {fen!r}")
        colour = field[0].upper()
        parsed = _parse_fen_squares(field[1:])
        if colour == "B" and black is None:
            black = parsed
        elif colour == "W" and white is None:
            white = parsed
        else:
            raise ValueError(f"bad colour section {field!r} in FEN {fen!r}")
    assert black is not None and white is not None
    all_squares = [black[0], black[1], white[0], white[1]]
    if sum(len(s) for s in all_squares) != len(set().union(*all_squares)):
        raise ValueError(f"a square is listed twice in FEN {fen!r}")
    return RefPosition(
        black_men=frozenset(black[0]),
        black_kings=frozenset(black[1]),
        white_men=frozenset(white[0]),
        white_kings=frozenset(white[1]),
        black_to_move=(side == "B"),
    )


def _fen_section(men: frozenset[int], kings: frozenset[int]) -> str:
    items = [(s, False) for s in men] + [(s, True) for s in kings]
    items.sort()
    return ",".join(("K" if king else "") + str(s) for s, king in items)


def position_to_fen(pos: RefPosition) -> str:
    side = "B" if pos.black_to_move else "W"
    white = _fen_section(pos.white_men, pos.white_kings)
    black = _fen_section(pos.black_men, pos.black_kings)
    return f"{side}:W{white}:B{black}"


# ---------------------------------------------------------------------------
# Move generation
# ---------------------------------------------------------------------------


def _capture_sequences(
    rules: RefRules,
    board: dict[int, str],
    piece: str,
    path: tuple[int, ...],
    captures: tuple[int, ...],
    out: list[RefMove],
) -> None:
    """Extend a capture sequence from ``path[-1]``; append finished moves to ``out``.

    ``board`` already reflects the jumps made so far (mover on ``path[-1]``,
    jumped pieces removed). ``piece`` is the mover's current piece code.
    """
    here = path[-1]
    mover_colour = _colour(piece)
    extended = False
    for direction in _directions(piece):
        over = _neighbour(rules.size, here, direction, 1)
        land = _neighbour(rules.size, here, direction, 2)
        if over is None or land is None:
            continue
        victim = board.get(over)
        if victim is None or _colour(victim) == mover_colour:
            continue
        if land in board:
            continue
        extended = True
        new_board = dict(board)
        del new_board[here]
        del new_board[over]
        crowned = _crowns(rules.size, piece, land)
        new_piece = _king_of(piece) if crowned else piece
        new_board[land] = new_piece
        new_path = path + (land,)
        new_captures = captures + (over,)
        if crowned or not rules.multi_jump:
            # Crowning ends the move; without multi-jump one jump is the move.
            out.append(RefMove(new_path, new_captures))
        else:
            _capture_sequences(rules, new_board, new_piece, new_path, new_captures, out)
    if not extended and captures:
        out.append(RefMove(path, captures))


def legal_moves(rules: RefRules, pos: RefPosition) -> list[RefMove]:
    """All legal full-turn moves for the side to move (not sorted)."""
    _check_position(rules, pos)
    board = _board_of(pos)
    mover_colour = "b" if pos.black_to_move else "w"
    captures: list[RefMove] = []
    steps: list[RefMove] = []
    for square in sorted(board):
        piece = board[square]
        if _colour(piece) != mover_colour:
            continue
        _capture_sequences(rules, board, piece, (square,), (), captures)
        for direction in _directions(piece):
            target = _neighbour(rules.size, square, direction, 1)
            if target is not None and target not in board:
                steps.append(RefMove((square, target), ()))
    if rules.forced_capture and captures:
        return captures
    return captures + steps


def apply_move(rules: RefRules, pos: RefPosition, move: RefMove) -> RefPosition:
    """Apply a full-turn move (assumed legal) and hand the turn to the other side."""
    board = _board_of(pos)
    start = move.path[0]
    end = move.path[-1]
    piece = board.pop(start)
    for square in move.captures:
        del board[square]
    # A man is crowned when it ends its move on the far row (a capture that
    # crowns always ends there, so checking the end square is enough).
    if _crowns(rules.size, piece, end):
        piece = _king_of(piece)
    board[end] = piece
    return _position_of(board, not pos.black_to_move)


def perft(rules: RefRules, pos: RefPosition, depth: int) -> int:
    """Number of leaf nodes of the legal-move tree, ``depth`` whole turns deep."""
    if depth == 0:
        return 1
    moves = legal_moves(rules, pos)
    if depth == 1:
        return len(moves)
    return sum(perft(rules, apply_move(rules, pos, m), depth - 1) for m in moves)


# ---------------------------------------------------------------------------
# Games
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RefGame:
    position: RefPosition
    ply: int
    plies_without_capture: int
    terminated: bool
    result: int  # +1 Black won, -1 White won, 0 draw or not over


def _has_pieces(pos: RefPosition, black: bool) -> bool:
    if black:
        return bool(pos.black_men or pos.black_kings)
    return bool(pos.white_men or pos.white_kings)


def _judge(rules: RefRules, pos: RefPosition, ply: int, plies_without_capture: int) -> RefGame:
    """Build a game record, deciding termination for the side now to move."""
    loser_result = -1 if pos.black_to_move else 1
    # Reaching the no-capture limit draws even a side left without a move (OpenSpiel's order).
    if rules.max_plies_without_capture and plies_without_capture >= rules.max_plies_without_capture:
        return RefGame(pos, ply, plies_without_capture, True, 0)
    if not legal_moves(rules, pos):
        if rules.stuck_loses or not _has_pieces(pos, pos.black_to_move):
            return RefGame(pos, ply, plies_without_capture, True, loser_result)
        return RefGame(pos, ply, plies_without_capture, True, 0)
    if rules.max_plies and ply >= rules.max_plies:
        return RefGame(pos, ply, plies_without_capture, True, 0)
    if rules.max_plies_without_capture and plies_without_capture >= rules.max_plies_without_capture:
        return RefGame(pos, ply, plies_without_capture, True, 0)
    return RefGame(pos, ply, plies_without_capture, False, 0)


def new_game(rules: RefRules, pos: RefPosition | None = None) -> RefGame:
    """Start a game (from the initial position by default).

    Termination is judged for the starting position too, so a position whose
    side to move has no legal move gives an already terminated game.
    """
    if pos is None:
        pos = initial_position(rules)
    return _judge(rules, pos, 0, 0)


def play(rules: RefRules, game: RefGame, move: RefMove) -> RefGame:
    """Play one full-turn move; update counters and decide termination."""
    if game.terminated:
        raise ValueError("the game is already over")
    if move not in legal_moves(rules, game.position):
        raise ValueError(f"illegal move {move.notation()}")
    men = game.position.black_men if game.position.black_to_move else game.position.white_men
    resets = bool(move.captures) or (rules.man_moves_reset and move.path[0] in men)
    pos = apply_move(rules, game.position, move)
    without = 0 if resets else game.plies_without_capture + 1
    return _judge(rules, pos, game.ply + 1, without)


def random_game(
    rules: RefRules, seed: int, max_turns: int = 1000
) -> list[tuple[RefGame, list[RefMove], RefMove | None]]:
    """Play uniformly random moves with ``random.Random(seed)``.

    Returns ``(game before the move, its legal moves sorted by notation, the
    chosen move)`` for every turn; the last entry is the final game with its
    sorted legal moves and move ``None`` (the game is terminated unless
    ``max_turns`` ran out first).
    """
    rng = random.Random(seed)
    game = new_game(rules)
    history: list[tuple[RefGame, list[RefMove], RefMove | None]] = []
    for _ in range(max_turns):
        if game.terminated:
            break
        moves = sorted(legal_moves(rules, game.position), key=lambda m: m.notation())
        move = rng.choice(moves)
        history.append((game, moves, move))
        game = play(rules, game, move)
    moves = sorted(legal_moves(rules, game.position), key=lambda m: m.notation())
    history.append((game, moves, None))
    return history
