"""The settings of an evolution run, as the evolution layer sees them (built by the experiment layer)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class EvolutionSettings:
    """What ``boss_ga`` needs to play and breed one population (hashable: ``make_setup`` caches on it).

    The experiment's config builds it (``ExperimentConfig.evolution_settings``); run bookkeeping
    (name, epochs, seed, checkpoints) stays in the experiment layer.
    """

    rules: str
    """Rules preset name: simple6, american6 or american8."""
    layers: int
    """Hidden ReLU layers of each member's MLP."""
    width: int
    """Units per hidden layer."""
    population: int
    """Members in the population (a multiple of 4 for the boss GA's quarters)."""
    games_per_epoch: int
    """Games each member plays against the boss per epoch, half with each colour (even)."""
    simulations: int
    """MCTS simulations per move for members and boss."""
    mutation_rate: float
    """Standard deviation of a mutant's Gaussian noise (and of an evosax strategy's initial search)."""
    learning_rate: float
    """Adam learning rate of the learner quarter."""
    train_steps: int
    """Full-batch Adam steps each learner takes per epoch."""
    loss: str
    """Supervised loss of the learners: mae or mse."""
    strategy: str
    """boss_ga, or the evosax strategy that replaces the generation step."""
    promotion_threshold: float
    """Fraction of games_per_epoch points the best member needs to become the boss."""
    opening_plies: int
    """Random plies played before the agents take over."""
    max_plies: int
    """Cap on a game's length (and on the plies recorded for the learners)."""
    search: str = "mcts"
    """How members and boss choose moves: mcts (simulations) or alphabeta (depth)."""
    depth: int = 2
    """Alpha-beta plies per move with search = alphabeta."""
    material_input: bool = False
    """Whether each network's output unit also reads the material balance, with its own weight."""
