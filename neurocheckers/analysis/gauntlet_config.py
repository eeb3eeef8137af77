"""What a gauntlet plays (``GauntletConfig``): one declaration of each setting, read by the gauntlet
(``analysis.gauntlet``) and by the ``gauntlet`` command, whose options take their help and defaults
from these fields. No JAX here, so the command line reads it fast."""

from __future__ import annotations

import dataclasses

from neurocheckers.stats import check_seed

LADDERS = ("material", "american8")
"""The ladders a gauntlet climbs (``GauntletConfig.ladder``)."""
ROW_KINDS = ("ladder", "equal-depth", "calibration")
"""The kinds of a gauntlet's rows (``GauntletConfig.kinds``)."""
MAX_LADDER_DEPTH = 8
"""The deepest alpha-beta of a gauntlet's rows."""


@dataclasses.dataclass(frozen=True)
class GauntletConfig:
    """What a gauntlet plays. Every match has ``2 * openings`` games."""

    openings: int = 100
    """Committed openings used, each played once with each colour."""
    depth: int = 3
    """The deepest material alpha-beta opponent on the ladder (``alphabeta:1 .. alphabeta:depth``)."""
    equal_depths: tuple[int, ...] = (1, 2, 3)
    """Depths of the equal-depth test (only for players with an agent file)."""
    seed: int = 0
    """Random seed (tie-breaks and stochastic players)."""
    batch: int = 512
    """Games played at once."""
    max_plies: int | None = None
    """Cap on a game's length (default: a bound from the rules' own draw limits); games unfinished
    at the cap count as draws and are reported."""
    ladder: str = "material"
    """material (random, greedy-material, alphabeta:1..depth) or american8 (material to depth 6,
    alphabeta:2..6:heuristic, openspiel:mcts:1000, pydraughts:4/6/8, DarkHorse where it is built)."""
    heuristic_depths: tuple[int, ...] = ()
    """Depths of the equal-depth test against the hand-written evaluation (american8 ladder)."""
    equal_time: bool = False
    """Play the player's ladder rows with the timed search (``timed:equal:FILE``) at the opponent's
    time per move, and time both sides."""
    engine_openings: int = 0
    """Openings of the rows against the slow engines (openspiel:mcts:1000, pydraughts:8, DarkHorse;
    0: all of openings)."""
    only: tuple[str, ...] = ()
    """Play only the rows against these opponents (a split of the gauntlet over processes)."""
    kinds: tuple[str, ...] = ()
    """Play only the rows of these kinds (ladder, equal-depth, calibration; empty: all)."""
    first_opening: int = 0
    """The first committed opening played (0-based): parts of one long row played in parallel
    processes take consecutive ranges of openings, and ``merge_gauntlets`` pools them."""
    endgame: str | None = None
    """An endgame database folder (``endgame build``): every move made in a position it holds is
    judged, and each row reports both sides' blunders per 1,000 such positions."""
    perfect_play: str | None = None
    """An american6 endgame database folder for perfect play (the 7-piece one): every move in every
    position is judged by the solution, and each row reports both sides' share of moves that kept
    the value (95% Wilson interval) and the moves that threw it away."""

    def __post_init__(self) -> None:
        """``ValueError`` naming the first field out of range (its message begins with the name)."""
        for name in ("openings", "batch", *(("max_plies",) if self.max_plies is not None else ())):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        check_seed(self.seed)
        for name in ("first_opening", "engine_openings"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 1 <= self.depth <= MAX_LADDER_DEPTH:
            raise ValueError(f"depth must be in 1..{MAX_LADDER_DEPTH}, got {self.depth}")
        for name in ("equal_depths", "heuristic_depths"):
            if any(not 1 <= d <= MAX_LADDER_DEPTH for d in getattr(self, name)):
                raise ValueError(f"{name} must be in 1..{MAX_LADDER_DEPTH}, got {getattr(self, name)}")
        if self.ladder not in LADDERS:
            raise ValueError(f"ladder must be one of {', '.join(LADDERS)}, got {self.ladder!r}")
        unknown = sorted(set(self.kinds) - set(ROW_KINDS))
        if unknown:
            raise ValueError(f"kinds must be among {', '.join(ROW_KINDS)}, got {unknown[0]!r}")
