"""How a run's agents play, shared by every strategy (the boss GA, the evosax strategies, the
learners) and the run loop: the search built from the config's ``search`` section, and each epoch's
random key."""

from __future__ import annotations

from typing import Any

import jax

from neurocheckers.search.baselines import AlphaBetaConfig
from neurocheckers.search.mcts import MCTSConfig


def population_search(settings: Any) -> MCTSConfig | AlphaBetaConfig:
    """The search of ``settings`` (any object with the ``search`` section's ``search``,
    ``simulations`` and ``depth``): MCTS of ``simulations``, or alpha-beta of ``depth``."""
    if settings.search == "alphabeta":
        return AlphaBetaConfig(depth=int(settings.depth))
    if settings.search != "mcts":
        raise ValueError(f"search must be 'mcts' or 'alphabeta', got {settings.search!r}")
    return MCTSConfig(num_simulations=int(settings.simulations))


def epoch_key(seed: int | jax.Array, epoch: int | jax.Array) -> jax.Array:
    """The key of one epoch: derived from the seed and the epoch number alone, so a resumed run
    draws exactly what an uninterrupted one would."""
    return jax.random.fold_in(jax.random.key(seed), epoch)
