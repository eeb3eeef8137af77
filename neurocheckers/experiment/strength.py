"""Absolute strength over training time: a small fixed match that rates a run's current boss.

Fitness against a moving boss cannot show progress; this can. Every ``strength_every`` epochs the run
plays two matches over the same committed paired openings (each opening once with each colour) and
fixed seeds, so probes of different epochs and runs compare:

- ``material``: the boss's network at the leaves of a depth-``PROBE_DEPTH`` alpha-beta against the
  material count at the same depth (the gauntlet's equal-depth test);
- ``random``: the boss with its training search against a uniformly random player.

Each score comes with its paired 95% interval (``stats.paired_interval``).
"""

from __future__ import annotations

import functools
import time
from typing import Any, Protocol

from neurocheckers.evolution.selection import member_policy
from neurocheckers.match.arena import MatchOptions, PopulationSearch, run_match
from neurocheckers.networks.evaluator import EvaluatorSpec, value_fn
from neurocheckers.players.policies import alphabeta_player_policy, random_player_policy
from neurocheckers.rules.openings import load_openings, opening_states
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import State
from neurocheckers.stats import paired_interval

PROBE_OPENINGS = 32
"""Committed openings of each probe match (each played with both colours)."""
PROBE_DEPTH = 2
"""Alpha-beta depth of the equal-depth match."""
PROBE_SEED = 0
"""The seed of every probe match (tie-breaks and search noise), the same at every epoch."""


class ProbedSetup(Protocol):
    """What the probe needs of a run's setup (an evolution ``Setup`` or a learner's)."""

    rules: Rules
    spec: EvaluatorSpec
    search: PopulationSearch


@functools.cache
def probe_openings(rules: Rules) -> State:
    """The first ``PROBE_OPENINGS`` committed openings of ``rules`` ([N] states)."""
    return opening_states(rules, load_openings(rules, PROBE_OPENINGS))


def strength_probe(setup: ProbedSetup, boss: Any) -> dict[str, float]:
    """The strength columns of ``metrics.csv`` (``formats.STRENGTH_COLUMNS``) for ``boss``, a run's
    network params: each match's score, its 95% interval, and the seconds the probe took."""
    start = time.perf_counter()
    rules = setup.rules
    openings = probe_openings(rules)
    games = 2 * PROBE_OPENINGS
    matches = {
        "material": (
            alphabeta_player_policy(rules, PROBE_DEPTH, value_fn(setup.spec)),
            alphabeta_player_policy(rules, PROBE_DEPTH),
        ),
        "random": (member_policy(rules, setup.spec, setup.search), random_player_policy(rules)),
    }
    row: dict[str, float] = {}
    for name, (policy, opponent) in matches.items():
        options = MatchOptions(games, seed=PROBE_SEED, batch=games, openings=openings)
        records = run_match(rules, policy, boss, opponent, None, options)
        score, low, high = paired_interval(records.score)
        row.update({f"strength_{name}": score, f"strength_{name}_low": low, f"strength_{name}_high": high})
    row["strength_seconds"] = time.perf_counter() - start
    return row


def is_probe_epoch(epoch: int, every: int, total: int) -> bool:
    """Whether epoch ``epoch`` (0-based) of a run of ``total`` epochs rates its boss: every
    ``every``-th epoch from the first, and the last (never when ``every`` is 0)."""
    return every > 0 and (epoch % every == 0 or epoch == total - 1)
