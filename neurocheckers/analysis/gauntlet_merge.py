"""Gauntlets played in parts (``GauntletConfig.only``, ``first_opening``) put back together: the
parts of one match pooled into one row, and the whole rated again (``scripts/merge_gauntlets.py``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from neurocheckers.analysis.gauntlet import GauntletResult, Row, rate
from neurocheckers.analysis.perfect_play import ROW_FIELDS
from neurocheckers.stats import paired_interval

COUNT_FIELDS = tuple(
    f"{side}_{name}"
    for side in ("player", "opponent")
    for name in ("db_positions", "blunders", *ROW_FIELDS.values())
)
"""The move counts of a row (endgame accuracy, perfect play), summed over its parts where every part
has them."""


def pooled_row(parts: Sequence[Row]) -> Row:
    """One row from parts of the same match played over different openings (``first_opening``):
    counts summed, the score and its paired interval over all their openings, each side's seconds
    per move averaged with the parts' games as weights, the move counts (``COUNT_FIELDS``) summed.
    ``ValueError`` if a part has no pair points (a gauntlet written before they were kept)."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    if any(not p.pair_points for p in parts):
        raise ValueError(
            f"cannot pool the parts of {first.player} vs {first.opponent}: a part has no pair points"
        )
    pairs = np.concatenate([p.pair_points for p in parts])
    mean, low, high = paired_interval(np.repeat(pairs, 2))
    games = sum(p.games for p in parts)

    def seconds(field: str) -> float | None:
        values = [getattr(p, field) for p in parts]
        if any(v is None for v in values):
            return None
        return sum(v * p.games for v, p in zip(values, parts, strict=True)) / games

    def count(field: str) -> int | None:
        values = [getattr(p, field) for p in parts]
        return None if any(v is None for v in values) else sum(values)

    return dataclasses.replace(
        first, **{field: count(field) for field in COUNT_FIELDS}, games=games,
        wins=sum(p.wins for p in parts), draws=sum(p.draws for p in parts),
        losses=sum(p.losses for p in parts), unfinished=sum(p.unfinished for p in parts),
        score=mean, low=low, high=high, player_seconds=seconds("player_seconds"),
        opponent_seconds=seconds("opponent_seconds"), player_depth=seconds("player_depth"),
        opponent_depth=seconds("opponent_depth"), pair_points=tuple(float(p) for p in pairs),
    )  # fmt: skip


def merge_gauntlets(results: Sequence[GauntletResult]) -> GauntletResult:
    """One gauntlet from parts played apart (``GauntletConfig.only``, ``first_opening``), rated again
    over all their rows; parts of the same match are pooled (``pooled_row``), in the order of the
    parts. The first part's config and player name the whole."""
    if not results or len({(r.rules, r.player) for r in results}) != 1:
        raise ValueError("the parts must be gauntlets of the same player under the same rules")
    grouped: dict[tuple[str, str, str], list[tuple[int, Row]]] = {}
    for result in results:
        for row in result.rows:
            key = (row.kind, row.player, row.opponent)
            grouped.setdefault(key, []).append((result.config.first_opening, row))
    for (_, player, opponent), parts in grouped.items():
        ranges = sorted((start, start + row.games // 2) for start, row in parts)
        if any(end > next_start for (_, end), (next_start, _) in zip(ranges, ranges[1:], strict=False)):
            raise ValueError(f"parts of {player} vs {opponent} overlap in their openings: {ranges}")
    rows = tuple(pooled_row([row for _, row in parts]) for parts in grouped.values())
    config = dataclasses.replace(results[0].config, only=(), kinds=(), first_opening=0)
    return GauntletResult(results[0].rules, results[0].player, config, rows, rate(rows))
