"""The config's sections, each key declared once: small frozen dataclasses that the layers' settings
(``evolution.settings.EvolutionSettings``, ``learners.LearnerSettings`` and ``TDSettings``,
``learners.dqn_settings.DQNSettings``) and the experiment's ``ExperimentConfig`` are built from by
inheritance, so a key has one default and one docstring wherever it is read.

``SECTION`` names each class's table in an experiment TOML file (``[boss_ga]``) and its prefix in
``--set boss_ga.population=64``; a flat key (``population = 64``) means the same. No JAX here.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, dataclass_transform


@dataclass_transform(frozen_default=True)
class Section:
    """A base for the sections: ``class RunSettings(Section, section="run")`` is a frozen dataclass
    whose keys belong to the config's ``run`` section. The settings built from sections declare
    themselves dataclasses, and name no section: each key keeps its declaring class's."""

    SECTION: ClassVar[str] = ""

    def __init_subclass__(cls, section: str = "", **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if section:
            cls.SECTION = section
            dataclasses.dataclass(frozen=True)(cls)


class RunSettings(Section, section="run"):
    """How a run goes: its name, length, seed, checkpoints, probes and budget."""

    name: str = "experiment"
    """Experiment name, used in the run folder's name."""
    epochs: int = 512
    """Epochs to run."""
    seed: int = 0
    """Random seed: the same config and seed give the same metrics on the same machine."""
    checkpoint_every: int = 10
    """Write a checkpoint every this many epochs (and at the end)."""
    epochs_per_call: int = 1
    """Epochs in one compiled device call (a lax.scan); budget checks and checkpoints come between calls."""
    strength_every: int = 0
    """Rate the boss every N epochs (and at the last): alpha-beta 2 vs material, search vs random (0: off)."""
    budget_minutes: float = 0.0
    """Stop after this many minutes of training wall time (epochs only, summed over resumes; 0: off)."""
    snapshot_every: int = 10
    """Learners: save the network to lineage/ every N epochs (and after the last)."""
    seconds_per_move: float = 0.0
    """Time budget per move; > 0 calibrates a simulation count on this machine once, at the start."""


class StrategySettings(Section, section="run"):
    """Which method learns the network."""

    strategy: str = "boss_ga"
    """A name of the strategy registry: `neurocheckers strategies` lists them, one line each, plug-ins
    included. The hybrid is the default (the study's GA) with supervised_target = "td_lambda"
    (experiments/learners/hybrid_simple6.toml)."""
    plugins: str = ""
    """Plug-in modules imported before the strategy is looked up, each registering strategies
    (TOML: a list of names, or one comma-separated string), e.g. "my_pkg.my_strategy"."""


class RulesSettings(Section, section="game"):
    """The game."""

    rules: str = "simple6"
    """Rules preset: simple6, american6 or american8."""


class PliesSettings(Section, section="game"):
    """How the training games start and how long they may go on."""

    opening_plies: int = 0
    """Random plies played before the agents take over, for varied games."""
    max_plies: int = 200
    """Safety cap on a game's length; a game still going on is scored as a draw."""


class ArchitectureSettings(Section, section="network"):
    """The network, which every layer that builds one with ``architectures.spec_of_settings`` takes
    (each field is the config key of the same name)."""

    layers: int = 5
    """Hidden ReLU layers of each agent's MLP (the study: 5; variants 3 and 7)."""
    width: int = 32
    """Units per hidden layer (the study does not give it; quote it with every figure)."""
    material_input: bool = False
    """Feed the material balance (men 1, kings 1.5) straight to the output unit with its own weight."""
    evaluator: str = "mlp"
    """Evaluator network: mlp (layers x width), cnn (cnn_*) or transformer (transformer_*)."""
    cnn_channels: str = "16,32"
    """Channels of the CNN's 3x3 convolutions, one per layer, comma-separated (DQN articles: 32,64,128)."""
    cnn_dense: int = 32
    """Units of the CNN's dense layer after the convolutions."""
    transformer_layers: int = 2
    """Self-attention blocks of the transformer (the TD(lambda) study: 16)."""
    transformer_heads: int = 4
    """Attention heads per transformer block; they divide transformer_width (the TD(lambda) study: 4)."""
    transformer_width: int = 32
    """Width of the transformer's square tokens (the TD(lambda) study: 128)."""


class SearchSettings(Section, section="search"):
    """How the agents choose their moves over their networks."""

    search: str = "mcts"
    """How members and boss choose moves: mcts (simulations per move) or alphabeta (depth plies)."""
    simulations: int = 16
    """MCTS simulations per move for members and boss (ignored when seconds_per_move > 0)."""
    depth: int = 2
    """Alpha-beta plies per move with search = alphabeta (Blondie24: 4; each ply costs ~6x more time)."""


class LearningRateSettings(Section, section="learning"):
    """Gradient descent, for the boss GA's learner quarter and the learners."""

    learning_rate: float = 0.002
    """Adam learning rate (the boss GA's supervised quarter, and the self-play learners)."""


class LambdaSettings(Section, section="learning"):
    """TD(lambda)'s lambda, for the learners and the boss GA's hybrid."""

    lambda_: float = 0.7
    """TD(lambda)'s lambda: 0 bootstraps from the next position's value, 1 learns the game's result."""


class MinibatchSettings(Section, section="learning"):
    """The learners' Adam steps on minibatches."""

    updates_per_epoch: int = 32
    """Learners: Adam steps per epoch, each on a minibatch of the epoch's positions (DQN: transitions)."""
    batch_size: int = 256
    """Learners: positions (DQN: transitions) per minibatch, drawn uniformly with replacement."""


class BossGASettings(Section, section="boss_ga"):
    """The study's boss GA (and the evosax strategies inside it): the population, its games against
    the boss, breeding, the learner quarter, and the selection settings."""

    population: int = 256
    """Members in the population (divisible by 4: elites, mutants, crossovers, learners)."""
    games_per_epoch: int = 8
    """Games each member plays against the boss per epoch, half with each colour (even)."""
    mutation_rate: float = 0.125
    """Standard deviation of the Gaussian noise added to one layer of each mutant."""
    train_steps: int = 8
    """Full-batch Adam steps each learner takes per epoch."""
    loss: str = "mae"
    """Supervised loss: mae (the study's mean difference) or mse."""
    promotion_threshold: float = 0.75
    """Fraction of games_per_epoch points the best member needs to become the boss."""
    openings: int = 0
    """Openings drawn per epoch, each met with both colours (0: start position; games_per_epoch = 2 x it)."""
    promotion_candidates: int = 0
    """Best-ranked members at the threshold that play a confirmation match against the boss (0: off)."""
    promotion_games: int = 64
    """Paired-openings games of each confirmation match; promoted only if the lower 95% bound > 0.5."""
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
    """What the supervised quarter learns: outcome (each game's result) or td_lambda (the hybrid)."""
    learner_games: str = "boss"
    """Games the learner quarter trains on: boss (the study's) or all (+ hall of fame, benchmark)."""
    learner_sides: str = "member"
    """Positions each learner trains on: member (those it moved from, the study's) or both."""
    train_batch: int = 0
    """Rows of each learner's Adam minibatches, train_steps of them (0: full batches, the study's)."""


class SelfPlaySettings(Section, section="td_lambda"):
    """The self-play learners' games (TD(lambda), TDLeaf(lambda))."""

    selfplay_games: int = 256
    """Learners: self-play games played at once per epoch."""
    exploration: str = "epsilon"
    """Learners: epsilon (a random move with probability exploration_rate) or softmax (over root values)."""
    exploration_rate: float = 0.1
    """Learners: the chance of a random move (epsilon), or the softmax temperature."""
    bootstrap_positions: int = 0
    """Learners: random positions regressed on their material value before self-play (0: off)."""
    bootstrap_steps: int = 200
    """Learners: Adam steps of that material bootstrap."""
    initial_agent: str = ""
    """TD learners: an exported agent file whose network the run starts from (a fine-tuning), with a fresh
    optimiser; its network must be [network]'s ("": a fresh network)."""
    anchor_weight: float = 0.0
    """TD learners: each target's share taken from initial_agent's value (a pull to the start; 0: off)."""
    endgame_targets: str = ""
    """TD learners: an endgame database folder (endgame build); its positions get exact targets ("": off)."""
    endgame_draws: bool = True
    """TD learners: whether the database's draws are exact targets too (false: its wins and losses only)."""


class DQNSectionSettings(Section, section="dqn"):
    """Afterstate DQN's own keys."""

    envs: int = 256
    """DQN: games played side by side; each step is one learner move in every game."""
    buffer_size: int = 65536
    """DQN: transitions the replay buffer keeps (at least envs)."""
    steps_per_epoch: int = 8
    """DQN: learner moves per game per epoch."""
    gamma: float = 0.99
    """DQN: discount of the bootstrapped value of the learner's next position."""
    epsilon_start: float = 1.0
    """DQN: the random-move chance at epoch 0, decaying linearly to epsilon_end."""
    epsilon_end: float = 0.05
    """DQN: the random-move chance after epsilon_decay_epochs."""
    epsilon_decay_epochs: int = 200
    """DQN: epochs of the linear epsilon decay (0: epsilon_end from the start)."""
    target_update_every: int = 100
    """DQN: gradient updates between copies of the online network to the target network."""
    capture_reward: float = 0.0
    """DQN: reward shaping per opponent piece captured by the learner's move."""
    crown_reward: float = 0.0
    """DQN: reward shaping per man the learner crowns."""
    piece_lost_penalty: float = 0.0
    """DQN: shaping penalty per learner piece lost to the opponent's reply."""
    opponent: str = "random"
    """DQN: whom the learner plays: random, self, greedy-material or alphabeta:D."""

    def problems(self) -> list[str]:
        """What is impossible in this section's values, one message each (``[]``: none). The one
        place these rules are written: the experiment config and ``learners.DQNSettings`` both ask."""
        found = [
            f"{name} must be >= 1, got {getattr(self, name)}"
            for name in DQN_AT_LEAST_ONE
            if getattr(self, name) < 1
        ]
        if self.epsilon_decay_epochs < 0:
            found.append(f"epsilon_decay_epochs must be >= 0, got {self.epsilon_decay_epochs}")
        if self.buffer_size < self.envs:
            found.append(f"buffer_size must be >= envs ({self.envs}), got {self.buffer_size}")
        for name in ("gamma", "epsilon_start", "epsilon_end"):
            if not 0 <= getattr(self, name) <= 1:
                found.append(f"{name} must be in [0, 1], got {getattr(self, name)}")
        return found


DQN_AT_LEAST_ONE = ("envs", "steps_per_epoch", "target_update_every")
"""The DQN keys that count things done at least once."""


PBT_MEMBER_LEARNERS = ("td_lambda", "td_leaf")
"""What a PBT member may learn by (``member_learner``)."""


class PBTSectionSettings(Section, section="pbt"):
    """Population-based training's own keys (``strategy = "pbt"``): TD learners trained side by side,
    the worst copying the best every ``exploit_interval`` epochs."""

    members: int = 8
    """PBT: TD learners trained side by side (>= 2), each with its own learning rate, lambda, exploration."""
    member_learner: str = "td_lambda"
    """PBT: what each member learns by: td_lambda, or td_leaf (alpha-beta of depth >= 2)."""
    exploit_interval: int = 4
    """PBT: epochs between tournaments; after each, the worst quantile copies the best quantile."""
    perturbation: float = 0.2
    """PBT: a copied member's hyperparameters are each multiplied by 1 - perturbation or 1 + perturbation."""
    quantile: float = 0.25
    """PBT: the share of members replaced after a tournament (by copies of as many best ones), in (0, 0.5]."""
    tournament_openings: int = 2
    """PBT: openings each pair of members plays in a tournament, each with both colours (games = 2 x it)."""
    max_depth: int = 0
    """PBT: members' alpha-beta depth evolves up to it (explore: +-1); 0: every member keeps depth."""
    min_width: int = 0
    """PBT: members' MLP width evolves in [min_width, width] (units past it masked); 0: width fixed."""
    share_games: bool = False
    """PBT: each member learns from every member's self-play games (members x selfplay_games), not its own."""
    ray_address: str = ""
    """PBT: train members as Ray tasks on this instance ("local", "auto", "ray://host:10001"); "": here."""
    ray_share: int = 1
    """PBT: members each Ray task trains (vmapped); it must divide members (with ray_address)."""


class SPSASectionSettings(Section, section="spsa"):
    """SPSA's own keys: the compiled search's parameters of one agent tuned by engine games, as
    fishtest's SPSA does (alpha 0.602, gamma 0.101)."""

    spsa_agent: str = ""
    """SPSA: the agent file whose search is tuned (its network scores the leaves; its file's tuned
    search, if any, is the start); the run's snapshots are it, with the tuned search."""
    spsa_parameters: str = "lmr_min_depth,lmr_min_move,iir_min_depth,aspiration,next_iteration_share"
    """SPSA: the compiled search's numeric parameters tuned, comma-separated (`compiled.driver.SearchOptions`'
    tunable fields)."""
    spsa_pairs: int = 8
    """SPSA: game pairs an epoch (one iteration): theta + c_k delta against theta - c_k delta, each
    opening with both colours."""
    spsa_nodes: int = 2000
    """SPSA: nodes a move of every game."""
    spsa_c_end: float = 1.0
    """SPSA: the last iteration's perturbation, in steps of each parameter (fishtest's c_end)."""
    spsa_r_end: float = 0.02
    """SPSA: the last iteration's learning rate a_end / c_end^2 (fishtest's r_end): theta moves by
    about r_end (wins - losses) steps an iteration at the end. Fishtest's 0.002 suits parameters
    hundreds of steps wide; these are a few to a few tens."""
    spsa_iterations: int = 0
    """SPSA: the iterations N the gains are planned for, so that the last reaches c_end and r_end
    (0: the run's epochs; set it to extend a run with --epochs without changing its schedule)."""
    spsa_a_share: float = 0.1
    """SPSA: the stability constant A as a share of the N iterations (fishtest: 3-10%)."""
    spsa_workers: int = 1
    """SPSA: shares an epoch's pairs are split into: local processes (1: this process), or Ray tasks."""
    spsa_ray_address: str = ""
    """SPSA: play the shares as Ray tasks on this instance ("local", "auto", "ray://host:10001"); "": here."""

    def problems(self) -> list[str]:
        """What is impossible in this section's values, one message each (``[]``: none)."""
        counts = ("spsa_pairs", "spsa_nodes", "spsa_workers")
        found = [f"{n} must be >= 1, got {getattr(self, n)}" for n in counts if getattr(self, n) < 1]
        rates = ("spsa_c_end", "spsa_r_end")
        found += [f"{n} must be > 0, got {getattr(self, n)}" for n in rates if not getattr(self, n) > 0]
        if self.spsa_iterations < 0:
            found.append(f"spsa_iterations must be >= 0, got {self.spsa_iterations}")
        if self.spsa_a_share < 0:
            found.append(f"spsa_a_share must be >= 0, got {self.spsa_a_share}")
        return found


def engine_problems(section: Section, prefix: str) -> list[str]:
    """What is impossible in an engine-game tuner's shared keys (``PREFIX_population``, ``_pairs``,
    ``_nodes``, ``_workers``, ``_sigma``), one message each."""
    counts = [f"{prefix}_{n}" for n in ("pairs", "nodes", "workers")]
    found = [f"{n} must be >= 1, got {getattr(section, n)}" for n in counts if getattr(section, n) < 1]
    population, sigma = getattr(section, f"{prefix}_population"), getattr(section, f"{prefix}_sigma")
    if population < 2:
        found.append(f"{prefix}_population must be >= 2, got {population}")
    if not sigma > 0:
        found.append(f"{prefix}_sigma must be > 0, got {sigma}")
    return found


class CMASearchSectionSettings(Section, section="cma_search"):
    """CMA-ES (evosax's) over the compiled search's parameters of one agent, each scaled to its range."""

    cma_agent: str = ""
    """CMA-ES: the agent file whose search is tuned (its tuned search, if any, is the start)."""
    cma_parameters: str = "lmr_min_depth,lmr_min_move,iir_min_depth,aspiration,next_iteration_share"
    """CMA-ES: the compiled search's parameters tuned, comma-separated (as spsa_parameters)."""
    cma_population: int = 8
    """CMA-ES: candidates an epoch (one generation), each playing the mean search."""
    cma_pairs: int = 2
    """CMA-ES: game pairs each candidate plays against the mean, on the epoch's shared openings."""
    cma_nodes: int = 2000
    """CMA-ES: nodes a move of every game."""
    cma_sigma: float = 0.2
    """CMA-ES: the first step size, as a share of each parameter's range."""
    cma_workers: int = 1
    """CMA-ES: shares an epoch's games are split into: local processes (1: this process), or Ray tasks."""
    cma_ray_address: str = ""
    """CMA-ES: play the shares as Ray tasks on this instance ("local", "auto", "ray://..."); "": here."""

    def problems(self) -> list[str]:
        """What is impossible in this section's values, one message each (``[]``: none)."""
        return engine_problems(self, "cma")


class GASearchSectionSettings(Section, section="ga_search"):
    """The study's GA (elites, mutants, crossovers) over the compiled search's parameters of one agent."""

    ga_agent: str = ""
    """Search GA: the agent file whose search is tuned (its tuned search, if any, is the start)."""
    ga_parameters: str = "lmr_min_depth,lmr_min_move,iir_min_depth,aspiration,next_iteration_share"
    """Search GA: the compiled search's parameters tuned, comma-separated (as spsa_parameters)."""
    ga_population: int = 8
    """Search GA: members (a multiple of 4: elites, one-gene mutants, crossovers, all-gene mutants)."""
    ga_pairs: int = 2
    """Search GA: game pairs each member plays against the best elite, on the epoch's shared openings."""
    ga_nodes: int = 2000
    """Search GA: nodes a move of every game."""
    ga_sigma: float = 0.15
    """Search GA: the mutation's standard deviation, as a share of each parameter's range."""
    ga_workers: int = 1
    """Search GA: shares an epoch's games are split into: local processes (1: this process), or Ray tasks."""
    ga_ray_address: str = ""
    """Search GA: play the shares as Ray tasks on this instance ("local", "auto", "ray://..."); "": here."""

    def problems(self) -> list[str]:
        """What is impossible in this section's values, one message each (``[]``: none)."""
        found = engine_problems(self, "ga")
        if self.ga_population % 4:
            found.append(f"ga_population must be a multiple of 4, got {self.ga_population}")
        return found


class NetworkESSectionSettings(Section, section="es_network"):
    """evosax's OpenAI-ES with antithetic pairs over an agent's network, from its output layer down."""

    es_agent: str = ""
    """Network ES: the agent file (MLP or NNUE) whose network is tuned, played by its own search."""
    es_layers: int = 1
    """Network ES: the layers tuned, counted from the output layer down (0: the whole network)."""
    es_population: int = 8
    """Network ES: candidates an epoch (even: antithetic pairs, mean + z and mean - z)."""
    es_pairs: int = 2
    """Network ES: game pairs each candidate plays against the mean, all on the epoch's same openings."""
    es_nodes: int = 2000
    """Network ES: nodes a move of every game."""
    es_sigma: float = 0.02
    """Network ES: the noise's standard deviation, in weight units."""
    es_learning_rate: float = 0.005
    """Network ES: Adam's learning rate on the mean (about the step of each weight an epoch)."""
    es_workers: int = 1
    """Network ES: shares an epoch's games are split into: local processes (1: this process), or Ray tasks."""
    es_ray_address: str = ""
    """Network ES: play the shares as Ray tasks on this instance ("local", "auto", "ray://..."); "": here."""

    def problems(self) -> list[str]:
        """What is impossible in this section's values, one message each (``[]``: none)."""
        found = engine_problems(self, "es")
        if self.es_population % 2:
            found.append(f"es_population must be even (antithetic pairs), got {self.es_population}")
        if self.es_layers < 0:
            found.append(f"es_layers must be >= 0, got {self.es_layers}")
        if not self.es_learning_rate > 0:
            found.append(f"es_learning_rate must be > 0, got {self.es_learning_rate}")
        return found


@dataclasses.dataclass(frozen=True)
class PlaySettings(SearchSettings, ArchitectureSettings, PliesSettings, RulesSettings):
    """What agents need to play games over their networks: the game, the network and the search
    (the boss GA, the self-play learners and the experiment all take the four together)."""


CORE_SECTIONS = (
    RunSettings,
    StrategySettings,
    PlaySettings,
    LearningRateSettings,
    LambdaSettings,
    MinibatchSettings,
)
"""The config's sections that every run reads, whatever its strategy (in the config's order); the
strategy-specific ones (``boss_ga``, ``td_lambda``, ``dqn``, ``pbt``, a plug-in's) are declared by the
strategy registry's entries."""


def declaring_class(settings: type, key: str) -> type:
    """The class of ``settings``' bases that declares field ``key``."""
    for cls in settings.__mro__:
        if key in vars(cls).get("__annotations__", {}):
            return cls
    raise KeyError(key)


def sections_of(settings: type) -> dict[str, list[str]]:
    """The fields of the dataclass ``settings`` by section (its declaring class's ``SECTION``), in
    field order."""
    found: dict[str, list[str]] = {}
    for field in dataclasses.fields(settings):
        found.setdefault(declaring_class(settings, field.name).SECTION, []).append(field.name)
    return found


def field_docs(settings: type) -> dict[str, str]:
    """Each field's documentation (the string under it in its declaring class), on one line."""
    import ast
    import inspect

    docs: dict[str, str] = {}
    for cls in {declaring_class(settings, f.name) for f in dataclasses.fields(settings)}:
        body = ast.parse(inspect.getsource(cls)).body[0].body  # type: ignore[attr-defined]
        for node, following in zip(body, body[1:], strict=False):
            value = getattr(following, "value", None)
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(value, ast.Constant)
                and isinstance(value.value, str)
            ):
                docs[node.target.id] = " ".join(value.value.split())  # type: ignore[attr-defined]
    return docs
