"""The gauntlet's rows and their rating: one match's result (``Row``), and the Elo of every player
of the rows joined by games, anchored at ``random`` (``rate``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from neurocheckers.stats import elo_standard_errors, fit_elo, linked_groups

ANCHOR = "random"
"""The player whose rating is fixed at 0."""


@dataclasses.dataclass(frozen=True)
class Row:
    """One match of the gauntlet, from the first player's side."""

    kind: str
    """``ladder``, ``equal-depth`` or ``calibration``."""
    player: str
    opponent: str
    games: int
    wins: int
    draws: int
    losses: int
    unfinished: int
    """Games still going on at the ply cap (counted as draws)."""
    score: float
    """Points per game (win 1, draw 1/2)."""
    low: float
    """Lower end of the 95% interval of ``score``."""
    high: float
    """Upper end of the 95% interval of ``score``."""
    player_seconds: float | None = None
    """The player's mean thinking time per move (timed rows only; a multi-jump is one move)."""
    opponent_seconds: float | None = None
    """The opponent's mean thinking time per move (timed rows only)."""
    pair_points: tuple[float, ...] = ()
    """Each opening's mean score over its two games, in order (what the interval is computed from,
    kept so that parts of one row played apart can be pooled; not in ``gauntlet.csv``)."""
    player_db_positions: int | None = None
    """Positions of the endgame database the player moved from (with ``GauntletConfig.endgame``)."""
    player_blunders: int | None = None
    """Of those, the moves that dropped the position's value (win to draw or loss, draw to loss)."""
    opponent_db_positions: int | None = None
    """The same for the opponent."""
    opponent_blunders: int | None = None
    """The opponent's blunders."""
    player_perfect_graded: int | None = None
    """Moves of the player graded against perfect play (with ``GauntletConfig.perfect_play``)."""
    player_perfect_kept: int | None = None
    """Of those, the moves that kept the position's value."""
    player_win_to_draw: int | None = None
    """The player's moves from a won position to a drawn one."""
    player_win_to_loss: int | None = None
    """The player's moves from a won position to a lost one."""
    player_draw_to_loss: int | None = None
    """The player's moves from a drawn position to a lost one."""
    player_perfect_unsolved: int | None = None
    """The player's moves not graded: no value found within the proof search's node limit."""
    opponent_perfect_graded: int | None = None
    """The same for the opponent."""
    opponent_perfect_kept: int | None = None
    opponent_win_to_draw: int | None = None
    opponent_win_to_loss: int | None = None
    opponent_draw_to_loss: int | None = None
    opponent_perfect_unsolved: int | None = None
    player_depth: float | None = None
    """The player's mean search depth a move (host players reporting one; ``SearchReport``)."""
    opponent_depth: float | None = None
    """The opponent's mean search depth a move."""


@dataclasses.dataclass(frozen=True)
class Rating:
    player: str
    elo: float
    """Elo on the gauntlet's scale (its anchor = 0: ``random`` when it played, ``islands``)."""
    low: float
    high: float


def islands(rows: Sequence[Row]) -> tuple[str | None, list[list[str]]]:
    """``(anchor, islands)``: the players of ``rows`` in islands joined by games (``stats.linked_groups``),
    the rated one first (``random``'s, else the largest), and its player rated 0: ``random`` when it
    played, else the first opponent of its rows. The other islands cannot be put on its Elo scale
    (equal-depth rows played alone: each pair is an island)."""
    found = linked_groups([(r.player, r.opponent) for r in rows], ANCHOR)
    if not found:
        return None, []
    return ANCHOR if ANCHOR in found[0] else next(r.opponent for r in rows if r.opponent in found[0]), found


def rate(rows: Sequence[Row]) -> tuple[Rating, ...]:
    """The Elo of every player of the rated island (``islands``) from all its games (one Bradley-Terry
    fit, draws as half a win), its anchor at 0, with 95% intervals; other islands get no rating."""
    anchor, found = islands(rows)
    if anchor is None:
        return ()
    rows = [r for r in rows if r.player in found[0]]
    players = [anchor, *(p for p in found[0] if p != anchor)]
    index = {p: i for i, p in enumerate(players)}
    k = len(players)
    points, games = np.zeros((k, k)), np.zeros((k, k))
    for r in rows:
        i, j = index[r.player], index[r.opponent]
        points[i, j] += r.score * r.games
        points[j, i] += (1.0 - r.score) * r.games
        games[i, j] += r.games
        games[j, i] += r.games
    scores = np.divide(points, games, out=np.full((k, k), 0.5), where=games > 0)
    elo = fit_elo(scores, games)
    se = elo_standard_errors(scores, games, elo)
    return tuple(
        Rating(p, float(elo[i]), float(elo[i] - 1.96 * se[i]), float(elo[i] + 1.96 * se[i]))
        for p, i in index.items()
    )
