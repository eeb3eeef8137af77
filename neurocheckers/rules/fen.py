"""Positions as text and their checks, in plain Python: importing this module does not import JAX.

A PDN FEN names the side to move, then each side's pieces: ``B:W21,22,K30:B1,2,K9`` (``K`` marks a
king, ``1-4`` a range of squares, ``[FEN "..."]`` and a final ``.`` are accepted). Squares are
numbered 1..N in American notation, bit ``s - 1`` of a bitboard being square ``s``.

:func:`read_fen` is the one FEN reader: ``notation.parse_fen`` builds a ``State`` from it and the
JAX-free ``numpy_agent`` encodes it. :func:`check_position` is the one position check, shared by
``read_fen`` and ``engine.from_position``.
"""

from __future__ import annotations

import dataclasses
import re

_ITEM = re.compile(r"(K?)(\d+)(?:-(K?)(\d+))?")


@dataclasses.dataclass(frozen=True)
class FenPosition:
    """A checked position read from a FEN: the side to move and four bitboards (Python ints)."""

    black_to_move: bool
    black_men: int
    black_kings: int
    white_men: int
    white_kings: int


def max_pieces_on(board_size: int) -> int:
    """The most pieces a side can start with on a ``board_size`` board under any ``Rules``
    (``men_rows`` is at most ``board_size // 2 - 1``): 12 on 8x8, 6 on 6x6."""
    return (board_size // 2 - 1) * (board_size // 2)


def _squares(bits: int) -> list[int]:
    return [i + 1 for i in range(bits.bit_length()) if bits >> i & 1]


def check_position(
    board_size: int, max_pieces: int, black_men: int, black_kings: int, white_men: int, white_kings: int
) -> None:
    """Raise ``ValueError`` (one line naming the bad value) unless the bitboards form a position
    that can occur: every square on the board and held once, no man on its crowning row (Black
    crowns on the last row, White on the first), at most ``max_pieces`` pieces a side."""
    n = board_size * board_size // 2
    half = board_size // 2
    boards = {
        "a Black man": black_men,
        "a Black king": black_kings,
        "a White man": white_men,
        "a White king": white_kings,
    }
    owner: dict[int, str] = {}
    for kind, bits in boards.items():
        if bits < 0:
            raise ValueError(f"the bitboard of {kind[2:]}s is negative: {bits}")
        for square in _squares(bits):
            if square > n:
                raise ValueError(f"square {square} is off a {board_size}x{board_size} board (1..{n})")
            if square in owner:
                raise ValueError(f"square {square} is given twice: {owner[square]} and {kind}")
            owner[square] = kind
    for square in _squares(black_men):
        if square > n - half:
            raise ValueError(f"a Black man on {square}, its crowning row")
    for square in _squares(white_men):
        if square <= half:
            raise ValueError(f"a White man on {square}, its crowning row")
    for side, men, kings in (("Black", black_men, black_kings), ("White", white_men, white_kings)):
        count = len(_squares(men | kings))
        if count > max_pieces:
            raise ValueError(f"{side} has {count} pieces, more than the {max_pieces} a side starts with")


def _read_items(listing: str, board_size: int) -> tuple[set[int], set[int]]:
    """The (men, kings) squares of one side's comma-separated list, e.g. ``21,22,K30`` or ``1-12``."""
    n = board_size * board_size // 2
    men: set[int] = set()
    kings: set[int] = set()
    if not listing.strip():
        return men, kings  # a side without pieces
    for raw in listing.split(","):
        item = raw.strip()
        if not item:
            raise ValueError(f"an empty item in the piece list {listing!r}")
        m = _ITEM.fullmatch(item)
        if not m:
            raise ValueError(f"bad square {item!r}")
        king = bool(m.group(1))
        if m.group(3) and not king:
            raise ValueError(f"range {item!r} mixes men and kings")
        first = int(m.group(2))
        last = int(m.group(4)) if m.group(4) else first
        if last < first:
            raise ValueError(f"range {item!r} runs backwards")
        for square in range(first, last + 1):
            if not 1 <= square <= n:
                raise ValueError(f"square {square} is off a {board_size}x{board_size} board (1..{n})")
            if square in men or square in kings:
                raise ValueError(f"square {square} is given twice")
            (kings if king else men).add(square)
    return men, kings


def _bitboard(squares: set[int]) -> int:
    return sum(1 << (s - 1) for s in squares)


def _parse(fen: str, board_size: int, max_pieces: int) -> FenPosition:
    text = fen.strip()
    if text.startswith('[FEN "') and text.endswith('"]'):
        text = text[6:-2]
    text = text.strip().removesuffix(".")
    parts = [p.strip() for p in text.split(":")]
    if parts[0].upper() not in ("B", "W"):
        raise ValueError("it must start with the side to move, B or W")
    pieces = {"B": (set(), set()), "W": (set(), set())}
    seen: set[str] = set()
    for part in parts[1:]:
        if not part:
            raise ValueError("an empty piece list (two colons in a row, or a colon at the end)")
        side = part[0].upper()
        if side not in pieces or side in seen:
            raise ValueError(f"bad or repeated piece list {part!r}")
        seen.add(side)
        pieces[side] = _read_items(part[1:], board_size)
    (bm, bk), (wm, wk) = pieces["B"], pieces["W"]
    boards = [_bitboard(squares) for squares in (bm, bk, wm, wk)]
    check_position(board_size, max_pieces, *boards)
    return FenPosition(parts[0].upper() == "B", *boards)


def read_fen(fen: str, board_size: int, max_pieces: int | None = None) -> FenPosition:
    """The position of a PDN FEN on a ``board_size`` board, checked with :func:`check_position`
    (``max_pieces`` defaults to :func:`max_pieces_on`). Raises ``ValueError``
    ``malformed FEN '...': <what is wrong>``: a missing side to move, an empty or repeated piece
    list, an empty item (``B:W13,,14:B1``), a bad square or range, or an impossible position."""
    limit = max_pieces_on(board_size) if max_pieces is None else max_pieces
    try:
        return _parse(fen, board_size, limit)
    except ValueError as error:
        raise ValueError(f"malformed FEN {fen!r}: {error}") from None
