"""The ``neurocheckers`` command line: thin commands over library functions that the tests call.

Each module registers its commands on the one ``app`` (``--help`` lists them in this import order).
Importing this package imports no JAX: commands import what they need when they run.
"""

# isort: off
from neurocheckers.cli import matches, runs, games, lineage, endgame, solve, web  # noqa: F401  (registers the commands)

# isort: on
from neurocheckers.cli.common import UserError, app
from neurocheckers.cli.main import exit_soon_after_an_interrupt, main

__all__ = ["UserError", "app", "exit_soon_after_an_interrupt", "main"]
