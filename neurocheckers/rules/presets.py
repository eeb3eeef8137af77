"""Rule presets: frozen, hashable configurations that are static under ``jax.jit``."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Rules:
    """A checkers variant. Instances are hashable, so they can be static jit arguments."""

    name: str
    """Preset name, used in files and on the command line."""
    board_size: int
    """Squares per side of the board (6 or 8); only the dark squares are played."""
    men_rows: int
    """Rows of men each side starts with."""
    forced_capture: bool
    """Whether a side that can capture must capture."""
    multi_jump: bool
    """Whether a piece that captured must go on capturing with the same piece when it can."""
    stuck_loses: bool
    """Whether a side to move that has pieces but no legal move loses (True) or draws (False).
    A side to move with no pieces at all always loses."""
    max_plies: int
    """The game is drawn once this many plies have been played in total (0: no limit)."""
    max_plies_without_capture: int
    """The game is drawn after this many plies in a row without a reset of the quiet counter (0: no
    limit); a capture resets it, and a man's move too with ``man_moves_reset_quiet_count``."""
    man_moves_reset_quiet_count: bool = False
    """Whether an uncrowned man's move resets the quiet counter as a capture does (the game's own
    40-move rule: with a limit of 80 plies, neither side advanced a man nor captured in 40 moves)."""
    threefold_repetition: bool = False
    """Whether the third occurrence of a position (same pieces, same mover) draws. Only games played
    one at a time see it (``rules.repetition.RepetitionWatch``); the batched JAX step does not."""

    def __post_init__(self) -> None:
        if self.board_size not in (6, 8):
            raise ValueError(f"board_size must be 6 or 8, got {self.board_size!r}")
        if not 1 <= self.men_rows <= self.board_size // 2 - 1:
            raise ValueError(f"men_rows must be in 1..{self.board_size // 2 - 1}, got {self.men_rows!r}")
        if self.max_plies < 0 or self.max_plies_without_capture < 0:
            raise ValueError("draw limits must be >= 0 (0 means no limit)")

    @property
    def base_name(self) -> str:
        """The preset whose moves these are: ``american8`` for ``american8-openspiel`` (a ``BASE-VARIANT``
        name plays BASE's moves under other end rules). Openings and agents are shared by base name."""
        return self.name.split("-", 1)[0]

    def same_moves(self, other: Rules) -> bool:
        """Whether ``other`` has this board and these moves (its end rules may differ), so that an agent
        of one plays under the other."""
        keep = ("board_size", "men_rows", "forced_capture", "multi_jump", "stuck_loses")
        return all(getattr(self, f) == getattr(other, f) for f in keep)

    @property
    def quiet_rule(self) -> str:
        """The quiet-counter draw in words (empty without one)."""
        n = self.max_plies_without_capture
        if not n:
            return ""
        if self.man_moves_reset_quiet_count:
            return f"{n} plies ({n // 2} moves each) without a capture or a man's move"
        return f"{n} plies in a row without a capture"

    @property
    def num_squares(self) -> int:
        """Dark squares on the board (18 on 6x6, 32 on 8x8)."""
        return self.board_size * self.board_size // 2

    @property
    def num_actions(self) -> int:
        """Size of the fixed action space: 4 directions x dark squares."""
        return 4 * self.num_squares

    @property
    def men_per_side(self) -> int:
        """Men each side starts with."""
        return self.men_rows * self.board_size // 2

    @property
    def max_legal_moves(self) -> int:
        """A bound on the legal actions of any position: one per piece and direction."""
        return 4 * self.men_per_side


SIMPLE6 = Rules(
    name="simple6",
    board_size=6,
    men_rows=2,
    forced_capture=False,
    multi_jump=False,
    stuck_loses=False,
    max_plies=60,
    max_plies_without_capture=0,
)
"""The reference study's 6x6 game: optional single captures, a stuck side draws, draw after 60 plies."""

AMERICAN6 = Rules(
    name="american6",
    board_size=6,
    men_rows=2,
    forced_capture=True,
    multi_jump=True,
    stuck_loses=True,
    max_plies=0,
    max_plies_without_capture=50,
)
"""American rules on 6x6 (the 6x6 DQN study's game): forced multi-jumps, a stuck side loses,
draw after 50 plies in a row without a capture."""

AMERICAN8 = Rules(
    name="american8",
    board_size=8,
    men_rows=3,
    forced_capture=True,
    multi_jump=True,
    stuck_loses=True,
    max_plies=0,
    max_plies_without_capture=80,
    man_moves_reset_quiet_count=True,
    threefold_repetition=True,
)
"""English draughts (WCDF/ACF) with its own draw rule: a draw when neither player has advanced a man
or captured during their own last 40 moves (80 plies), and on a threefold repetition of position
(seen only where games are played one at a time; batched JAX games use the 80-ply rule alone)."""

AMERICAN8_OPENSPIEL = dataclasses.replace(
    AMERICAN8,
    name="american8-openspiel",
    max_plies_without_capture=40,
    man_moves_reset_quiet_count=False,
    threefold_repetition=False,
)
"""English draughts under OpenSpiel's end rule: a draw after 40 plies in a row without a capture,
man moves not resetting it, no repetition rule. For matches against OpenSpiel's bots."""

PRESETS: dict[str, Rules] = {r.name: r for r in (SIMPLE6, AMERICAN6, AMERICAN8)}
"""The games: what agents, configs and the web board are made for."""

VARIANTS: dict[str, Rules] = {r.name: r for r in (AMERICAN8_OPENSPIEL,)}
"""Presets that play a game's moves under other end rules (``Rules.base_name`` names the game)."""

NAMED_RULES: dict[str, Rules] = {**PRESETS, **VARIANTS}
"""Every preset by name, the variants included: what ``get_rules`` and saved games' rules accept."""


def get_rules(name: str | Rules) -> Rules:
    """Return the preset called ``name`` (a ``Rules`` passes through unchanged)."""
    if isinstance(name, Rules):
        return name
    try:
        return NAMED_RULES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown rules preset {name!r}; choose one of {', '.join(NAMED_RULES)}") from None


def openspiel_rules(rules: Rules | str) -> Rules:
    """The preset a game against OpenSpiel's bots is played under: ``american8-openspiel``, OpenSpiel's
    own end rule, for any preset with English draughts' moves; ``ValueError`` for other boards."""
    rules = get_rules(rules)
    if not rules.same_moves(AMERICAN8_OPENSPIEL):
        raise ValueError(f"OpenSpiel's checkers is american8 only; got --rules {rules.name}")
    return AMERICAN8_OPENSPIEL
