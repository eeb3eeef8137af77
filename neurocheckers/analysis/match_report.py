"""Summaries of a match: win/draw/loss counts, score with a 95% interval, material histogram."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from neurocheckers.rules.outcome import KING_VALUE


def summarize(
    score: np.ndarray,
    length: np.ndarray,
    material_diff: np.ndarray,
    finished: np.ndarray,
    repetition: np.ndarray | None = None,
) -> dict[str, Any]:
    """Counts and the mean score of A with a normal-approximation 95% confidence interval, clipped to
    [0, 1] (a score cannot leave it; NaN for fewer than two games).

    Wins, draws and losses count the games that ended by the rules; games cut by the ply cap are
    counted apart as ``unfinished`` (they score half a point in ``score``). ``decisive`` counts the
    won and lost games, and ``draws_a_ahead`` / ``draws_b_ahead`` the draws that ended with a side a
    king's worth of material (``KING_VALUE``) or more ahead: a draw rule that ends games early
    hides those behind the score. With ``repetition`` ([N] bool, ``GameRecords.repetition``), the
    draws are also split into ``draws_repetition`` (a threefold repetition) and ``draws_rule`` (the
    other end rules: the quiet counter, a side without a move where that draws).
    """
    score = np.asarray(score, dtype=np.float64)
    finished = np.asarray(finished, dtype=bool)
    material_diff = np.asarray(material_diff, dtype=np.float64) + 0.0  # -0.0 -> 0.0
    drawn = finished & (score == 0.5)
    n = len(score)
    mean = float(score.mean()) if n else float("nan")
    half = 1.96 * float(score.std(ddof=1)) / math.sqrt(n) if n > 1 else float("nan")
    split = {}
    if repetition is not None:
        repeated = int((drawn & np.asarray(repetition, dtype=bool)).sum())
        split = {"draws_repetition": repeated, "draws_rule": int(drawn.sum()) - repeated}
    return {
        "games": n,
        "wins": int((finished & (score == 1.0)).sum()),
        "draws": int((finished & (score == 0.5)).sum()),
        "losses": int((finished & (score == 0.0)).sum()),
        "unfinished": int((~finished).sum()),
        "decisive": int((finished & (score != 0.5)).sum()),
        "draws_a_ahead": int((drawn & (material_diff >= KING_VALUE)).sum()),
        "draws_b_ahead": int((drawn & (material_diff <= -KING_VALUE)).sum()),
        **split,
        "score": mean,
        "score_ci95": [float(np.clip(mean - half, 0.0, 1.0)), float(np.clip(mean + half, 0.0, 1.0))],
        "mean_length": float(np.mean(length)) if n else float("nan"),
        "material_diff_histogram": {
            str(k): int(v)
            for k, v in zip(*np.unique(np.asarray(material_diff), return_counts=True), strict=True)
        },
    }


def pool_summaries(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One summary from ``summarize``'s summaries of parts of one match (the same players and rules,
    over different openings: ``match --first-opening``), exactly as if played at once: every game
    scores 1, 1/2 or 0, so the counts give the mean and the interval. Each side's seconds and depth a
    move are weighted by the parts' plies; the endgame verdicts' counts are summed. ``ValueError``
    naming the part that differs, or two parts over overlapping openings."""
    first = parts[0]
    for key in ("player_a", "player_b", "rules"):
        for part in parts[1:]:
            if part.get(key) != first.get(key):
                raise ValueError(f"parts differ in {key}: {first.get(key)!r} and {part.get(key)!r}")
    ranges = sorted(
        (p["first_opening"], p["first_opening"] + p["openings"]) for p in parts if "openings" in p
    )
    for (_, end), (start, _) in zip(ranges, ranges[1:], strict=False):
        if start < end:
            raise ValueError(f"parts overlap: openings from {start} are in two parts")
    counts = {k: sum(p[k] for p in parts) for k in ("wins", "draws", "losses", "unfinished")}
    score = np.repeat([1.0, 0.5, 0.0, 0.5], [counts[k] for k in ("wins", "draws", "losses", "unfinished")])
    histogram: dict[float, int] = {}
    for part in parts:
        for value, count in part["material_diff_histogram"].items():
            histogram[float(value)] = histogram.get(float(value), 0) + count
    pooled = summarize(score, [0], np.zeros(len(score)), np.ones(len(score), dtype=bool))  # counts below
    plies = np.array([p["games"] * p["mean_length"] for p in parts])
    pooled.update(counts, mean_length=float(plies.sum() / len(score)))
    for key in ("decisive", "draws_a_ahead", "draws_b_ahead", "draws_repetition", "draws_rule"):
        if all(key in p for p in parts):
            pooled[key] = sum(p[key] for p in parts)
    pooled["material_diff_histogram"] = {str(k): histogram[k] for k in sorted(histogram)}
    pooled.update({k: first[k] for k in ("player_a", "player_b", "rules", "seed") if k in first})
    if len(ranges) == len(parts):
        pooled.update(openings=sum(end - start for start, end in ranges), parts=[list(r) for r in ranges])
    for key in ("seconds_per_move_a", "seconds_per_move_b", "depth_per_move_a", "depth_per_move_b"):
        known = [(p[key], w) for p, w in zip(parts, plies, strict=True) if p.get(key) is not None]
        if known:
            pooled[key] = float(sum(v * w for v, w in known) / sum(w for _, w in known))
    if all("endgame" in p for p in parts):
        pooled["endgame"] = _pooled_verdicts([p["endgame"] for p in parts])
    return pooled


def _pooled_verdicts(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    counts = ("covered", "drawn", "drawn_a_wins", "drawn_b_wins", "drawn_draws", "disagree")
    pooled = {k: sum(v[k] for v in verdicts) for k in counts}
    return {
        "endgame_db": verdicts[0]["endgame_db"],
        **pooled,
        "values": [x for v in verdicts for x in v["values"]],
    }


def endgame_verdicts(db: Any, final_boards: np.ndarray, score: np.ndarray, finished: np.ndarray,
                     a_is_black: np.ndarray) -> dict[str, Any]:  # fmt: skip
    """What the endgame database ``db`` (an ``endgame.EndgameDB`` of the match's rules) says of each
    finished game's last position ([N, 5] ``GameRecords.final_boards``), from A's side.

    ``covered`` counts the games it holds; ``drawn`` the draws by rule among them, split by the
    database's value into ``drawn_a_wins`` (drawn by rule, won for A with perfect play),
    ``drawn_b_wins`` and ``drawn_draws``; ``disagree`` the won or lost games it calls otherwise (a
    check: a game lost with no move left is a loss in the database too). ``values`` holds each game's
    value (1 A wins, 0 draw, -1 B wins, ``None`` where the database does not hold it)."""
    from neurocheckers.endgame.database import DRAW, OUTSIDE, WIN
    from neurocheckers.endgame.index import to_mover_view

    boards = np.asarray(final_boards, dtype=np.uint32)
    black_to_move = boards[:, 4] == 0
    values, _ = db.lookup(to_mover_view(boards[:, :4], black_to_move, db.rules.num_squares))
    mover_is_a = black_to_move == np.asarray(a_is_black, dtype=bool)
    for_mover = np.where(values == WIN, 1, np.where(values == DRAW, 0, -1))
    for_a = np.where(mover_is_a, for_mover, -for_mover)
    covered = (values != OUTSIDE) & np.asarray(finished, dtype=bool)
    drawn = covered & (np.asarray(score) == 0.5)
    decisive = covered & (np.asarray(score) != 0.5)
    rules_for_a = np.sign(np.asarray(score) * 2 - 1)
    return {
        "endgame_db": str(db.folder),
        "covered": int(covered.sum()),
        "drawn": int(drawn.sum()),
        "drawn_a_wins": int((drawn & (for_a == 1)).sum()),
        "drawn_b_wins": int((drawn & (for_a == -1)).sum()),
        "drawn_draws": int((drawn & (for_a == 0)).sum()),
        "disagree": int((decisive & (for_a != rules_for_a)).sum()),
        "values": [int(v) if c else None for v, c in zip(for_a, covered, strict=True)],
    }


def format_verdicts(verdicts: dict[str, Any]) -> str:
    """One line: ``endgame database runs/endgame/american8 holds the last position of 12 games; draws
    by rule among them: 9 (the database says: won for A 3, won for B 1, drawn 5)``."""
    v = verdicts
    return (
        f"  endgame database {v['endgame_db']} holds the last position of {v['covered']} games; draws by"
        f" rule among them: {v['drawn']} (the database says: won for A {v['drawn_a_wins']}, won for B"
        f" {v['drawn_b_wins']}, drawn {v['drawn_draws']})"
        + (f"; {v['disagree']} decisive games it calls otherwise" if v["disagree"] else "")
    )


def format_table(name_a: str, name_b: str, rules: str, summary: dict[str, Any]) -> str:
    s = summary
    lo, hi = s["score_ci95"]
    lines = [
        f"{name_a} vs {name_b} on {rules}: {s['games']} games (A moves first in every other game)",
        f"  A wins   {s['wins']:>8}  ({s['wins'] / s['games']:.1%})",
        f"  draws    {s['draws']:>8}  ({s['draws'] / s['games']:.1%})",
        f"  A losses {s['losses']:>8}  ({s['losses'] / s['games']:.1%})",
        f"  unfinished {s['unfinished']:>6}  ({s['unfinished'] / s['games']:.1%}, cut by the ply cap)",
        f"  decisive {s['decisive']:>8}  (draws with A a king or more ahead: {s['draws_a_ahead']},"
        f" with B: {s['draws_b_ahead']})",
        *(
            [f"  draws by repetition {s['draws_repetition']}, by the other end rules {s['draws_rule']}"]
            if "draws_repetition" in s
            else []
        ),
        f"  A score  {s['score']:.4f}  (95% CI {lo:.4f} .. {hi:.4f}; an unfinished game counts 1/2)",
        f"  mean game length {s['mean_length']:.1f} plies",
        "  final material difference (A - B): count",
    ]
    for key, count in sorted(s["material_diff_histogram"].items(), key=lambda kv: float(kv[0])):
        lines.append(f"    {float(key):+6.1f}: {count}")
    return "\n".join(lines)


def plot_material_histogram(material_diff: np.ndarray, title: str, out: str | Path) -> Path:
    """The DQN study's plot: how many games ended with each final material difference (A - B)."""
    from matplotlib.figure import Figure  # not pyplot: no backend to choose, no display needed

    values, counts = np.unique(np.asarray(material_diff), return_counts=True)
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    ax.bar(values, counts, width=0.4)
    ax.set_xlabel("final material difference (A - B; men 1, kings 1.5)")
    ax.set_ylabel("games")
    ax.set_title(textwrap.fill(title, 70), fontsize=10)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    return Path(out)
