"""A match that stops once it is decided: rounds of paired games (each opening with both colours)
between any two players, a sequential test (``stats.SPRT``, fishtest's) after each round, until the
test accepts one hypothesis or the games run out. Claims then cost as few games as they need."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import jax
import numpy as np

from neurocheckers.match.arena import GameRecords, MatchInterrupted, join_records
from neurocheckers.match.clock import MoveClock
from neurocheckers.match.host import AnyPlayer, play_any_match
from neurocheckers.match.options import MatchOptions
from neurocheckers.rules.presets import Rules
from neurocheckers.stats import SEED_LIMIT, SPRT, pentanomial


@dataclasses.dataclass(frozen=True)
class SequentialResult:
    """A sequential match's end.

    Fields:
      records: [N] the games played, in pairs (games ``2i`` and ``2i + 1`` share an opening).
      counts: [5] the pentanomial counts of the pairs (A's points in a pair: 0, 0.5, 1, 1.5, 2).
      llr: the test's log-likelihood ratio after the last round.
      verdict: ``"H1"`` (A is ``test.elo1`` stronger), ``"H0"`` (``test.elo0``), or None: the games
        ran out first.
      rounds: rounds played.
    """

    records: GameRecords
    counts: np.ndarray
    llr: float
    verdict: str | None
    rounds: int


def round_options(options: MatchOptions, round_index: int, pairs: int) -> MatchOptions:
    """The options of round ``round_index`` of ``pairs`` game pairs: its own seed, and the next
    ``pairs`` of ``options.openings`` (cycled), so no opening repeats before they all have."""
    seed = (options.seed * 1_000_003 + round_index) % SEED_LIMIT
    openings = options.openings
    if openings is not None:
        count = int(jax.tree.leaves(openings)[0].shape[0])
        chosen = (round_index * pairs + np.arange(pairs)) % count
        openings = jax.tree.map(lambda x: x[chosen], openings)
    return dataclasses.replace(options, games=2 * pairs, seed=seed, openings=openings)


def play_until_decided(
    rules: Rules,
    a: AnyPlayer,
    b: AnyPlayer,
    options: MatchOptions,
    test: SPRT,
    on_round: Callable[[int, np.ndarray, float], None] | None = None,
    clock: MoveClock | None = None,
) -> SequentialResult:
    """A match of A against B in rounds of ``options.batch`` games (``options.batch // 2`` pairs, at
    least one), the ``test`` asked after each, until it accepts a hypothesis or ``options.games``
    games are played. ``on_round(games, counts, llr)`` after each round. The same options and seed
    play the same rounds. Ctrl-C raises ``arena.MatchInterrupted`` with every game played so far.
    """
    if options.games < 2 or options.batch < 2:
        raise ValueError(f"a sequential match plays pairs: games and batch must be >= 2, got "
                         f"{options.games} and {options.batch}")  # fmt: skip
    pairs = options.batch // 2
    parts: list[GameRecords] = []
    counts, played, value, verdict = np.zeros(5, dtype=np.int64), 0, 0.0, None
    while verdict is None and played + 2 <= options.games:
        size = min(pairs, (options.games - played) // 2)
        try:
            part = play_any_match(rules, a, b, round_options(options, len(parts), size), clock=clock)
        except MatchInterrupted as stop:  # Ctrl-C: every round's games so far, not this round's alone
            raise MatchInterrupted(join_records([*parts, stop.records], options.keep_actions)) from None
        except KeyboardInterrupt:
            if parts:
                raise MatchInterrupted(join_records(parts, options.keep_actions)) from None
            raise
        parts.append(part)
        played += len(part.score)
        counts = counts + pentanomial(np.asarray(part.score))
        value, verdict = test.decide(counts)
        if on_round is not None:
            on_round(played, counts, value)
    return SequentialResult(join_records(parts, options.keep_actions), counts, value, verdict, len(parts))
