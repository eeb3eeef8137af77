"""Engine games as fitness: game pairs between two compiled-search players, each with its own network
and search parameters, at a fixed node budget a move, from the committed openings (each opening
played with both colours), counted as fishtest counts them (the pentanomial counts of the pairs:
``stats.pentanomial``). The pairs are played in shares (``match.shares``): in this process, in a pool
of local processes, or as Ray tasks across machines; a share is a plain function of plain values.
A tuner (SPSA, an evolution strategy) asks ``play_pairs`` for the fitness of its candidates."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping

import numpy as np

from neurocheckers.match.host import play_any_match
from neurocheckers.match.options import MatchOptions
from neurocheckers.match.shares import MapShares, in_process
from neurocheckers.players.compiled import CompiledPlayer, parse_compiled
from neurocheckers.rules.openings import load_openings, opening_states
from neurocheckers.rules.presets import get_rules
from neurocheckers.stats import pentanomial


@dataclasses.dataclass(frozen=True)
class EngineSide:
    """One side of engine games: the agent file whose network scores its leaves (None: material)
    and the search parameters it plays with, over its file's own (``SearchOptions`` fields by name;
    empty: the file's, or the defaults)."""

    agent: str | None = None
    options: Mapping[str, float] = dataclasses.field(default_factory=dict)

    def player(self, rules_name: str, nodes: int) -> CompiledPlayer:
        """The compiled player of this side at ``nodes`` a move; ``ValueError`` (one line) naming a
        bad file or parameter."""
        spec = f"compiled:{nodes}n" + (f":{self.agent}" if self.agent else "")
        player = parse_compiled(spec, get_rules(rules_name))
        return dataclasses.replace(player, options=dataclasses.replace(player.options, **dict(self.options)))


@dataclasses.dataclass(frozen=True)
class PairResult:
    """What a batch of pairs gave, from A's side.

    Fields:
      counts: [5] pentanomial counts (A's points in a pair: 0, 0.5, 1, 1.5, 2).
      results: [3] A's losses, draws (unfinished games among them) and wins, game by game.
      plies: plies played in all the games.
      seconds: wall time the shares took, summed (CPU-side work, whichever process did it).
    """

    counts: np.ndarray
    results: np.ndarray
    plies: int
    seconds: float

    @property
    def games(self) -> int:
        return 2 * int(self.counts.sum())

    @property
    def score(self) -> float:
        """A's mean points a game."""
        return float(np.dot(self.counts, np.arange(5)) / 4 / max(1, self.counts.sum()))

    def __add__(self, other: PairResult) -> PairResult:
        return PairResult(self.counts + other.counts, self.results + other.results, self.plies + other.plies,
                          self.seconds + other.seconds)  # fmt: skip


def play_pair_share(
    rules_name: str, a: EngineSide, b: EngineSide, first_opening: int, pairs: int, nodes: int, seed: int,
    max_plies: int | None = None,
) -> PairResult:  # fmt: skip
    """What one share plays (anywhere): ``pairs`` pairs of A against B at ``nodes`` a move from the
    committed openings ``first_opening ..`` (wrapping round the committed set)."""
    started = time.perf_counter()
    rules = get_rules(rules_name)
    total = len(load_openings(rules))
    chosen = [(first_opening + i) % total for i in range(pairs)]
    openings = opening_states(rules, [load_openings(rules)[i] for i in chosen])
    options = MatchOptions(
        games=2 * pairs, seed=seed, batch=2 * pairs, max_plies=max_plies, openings=openings
    )
    records = play_any_match(rules, a.player(rules_name, nodes), b.player(rules_name, nodes), options)
    scores = np.asarray(records.score)
    results = np.bincount(np.rint(scores * 2).astype(int), minlength=3)[:3]
    plies = int(np.sum(records.length))
    return PairResult(pentanomial(scores), results, plies, time.perf_counter() - started)


def play_pairs(
    rules_name: str, a: EngineSide, b: EngineSide, pairs: int, nodes: int, first_opening: int = 0,
    seed: int = 0, shares: int = 1, map_shares: MapShares = in_process, max_plies: int | None = None,
) -> PairResult:  # fmt: skip
    """``pairs`` game pairs of A against B at ``nodes`` a move over consecutive committed openings
    from ``first_opening``, split into ``shares`` shares run by ``map_shares`` (in this process, a
    process pool, Ray tasks); the same arguments give the same games however they are split (the
    compiled search at a node budget is deterministic)."""
    if pairs < 1 or shares < 1:
        raise ValueError(f"pairs and shares must be >= 1, got {pairs} and {shares}")
    a.player(rules_name, nodes), b.player(rules_name, nodes)  # a bad side fails here, not in a worker
    sizes = [pairs // shares + (i < pairs % shares) for i in range(min(shares, pairs))]
    starts = np.cumsum([0, *sizes[:-1]])
    work = [(rules_name, a, b, first_opening + int(s), n, nodes, seed + int(s), max_plies)
            for s, n in zip(starts, sizes, strict=True)]  # fmt: skip
    results = map_shares(play_pair_share, work)
    total = results[0]
    for result in results[1:]:
        total = total + result
    return total
