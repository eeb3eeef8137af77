"""Replays of a run's bosses: the lineage table, the round-robin with Elo ratings, run comparisons,
and the ``lineage`` and ``compare`` commands."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from neurocheckers.analysis import elo, matches, replay
from neurocheckers.analysis.lineage import boss_in_charge, lineage
from neurocheckers.analysis.pdn_games import load_game_file
from neurocheckers.analysis.replay_figures import write_round_robin
from neurocheckers.cli import main
from neurocheckers.experiment.config import load_config
from neurocheckers.experiment.folder import RunError
from neurocheckers.experiment.run import create_run, run
from neurocheckers.formats import read_metrics

TINY = [
    "rules=simple6",
    "population=8",
    "games_per_epoch=2",
    "width=8",
    "simulations=2",
    "train_steps=2",
    "max_plies=60",
    "checkpoint_every=10",
]
GAMES = 4  # one value everywhere, so every match of one shape pair reuses one compiled program


def _synthetic_run(root, layers: int, promoted: list[int], epochs: int, extra: tuple[str, ...] = ()):
    """A run folder with random bosses promoted after ``promoted`` epochs, written directly (as
    ``run`` would) to spare the tests compiling a second evolution; ``extra`` config overrides."""
    import jax

    from neurocheckers.experiment.folder import search_metadata
    from neurocheckers.formats import LINEAGE_DIR, LINEAGE_FILE, METRIC_COLUMNS, METRICS_FILE
    from neurocheckers.networks.agent_file import save_agent
    from neurocheckers.networks.evaluator import EvaluatorSpec, init_params

    config = load_config(None, [*TINY, f"layers={layers}", f"epochs={epochs}", "name=other", *extra])
    path = create_run(config, root)
    spec = EvaluatorSpec(layers=layers, width=config.width, board_size=6)
    with open(path / METRICS_FILE, "a", newline="") as f:
        for epoch in range(epochs):
            row = dict.fromkeys(METRIC_COLUMNS, "0")
            row.update(epoch=str(epoch), wall_seconds=str(1.0 + epoch))
            csv.writer(f).writerow([row[c] for c in METRIC_COLUMNS])
    with open(path / LINEAGE_FILE, "a", newline="") as f:
        for boss_id, epoch in enumerate([-1, *promoted]):
            name = f"boss_{boss_id:04d}.safetensors"
            params = init_params(jax.random.key(boss_id), spec)
            metadata = search_metadata(config.search, config.depth)
            save_agent(path / LINEAGE_DIR / name, "simple6", spec, params, metadata)
            csv.writer(f).writerow((boss_id, epoch, 2.0, name))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A real base run (2 hidden layers, 6 epochs) and a differently shaped one (1 layer, 3 epochs)."""
    root = tmp_path_factory.mktemp("runs")
    base = run(create_run(load_config(None, [*TINY, "layers=2", "epochs=6", "name=base"]), root))
    return base, _synthetic_run(root, layers=1, promoted=[1], epochs=3)


def test_lineage_table_rows_and_csv(runs, tmp_path):
    base, _ = runs
    rows = replay.lineage_table(base, games=GAMES, every=4, seed=1)
    assert [r.epoch for r in rows] == [0, 4, 5]  # every 4th epoch, and the last
    entries = lineage(base)
    elapsed = np.cumsum([float(r["wall_seconds"]) for r in read_metrics(base)])
    for r in rows:
        assert r.games == GAMES
        assert 0 <= r.score <= GAMES and (2 * r.score) == int(2 * r.score)
        assert r.boss_id == boss_in_charge(entries, r.epoch).boss_id
        assert r.run_elapsed_seconds == pytest.approx(elapsed[r.epoch])
    path = replay.write_rows(rows, tmp_path / "lineage_table.csv")
    with open(path, newline="") as f:
        read = list(csv.DictReader(f))
    assert list(read[0]) == ["epoch", "boss_id", "score", "games", "run_elapsed_seconds"]
    assert [int(r["epoch"]) for r in read] == [0, 4, 5]
    text = replay.format_lineage_table(rows)
    assert f"Score (of {GAMES})" in text and "Run elapsed" in text


def test_bosses_of_an_alphabeta_run_replay_with_alphabeta(tmp_path):
    """A run that evolved under alpha-beta replays its bosses with the same search, and its game files
    name that search, not MCTS."""
    path = _synthetic_run(tmp_path, layers=1, promoted=[1], epochs=3, extra=("search=alphabeta", "depth=1"))
    entries = lineage(path)
    rules = matches.run_rules(load_config(None, TINY))
    assert matches.boss_spec(rules, entries[0], 2) == f"alphabeta:1:{entries[0].path}"
    assert matches.boss_player(rules, entries[1], 2).name == "boss #1"
    games: list[dict] = []
    rows = replay.lineage_table(path, games=GAMES, every=1, games_out=games)
    assert [r.epoch for r in rows] == [0, 1, 2]
    assert {g["black"] for g in games} | {g["white"] for g in games} == {
        f"alphabeta:1:{e.path}" for e in entries
    }


def test_table_epochs_and_sampling():
    assert replay.table_epochs(6, 4) == [0, 4, 5]
    assert replay.table_epochs(9, 4) == [0, 4, 8]
    assert replay.table_epochs(1, 32) == [0]
    assert elo.sample_indices(5, None) == [0, 1, 2, 3, 4]
    assert elo.sample_indices(3, 12) == [0, 1, 2]
    picked = elo.sample_indices(100, 12)
    assert len(picked) == 12 and picked[0] == 0 and picked[-1] == 99
    with pytest.raises(ValueError, match="--every"):
        replay.table_epochs(6, 0)
    with pytest.raises(ValueError, match="--games"):
        matches.check_games(3)


def test_round_robin_matrix_and_files(runs, tmp_path):
    base, _ = runs
    result = elo.round_robin(base, games=GAMES, sample=None, seed=2)
    k = len(lineage(base))
    assert result.scores.shape == (k, k) and len(result.entries) == k
    np.testing.assert_allclose(result.scores + result.scores.T, np.ones((k, k)))
    assert np.all((result.scores >= 0) & (result.scores <= 1))
    files = write_round_robin(result, tmp_path)
    for name in ("round_robin.csv", "round_robin.png", "elo.csv", "elo.png"):
        assert (tmp_path / name).stat().st_size > 0 and files[name] == tmp_path / name
    with open(tmp_path / "elo.csv", newline="") as f:
        ratings = list(csv.DictReader(f))
    assert len(ratings) == k and float(ratings[0]["elo"]) == 0.0  # the first boss anchors the scale
    assert float(ratings[0]["elo_se"]) == 0.0 and all(float(r["elo_se"]) > 0 for r in ratings[1:])
    assert "Elo" in elo.format_elo(result)


def test_fit_elo_ranks_a_dominating_player_first():
    # Player 2 beats everyone; 0 and 1 are even with each other.
    scores = np.array([[0.5, 0.5, 0.1], [0.5, 0.5, 0.05], [0.9, 0.95, 0.5]])
    ratings = elo.fit_elo(scores, 40)
    assert int(np.argmax(ratings)) == 2 and ratings[0] == 0.0
    assert abs(ratings[1] - ratings[0]) < 50 and ratings[2] > 300
    # Without the prior, a 3:1 head-to-head is the textbook gap of 400 log10(3) Elo.
    pair = np.array([[0.5, 0.75], [0.25, 0.5]])
    assert elo.fit_elo(pair, 100, prior=0.0)[1] == pytest.approx(-400 * math.log10(3), abs=1e-6)
    # A player who lost everything keeps a finite rating thanks to the prior.
    shutout = np.array([[0.5, 0.0], [1.0, 0.5]])
    assert np.all(np.isfinite(elo.fit_elo(shutout, 10)))


def test_compare_runs_of_other_shapes(runs, tmp_path):
    base, other = runs
    rows = replay.compare_runs(base, [base, other], games=GAMES, seed=3)
    assert [r.role for r in rows] == ["base", "run", "run"]
    assert [r.layers for r in rows] == [2, 2, 1]
    assert rows[0].score is None and rows[0].first_beat_epoch is None
    for r, run_dir in zip(rows[1:], (base, other), strict=True):
        assert r.epochs == len(read_metrics(run_dir)) and r.seconds_per_epoch > 0
        assert 0 <= r.score <= GAMES
        epochs = [e.epoch for e in lineage(run_dir)]
        assert r.first_beat_epoch == replay.DID_NOT_BEAT or r.first_beat_epoch in epochs
        if r.score > GAMES / 2:  # the final boss's own match ends the walk
            assert r.first_beat_epoch != replay.DID_NOT_BEAT
    assert rows[2].seconds_per_epoch == 2.5  # the median of epochs 1 and 2, without epoch 0
    path = replay.write_rows(rows, tmp_path / "compare.csv")
    with open(path, newline="") as f:
        read = list(csv.DictReader(f))
    assert len(read) == 3 and "first_beat_epoch" in read[0] and "seconds_per_epoch" in read[0]
    markdown = replay.format_compare_markdown(rows)
    assert markdown.count("\n") == 5 and "s/epoch" in markdown


def test_compare_refuses_other_rules(runs, tmp_path):
    import json

    base, _ = runs
    clone = tmp_path / "american"
    clone.mkdir()
    data = json.loads((base / "config.json").read_text())
    data["config"]["rules"] = "american6"
    (clone / "config.json").write_text(json.dumps(data))
    for name in ("metrics.csv", "lineage.csv"):
        (clone / name).write_text((base / name).read_text())
    with pytest.raises(RunError, match="american6"):
        replay.compare_runs(base, [clone], games=GAMES)


def test_cli_lineage_and_compare(runs, tmp_path, capsys):
    base, other = runs
    out = tmp_path / "lin"
    saved = tmp_path / "table1.pdn"
    args = ["lineage", str(base), "--games", str(GAMES), "--every", "3", "--out", str(out), "--save-games"]
    assert main([*args, str(saved)]) == 0
    printed = capsys.readouterr().out
    assert f"Score (of {GAMES})" in printed and "Elo" in printed
    # Table 1's games, readable by show and serve: every row's games, naming the bosses' files.
    table = list(csv.DictReader((out / "lineage_table.csv").read_text().splitlines()))
    games = load_game_file(saved).games
    assert len(games) == GAMES * len(table)
    assert all(g["black"].startswith("mcts:") and g["white"].startswith("mcts:") for g in games)
    for name in ("lineage_table.csv", "round_robin.png", "elo.csv"):
        assert (out / name).exists()
    target = tmp_path / "cmp.csv"
    assert main(["compare", str(base), str(other), "--games", str(GAMES), "--out", str(target)]) == 0
    assert "First beat base" in capsys.readouterr().out
    assert target.exists() and target.with_suffix(".md").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["lineage", "RUN", "--games", "3"], "--games must be an even number >= 2, got 3"),
        (["lineage", "RUN", "--games", "0"], "--games must be an even number >= 2, got 0"),
        (["lineage", "RUN", "--every", "0"], "--every must be >= 1, got 0"),
        (["lineage", "RUN", "--sample", "1"], "--sample must be >= 2"),
        (["lineage", "NOT_A_RUN"], "is not a neurocheckers run folder"),
        (["compare", "RUN", "NOT_A_RUN"], "is not a neurocheckers run folder"),
        (["compare", "RUN", "RUN", "--games", "5"], "--games must be an even number >= 2, got 5"),
    ],
)
def test_cli_bad_input(runs, tmp_path, capsys, args, message):
    base, _ = runs
    argv = [str(base) if a == "RUN" else str(tmp_path) if a == "NOT_A_RUN" else a for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("neurocheckers: error:") and message in err and err.count("\n") == 1


def test_elo_standard_error_of_a_pair_is_the_binomial_one():
    # Two players, 100 games at 3:1 and no prior: the log-strength gap has variance 1 / (n p (1 - p)).
    pair = np.array([[0.5, 0.75], [0.25, 0.5]])
    ratings = elo.fit_elo(pair, 100, prior=0.0)
    errors = elo.elo_standard_errors(pair, 100, ratings, prior=0.0)
    assert errors[0] == 0.0  # the anchor
    assert errors[1] == pytest.approx(400 / math.log(10) / math.sqrt(100 * 0.75 * 0.25), rel=1e-6)
    # Four times the games, half the error.
    assert elo.elo_standard_errors(pair, 400, ratings, prior=0.0)[1] == pytest.approx(errors[1] / 2)


def test_elo_figure_has_error_bars_labels_inside_and_the_first_boss_at_zero(tmp_path):
    from matplotlib.container import ErrorbarContainer

    from neurocheckers.analysis.lineage import LineageEntry
    from neurocheckers.analysis.replay_figures import elo_figure

    entries = tuple(LineageEntry(i, e, 6.0, tmp_path / f"{i}.safetensors") for i, e in enumerate([-1, 4, 9]))
    scores = np.array([[0.5, 0.3, 0.1], [0.7, 0.5, 0.4], [0.9, 0.6, 0.5]])
    ratings = elo.fit_elo(scores, 20)
    errors = elo.elo_standard_errors(scores, 20, ratings)
    fig = elo_figure(elo.RoundRobin(entries, scores, 20), ratings, errors)
    (ax,) = fig.axes
    (bars,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    np.testing.assert_array_equal(bars.lines[0].get_xdata(), [0, 5, 10])  # first epoch as the boss
    fig.draw_without_rendering()
    frame = ax.get_window_extent()
    labels = [t for t in ax.texts if t.get_text().startswith("#")]
    assert [t.get_text() for t in labels] == ["#0", "#1", "#2"]
    for label in labels:
        box = label.get_window_extent()
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
