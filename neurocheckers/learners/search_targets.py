"""Positions scored by a deeper search: training targets for a leaf network from the compiled search.

TDLeaf learns from a depth-2 search; engines built on NNUE-style networks learn from positions scored
by a much deeper one. Here the compiled search (``compiled.driver``) plays games against itself at a
fixed depth from random openings, with some random moves, under the game's own end rules, and every
position it meets keeps the search's score (``2 v - 1`` men of the leaf network, or a won or lost
game, the endgame database included when given) and the game's result. ``fit`` then regresses a
network (the same one, or a fresh one of any architecture) on a blend of the two, like Stockfish's
NNUE data (a search's score and the game's outcome mixed by one weight).

Positions where the mover has a capture are left out by default: the compiled search evaluates only
quiet positions (its captures are searched on until the position is quiet), so the network never
meets them at a leaf. A search without quiescence (the JAX alpha-beta at depth 1-4) does meet them,
mid-exchange; ``keep_captures`` keeps them too, each with the deep search's value of the exchange.
Scored positions are saved as ``.npz`` files of plain arrays (``np.load`` without pickle).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from neurocheckers.compiled import endgame as eg
from neurocheckers.compiled import network as nw
from neurocheckers.compiled import search as s
from neurocheckers.compiled.board import Position, SearchRules, game_rule
from neurocheckers.compiled.driver import CompiledSearch, SearchOptions
from neurocheckers.compiled.game import Game
from neurocheckers.learners.common import weighted_mse
from neurocheckers.networks.evaluator import EvaluatorSpec
from neurocheckers.networks.fitting import adam_steps
from neurocheckers.rules.presets import Rules, get_rules

BOARD_FIELDS = ("black_men", "black_kings", "white_men", "white_kings", "color")
"""The columns of ``ScoredPositions.boards``."""


@dataclasses.dataclass(frozen=True)
class ScoringSettings:
    """How the scoring games are played."""

    depth: int = 10
    """Nominal depth (whole moves) of the compiled search that scores each position and picks the move."""
    opening_turns: int = 8
    """Each game starts with a uniformly random number (0 .. this) of uniformly random whole turns."""
    exploration: float = 0.1
    """Chance of a uniformly random move at each later turn (the position is scored either way)."""
    max_turns: int = 300
    """Turns after which a game is cut (its positions kept, its outcome a draw)."""
    keep_captures: bool = False
    """Keep the positions where the mover must capture too (leaves of a search without quiescence)."""

    def __post_init__(self) -> None:
        if not 1 <= self.depth <= 40:
            raise ValueError(f"depth must be in 1..40 moves, got {self.depth!r}")
        if self.opening_turns < 0:
            raise ValueError(f"opening_turns must be >= 0, got {self.opening_turns!r}")
        if not 0.0 <= self.exploration <= 1.0:
            raise ValueError(f"exploration must be in [0, 1], got {self.exploration!r}")
        if self.max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {self.max_turns!r}")


@dataclasses.dataclass(frozen=True)
class ScoredPositions:
    """M positions met in scoring games (quiet unless ``keep_captures``), with the search's value
    and the game's outcome.

    Fields:
      boards: [M, 5] int64 bitboards and the mover (``BOARD_FIELDS``).
      values: [M] float32 the search's value for the mover: ``(score + 1) / 2`` of its score in men,
        1 or 0 for a won or lost game.
      outcomes: [M] float32 the game's result for the mover (1 win, 1/2 draw or cut, 0 loss).
      games: [M] int32 the game each position comes from (numbered from 0 in a file).
    """

    boards: np.ndarray
    values: np.ndarray
    outcomes: np.ndarray
    games: np.ndarray

    def __len__(self) -> int:
        return len(self.values)

    def save(self, path: str | Path, **meta: str) -> None:
        """Write the arrays (and string metadata) to ``path`` (``.npz``, no pickle)."""
        extra = {f"meta_{k}": np.array(str(v)) for k, v in meta.items()}
        np.savez_compressed(path, **dataclasses.asdict(self), **extra)

    @classmethod
    def load(cls, path: str | Path) -> ScoredPositions:
        """Read a file written by ``save``; ``ValueError`` naming the file when it is not one."""
        try:
            with np.load(path, allow_pickle=False) as data:
                fields = {f.name: data[f.name] for f in dataclasses.fields(cls)}
        except (OSError, KeyError, ValueError) as e:
            raise ValueError(f"{path}: not a scored-positions file ({e})") from None
        if fields["boards"].ndim != 2 or fields["boards"].shape[1] != len(BOARD_FIELDS):
            raise ValueError(f"{path}: boards must be [M, {len(BOARD_FIELDS)}], got {fields['boards'].shape}")
        return cls(**fields)

    @classmethod
    def join(cls, parts: list[ScoredPositions]) -> ScoredPositions:
        """One set of all ``parts``, their games numbered apart."""
        offsets = np.cumsum([0] + [int(p.games.max()) + 1 if len(p) else 0 for p in parts])
        return cls(
            np.concatenate([p.boards for p in parts]),
            np.concatenate([p.values for p in parts]),
            np.concatenate([p.outcomes for p in parts]),
            np.concatenate([p.games + o for p, o in zip(parts, offsets[:-1], strict=True)]).astype(np.int32),
        )


def search_value(score_men: float) -> float:
    """The chance the mover wins implied by a compiled search score in men (its leaves score
    ``2 v - 1``; a score past ``WIN_BOUND`` is a won or lost game)."""
    bound = s.WIN_BOUND / s.UNIT
    if abs(score_men) > bound:
        return 1.0 if score_men > 0 else 0.0
    return float(np.clip((score_men + 1.0) / 2.0, 0.0, 1.0))


def _random_opening(search_rules: SearchRules, rng: np.random.Generator, turns: int) -> Game:
    """A game after ``turns`` uniformly random whole turns (fewer if it ends)."""
    game = Game(search_rules, Position.start(search_rules.rules))
    for _ in range(turns):
        if game.result is not None:
            break
        legal = game.legal()
        game.play(legal[rng.integers(len(legal))])
    return game


def play_scored_game(
    search: CompiledSearch, settings: ScoringSettings, rng: np.random.Generator
) -> tuple[list[Position], list[float], int]:
    """One scoring game: (its quiet positions, or all of them with ``keep_captures``, their search
    values, the result: +1 Black won, -1 White won, 0 drawn or cut)."""
    search.new_game()
    game = _random_opening(search.search_rules, rng, int(rng.integers(settings.opening_turns + 1)))
    positions, values = [], []
    for _ in range(settings.max_turns):
        if game.result is not None:
            break
        legal = game.legal()
        result = search.search(
            game.position, depth=settings.depth, ply=game.ply, quiet=game.quiet, history=game.history
        )
        if settings.keep_captures or not np.any(legal[:, 2]):  # quiet: the mover has no capture
            positions.append(game.position)
            values.append(search_value(result.score))
        explore = rng.random() < settings.exploration
        game.play(legal[rng.integers(len(legal))] if explore else result.move)
    return positions, values, 0 if game.result is None else game.result


def score_games(
    rules: Rules | str,
    leaves: nw.LeafNetwork,
    games: int,
    settings: ScoringSettings = ScoringSettings(),
    *,
    seed: int = 0,
    endgame: eg.SearchDB | None = None,
    options: SearchOptions | None = None,
    seconds: float | None = None,
    progress: Callable[[int, int, float], None] | None = None,
) -> ScoredPositions:
    """The quiet positions (all with ``settings.keep_captures``) of up to ``games`` scoring games
    (fewer if ``seconds`` of wall time run out first) played under the game's own end rules by the
    compiled search over ``leaves``. Game ``i`` draws its randomness from ``seed`` and ``i`` alone.
    ``progress(games_done, positions, seconds)`` is called after each game."""
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games!r}")
    search = CompiledSearch(game_rule(rules), options, leaves, endgame)
    boards, values, outcomes, game_ids = [], [], [], []
    start = time.monotonic()
    for i in range(games):
        rng = np.random.default_rng([seed, i])
        positions, scores, result = play_scored_game(search, settings, rng)
        for position, value in zip(positions, scores, strict=True):
            boards.append(dataclasses.astuple(position))
            values.append(value)
            mover_sign = 1 if position.color == 0 else -1
            outcomes.append(0.5 + 0.5 * result * mover_sign)
            game_ids.append(i)
        elapsed = time.monotonic() - start
        if progress is not None:
            progress(i + 1, len(values), elapsed)
        if seconds is not None and elapsed >= seconds:
            break
    return ScoredPositions(
        np.array(boards, np.int64).reshape(-1, len(BOARD_FIELDS)),
        np.array(values, np.float32),
        np.array(outcomes, np.float32),
        np.array(game_ids, np.int32),
    )


def encode_boards(rules: Rules | str, boards: np.ndarray) -> np.ndarray:
    """[M, 2N] float32: ``evaluator.encode`` of each row of ``boards`` ([M, 5], ``BOARD_FIELDS``),
    in NumPy: men then kings, +1 the mover's and -1 the other side's, the board turned 180 degrees
    when White moves."""
    n = get_rules(rules).num_squares
    squares = np.arange(n, dtype=np.int64)

    def bits(column: np.ndarray) -> np.ndarray:
        return ((column[:, None] >> squares) & 1).astype(np.float32)

    black_men, black_kings, white_men, white_kings = (bits(boards[:, j]) for j in range(4))
    white = boards[:, 4:5] == 1
    men = np.where(white, white_men - black_men, black_men - white_men)
    kings = np.where(white, white_kings - black_kings, black_kings - white_kings)
    turned = [np.where(white, planes[:, ::-1], planes) for planes in (men, kings)]
    return np.concatenate(turned, axis=1)


def blend_targets(scored: ScoredPositions, outcome_weight: float) -> np.ndarray:
    """[M] float32 targets: ``(1 - w) * search value + w * outcome``."""
    if not 0.0 <= outcome_weight <= 1.0:
        raise ValueError(f"outcome_weight must be in [0, 1], got {outcome_weight!r}")
    return ((1.0 - outcome_weight) * scored.values + outcome_weight * scored.outcomes).astype(np.float32)


def split_by_games(scored: ScoredPositions, held_out: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(training rows, held-out rows): about ``held_out`` of the games, whole, held out."""
    if not 0.0 <= held_out < 1.0:
        raise ValueError(f"held_out must be in [0, 1), got {held_out!r}")
    ids = np.unique(scored.games)
    rng = np.random.default_rng(seed)
    mask = np.isin(scored.games, rng.choice(ids, int(round(held_out * len(ids))), replace=False))
    return np.flatnonzero(~mask), np.flatnonzero(mask)


def fit(
    spec: EvaluatorSpec,
    params: Any,
    obs: np.ndarray,
    targets: np.ndarray,
    *,
    steps: int,
    batch_size: int = 1024,
    learning_rate: float = 3e-4,
    key: jax.Array,
) -> tuple[Any, np.ndarray]:
    """(params after ``steps`` Adam steps on minibatches of ``batch_size`` rows drawn with
    replacement, [steps] minibatch mean squared errors of the network's values to ``targets``)."""
    if steps < 1 or batch_size < 1:
        raise ValueError(f"steps and batch_size must be >= 1, got {steps!r}, {batch_size!r}")
    optimizer = optax.adam(learning_rate)
    obs, targets = jnp.asarray(obs), jnp.asarray(targets)
    picks = jax.random.randint(key, (steps, batch_size), 0, obs.shape[0])

    @jax.jit
    def run(params, opt_state, picks, obs, targets):  # the data as arguments, not baked-in constants
        def loss_fn(p, picked):
            return weighted_mse(spec, p, obs[picked], targets[picked], jnp.ones(picked.shape))

        return adam_steps(optimizer, loss_fn, params, opt_state, picks)

    params, _, losses = run(params, optimizer.init(params), picks, obs, targets)
    return params, np.asarray(losses)


def mean_squared_error(spec: EvaluatorSpec, params: Any, obs: np.ndarray, targets: np.ndarray) -> float:
    """The network's mean squared error to ``targets`` on all of ``obs``."""
    obs, targets = jnp.asarray(obs), jnp.asarray(targets)
    return float(weighted_mse(spec, params, obs, targets, jnp.ones(targets.shape)))
