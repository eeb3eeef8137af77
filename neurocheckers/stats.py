"""Statistics of match results, in plain NumPy: paired-opening score intervals and Elo fits, the
sequential test that stops a match once it is decided (fishtest's SPRT over game pairs), and the one
range of random seeds.

Shared by the gauntlet, the round-robin of a run's bosses and the strength probes of a run.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

ELO_PER_LOG_STRENGTH = 400.0 / math.log(10.0)
"""Elo = 400 log10(strength) = this x ln(strength)."""
SEED_LIMIT = 2**32
"""Random seeds are the integers 0 .. ``SEED_LIMIT - 1``: on the command line, in config files and on
the web alike (``check_seed``)."""


def check_seed(value: object, name: str = "seed") -> int:
    """``value`` when it is a seed (an integer in 0 .. ``SEED_LIMIT - 1``), else ``ValueError`` naming
    ``name`` and the value."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 0 <= value < SEED_LIMIT:
        raise ValueError(f"{name} must be an integer in 0..{SEED_LIMIT - 1}, got {value!r}")
    return int(value)


def paired_interval(scores: np.ndarray) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean score of games in pairs (games ``2i`` and ``2i + 1`` share an
    opening, with the colours swapped) and its 95% normal interval over the pair means, clipped to
    [0, 1].

    Each pair is one observation, since the two games of an opening are correlated. The variance also
    counts one extra pair scoring 0 and one scoring 1, so a match of all wins or all draws still gets
    an honest, nonzero width instead of a point.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0 or scores.size % 2:
        raise ValueError(f"paired scores need an even, nonzero number of games, got {scores.size}")
    pairs = scores.reshape(-1, 2).mean(axis=1)
    mean = float(pairs.mean())
    padded = np.concatenate([pairs, [0.0, 1.0]])
    half = 1.96 * math.sqrt(float(padded.var(ddof=1)) / len(pairs))
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def wilson_interval(successes: int, n: int) -> tuple[float, float, float]:
    """``(p, low, high)``: the proportion ``successes / n`` and its 95% Wilson score interval, clipped
    to [0, 1]; ``ValueError`` for no trials."""
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"a proportion needs 0 <= successes <= n and n >= 1, got {successes} of {n}")
    p, z = successes / n, 1.96
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, max(0.0, centre - half), min(1.0, centre + half)


def linked_groups(pairs: Sequence[tuple[str, str]], first: str | None = None) -> list[list[str]]:
    """The players of ``pairs`` (who played whom) in islands: groups joined by played games, each
    player in order of first appearance. ``first``'s island comes first, then the largest first (the
    earliest of equals): an Elo fit can put only one island on one scale."""
    order = list(dict.fromkeys(p for pair in pairs for p in pair))
    found: list[set[str]] = []
    for start in order:
        if any(start in island for island in found):
            continue
        island, grown = {start}, True
        while grown:
            grown = False
            for a, b in pairs:
                if (a in island) != (b in island):
                    island |= {a, b}
                    grown = True
        found.append(island)
    found.sort(key=lambda island: (first not in island, -len(island)))  # stable: equals keep order
    return [[p for p in order if p in island] for island in found]


def _pair_counts(scores: np.ndarray, games: int | np.ndarray, prior: float) -> tuple[np.ndarray, np.ndarray]:
    """([K, K] points won, [K, K] games) per pair, with ``prior`` virtual drawn games added to each
    pair that met (games > 0) and zeros on the diagonal. ``ValueError`` unless every player is linked
    to the first one through pairs that met."""
    k = scores.shape[0]
    n = np.broadcast_to(np.asarray(games, dtype=np.float64), (k, k)).copy()
    np.fill_diagonal(n, 0.0)
    met = n > 0
    reached = np.zeros(k, dtype=bool)
    reached[0] = True
    for _ in range(k):
        reached = reached | np.any(met[:, reached], axis=1)
    if not reached.all():
        raise ValueError("every player must be linked to the first one by played games")
    wins = np.where(met, scores * n + prior / 2, 0.0)
    return wins, np.where(met, n + prior, 0.0)


def fit_elo(
    scores: np.ndarray, games: int | np.ndarray, prior: float = 1.0, iterations: int = 10_000
) -> np.ndarray:
    """[K] Elo ratings fitted to a round-robin, the first player anchored at 0.

    ``scores`` [K, K] is the row's points fraction against the column (draws count half), ``games``
    the games per pair (a number or a [K, K] array). The fit is the Bradley-Terry maximum likelihood
    by Hunter's MM iterations, with ``prior`` virtual drawn games added to every pair that met so
    that a player who won or lost everything keeps a finite rating (pairs with no games, as in a
    gauntlet, get none). Elo = 400 log10(strength).
    """
    scores = np.asarray(scores, dtype=np.float64)
    k = scores.shape[0]
    if scores.shape != (k, k):
        raise ValueError(f"scores must be a square [K, K] matrix, got shape {scores.shape}")
    wins, n = _pair_counts(scores, games, prior)
    total = wins.sum(axis=1)
    if k == 1:
        return np.zeros(1)
    if np.any(total <= 0):
        raise ValueError("every player needs some points (use prior > 0)")
    strength = np.ones(k)
    for _ in range(iterations):
        denominator = (n / (strength[:, None] + strength[None, :])).sum(axis=1)
        new = total / denominator
        new /= np.exp(np.mean(np.log(new)))  # the scale is free; fix the geometric mean at 1
        if np.max(np.abs(np.log(new) - np.log(strength))) < 1e-12:
            strength = new
            break
        strength = new
    elo = 400.0 * np.log10(strength)
    return elo - elo[0]


def elo_standard_errors(
    scores: np.ndarray, games: int | np.ndarray, elo: np.ndarray, prior: float = 1.0
) -> np.ndarray:
    """[K] standard errors of ``elo`` (from :func:`fit_elo` with the same ``games`` and ``prior``),
    relative to the first player (so its own is 0): the inverse Fisher information of the
    Bradley-Terry likelihood at the fit."""
    k = len(elo)
    if k == 1:
        return np.zeros(1)
    _, n = _pair_counts(np.asarray(scores, dtype=np.float64), games, prior)
    log_strength = np.asarray(elo, dtype=np.float64) / ELO_PER_LOG_STRENGTH
    p = 1.0 / (1.0 + np.exp(log_strength[None, :] - log_strength[:, None]))  # row beats column
    information = -n * p * p.T
    np.fill_diagonal(information, 0.0)
    np.fill_diagonal(information, -information.sum(axis=1))
    covariance = np.linalg.inv(information[1:, 1:])  # the first player is the fixed anchor
    return ELO_PER_LOG_STRENGTH * np.sqrt(np.concatenate([[0.0], np.diag(covariance)]))


# Sequential tests over game pairs (fishtest's SPRT): written from fishtest's server/fishtest/stats
# (LLRcalc.py: LLR_logistic, MLE_expected, results_to_pdf; sprt.py: the bounds), the secular equation
# solved by bisection instead of SciPy; tests/test_sprt.py checks it against values of that code.

PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""A pair's mean score for each pentanomial count: LL, LD+DL, LW+DD+WL, DW+WD, WW."""
EMPTY_COUNT = 1e-3
"""What an empty pentanomial count is taken as (fishtest's ``regularize``)."""


def pentanomial(scores: np.ndarray) -> np.ndarray:
    """[5] int: the counts of game pairs by A's points in the pair (0, 0.5, ..., 2) from ``scores``
    ([2P] A's points a game, 0 / 0.5 / 1; games ``2i`` and ``2i + 1`` are one opening's pair)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size % 2:
        raise ValueError(f"paired games come in twos, got {scores.size} games")
    points = scores.reshape(-1, 2).sum(axis=1)
    return np.bincount(np.rint(points * 2).astype(int), minlength=5)[:5]


def logistic_score(elo: float) -> float:
    """The expected score of a player ``elo`` logistic Elo stronger."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def _mle_with_mean(values: np.ndarray, probs: np.ndarray, mean: float) -> np.ndarray:
    """The distribution over ``values`` nearest (maximum likelihood) to ``probs`` whose mean is
    ``mean``: ``p_i / (1 + x (a_i - mean))``, ``x`` the root of the secular equation (by bisection)."""
    shifted = values - mean
    low, high = -1.0 / shifted.max(), -1.0 / shifted.min()
    margin = 1e-12 * (high - low)
    low, high = low + margin, high - margin
    for _ in range(200):  # sum p a / (1 + x a) decreases in x between the poles
        x = (low + high) / 2
        if np.sum(probs * shifted / (1 + x * shifted)) > 0:
            low = x
        else:
            high = x
    return probs / (1 + x * shifted)


def llr(counts: np.ndarray, elo0: float, elo1: float) -> float:
    """The generalized log-likelihood ratio of H1 (A is ``elo1`` logistic Elo stronger) against H0
    (``elo0``) from pentanomial ``counts`` (fishtest's ``LLR_logistic`` on pairs)."""
    counts = np.where(np.asarray(counts, dtype=np.float64) == 0, EMPTY_COUNT, counts)
    pairs, values = counts.sum(), np.asarray(PAIR_SCORES)
    probs = counts / pairs
    mle0, mle1 = (_mle_with_mean(values, probs, logistic_score(e)) for e in (elo0, elo1))
    return float(pairs * np.sum(probs * (np.log(mle1) - np.log(mle0))))


@dataclasses.dataclass(frozen=True)
class SPRT:
    """A sequential test of ``elo0`` against ``elo1`` (logistic Elo, A's over B's), with error rates
    ``alpha`` (accept H1 when H0 holds) and ``beta`` (accept H0 when H1 holds): fishtest's defaults
    0.05 each, bounds +-2.94."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo0 < self.elo1:
            raise ValueError(f"the SPRT's elo0 must be below elo1, got {self.elo0:g}, {self.elo1:g}")
        for name in ("alpha", "beta"):
            if not 0 < getattr(self, name) < 0.5:
                raise ValueError(f"the SPRT's {name} must be in (0, 0.5), got {getattr(self, name)}")

    @property
    def bounds(self) -> tuple[float, float]:
        """(lower, upper) LLR bounds: ``ln(beta / (1 - alpha))``, ``ln((1 - beta) / alpha)``."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def decide(self, counts: np.ndarray) -> tuple[float, str | None]:
        """``(LLR, verdict)``: ``"H1"`` (A is ``elo1`` stronger, accepted) at or above the upper bound,
        ``"H0"`` at or below the lower one, None while undecided."""
        value = llr(counts, self.elo0, self.elo1)
        lower, upper = self.bounds
        return value, "H1" if value >= upper else "H0" if value <= lower else None
