"""neurocheckers: evolve neural checkers players with JAX."""

__version__ = "0.1.0"
