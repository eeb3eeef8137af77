"""The local web app of ``neurocheckers serve``: play an agent, step through saved games, watch runs.

``session`` plays the games people play (the Play page), ``sessions`` holds them and saves them in
the served folder (its only writing), ``setup`` reads a position to start from, ``folder`` reads
the served folder (run folders, game files, agent files; never outside it), and ``app`` is the Starlette
shell over both, with the static page in ``static/`` (no build step, nothing fetched from the
internet).
"""
