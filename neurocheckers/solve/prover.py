"""Solving a game from its start: the value of the start position and of each first move by the
compiled proof-number search (``compiled.proof``), with the strategy tables that prove them."""

from __future__ import annotations

import dataclasses
import platform
import time
from collections.abc import Callable

import numpy as np

from neurocheckers.compiled import proof, proof_extract
from neurocheckers.compiled.board import Position, game_rule, geometry
from neurocheckers.compiled.endgame import SearchDB
from neurocheckers.endgame.database import DRAW, LOSS, VALUE_NAMES, WIN
from neurocheckers.rules.presets import Rules
from neurocheckers.solve.proof_file import Claim, Solution

GOALS = {"win": proof.GOAL_WIN, "not_lose": proof.GOAL_NOT_LOSE}


@dataclasses.dataclass(frozen=True)
class ProverSettings:
    """How hard the prover may work."""

    table_bits: int = 24
    """The transposition table holds 2**table_bits positions (24 bytes each)."""
    proof_bits: int = 24
    """The extracted proof holds up to 2**proof_bits positions a table (and twice as many seen)."""
    keep_line_results: bool = False
    """Keep values that rest on a repetition above their node in the table as if they held on every
    line (``proof.new_aux``): far faster with a small database, an answer then standing only once its
    proof is written out."""


class Prover:
    """One transposition table and one pair of strategy tables shared by every question asked."""

    def __init__(self, rules: Rules, db: SearchDB, settings: ProverSettings = ProverSettings()):
        if rules.num_squares > proof.MAX_SQUARES:
            raise ValueError(
                f"--rules {rules.name}: proofs are for boards of at most {proof.MAX_SQUARES} squares"
            )
        self.rules, self.db, self.settings = rules, db, settings
        self.geo = geometry(game_rule(rules))
        self.table = proof.new_table(settings.table_bits)
        self.moves = proof.move_buffer()
        self.visited = proof_extract.new_visited(settings.proof_bits + 1)
        self.records = {name: np.zeros((1 << settings.proof_bits, 2), np.int64) for name in GOALS}
        self.counts = dict.fromkeys(GOALS, 0)
        self.nodes = 0
        self.seconds = 0.0
        self.questions: list[dict] = []

    def ask(self, position: Position, goal: str, attacker_moves: bool, extract: bool) -> bool:
        """Whether the side to move (``attacker_moves``) or the other side meets ``goal`` at
        ``position``; with ``extract``, its proof is added to the goal's table (an error if it fails)."""
        aux = proof.new_aux(GOALS[goal], keep_line_results=self.settings.keep_line_results)
        aux[proof.X_RECORDS] = self.counts[goal]
        began = time.perf_counter()
        state = (*position.relative(), position.color)
        if extract:
            holds = proof_extract.prove(
                self.geo, self.db.array, self.table, self.moves, aux, self.visited, self.records[goal], state,
                attacker_moves,
            )  # fmt: skip
            if not holds:
                reason, ply = int(aux[proof.X_FAIL]), int(aux[proof.X_FAIL_PLY])
                raise RuntimeError(
                    f"the proof of {goal} could not be written out (step {reason} at ply {ply})"
                )
            self.counts[goal] = int(aux[proof.X_RECORDS])
        else:
            holds = bool(
                proof.solve(self.geo, self.db.array, self.table, self.moves, aux, state, attacker_moves)
            )
        self._note(goal, attacker_moves, holds, aux, time.perf_counter() - began)
        return holds

    def _note(self, goal: str, attacker_moves: bool, holds: bool, aux: np.ndarray, spent: float) -> None:
        nodes = int(aux[proof.X_NODES])
        self.nodes += nodes
        self.seconds += spent
        hit_rate = int(aux[proof.X_TABLE_HITS]) / max(1, int(aux[proof.X_LOOKUPS]))
        self.questions.append({"goal": goal, "attacker_moves": attacker_moves, "holds": holds, "nodes": nodes,
                               "seconds": round(spent, 3), "table_hit_rate": round(hit_rate, 4)})  # fmt: skip

    def value(self, position: Position) -> int:
        """The value of ``position`` for its mover, with the proofs of it added to the tables."""
        if self.ask(position, "win", True, False):
            self.ask(position, "win", True, True)
            return WIN
        if not self.ask(position, "not_lose", True, False):
            self.ask(position, "win", False, True)
            return LOSS
        self.ask(position, "not_lose", True, True)
        self.ask(position, "not_lose", False, True)
        return DRAW

    def key(self, position: Position) -> int:
        om, ok, pm, pk = position.relative()
        return int(proof.position_key(self.geo, om, ok, pm, pk, np.int64(position.color)))

    def tables(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        rows = {name: self.records[name][: self.counts[name]] for name in GOALS}
        return {name: (r[:, 0].copy(), r[:, 1].copy()) for name, r in rows.items()}


def first_moves(rules: Rules) -> list[tuple[str, Position]]:
    """(notation, position after) of every first move of ``rules``' game, by the JAX rules."""
    from neurocheckers.rules.engine import init
    from neurocheckers.rules.notation import apply_move, legal_moves

    state = init(rules)
    return [(m.notation, Position.from_state(apply_move(rules, state, m))) for m in legal_moves(rules, state)]


def solve_start(rules: Rules, db: SearchDB, settings: ProverSettings = ProverSettings(),
                progress: Callable[[str], None] = print) -> Solution:  # fmt: skip
    """The value of the start of ``rules`` and of each first move, proven."""
    prover = Prover(rules, db, settings)
    start = Position.start(rules)
    claims = []
    for label, after in first_moves(rules):
        value = prover.value(after)
        claims.append(Claim(prover.key(after), value, f"start {label}"))
        progress(f"after {label}: {VALUE_NAMES[value]} for the side to move ({prover.nodes:,} nodes so far)")
    best = max(2 - c.value for c in claims)
    if best == DRAW:  # the start's own proofs: the mover's safety, and the other side's replies
        prover.ask(start, "not_lose", True, True)
    elif best == WIN:
        prover.ask(start, "win", True, True)
    claims.insert(0, Claim(prover.key(start), best, "start"))
    info = {
        "database_pieces": db.max_pieces,
        "nodes": prover.nodes,
        "search_seconds": round(prover.seconds, 2),
        "table_bits": settings.table_bits,
        "questions": prover.questions,
        "machine": platform.machine(),
    }
    return Solution(rules.name, tuple(claims), prover.tables(), info)
