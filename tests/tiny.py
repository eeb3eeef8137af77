"""The smallest evolution config the tests run: keys for ``load_config(None, [...])``."""

TINY_RUN = [
    "rules=simple6",
    "population=4",
    "games_per_epoch=2",
    "layers=1",
    "width=4",
    "simulations=2",
    "train_steps=1",
    "max_plies=20",
]
"""A 4-member population of 1 x 4 MLPs, 2 games of at most 20 plies, 2 simulations a move."""
