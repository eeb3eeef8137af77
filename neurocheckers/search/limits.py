"""Upper bounds on the search sizes a user may ask for: beyond them a match or a run cannot finish.
One constant a limit: the player specs' parsers and ``--help`` (``players.registry``) read them here.
Plain Python, no JAX (the command line's help imports it).

Measured on two CPU cores (american8, 10 plies of 2 games): alpha-beta took 0.4 s at depth 6, 3.1 s
at depth 8 and 17 s at depth 10, about 2.3 times more a level; so depth 14 takes about a minute a
ply and depth 20 days a game. MCTS keeps every node: 65,536 simulations need about 32 MB of tree a
game on an 8x8 board (64 GiB for a batch of 2,048 games; ``arena.run_match`` checks the memory).
"""

MAX_ALPHABETA_DEPTH = 14
"""The deepest alpha-beta search accepted (``alphabeta:D``, a run's ``depth``)."""

MAX_SIMULATIONS = 1 << 16
"""The most MCTS simulations per move accepted (``mcts:FILE:SIMS``, ``simulations`` of a run)."""

MAX_MOVE_SECONDS = 60.0
"""The longest think time a move may be given (``timed:``, ``compiled:``, ``pydraughts:Ns``; the
web app's and ``play``'s cap too)."""

MAX_TIMED_NODES = 100_000_000
"""The largest node budget of the JAX timed search (``timed:NODESn:EVAL``): 1,000 s at its 100 k
nodes a second."""

MAX_COMPILED_NODES = 1_000_000_000
"""The largest node budget of the compiled search (``compiled:NODESn``): a few minutes at its
3-5 M nodes a second."""

MAX_PYDRAUGHTS_DEPTH = 20
"""The deepest py-draughts search accepted (``pydraughts:D``)."""

MAX_OPENSPIEL_DEPTH = 12
"""The deepest OpenSpiel alpha-beta accepted (``openspiel:alphabeta:D``, in OpenSpiel actions: each
jump is one); it is plain Python, about 3 times slower a level."""

MAX_OPENSPIEL_SIMULATIONS = 100_000
"""The most simulations a move of OpenSpiel's MCTS bot (``openspiel:mcts:N``)."""
