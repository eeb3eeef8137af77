"""Tree search over the rules engine: a compact, value-only MCTS with an injected leaf evaluator."""

from neurocheckers.search.mcts import (
    MCTSConfig,
    SearchOutput,
    ValueFn,
    anytime_search,
    batched_search,
    calibrate_simulations,
    search,
)

__all__ = [
    "MCTSConfig",
    "SearchOutput",
    "ValueFn",
    "anytime_search",
    "batched_search",
    "calibrate_simulations",
    "search",
]
