"""The local web app of ``neurocheckers serve``: play an agent, step through saved games, watch runs.

``session`` holds the games people play (the Play page), ``folder`` reads the served folder (run
folders, game files, agent files; never writing, never outside it), and ``app`` is the Starlette
shell over both, with the static page in ``static/`` (no build step, nothing fetched from the
internet).
"""
