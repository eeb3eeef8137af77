"""Solving small games: a proof-number search from the start down to the endgame database
(``prover``), the proof as strategy tables on disk (``proof_file``), and a checker that replays it
with the JAX rules and the database's files alone (``checker``)."""

from neurocheckers.solve.checker import CheckReport, ProofError, check_solution
from neurocheckers.solve.proof_file import Claim, Solution, load_solution, save_solution
from neurocheckers.solve.prover import Prover, ProverSettings, first_moves, solve_start

__all__ = [
    "CheckReport",
    "Claim",
    "ProofError",
    "Prover",
    "ProverSettings",
    "Solution",
    "check_solution",
    "first_moves",
    "load_solution",
    "save_solution",
    "solve_start",
]
