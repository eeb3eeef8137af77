"""Tree search over the rules engine: a compact, value-only MCTS with an injected leaf evaluator,
knowledge-light baseline players, and the ``Policy`` and ``ValueFn`` types they share.

Names are loaded on first use, so that the plain-Python ``limits`` module can be imported without
importing JAX (the command line's help does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neurocheckers.runtime import lazy_exports

_HOMES = {
    "MCTSConfig": "mcts",
    "SearchOutput": "mcts",
    "anytime_search": "anytime",
    "batched_search": "mcts",
    "calibrate_simulations": "anytime",
    "search": "mcts",
    "Policy": "types",
    "ValueFn": "types",
}

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

if TYPE_CHECKING:
    from neurocheckers.search.anytime import anytime_search, calibrate_simulations
    from neurocheckers.search.mcts import MCTSConfig, SearchOutput, batched_search, search
    from neurocheckers.search.types import Policy, ValueFn


__getattr__, __dir__ = lazy_exports(__name__, _HOMES)
