"""How the games of a match are played (``MatchOptions``): one declaration of each option, read by
the arena, the host loop, the gauntlet, and the ``match`` command's ``--help`` (its options take
their help and defaults from these fields). No JAX here, so the command line reads it fast."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from neurocheckers.stats import check_seed

if TYPE_CHECKING:
    from neurocheckers.rules.presets import Rules
    from neurocheckers.rules.state import State


@dataclasses.dataclass(frozen=True, eq=False)
class MatchOptions:
    """How the games of a match are played: ``arena.run_match``, ``match.host.play_any_match``, the
    gauntlet and the ``match`` command take one (each field is checked here, once)."""

    games: int = 1000
    """Games to play; A moves first in every other game (Black in the even ones)."""
    seed: int = 0
    """Random seed of the match: the same seed plays the same games whatever the batch is."""
    batch: int = 2048
    """Games played at once (one compile)."""
    max_plies: int | None = None
    """Cap on a game's length; games cut by it are unfinished and score half a point (default: a bound
    from the rules' own draw limits, so every game ends by the rules)."""
    opening_plies: int = 0
    """Uniformly random plies at the start of each game."""
    keep_actions: int = 0
    """The first games whose actions ([K, max_plies]) the records keep."""
    openings: State | None = None
    """[M] opening states: games 2i and 2i+1 start from opening i mod M with the colours swapped;
    None: the initial position."""

    def __post_init__(self) -> None:
        for name in ("games", "batch", "max_plies"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")
        if self.games >= 2**31:  # game numbers are int32
            raise ValueError(f"games must be below 2**31, got {self.games}")
        for name in ("opening_plies", "keep_actions"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        check_seed(self.seed)

    def plies_cap(self, rules: Rules) -> int:
        """``max_plies``, or the rules' own bound when it is None."""
        from neurocheckers.rules.playout import default_max_plies

        return default_max_plies(rules) if self.max_plies is None else self.max_plies
