"""The compiled search's view of a game: its rules and geometry packed in one int64 array, positions
as bitboards relative to nothing but the board (bit ``i`` = square ``i + 1``, as in ``State``), and
the mapping from a whole-turn move back to our JAX action sequence.

The geometry comes from ``rules.tables`` (the JAX engine's own move tables), so the two rule
implementations share one source of squares, neighbours and jump landings.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from neurocheckers.rules.presets import Rules, get_rules
from neurocheckers.rules.tables import tables

# Layout of the geometry array (``geometry``): rules first, then tables, then Zobrist keys.
G_N = 0
"""Dark squares N."""
G_FULL = 1
"""Bitboard of every square."""
G_CROWN = 2
"""Crowning row of Black (index 2) and of White (index 3)."""
G_FORCED = 4
"""1 when a side that can capture must capture."""
G_MULTI = 5
"""1 when a capturing piece must go on capturing."""
G_STUCK_LOSES = 6
"""1 when a side without a legal move loses (else it draws, unless it has no pieces)."""
G_MAX_PLIES = 7
"""Draw once this many actions have been played in the game (0: no limit)."""
G_QUIET_LIMIT = 8
"""Draw after this many plies in a row without a reset of the quiet counter (0: no limit)."""
G_MAN_RESETS = 9
"""1 when a man's move resets the quiet counter as a capture does (the game's own 40-move rule)."""
G_REPETITION = 10
"""1 when a position repeated (same pieces, same side to move) is a draw."""
G_SHIFT = 16
"""Per direction d: mask, shift, mask, shift of the two shift groups (``Tables.step_groups``)."""
G_NEIGHBOR = 32
"""[4, 32] the adjacent square per direction and square (-1 off the board)."""
G_LANDING = G_NEIGHBOR + 128
"""[4, 32] the jump landing square per direction and square (-1 off the board)."""
G_ZOBRIST = G_LANDING + 128
"""[4, 32] Zobrist keys of Black men, Black kings, White men, White kings per square."""
G_ZOBRIST_SIDE = G_ZOBRIST + 128
"""Zobrist key xored in when White is to move."""
G_SIZE = G_ZOBRIST_SIDE + 1

ZOBRIST_SEED = 20261126


@dataclasses.dataclass(frozen=True)
class SearchRules:
    """The rules a compiled search plays by: a preset plus the end rules it may add."""

    rules: Rules
    """The preset: board, captures, and its draw limits (``max_plies``, ``max_plies_without_capture``)."""
    quiet_limit: int | None = None
    """Plies in a row without a capture (or a man's move, with ``man_moves_reset``) that draw; None:
    the preset's ``max_plies_without_capture``."""
    man_moves_reset: bool | None = None
    """Whether a man's move resets the quiet counter (the game's own rule: 80 plies, 40 moves each);
    None: the preset's ``man_moves_reset_quiet_count``."""
    repetition: bool = False
    """Whether a repeated position is a draw (inside the search: at its first repetition). Off unless
    asked, as in the JAX engine; ``game_rule`` turns it on."""

    def __post_init__(self) -> None:
        if self.man_moves_reset is None:
            object.__setattr__(self, "man_moves_reset", self.rules.man_moves_reset_quiet_count)
        if self.quiet_limit is not None and self.quiet_limit < 0:
            raise ValueError(f"quiet_limit must be >= 0 (0: no limit), got {self.quiet_limit!r}")


GAME_RULE_QUIET_PLIES = 80
"""The game's own draw rule: 40 moves each without a man's move or a capture."""


def game_rule(rules: Rules | str) -> SearchRules:
    """The game's own end rules on ``rules``' board: the 40-move rule and repetition."""
    return SearchRules(get_rules(rules), GAME_RULE_QUIET_PLIES, True, True)


@functools.cache
def geometry(search_rules: SearchRules | Rules) -> np.ndarray:
    """The int64 array of rules, tables and Zobrist keys that every compiled function reads."""
    sr = search_rules if isinstance(search_rules, SearchRules) else SearchRules(search_rules)
    rules = sr.rules
    t = tables(rules.board_size)
    n = t.num_squares
    g = np.zeros(G_SIZE, np.int64)
    g[G_N], g[G_FULL] = n, t.all_squares
    g[G_CROWN], g[G_CROWN + 1] = t.last_row, t.first_row
    g[G_FORCED], g[G_MULTI], g[G_STUCK_LOSES] = rules.forced_capture, rules.multi_jump, rules.stuck_loses
    g[G_MAX_PLIES] = rules.max_plies
    g[G_QUIET_LIMIT] = rules.max_plies_without_capture if sr.quiet_limit is None else sr.quiet_limit
    g[G_MAN_RESETS], g[G_REPETITION] = sr.man_moves_reset, sr.repetition
    for d, groups in enumerate(t.step_groups):
        if len(groups) != 2:
            raise ValueError(f"expected 2 shift groups per direction, got {len(groups)}")
        for k, (mask, shift) in enumerate(groups):
            g[G_SHIFT + 4 * d + 2 * k], g[G_SHIFT + 4 * d + 2 * k + 1] = mask, shift
    neighbor = np.full((4, 32), -1, np.int64)
    landing = np.full((4, 32), -1, np.int64)
    neighbor[:, :n], landing[:, :n] = t.neighbor, t.jump_landing
    g[G_NEIGHBOR : G_NEIGHBOR + 128] = neighbor.reshape(-1)
    g[G_LANDING : G_LANDING + 128] = landing.reshape(-1)
    rng = np.random.default_rng(ZOBRIST_SEED)
    g[G_ZOBRIST : G_ZOBRIST_SIDE + 1] = rng.integers(-(2**63), 2**63 - 1, size=129, dtype=np.int64)
    return g


@dataclasses.dataclass(frozen=True)
class Position:
    """A position at the start of a turn: bitboards (bit ``i`` = square ``i + 1``) and the mover."""

    black_men: int
    """Bitboard of Black's men."""
    black_kings: int
    """Bitboard of Black's kings."""
    white_men: int
    """Bitboard of White's men."""
    white_kings: int
    """Bitboard of White's kings."""
    color: int
    """0: Black to move, 1: White."""

    @classmethod
    def from_state(cls, state) -> Position:
        """The position of one game's ``State`` (host or device, unbatched) at the start of a turn."""
        if int(np.asarray(state.continuing)) != 0:
            raise ValueError("the compiled search starts at a whole turn, not in the middle of a multi-jump")
        return cls(*(int(np.asarray(x)) for x in (state.black_men, state.black_kings, state.white_men,
                                                   state.white_kings, state.color)))  # fmt: skip

    @classmethod
    def start(cls, rules: Rules) -> Position:
        """The start of a game of ``rules``: Black's men on the first squares, White's on the last,
        Black to move."""
        n, men = rules.num_squares, rules.men_per_side
        return cls((1 << men) - 1, 0, ((1 << men) - 1) << (n - men), 0, 0)

    def relative(self) -> tuple[int, int, int, int]:
        """(own men, own kings, opponent's men, opponent's kings) of the side to move, as np.int64."""
        black = (self.black_men, self.black_kings)
        white = (self.white_men, self.white_kings)
        own, opp = (black, white) if self.color == 0 else (white, black)
        return tuple(np.int64(x) for x in (*own, *opp))


def move_actions(rules: Rules, source: int, captured: int, path: int) -> tuple[int, ...]:
    """Our JAX action sequence (``direction * N + square``, one per step or jump) of a whole-turn move
    from square ``source`` that captures the pieces ``captured`` along the directions of ``path`` (2
    bits each, the first lowest)."""
    t = tables(rules.board_size)
    n = t.num_squares
    jumps = bin(captured).count("1")
    square, actions = source, []
    for k in range(max(jumps, 1)):
        d = (path >> (2 * k)) & 3
        actions.append(d * n + square)
        square = int(t.jump_landing[d, square] if jumps else t.neighbor[d, square])
    return tuple(actions)
