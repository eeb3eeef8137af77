"""Tree search over the rules engine: a compact, value-only MCTS with an injected leaf evaluator,
knowledge-light baseline players, and the ``Policy`` and ``ValueFn`` types they share."""

from neurocheckers.search.mcts import (
    MCTSConfig,
    SearchOutput,
    anytime_search,
    batched_search,
    calibrate_simulations,
    search,
)
from neurocheckers.search.types import Policy, ValueFn

__all__ = [
    "MCTSConfig",
    "Policy",
    "SearchOutput",
    "ValueFn",
    "anytime_search",
    "batched_search",
    "calibrate_simulations",
    "search",
]
