"""Our American-checkers (``american8``) squares and actions against OpenSpiel's ``checkers``.

Plain Python over OpenSpiel state objects (duck-typed: ``str(state)``, ``legal_actions()``,
``history()``...); importing this module imports neither JAX nor pyspiel. ``match.host`` plays
OpenSpiel's bots with it, and the tests check our engine against OpenSpiel move by move with it
(``open-spiel`` 2.0.2, C++ source shipped in the wheel under ``open_spiel/games/checkers``).

OpenSpiel facts this module relies on (all verified by experiment):

* Internal board: ``board[row][col]``, ``row 0`` is the TOP line of
  ``str(state)`` (label ``8``), ``col 0`` is file ``a``. Dark (playable)
  squares are those with ``(row + col) % 2 == 1`` (so ``a1`` is dark).
* Player 0 (OpenSpiel calls it "White") moves first, shown as ``o`` (man) and
  ``8`` (king); it starts on the BOTTOM three lines (labels 1-3) and moves up.
  Player 1 (OpenSpiel's "Black") is ``+`` (man) / ``*`` (king), starts on top.
  => OpenSpiel player 0 == our Black, OpenSpiel player 1 == our White.
* Mapping to our (r, c): a 180-degree rotation, ``r = 7 - row``,
  ``c = 7 - col``. It preserves the dark-square parity, so no mirror is needed.
* Action id = ``((row * 8 + col) * 4 + direction) * 2 + move_type`` where
  ``move_type`` 0 = step, 1 = capture (jump), and OpenSpiel's direction offsets
  (in its own row/col) are 0:(-1,-1) 1:(-1,+1) 2:(+1,+1) 3:(+1,-1). After the
  rotation these become our directions 1, 0, 2, 3 respectively.
* A multi-jump is a sequence of single-capture actions by the same player
  (``current_player()`` does not change); a man crowned by a capture ends the
  turn. ``moves_without_capture_`` (not exposed to Python) is incremented on
  every action and reset to 0 by a capture; when it is >= 40 the state has no
  legal actions, is terminal and returns ``[0, 0]`` (this takes precedence over
  the no-legal-move loss). Use :func:`moves_without_capture` to recover it.
"""

from __future__ import annotations

ROWS = 8
COLS = 8
NUM_SQUARES = 32
#: OpenSpiel's ``kMaxMovesWithoutCapture``: terminal draw once the number of
#: consecutive non-capturing actions (plies) reaches this value.
NO_CAPTURE_DRAW_PLIES = 40
#: OpenSpiel's ``MaxGameLength()`` (advertised only, never enforced).
OPENSPIEL_MAX_GAME_LENGTH = 1000

# OpenSpiel direction index -> (drow, dcol) in OpenSpiel's own coordinates.
_OS_DIR_OFFSETS = ((-1, -1), (-1, 1), (1, 1), (1, -1))
# Our direction index -> (drow, dcol) in our coordinates.
OUR_DIR_OFFSETS = ((1, -1), (1, 1), (-1, -1), (-1, 1))
# After the 180-degree rotation OpenSpiel offsets are negated.
_OS_TO_OUR_DIR = tuple(OUR_DIR_OFFSETS.index((-dr, -dc)) for dr, dc in _OS_DIR_OFFSETS)  # == (1, 0, 2, 3)
_OUR_TO_OS_DIR = tuple(_OS_TO_OUR_DIR.index(d) for d in range(4))

_CHAR_TO_KIND = {
    "o": "black_men",  # OpenSpiel player 0 ("White") man
    "8": "black_kings",  # OpenSpiel player 0 king
    "+": "white_men",  # OpenSpiel player 1 ("Black") man
    "*": "white_kings",  # OpenSpiel player 1 king
}


# --------------------------------------------------------------------------
# Coordinates
# --------------------------------------------------------------------------


def square_of(r: int, c: int) -> int:
    """Our square number (1..32) of our dark square (r, c)."""
    if not (0 <= r < ROWS and 0 <= c < COLS) or (r + c) % 2 != 1:
        raise ValueError(f"({r}, {c}) is not a dark square")
    return r * 4 + c // 2 + 1


def rc_of(square: int) -> tuple[int, int]:
    """Our (r, c) of our square number (1..32)."""
    if not 1 <= square <= NUM_SQUARES:
        raise ValueError(f"bad square {square}")
    r, k = divmod(square - 1, 4)
    return r, 2 * k + (1 - r % 2)


def os_cell_to_square(os_row: int, os_col: int) -> int:
    """OpenSpiel internal (row, col) -> our square number."""
    return square_of(ROWS - 1 - os_row, COLS - 1 - os_col)


def square_to_os_cell(square: int) -> tuple[int, int]:
    """Our square number -> OpenSpiel internal (row, col)."""
    r, c = rc_of(square)
    return ROWS - 1 - r, COLS - 1 - c


def os_cell_to_algebraic(os_row: int, os_col: int) -> str:
    """OpenSpiel internal (row, col) -> its label, e.g. (5, 0) -> 'a3'."""
    return f"{chr(ord('a') + os_col)}{ROWS - os_row}"


# --------------------------------------------------------------------------
# Actions
# --------------------------------------------------------------------------


def decode_openspiel_action(action: int) -> tuple[int, int, int, int]:
    """OpenSpiel action id -> (row, col, direction, move_type) (its terms)."""
    action = int(action)
    if not 0 <= action < ROWS * COLS * 4 * 2:
        raise ValueError(f"bad OpenSpiel action {action}")
    move_type = action % 2
    direction = (action // 2) % 4
    col = (action // 8) % COLS
    row = action // (8 * COLS)
    return row, col, direction, move_type


def encode_openspiel_action(row: int, col: int, direction: int, move_type: int) -> int:
    return ((row * COLS + col) * 4 + direction) * 2 + move_type


def openspiel_action_to_squares(action: int) -> tuple[int, int]:
    """OpenSpiel action id -> our (from square, to square)."""
    row, col, d, move_type = decode_openspiel_action(action)
    dist = move_type + 1
    dr, dc = _OS_DIR_OFFSETS[d]
    return os_cell_to_square(row, col), os_cell_to_square(row + dist * dr, col + dist * dc)


def openspiel_action_is_capture(action: int) -> bool:
    return decode_openspiel_action(action)[3] == 1


def openspiel_action_to_ours(action: int) -> int:
    """OpenSpiel action id -> our action id (direction * 32 + square - 1).

    Position independent: the from-square and direction determine our id.
    """
    row, col, d, _ = decode_openspiel_action(action)
    return _OS_TO_OUR_DIR[d] * NUM_SQUARES + os_cell_to_square(row, col) - 1


def our_action_to_squares(our_action: int, is_jump: bool) -> tuple[int, int]:
    """Our action id -> (from square, to square) given whether it is a jump."""
    direction, idx = divmod(int(our_action), NUM_SQUARES)
    r, c = rc_of(idx + 1)
    dr, dc = OUR_DIR_OFFSETS[direction]
    dist = 2 if is_jump else 1
    return idx + 1, square_of(r + dist * dr, c + dist * dc)


# --------------------------------------------------------------------------
# State helpers
# --------------------------------------------------------------------------


def _board_lines(state) -> list[str]:
    lines = str(state).splitlines()
    if len(lines) != ROWS + 1:
        raise ValueError(f"unexpected OpenSpiel board string:\n{state}")
    return [line[1 : 1 + COLS] for line in lines[:ROWS]]


def side_to_move(state) -> int:
    """OpenSpiel player (0 or 1) on move, also defined at terminal states.

    At a terminal state ``current_player()`` is -4; a terminal state can never
    be in the middle of a multi-jump, so the side to move is the opponent of
    the last actor (player 0 at the initial state).
    """
    player = state.current_player()
    if player in (0, 1):
        return player
    hist = state.full_history()
    return 0 if not hist else 1 - hist[-1].player


def position_of(state) -> dict:
    """OpenSpiel state -> our position dict (our square numbering)."""
    pos = {
        "black_men": set(),
        "black_kings": set(),
        "white_men": set(),
        "white_kings": set(),
    }
    for os_row, line in enumerate(_board_lines(state)):
        for os_col, ch in enumerate(line):
            if ch == ".":
                continue
            if ch not in _CHAR_TO_KIND:
                raise ValueError(f"unexpected board character {ch!r}")
            pos[_CHAR_TO_KIND[ch]].add(os_cell_to_square(os_row, os_col))
    pos["black_to_move"] = side_to_move(state) == 0
    return pos


def legal_moves_of(state) -> dict[int, int]:
    """Our action id -> OpenSpiel action id for every legal single step/jump."""
    out = {}
    for a in state.legal_actions():
        ours = openspiel_action_to_ours(a)
        assert ours not in out, "two OpenSpiel actions map to one of ours"
        out[ours] = int(a)
    return out


def our_action_to_openspiel(state, our_action: int) -> int:
    """Our action id -> OpenSpiel action id in ``state``.

    The step/capture bit is derived from the position (jump iff the adjacent
    square holds an opponent piece), exactly as in our engine, so the returned
    id is well defined even if OpenSpiel does not list it as legal (check with
    ``state.legal_actions()``). Raises ValueError if the action leaves the
    board or starts from a square without a piece of the side to move.
    """
    direction, idx = divmod(int(our_action), NUM_SQUARES)
    if not (0 <= direction < 4):
        raise ValueError(f"bad action {our_action}")
    pos = position_of(state)
    if pos["black_to_move"]:
        own = pos["black_men"] | pos["black_kings"]
        opp = pos["white_men"] | pos["white_kings"]
    else:
        own = pos["white_men"] | pos["white_kings"]
        opp = pos["black_men"] | pos["black_kings"]
    src = idx + 1
    if src not in own:
        raise ValueError(f"no piece of the side to move on square {src}")
    r, c = rc_of(src)
    dr, dc = OUR_DIR_OFFSETS[direction]
    if not (0 <= r + dr < ROWS and 0 <= c + dc < COLS):
        raise ValueError(f"action {our_action} leaves the board")
    move_type = 1 if square_of(r + dr, c + dc) in opp else 0
    row, col = square_to_os_cell(src)
    return encode_openspiel_action(row, col, _OUR_TO_OS_DIR[direction], move_type)


def moves_without_capture(state) -> int:
    """OpenSpiel's hidden ``moves_without_capture_`` counter, from the history.

    Incremented by every action (ply, including each step of a multi-jump) and
    reset to 0 by every capture, i.e. the number of trailing non-capture
    actions in the history.
    """
    n = 0
    for a in reversed(state.history()):
        if a % 2 == 1:
            break
        n += 1
    return n


def in_multi_jump(state) -> bool:
    """True when the side to move is continuing a multi-jump."""
    hist = state.full_history()
    return bool(hist) and not state.is_terminal() and hist[-1].player == state.current_player()
