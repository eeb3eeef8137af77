"""A small folder for ``neurocheckers serve`` tests: an agent file, a saved game that names it, and
a tiny run folder (config from ``tiny.TINY_RUN``, a hand-written metrics.csv of a few epochs and
one boss), all made without running any evolution."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import jax
from tiny import TINY_RUN  # tests/ is on sys.path (see the test files)

from neurocheckers.analysis.games import result_text, save_games
from neurocheckers.experiment.config import load_config
from neurocheckers.experiment.run import create_run
from neurocheckers.formats import LINEAGE_DIR, LINEAGE_FILE, METRIC_COLUMNS, METRICS_FILE
from neurocheckers.networks.agent_file import save_agent
from neurocheckers.networks.evaluator import EvaluatorSpec, init_params
from neurocheckers.rules import SIMPLE6, init
from neurocheckers.rules.notation import apply_move, legal_moves, to_fen

EPOCHS_WRITTEN = 5
"""Metrics rows of the tiny run (fewer than its config's epochs: an interrupted run)."""
GAME_MOVES = 8
"""Moves of the saved game."""


def _game(agent_name: str) -> dict:
    """A game of ``GAME_MOVES`` random moves from the start, unfinished."""
    chooser = random.Random(0)
    state = jax.device_get(init(SIMPLE6))
    start = to_fen(state)
    moves, plies = [], 0
    for _ in range(GAME_MOVES):
        move = chooser.choice(legal_moves(SIMPLE6, state))
        moves.append(move.notation)
        plies += len(move.actions)
        state = apply_move(SIMPLE6, state, move)
    black = f"mcts:{agent_name}:2"
    return {"black": black, "white": "random", "start_fen": start, "moves": moves,
            "result": result_text(state), "plies": plies}  # fmt: skip


def _metric_row(epoch: int) -> dict:
    row = {c: "" for c in METRIC_COLUMNS}
    base = 2.0 + 0.3 * epoch
    row.update(epoch=epoch, fitness_min=base - 1, fitness_q25=base - 0.5, fitness_median=base)
    row.update(fitness_q75=base + 0.5, fitness_max=base + 1, fitness_mean=base, boss_changed=int(epoch == 2))
    return row


def make_served_folder(root: Path) -> Path:
    """Fill ``root`` and return it: ``agent.safetensors``, ``games/sample.json``, ``runs/<tiny run>``."""
    spec = EvaluatorSpec.for_rules(SIMPLE6, layers=1, width=4)
    params = init_params(jax.random.key(3), spec)
    save_agent(root / "agent.safetensors", SIMPLE6, spec, params)
    save_games(root / "games" / "sample.json", SIMPLE6, [_game("agent.safetensors")])
    run_dir = create_run(load_config(None, TINY_RUN, name="tiny"), root / "runs")
    with open(run_dir / METRICS_FILE, "a", newline="") as f:
        writer = csv.DictWriter(f, METRIC_COLUMNS, lineterminator="\n")
        writer.writerows(_metric_row(e) for e in range(EPOCHS_WRITTEN))
    boss = "boss_0001_epoch_0002.safetensors"
    save_agent(run_dir / LINEAGE_DIR / boss, SIMPLE6, spec, params)
    with open(run_dir / LINEAGE_FILE, "a", newline="") as f:
        csv.writer(f, lineterminator="\n").writerow((1, 2, 3.5, boss))
    return root


def long_game(rules, moves: int) -> tuple[list, dict]:
    """A game of ``moves`` random moves from the start that has not ended: its ``Move``s and the
    game dict of a game file (the first seed whose game lasts that long)."""
    for seed in range(100):
        chooser = random.Random(seed)
        state = jax.device_get(init(rules))
        start, played = to_fen(state), []
        while len(played) < moves and not bool(state.terminated):
            move = chooser.choice(legal_moves(rules, state))
            played.append(move)
            state = apply_move(rules, state, move)
        if len(played) == moves and not bool(state.terminated):
            game = {"black": "random", "white": "random", "start_fen": start,
                    "moves": [m.notation for m in played], "result": "*",
                    "plies": sum(len(m.actions) for m in played)}  # fmt: skip
            return played, game
    raise AssertionError(f"no random {rules.name} game of {moves} moves in 100 seeds")
