"""Where players meet: the batched JAX arena (``arena``: matches, population games, self-play), the
host loop that plays any players one game at a time (``host``), both sides' clock (``clock``), and
the one game a person plays (``session``, ``turns``: ``play`` and the web)."""
