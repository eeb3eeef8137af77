"""Upper bounds on the search sizes a user may ask for: beyond them a match or a run cannot finish.

Measured on two CPU cores (american8, 10 plies of 2 games): alpha-beta took 0.4 s at depth 6, 3.1 s
at depth 8 and 17 s at depth 10, about 2.3 times more a level; so depth 14 takes about a minute a
ply and depth 20 days a game. MCTS keeps every node: 65,536 simulations need about 32 MB of tree a
game on an 8x8 board (64 GiB for a batch of 2,048 games; ``arena.run_match`` checks the memory).
"""

MAX_ALPHABETA_DEPTH = 14
"""The deepest alpha-beta search accepted (``alphabeta:D``)."""

MAX_SIMULATIONS = 1 << 16
"""The most MCTS simulations per move accepted (``mcts:FILE:SIMS``, ``simulations`` of a run)."""
