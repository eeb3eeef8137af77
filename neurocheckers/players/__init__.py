"""Every kind of player, behind one registry (``registry``: specs, forms, limits, ``--help`` and the
web's menu): our JAX policies (``policies``, ``jax_players``), the timed JAX search (``timed``), the
compiled search (``compiled``), external engine programs (``external``), py-draughts' engine
(``pydraughts``) and OpenSpiel's bots (``openspiel``). Nothing here imports ``match``: the match
loops play what the registry makes."""
