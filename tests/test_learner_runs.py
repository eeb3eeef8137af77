"""A self-play learner in the run machinery: its run folder (metrics, snapshots as the lineage,
strength columns), an interrupted run resumed to identical metrics, and its agent exported, read by
NumPy alone, played in a match, rated by the gauntlet's choice of search, plotted and replayed.

One tiny TD(lambda) config (2 x 4 MLP, 4 self-play games, MCTS of 2 simulations with epsilon
exploration, a material bootstrap) is compiled once for the file; its network and search are those
of tests/test_strength_probe.py, so the strength probe's compiled matches are shared.
"""

from __future__ import annotations

import csv

import jax
import numpy as np
import pytest
from killing import assert_killed_run_resumes_identically
from tiny import TINY_BY_STRATEGY

from neurocheckers.analysis.gauntlet import player_spec
from neurocheckers.analysis.lineage import boss_in_charge, lineage
from neurocheckers.cli import main
from neurocheckers.experiment.config import ConfigError, load_config
from neurocheckers.experiment.folder import (
    BUDGET_MARGIN_SECONDS,
    CHECKPOINT,
    DISCARDED_FILE,
    PIECES_MARGIN,
    Budget,
    RunError,
    checkpoint_epoch,
    run_status,
    stop_message,
    training_seconds,
)
from neurocheckers.experiment.run import create_run, run
from neurocheckers.experiment.trainers import make_trainer
from neurocheckers.formats import (
    LEARNER_COLUMNS,
    STRENGTH_COLUMNS,
    TIMING_COLUMNS,
    read_lineage,
    read_metrics,
)
from neurocheckers.learners.td_lambda import piece_games
from neurocheckers.networks.agent_file import load_agent, save_agent
from neurocheckers.networks.evaluator import value
from neurocheckers.networks.numpy_agent import NumpyAgent, encode_fen
from neurocheckers.players.jax_players import parse_player

LEARNER_RUN = [
    "name=tinytd",
    "strategy=td_lambda",
    "rules=simple6",
    "layers=2",
    "width=4",
    "search=mcts",
    "simulations=2",
    "selfplay_games=4",
    "max_plies=40",
    "updates_per_epoch=2",
    "batch_size=8",
    "bootstrap_positions=32",
    "bootstrap_steps=4",
    "epochs=4",
    "snapshot_every=2",
    "checkpoint_every=2",
    "strength_every=3",
]


@pytest.fixture(scope="module")
def config():
    return load_config(None, LEARNER_RUN)


@pytest.fixture(scope="module")
def learner_run(tmp_path_factory, config):
    return run(create_run(config, tmp_path_factory.mktemp("runs")))


def _stable_rows(run_dir):
    return [{k: v for k, v in row.items() if k not in TIMING_COLUMNS} for row in read_metrics(run_dir)]


def _lineage(run_dir):
    with open(run_dir / "lineage.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_learner_run_folder_has_metrics_snapshots_and_strength(learner_run):
    rows = read_metrics(learner_run)
    assert [int(r["epoch"]) for r in rows] == [0, 1, 2, 3]
    td_columns = [c for c in LEARNER_COLUMNS if c != "score_vs_opponent"]  # DQN's alone
    assert all(r[c] for r in rows for c in (*td_columns, "plies", "games", "learner_loss_after"))
    assert all(r["fitness_mean"] == "" for r in rows)
    assert [bool(r["strength_material"]) for r in rows] == [True, False, False, True]
    assert all(0 <= float(rows[0][c]) <= 1 for c in STRENGTH_COLUMNS if c != "strength_seconds")
    lineage = _lineage(learner_run)
    assert [int(r["epoch"]) for r in lineage] == [-1, 1, 3]
    assert len(lineage) == 1 + sum(int(r["boss_changed"]) for r in rows)
    assert [int(r["boss_id"]) for r in rows] == [0, 1, 1, 2]
    assert all((learner_run / "lineage" / r["file"]).exists() for r in lineage)


def test_interrupted_learner_run_resumes_to_identical_metrics(learner_run, config, tmp_path):
    run_dir = create_run(config, tmp_path)
    run(run_dir, stop_after=3)  # checkpoint after epoch 1; epoch 2's row and snapshot come after it
    assert len(read_metrics(run_dir)) == 3
    (run_dir / (CHECKPOINT + ".tmp")).write_bytes(b"\x00partial")  # a kill during the next write
    run(run_dir)
    assert _stable_rows(run_dir) == _stable_rows(learner_run)
    assert _lineage(run_dir) == _lineage(learner_run)


def test_exported_learner_agent_loads_with_numpy_plays_and_keeps_its_search(
    learner_run, config, tmp_path, capsys
):
    agent_file = tmp_path / "agent.safetensors"
    assert main(["export", str(learner_run), "--out", str(agent_file)]) == 0
    assert "network snapshot #" in capsys.readouterr().out  # a learner has no bosses
    agent = NumpyAgent.load(agent_file)
    fen = "B:W13,14,15,16,17,18:B1,2,3,4,5,6"
    setup = make_trainer(config)
    player = parse_player(f"greedy:{agent_file}", setup.rules)
    expected = value(setup.spec, player.params, encode_fen(fen, 6))
    np.testing.assert_allclose(agent.value_of_fen(fen), float(expected), rtol=1e-5)
    # The gauntlet plays a bare agent file with the search it was trained with.
    assert player_spec(str(agent_file), setup.rules) == f"mcts:{agent_file}:2"
    assert main(["match", f"greedy:{agent_file}", "random", "--games", "2"]) == 0


def test_plot_and_lineage_work_on_a_learner_run(learner_run, tmp_path, capsys):
    assert main(["plot", str(learner_run), "--out", str(tmp_path / "fitness.png")]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "fitness.png").stat().st_size > 0 and str(tmp_path / "strength.png") in out
    entries = lineage(learner_run)
    assert [e.epoch for e in entries] == [-1, 1, 3]
    assert boss_in_charge(entries, 2).boss_id == 1  # the snapshot taken after epoch 1
    for entry in entries:
        assert load_agent(entry.path, "simple6").metadata["search"] == "mcts"


def test_a_td_lambda_run_killed_with_sigkill_resumes_to_identical_metrics(tmp_path):
    items = [i for i in LEARNER_RUN if not i.startswith(("strength_every", "bootstrap"))]
    assert_killed_run_resumes_identically(items, 60, tmp_path)  # 10-40 ms an epoch: 57 to spare


def test_a_td_run_learns_from_an_endgame_database(tmp_path, small_db):
    """``endgame_targets`` hands the database to every epoch (as an argument, not a constant); a
    folder without one, or the key for a strategy that does not read it, is a one-line error."""
    keys = [*TINY_BY_STRATEGY["td_lambda"], "rules=american6", "epochs=1"]
    config = load_config(None, [*keys, f"endgame_targets={small_db}"])
    assert len(make_trainer(config).epoch_data) == 1
    run_dir = run(create_run(config, tmp_path))
    assert len(read_metrics(run_dir)) == 1
    with pytest.raises(RunError, match="endgame_targets = .*holds no endgame database"):
        make_trainer(load_config(None, [*keys, f"endgame_targets={tmp_path}"]))
    with pytest.raises(ConfigError, match="endgame_targets .* which strategy 'dqn' does not read"):
        load_config(None, [*TINY_BY_STRATEGY["dqn"], f"endgame_targets={small_db}"])


def test_a_td_run_starts_from_an_agent_file_and_refuses_one_that_does_not_fit(tmp_path):
    """``initial_agent``: the run's first network (lineage entry 0) is the file's and it trains on from
    there; a file of another network, a missing file, and the key for a strategy that does not read it
    are one-line errors."""
    keys = [*TINY_BY_STRATEGY["td_lambda"], "epochs=1"]
    trainer = make_trainer(load_config(None, keys))
    fresh = trainer.init(trainer.settings, jax.random.key(7)).params
    params = jax.tree.map(lambda x: x + 0.25, fresh)
    start = str(tmp_path / "start.safetensors")
    save_agent(start, "simple6", trainer.spec, params)
    run_dir = run(create_run(load_config(None, [*keys, f"initial_agent={start}"]), tmp_path / "runs"))
    first, last = (load_agent(entry.path) for entry in (lineage(run_dir)[0], lineage(run_dir)[-1]))
    assert jax.tree.all(jax.tree.map(np.array_equal, first.params, params))
    assert not jax.tree.all(jax.tree.map(np.array_equal, last.params, params))  # one epoch trained
    assert last.metadata["initial_agent"] == start
    with pytest.raises(RunError, match="initial_agent = .*x width 4 .*; \\[network\\]'s: .*x width 8 "):
        make_trainer(load_config(None, [*keys, "width=8", f"initial_agent={start}"]))
    with pytest.raises(RunError, match="initial_agent = .*missing.safetensors"):
        make_trainer(load_config(None, [*keys, f"initial_agent={tmp_path / 'missing.safetensors'}"]))
    with pytest.raises(ConfigError, match="initial_agent .* which strategy 'dqn' does not read"):
        load_config(None, [*TINY_BY_STRATEGY["dqn"], f"initial_agent={start}"])


def test_anchor_weight_pulls_the_targets_to_the_start_network(tmp_path):
    """``anchor_weight`` w: each target is ``(1 - w) target + w v_start``, so at w = 1, starting from
    the anchor, every target is the network's own value (no error before the updates) and the
    network barely moves; at w = 0 the TD targets differ from it. Without ``initial_agent`` it is a
    one-line error."""
    keys = [*TINY_BY_STRATEGY["td_lambda"], "epochs=1", "bootstrap_positions=0"]
    trainer = make_trainer(load_config(None, keys))
    start = str(tmp_path / "start.safetensors")
    save_agent(start, "simple6", trainer.spec, trainer.init(trainer.settings, jax.random.key(3)).params)
    errors = {}
    for weight in (0.0, 1.0):
        pulled = make_trainer(load_config(None, [*keys, f"initial_agent={start}", f"anchor_weight={weight}"]))
        assert len(pulled.epoch_data) == (2 if weight else 0)
        state = pulled.init(pulled.settings, jax.random.key(0))
        _, metrics = pulled.run_epoch(state, jax.random.key(1))
        errors[weight] = float(metrics["learner_loss_before"])
    assert errors[1.0] < 1e-10 < errors[0.0]
    with pytest.raises(ConfigError, match="anchor_weight = 0.5 .*set initial_agent"):
        load_config(None, [*keys, "anchor_weight=0.5"])
    with pytest.raises(ConfigError, match="anchor_weight must be in \\[0, 1\\], got 2"):
        load_config(None, [*keys, f"initial_agent={start}", "anchor_weight=2"])


PIECED_RUN = [*LEARNER_RUN, "selfplay_games=32", "epochs=2", "strength_every=0", "bootstrap_positions=0"]
"""32 self-play games: with a budget, an epoch plays them in 2 pieces of 16 (``piece_games``)."""


def test_a_budgeted_td_run_plays_its_epochs_in_pieces_with_the_same_results(tmp_path):
    """With a wall-time budget a TD epoch plays its games in pieces (so the run can stop between
    them); the games and the metrics are those of the whole epoch."""
    budgeted = load_config(None, [*PIECED_RUN, "budget_minutes=100000"])
    assert make_trainer(budgeted).epoch_steps is not None
    assert piece_games(make_trainer(budgeted).settings) == 16
    whole = run(create_run(load_config(None, PIECED_RUN), tmp_path / "whole"))
    pieced = run(create_run(budgeted, tmp_path / "pieced"))
    assert len(read_metrics(pieced)) == 2
    assert _stable_rows(pieced) == _stable_rows(whole)


def test_a_run_whose_budget_runs_out_inside_an_epoch_ends_with_its_last_full_epoch(tmp_path, monkeypatch):
    """The budget runs out inside the third epoch (stubbed): that epoch is dropped, and the second,
    whose row was written before the run knew it was the last, gets what a last epoch takes: the
    strength probe and the snapshot that ends the lineage (the network ``export`` writes)."""
    from neurocheckers.experiment import run as run_module

    real = run_module._play_epoch

    def out_of_budget_in_the_third(trainer, state, *args):
        return None if int(state.epoch) == 2 else real(trainer, state, *args)

    monkeypatch.setattr(run_module, "_play_epoch", out_of_budget_in_the_third)
    items = [*PIECED_RUN, "epochs=3", "budget_minutes=100000", "strength_every=5", "snapshot_every=5"]
    run_dir = run(create_run(load_config(None, items), tmp_path))
    rows = read_metrics(run_dir)
    assert [int(r["epoch"]) for r in rows] == [0, 1] and checkpoint_epoch(run_dir) == 2
    assert rows[-1]["strength_seconds"] and rows[-1]["boss_changed"] == "1" and rows[-1]["boss_id"] == "1"
    assert rows[0]["boss_changed"] == "0"  # epoch 0 took no snapshot (snapshot_every 5)
    assert [int(e["epoch"]) for e in read_lineage(run_dir)] == [-1, 1]
    assert read_metrics(run_dir)[-1] == rows[-1]  # the row as rewritten, read back


def test_a_budget_shorter_than_one_epoch_stops_inside_it_and_records_no_epoch(tmp_path):
    """The budget is checked between the pieces of an epoch: one far shorter than an epoch stops
    after its first piece. The partial epoch is dropped (no metrics row, checkpoint at epoch 0), its
    seconds count as spent, and a resumed run sees the budget spent and changes nothing."""
    run_dir = run(create_run(load_config(None, [*PIECED_RUN, "budget_minutes=1e-9"]), tmp_path))
    assert read_metrics(run_dir) == []
    assert checkpoint_epoch(run_dir) == 0
    assert training_seconds(run_dir) > 0 and (run_dir / DISCARDED_FILE).exists()
    assert run_status(run_dir, 2) == "budget reached"
    assert "after 0 of 2 epochs" in stop_message(run_dir)
    before = (run_dir / CHECKPOINT).read_bytes()
    run(run_dir)
    assert read_metrics(run_dir) == [] and (run_dir / CHECKPOINT).read_bytes() == before


def test_an_epoch_that_would_end_past_the_budget_is_not_started():
    """After an epoch, the next is expected to take as long: it starts only when it would end at
    most ``BUDGET_MARGIN_SECONDS`` past the budget."""
    assert not Budget(60.0, used=50.0, next_epoch=10.0 + BUDGET_MARGIN_SECONDS).spent()
    assert Budget(60.0, used=50.0, next_epoch=11.0 + BUDGET_MARGIN_SECONDS).spent()
    assert Budget(60.0, used=60.0).spent() and not Budget(0.0, used=1e9, next_epoch=1e9).spent()
    assert Budget(60.0, used=50.0).over(10.0) and not Budget(60.0, used=50.0).over(9.0)


def test_epochs_are_played_in_pieces_only_where_the_budget_may_end_inside_them():
    """Pieces cost time, so an epoch is played whole unless the budget may run out inside it: before
    any epoch was timed, or within ``PIECES_MARGIN`` latest epochs of the end; never without one."""
    assert Budget(60.0, used=0.0).may_end_in_next_epoch()
    assert not Budget(60.0, used=30.0, next_epoch=10.0).may_end_in_next_epoch()
    assert Budget(60.0, used=60.0 - PIECES_MARGIN * 10.0, next_epoch=10.0).may_end_in_next_epoch()
    assert not Budget(0.0, used=1e9).may_end_in_next_epoch()
