"""Elo ratings with standard errors from any graph of matches (draws count half a win)."""

from __future__ import annotations

import numpy as np

ELO_PER_NATURAL_LOG = 400.0 / np.log(10.0)
"""Elo points per unit of the Bradley-Terry log-strength."""


def fit_elo_with_errors(
    points: np.ndarray, games: np.ndarray, prior: float = 1.0, anchor: int = 0, iterations: int = 100
) -> tuple[np.ndarray, np.ndarray]:
    """``(elo [K], se [K])``: Bradley-Terry maximum-likelihood ratings with player ``anchor`` at 0.

    ``points[i, j]`` is what ``i`` scored against ``j`` over ``games[i, j]`` games (symmetric).
    ``prior`` virtual drawn games are added to every pair that met, so that a player who won or lost
    everything keeps a finite rating; pairs that never met get nothing. Standard errors come from the
    inverse Fisher information with the anchor fixed (games treated as independent). Every player must
    be connected to the anchor through played pairs.
    """
    points = np.asarray(points, dtype=np.float64)
    games = np.asarray(games, dtype=np.float64)
    k = points.shape[0]
    if points.shape != (k, k) or games.shape != (k, k):
        raise ValueError(f"points and games must be [K, K] matrices, got {points.shape}, {games.shape}")
    met = (games > 0) & ~np.eye(k, dtype=bool)
    n = np.where(met, games + prior, 0.0)
    won = np.where(met, points + prior / 2, 0.0)
    free = np.arange(k) != anchor
    theta = np.zeros(k)
    for _ in range(iterations):
        expected = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
        gradient = (won - n * expected).sum(axis=1)
        weight = n * expected * (1.0 - expected)
        information = np.diag(weight.sum(axis=1)) - weight
        sub = information[np.ix_(free, free)]
        try:
            delta = np.linalg.solve(sub, gradient[free])
        except np.linalg.LinAlgError:
            raise ValueError("every player must be connected to the anchor by played games") from None
        theta[free] += delta
        if np.max(np.abs(delta)) < 1e-10:
            break
    covariance = np.zeros((k, k))
    covariance[np.ix_(free, free)] = np.linalg.inv(sub)
    se = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    return ELO_PER_NATURAL_LOG * theta, ELO_PER_NATURAL_LOG * se
