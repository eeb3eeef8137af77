"""Neuroevolution: the reference study's genetic operators and adapters to evosax's strategies."""

from neurocheckers.evolution.operators import (
    crossover_layers,
    layer_paths,
    masked_loss,
    mutate_one_layer,
    next_generation,
    num_layers,
    pick_partners,
    rank_members,
    train_member,
)
from neurocheckers.evolution.settings import EvolutionSettings
from neurocheckers.evolution.strategies import (
    FlatStrategy,
    es_ask,
    es_best,
    es_init,
    es_tell,
    evosax_class,
    is_evosax,
    make_strategy,
)

__all__ = [
    "EvolutionSettings",
    "FlatStrategy",
    "crossover_layers",
    "es_ask",
    "es_best",
    "es_init",
    "es_tell",
    "evosax_class",
    "is_evosax",
    "layer_paths",
    "make_strategy",
    "masked_loss",
    "mutate_one_layer",
    "next_generation",
    "num_layers",
    "pick_partners",
    "rank_members",
    "train_member",
]
