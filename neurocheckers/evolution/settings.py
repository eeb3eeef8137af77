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
    openings: int = 0
    """Openings drawn per epoch, each met with both colours (0: start position; games_per_epoch = 2 x it)."""
    promotion_candidates: int = 0
    """Best-ranked members at the threshold that play a confirmation match against the boss (0: off)."""
    promotion_games: int = 64
    """Paired-openings games of each confirmation match (even)."""
    hall_of_fame: int = 0
    """Past bosses kept (the last H); each epoch every member also plays one drawn from them (0: off)."""
    hall_of_fame_games: int = 8
    """Paired-openings games of each member against the hall-of-fame boss per epoch (even)."""
    hall_of_fame_weight: float = 1.0
    """Weight of the hall-of-fame points in the fitness (fitness = boss points + weights x points)."""
    benchmark_opponent: str = ""
    """A fixed opponent every member also plays: random, greedy-material or alphabeta:D ("": off)."""
    benchmark_games: int = 8
    """Paired-openings games of each member against the benchmark opponent per epoch (even)."""
    benchmark_weight: float = 1.0
    """Weight of the benchmark points in the fitness."""
    fitness: str = "boss"
    """What ranks members: boss (boss points + weighted extras) or fixed (benchmark points alone)."""
    supervised_target: str = "outcome"
    """What the supervised quarter learns: outcome (each game's result) or td_lambda (lambda_)."""
    lambda_: float = 0.7
    """TD(lambda)'s lambda for supervised_target = td_lambda."""
    learner_games: str = "boss"
    """Games each learner trains on: boss (against the boss) or all (also hall of fame and benchmark)."""
    learner_sides: str = "member"
    """Positions each learner trains on: member (those it moved from) or both (its opponents' too)."""
    train_batch: int = 0
    """Rows of each learner's Adam minibatches (0: full batches of its own games, the study's)."""
    learner_pool: bool = False
    """Whether each learner trains on the positions of every member's games (needs train_batch > 0)."""

    # --- The evaluator's architecture (``architectures``); layers and width above are the MLP's. ---
    evaluator: str = "mlp"
    """Evaluator network: mlp, cnn or transformer."""
    cnn_channels: str = "16,32"
    """Channels of the CNN's 3x3 convolutions, one per layer, comma-separated."""
    cnn_dense: int = 32
    """Units of the CNN's dense layer after the convolutions."""
    transformer_layers: int = 2
    """Self-attention blocks of the transformer."""
    transformer_heads: int = 4
    """Attention heads per transformer block."""
    transformer_width: int = 32
    """Width of the transformer's square tokens."""
