"""Learners that train one evaluator network from its own games (reinforcement learning)."""

__all__ = []
