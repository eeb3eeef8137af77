"""Command-line paths without tests elsewhere: ``perft``, ``match``, ``export``, ``plot``, and the
NumPy-only agent reader (``numpy_agent``) against the JAX evaluator.

Everything is tiny: one evolution run (population 4, 1 x 4 MLP, 2 simulations, 3 epochs) is shared
by the whole file, and every match plays ``GAMES`` games so each player pair compiles once.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import jax
import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import save_file

from neurocheckers.analysis.games import load_games
from neurocheckers.cli import main
from neurocheckers.experiment.config import load_config
from neurocheckers.experiment.run import create_run, run
from neurocheckers.formats import read_metrics
from neurocheckers.networks.agent_file import INPUT_ENCODING, load_agent
from neurocheckers.networks.evaluator import encode, value_fn
from neurocheckers.networks.numpy_agent import NumpyAgent, encode_fen
from neurocheckers.rules import SIMPLE6, init
from neurocheckers.rules.notation import apply_move, legal_moves, parse_fen, to_fen

GAMES = 4
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_errors import error_line  # noqa: E402
from tiny import TINY_RUN  # noqa: E402

TINY = [
    *TINY_RUN,
    "epochs=3",
    # Any point promotes the best member, so every epoch brings a new boss and --epoch has choices.
    "promotion_threshold=0.01",
    "checkpoint_every=10",
    "name=cli",
]


def _lineage_rows(run_dir) -> list[dict[str, str]]:
    with open(run_dir / "lineage.csv", newline="") as f:
        return list(csv.DictReader(f))


def _tensors(path) -> dict[str, np.ndarray]:
    with safe_open(str(path), framework="numpy") as f:
        return {name: f.get_tensor(name) for name in f.keys()}  # noqa: SIM118 (not a dict)


def _metadata(path) -> dict[str, str]:
    with safe_open(str(path), framework="numpy") as f:
        return dict(f.metadata() or {})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two finished tiny runs of the same config (the second compiles nothing new)."""
    root = tmp_path_factory.mktemp("runs")
    config = load_config(None, TINY)
    first = run(create_run(config, root))
    second = run(create_run(config, root))
    assert first != second
    return first, second


@pytest.fixture(scope="module")
def exported(runs, tmp_path_factory):
    """The first run's final boss, exported through the command line."""
    path = tmp_path_factory.mktemp("agents") / "final.safetensors"
    assert main(["export", str(runs[0]), "--out", str(path)]) == 0
    return path


# --- perft -------------------------------------------------------------------------------------


def test_perft_american8_opening(capsys):
    assert main(["perft", "--rules", "american8", "--depth", "3"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == ["depth 1: 7", "depth 2: 49", "depth 3: 302"]


def test_perft_from_fen(capsys):
    # One Black man on 1 (moves to 5 or 6) against one White man on 32 (to 27 or 28), far apart:
    # 2 moves, 2 x 2 replies, then the man on 5 has 1 step and the man on 6 has 2: 2 x 1 + 2 x 2.
    assert main(["perft", "--rules", "american8", "--fen", "B:W32:B1", "--depth", "3"]) == 0
    assert capsys.readouterr().out.splitlines() == ["depth 1: 2", "depth 2: 4", "depth 3: 6"]
    # A forced double jump takes both White men: one move, then White has none.
    assert main(["perft", "--rules", "american6", "--fen", "B:W8,14:B5", "--depth", "2"]) == 0
    assert capsys.readouterr().out.splitlines() == ["depth 1: 1", "depth 2: 0"]


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["--rules", "bogus6", "--depth", "2"], ["'bogus6'", "simple6"]),
        (["--rules", "simple6", "--fen", "X:W1:B2", "--depth", "2"], ["malformed FEN", "X:W1:B2"]),
        (["--rules", "simple6", "--fen", "B:W99:B1", "--depth", "2"], ["malformed FEN", "99"]),
        (["--rules", "simple6", "--depth", "0"], ["--depth", "0"]),
    ],
)
def test_perft_bad_input_is_one_line(capsys, args, names):
    assert main(["perft", *args]) == 2
    error_line(capsys, *names)


# --- match -------------------------------------------------------------------------------------


MATCH = ["--rules", "simple6", "--games", str(GAMES), "--max-plies", "40", "--seed", "3"]


def test_match_table_json_and_plot(capsys, tmp_path):
    assert main(["match", "random", "alphabeta:2", *MATCH]) == 0
    table = capsys.readouterr().out
    assert f"random vs alphabeta:2 on simple6: {GAMES} games" in table
    for row in ("A wins", "draws", "A losses", "A score", "95% CI", "final material difference"):
        assert row in table

    plot = tmp_path / "hist.png"
    assert main(["match", "random", "alphabeta:2", *MATCH, "--json", "--plot", str(plot)]) == 0
    summary = json.loads(capsys.readouterr().out)  # --json prints nothing but the JSON
    assert summary["player_a"] == "random" and summary["player_b"] == "alphabeta:2"
    assert summary["rules"] == "simple6" and summary["seed"] == 3
    assert summary["games"] == GAMES
    assert summary["wins"] + summary["draws"] + summary["losses"] + summary["unfinished"] == GAMES
    assert 0.0 <= summary["score"] <= 1.0
    halves = summary["draws"] + summary["unfinished"]  # a game cut by the cap scores 1/2
    assert summary["score"] == pytest.approx((summary["wins"] + 0.5 * halves) / GAMES)
    lo, hi = summary["score_ci95"]
    assert lo <= summary["score"] <= hi
    assert 0 <= summary["unfinished"] <= GAMES
    assert sum(summary["material_diff_histogram"].values()) == GAMES
    # The same seed plays the same games: the table's counts are the JSON's.
    assert f"A wins   {summary['wins']:>8}" in table and f"A losses {summary['losses']:>8}" in table
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(("games", "batch"), [(5, 2), (3, 8)])
def test_match_colours_are_balanced_across_chunks(capsys, tmp_path, games, batch):
    """Every saved game of an odd match: A is Black in games 1, 3, 5, ..., so the colours differ by one."""
    saved = tmp_path / "g.json"
    args = ["match", "random", "greedy-material", "--games", str(games), "--batch", str(batch)]
    assert main([*args, "--max-plies", "8", "--save-games", str(saved), "--save-count", str(games)]) == 0
    assert f"{games} games" in capsys.readouterr().out
    blacks = [g["black"] for g in load_games(saved).games]
    assert blacks == ["random" if i % 2 == 0 else "greedy-material" for i in range(games)]


def test_match_plot_path_is_the_one_written(capsys, tmp_path):
    folder = tmp_path / "plots"
    folder.mkdir()
    for given, written in ((folder, folder / "material.png"), (tmp_path / "hist", tmp_path / "hist.png")):
        assert main(["match", "random", "random", *MATCH, "--plot", str(given)]) == 0
        assert f"histogram: {written}" in capsys.readouterr().out
        assert written.read_bytes()[:4] == b"\x89PNG"
    assert main(["match", "random", "random", *MATCH, "--plot", str(tmp_path / "h.txt")]) == 2
    error_line(capsys, "--plot", "h.txt")


def test_help_texts():
    """Every command has an example; placeholders say what they take; the command list is not cut."""
    from typer.testing import CliRunner

    from neurocheckers.cli import app

    runner = CliRunner()
    top = runner.invoke(app, ["--help"]).output
    assert "..." not in top.split("Commands:")[1]
    commands = [
        *("perft", "match", "evolve", "sweep", "plot", "export", "play", "show", "lineage", "compare"),
        *("gauntlet", "serve", "accuracy"),
    ]
    for command in commands:
        text = runner.invoke(app, [command, "--help"]).output
        assert "Example:" in text and f"neurocheckers {command} " in text, command
        for option_line in text.split("Options:")[1].splitlines():
            assert "<" not in option_line, (command, option_line)  # no <str>, <int>, <list[str]>
    evolve_help = runner.invoke(app, ["evolve", "--help"]).output
    assert "--set KEY=VALUE" in evolve_help and "--out FOLDER" in evolve_help
    assert "games-game1.gif" in runner.invoke(app, ["show", "--help"]).output
    match_help = " ".join(runner.invoke(app, ["match", "--help"]).output.split())
    assert "Uniformly random plies at the start of each game" in match_help  # MatchOptions' own words
    assert "--sprt ELO0,ELO1 Stop once decided: fishtest's SPRT" in match_help


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("alphabeta:x", ["'alphabeta:x'", "'x'"]),
        ("alphabeta:0", ["'alphabeta:0'", "in 1..14"]),
        ("alphabeta:60", ["'alphabeta:60'", "the depth must be in 1..14, got 60"]),
        ("mcts-rollout:100000000", ["simulation count must be in 1..65536", "100000000"]),
        ("mcts:missing.safetensors:4", ["mcts:missing.safetensors:4", "missing.safetensors"]),
        ("nonsense", ["'nonsense'", "alphabeta:D"]),
    ],
)
def test_match_bad_player_spec(capsys, spec, names):
    for players in (["random", spec], [spec, "random"]):
        assert main(["match", *players, *MATCH]) == 2
        error_line(capsys, *names)


def test_match_bad_numbers(capsys):
    assert main(["match", "random", "random", "--games", "0"]) == 2
    error_line(capsys, "--games", "0")
    assert main(["match", "random", "random", "--rules", "bogus"]) == 2
    error_line(capsys, "'bogus'")


# --- export ------------------------------------------------------------------------------------


def test_export_final_boss_metadata(runs, exported, capsys):
    run_dir = runs[0]
    rows = _lineage_rows(run_dir)
    assert len(rows) >= 3, "the tiny run should promote a boss every epoch"
    last = rows[-1]
    meta = _metadata(exported)
    assert meta["format"] == "neurocheckers-agent"
    assert meta["rules"] == "simple6" and meta["board_size"] == "6"
    assert meta["layers"] == "1" and meta["width"] == "4"
    assert meta["input_encoding"] == INPUT_ENCODING
    assert meta["lineage_epoch"] == last["epoch"]
    assert meta["simulations"] == "2"
    assert meta["run"] == run_dir.name and meta["search"] == "mcts"
    # The weights are the last boss's, unchanged.
    boss = _tensors(run_dir / "lineage" / last["file"])
    out = _tensors(exported)
    assert sorted(out) == sorted(boss) == ["layer_0/bias", "layer_0/kernel", "layer_1/bias", "layer_1/kernel"]
    assert out["layer_0/kernel"].shape == (36, 4)
    for name in boss:
        np.testing.assert_array_equal(out[name], boss[name])


def test_export_epoch_picks_an_earlier_boss(runs, tmp_path, capsys):
    run_dir = runs[0]
    rows = _lineage_rows(run_dir)
    epochs_done = len(read_metrics(run_dir))
    assert epochs_done == 3
    chosen = {}
    for epoch in range(epochs_done):
        out = tmp_path / f"e{epoch}.safetensors"
        assert main(["export", str(run_dir), "--out", str(out), "--epoch", str(epoch)]) == 0
        # The boss in charge during EPOCH: the last one promoted after an earlier epoch.
        expected = [r for r in rows if int(r["epoch"]) < epoch][-1]
        origin = f"promoted after epoch {expected['epoch']}" if epoch else "the initial random boss"
        assert f"boss #{expected['boss_id']} ({origin})" in capsys.readouterr().out
        assert _metadata(out)["lineage_epoch"] == expected["epoch"]
        boss = _tensors(run_dir / "lineage" / expected["file"])
        for name, array in _tensors(out).items():
            np.testing.assert_array_equal(array, boss[name])
        chosen[epoch] = expected["boss_id"]
    assert chosen[0] == rows[0]["boss_id"] and chosen[epochs_done - 1] == rows[-2]["boss_id"]
    assert len(set(chosen.values())) > 1  # the epochs really select different bosses


def test_export_errors(runs, tmp_path, capsys):
    run_dir = runs[0]
    out = tmp_path / "x.safetensors"
    for epoch in ("-1", "3", "1000"):  # the run played epochs 0, 1 and 2
        assert main(["export", str(run_dir), "--out", str(out), "--epoch", epoch]) == 2
        error_line(capsys, "--epoch", epoch, "0..2")
    assert main(["export", str(tmp_path), "--out", str(out)]) == 2
    error_line(capsys, str(tmp_path), "not a neurocheckers run folder")
    assert not out.exists()


def test_export_paths_that_cannot_be_written(runs, tmp_path, capsys):
    run_dir = runs[0]
    assert main(["export", str(run_dir), "--out", str(tmp_path)]) == 2
    error_line(capsys, "--out", "is a folder", str(tmp_path / "agent.safetensors"))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["export", str(run_dir), "--out", str(blocker / "agent.safetensors")]) == 2
    error_line(capsys, "--out", "is a file, not a folder")
    assert main(["export", str(run_dir), "--out", str(blocker)]) == 2  # not an agent file's name
    error_line(capsys, "--out", "must end in .safetensors")
    assert main(["export", str(run_dir), "--out", str(tmp_path / "agent.txt")]) == 2
    error_line(capsys, "--out", "agent.txt", "must end in .safetensors")
    old = tmp_path / "old.safetensors"
    old.write_text("x")
    assert main(["export", str(run_dir), "--out", str(old)]) == 0  # an existing file is replaced
    assert _metadata(old)["format"] == "neurocheckers-agent"


def test_exported_agent_refuses_other_rules(exported, capsys):
    agent = load_agent(exported, "simple6")
    assert agent.rules == SIMPLE6 and agent.spec.layers == 1 and agent.spec.width == 4
    with pytest.raises(ValueError, match="agent plays 'simple6', but 'american6' was asked for"):
        load_agent(exported, "american6")
    # The same check guards match.
    assert main(["match", f"greedy:{exported}", "random", "--rules", "american6", "--games", "2"]) == 2
    error_line(capsys, "'simple6'", "'american6'")


# --- the NumPy-only agent ----------------------------------------------------------------------


def _positions(rules, count: int, seed: int):
    """A few positions of a random game from the opening, both colours to move, plus kings."""
    rng = np.random.default_rng(seed)
    state = jax.device_get(init(rules))
    positions = [state]
    while len(positions) < count:
        moves = legal_moves(rules, state)
        if not moves:
            break
        state = jax.device_get(apply_move(rules, state, moves[rng.integers(len(moves))]))
        positions.append(state)
    for fen in ("W:WK3,14,16:B5,K12,K18", "B:WK1,13:B2,K17,10", "W:W13,15:B4"):
        positions.append(parse_fen(rules, fen))
    return positions


def test_numpy_agent_matches_the_jax_evaluator(exported):
    rules = SIMPLE6
    agent = load_agent(exported, rules)
    numpy_agent = NumpyAgent.load(str(exported))
    assert numpy_agent.board_size == 6 and numpy_agent.metadata["rules"] == "simple6"
    evaluate = jax.jit(value_fn(agent.spec))
    key = jax.random.key(0)
    positions = _positions(rules, 10, seed=5)
    colours = [int(s.color) for s in positions]
    assert 0 in colours and 1 in colours  # Black and White to move
    jax_values, numpy_values = [], []
    for state in positions:
        fen = to_fen(state)
        expected = float(evaluate(agent.params, state, key))
        # NumPy's encoding is the library's, White-to-move rotation included.
        obs = np.asarray(encode(rules, state))
        np.testing.assert_array_equal(encode_fen(fen, 6), obs, err_msg=fen)
        assert numpy_agent.value_of_fen(fen) == pytest.approx(expected, abs=1e-5), fen
        assert float(numpy_agent.value(obs)) == pytest.approx(expected, abs=1e-5), fen
        jax_values.append(expected)
        numpy_values.append(numpy_agent.value_of_fen(fen))
    # A batch of observations gives the same values at once.
    batch = np.stack([np.asarray(encode(rules, s)) for s in positions])
    np.testing.assert_allclose(numpy_agent.value(batch), jax_values, atol=1e-5)
    assert len({round(v, 6) for v in jax_values}) > 1  # the positions are not all alike to the net


def test_numpy_agent_refuses_other_files(tmp_path, exported):
    plain = tmp_path / "plain.safetensors"
    save_file({"w": np.zeros(3, np.float32)}, str(plain), metadata={"format": "something-else"})
    with pytest.raises(ValueError, match="not a neurocheckers agent file"):
        NumpyAgent.load(str(plain))
    other = tmp_path / "other_encoding.safetensors"
    meta = {**_metadata(exported), "input_encoding": "some-other-v9"}
    save_file(_tensors(exported), str(other), metadata=meta)
    with pytest.raises(ValueError, match="some-other-v9"):
        NumpyAgent.load(str(other))
    text = tmp_path / "notes.txt"
    text.write_text("not weights at all\n")
    with pytest.raises(Exception):  # noqa: B017 (safetensors' own error: not a safetensors file)
        NumpyAgent.load(str(text))


# --- an exported agent in match ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["greedy", "mcts"])
def test_exported_agent_plays_a_match(exported, capsys, kind):
    spec = f"greedy:{exported}" if kind == "greedy" else f"mcts:{exported}:2"
    assert main(["match", spec, "random", *MATCH, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["player_a"] == spec and summary["player_b"] == "random"
    assert summary["wins"] + summary["draws"] + summary["losses"] + summary["unfinished"] == GAMES


# --- plot --------------------------------------------------------------------------------------


def test_plot_writes_png_and_svg(runs, tmp_path, capsys):
    out = tmp_path / "both.png"
    assert main(["plot", str(runs[0]), str(runs[1]), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for path in (out, out.with_suffix(".svg")):
        assert path.stat().st_size > 0
        assert str(path) in printed
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in out.with_suffix(".svg").read_bytes()[:2000]


def test_plot_refuses_a_folder_that_is_not_a_run(runs, tmp_path, capsys):
    out = tmp_path / "never.png"
    assert main(["plot", str(runs[0]), str(tmp_path), "--out", str(out)]) == 2
    error_line(capsys, str(tmp_path), "not a neurocheckers run folder")
    assert not out.exists() and not out.with_suffix(".svg").exists()
    assert main(["plot", str(runs[0]), "--out", str(out), "--smooth", "0"]) == 2
    error_line(capsys, "--smooth")
    assert not out.exists()


# --- the NumPy-only agent refuses bad files with a clear ValueError ----------------------------


def test_numpy_agent_constants_agree_with_the_jax_loader():
    from neurocheckers.networks import agent_file, numpy_agent

    assert numpy_agent.FORMAT == agent_file.FORMAT
    assert numpy_agent.FORMAT_VERSION == agent_file.FORMAT_VERSION
    assert numpy_agent.SUPPORTED_ENCODING == INPUT_ENCODING


def _rewrite(exported, path, tensors_edit=None, drop=(), **metadata_edit) -> str:
    """The exported agent's file with its tensors edited, metadata keys dropped or changed."""
    tensors = _tensors(exported)
    if tensors_edit:
        tensors_edit(tensors)
    metadata = {k: v for k, v in {**_metadata(exported), **metadata_edit}.items() if k not in drop}
    save_file(tensors, str(path), metadata=metadata)
    return str(path)


def test_numpy_agent_refuses_unreadable_files(tmp_path):
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"not a safetensors file at all")
    with pytest.raises(ValueError, match="not a readable safetensors file") as info:
        NumpyAgent.load(garbage)
    assert str(garbage) in str(info.value)
    missing = tmp_path / "nowhere.safetensors"
    with pytest.raises(ValueError, match="not a readable safetensors file") as info:
        NumpyAgent.load(str(missing))
    assert str(missing) in str(info.value)


@pytest.mark.parametrize("key", ["layers", "width", "board_size"])
@pytest.mark.parametrize("value", [None, "three", "2.5", "0", "-1", ""])
def test_numpy_agent_refuses_bad_shape_metadata(exported, tmp_path, key, value):
    path = tmp_path / "bad.safetensors"
    if value is None:
        _rewrite(exported, path, drop=(key,))
    else:
        _rewrite(exported, path, **{key: value})
    with pytest.raises(ValueError, match=f"metadata '{key}' must be a positive integer") as info:
        NumpyAgent.load(path)
    assert str(path) in str(info.value)
    assert repr(value) in str(info.value)


def test_numpy_agent_refuses_bad_metadata_values(exported, tmp_path):
    with pytest.raises(ValueError, match="'board_size' must be 6 or 8, got 10"):
        NumpyAgent.load(_rewrite(exported, tmp_path / "b10.safetensors", board_size="10"))
    with pytest.raises(ValueError, match="format_version '99' is not supported"):
        NumpyAgent.load(_rewrite(exported, tmp_path / "v99.safetensors", format_version="99"))
    with pytest.raises(ValueError, match="format_version None"):
        NumpyAgent.load(_rewrite(exported, tmp_path / "vnone.safetensors", drop=("format_version",)))
    with pytest.raises(ValueError, match="not a neurocheckers agent file"):
        NumpyAgent.load(_rewrite(exported, tmp_path / "noformat.safetensors", drop=("format",)))


def test_numpy_agent_refuses_missing_or_extra_tensors(exported, tmp_path):
    path = _rewrite(exported, tmp_path / "missing.safetensors", lambda t: t.pop("layer_1/bias"))
    with pytest.raises(ValueError, match=r"missing \['layer_1/bias'\], unexpected \[\]") as info:
        NumpyAgent.load(path)
    assert path in str(info.value)
    # A file that claims more layers than it holds lacks the extra layer's weights.
    path = _rewrite(exported, tmp_path / "deeper.safetensors", layers="2")
    with pytest.raises(ValueError, match=r"missing \['layer_2/bias', 'layer_2/kernel'\]"):
        NumpyAgent.load(path)

    def extra(tensors):
        tensors["layer_9/kernel"] = np.zeros((4, 1), np.float32)

    path = _rewrite(exported, tmp_path / "extra.safetensors", extra)
    with pytest.raises(ValueError, match=r"unexpected \['layer_9/kernel'\]"):
        NumpyAgent.load(path)


def test_numpy_agent_refuses_shapes_that_do_not_fit(exported, tmp_path):
    # The exported agent is 1 x 4 on simple6: layer_0/kernel (36, 4), layer_1/kernel (4, 1).
    path = _rewrite(exported, tmp_path / "b8.safetensors", board_size="8")
    with pytest.raises(ValueError, match=r"layer_0/kernel has shape \(36, 4\), expected \(64, 4\)") as info:
        NumpyAgent.load(path)
    assert path in str(info.value) and "8x8" in str(info.value)
    path = _rewrite(exported, tmp_path / "wide.safetensors", width="5")
    with pytest.raises(ValueError, match=r"layer_0/kernel has shape \(36, 4\), expected \(36, 5\)"):
        NumpyAgent.load(path)

    def two_outputs(tensors):
        tensors["layer_1/kernel"] = np.zeros((4, 2), np.float32)

    with pytest.raises(ValueError, match=r"layer_1/kernel has shape \(4, 2\), expected \(4, 1\)"):
        NumpyAgent.load(_rewrite(exported, tmp_path / "out2.safetensors", two_outputs))

    def bias_matrix(tensors):
        tensors["layer_0/bias"] = np.zeros((4, 1), np.float32)

    with pytest.raises(ValueError, match=r"layer_0/bias has shape \(4, 1\), expected \(4,\)"):
        NumpyAgent.load(_rewrite(exported, tmp_path / "bias.safetensors", bias_matrix))


def test_numpy_agent_refuses_bad_weight_values(exported, tmp_path):
    def float64(tensors):
        tensors["layer_0/kernel"] = tensors["layer_0/kernel"].astype(np.float64)

    with pytest.raises(ValueError, match="layer_0/kernel has dtype float64, expected float32"):
        NumpyAgent.load(_rewrite(exported, tmp_path / "f64.safetensors", float64))

    def nan(tensors):
        tensors["layer_1/bias"] = np.full((1,), np.nan, np.float32)

    with pytest.raises(ValueError, match="layer_1/bias holds non-finite values"):
        NumpyAgent.load(_rewrite(exported, tmp_path / "nan.safetensors", nan))


def test_evolve_help_lists_every_config_key_with_its_doc(capsys):
    import dataclasses

    from neurocheckers.experiment.config import ExperimentConfig
    from neurocheckers.experiment.config_doc import field_docs

    assert main(["evolve", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    docs = field_docs()
    for f in dataclasses.fields(ExperimentConfig):
        default = str(f.default).lower() if isinstance(f.default, bool) else repr(f.default)  # as in TOML
        assert f"{f.name} = {default}: {' '.join(docs[f.name].split())}" in out
    assert "material_input = false:" in out


def test_display_name_cuts_agent_paths_only():
    from neurocheckers.formats import display_name

    assert display_name("mcts:runs/a/final.safetensors:16") == "mcts:final.safetensors:16"
    assert display_name("greedy:/abs/path/x.safetensors") == "greedy:x.safetensors"
    assert display_name("alphabeta:3") == "alphabeta:3"


HELP_WITHOUT_JAX = """
import sys
from neurocheckers.cli import main
import neurocheckers.experiment.folder  # the run-folder reader is light too
try:
    main(["--help"])
    main(["evolve", "--help"])
finally:
    print("jax" in sys.modules, file=sys.stderr)
"""


def test_the_command_line_and_its_help_do_not_import_jax():
    """``neurocheckers --help`` starts fast: neither importing the CLI nor its help imports JAX; the
    JAX settings wait in environment variables for the first command that computes."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", HELP_WITHOUT_JAX], capture_output=True, text=True, timeout=120
    )
    assert "Train a player: evolution against a rising boss" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "False", done.stderr


def test_evolve_runs_one_folder_per_seed(tmp_path, capsys):
    config_file = tmp_path / "tiny.toml"
    config_file.write_text("\n".join(f'{k} = "{v}"' if k == "rules" else f"{k} = {v}" for k, v in (
        item.split("=", 1) for item in TINY_RUN)) + '\nname = "seeds"\nstrength_every = 0\n')  # fmt: skip
    out = tmp_path / "runs"
    assert (
        main(["evolve", str(config_file), "--seeds", "3,4", "--epochs", "1", "--out", str(out), "--no-plot"])
        == 0
    )
    folders = sorted(p.name for p in out.iterdir())
    assert [name.split("_")[1] for name in folders] == ["seed3", "seed4"]
    for args, words in (
        (["--seeds", "1,1"], ["--seeds", "'1,1'"]),
        (["--seeds", "1,x"], ["--seeds", "'1,x'"]),
        (["--seeds", "1,2", "--seed", "5"], ["--seeds", "--seed"]),
    ):
        capsys.readouterr()
        assert main(["evolve", str(config_file), *args, "--out", str(tmp_path / "refused")]) == 2
        error_line(capsys, *words)
    assert not (tmp_path / "refused").exists()


OUT_THAT_CANNOT_BE_WRITTEN = [
    ["gauntlet", "random", "--rules", "simple6", "--openings", "1", "--out", "{blocked}/gauntlet"],
    ["lineage", "{run}", "--games", "2", "--out", "{blocked}/replay"],
    ["lineage", "{run}", "--games", "2", "--save-games", "{blocked}/games.pdn"],
    ["compare", "{run}", "{run}", "--games", "2", "--out", "{blocked}/compare.csv"],
    ["match", "random", "random", "--games", "2", "--save-games", "{blocked}/games.pdn"],
    ["match", "random", "random", "--games", "2", "--plot", "{blocked}/material.png"],
    ["show", "{games}", "--out", "{blocked}/game.gif"],
    ["show", "{games}", "--svg-dir", "{blocked}/boards"],
    ["plot", "{run}", "--out", "{blocked}/fitness.png"],
]


@pytest.mark.parametrize("args", OUT_THAT_CANNOT_BE_WRITTEN, ids=lambda a: " ".join(a[:1] + a[-2:-1]))
def test_an_output_that_cannot_be_written_is_refused_before_any_game(
    args, runs, tmp_path, capsys, monkeypatch
):
    """Every command that writes results checks where it writes first: exit 2 with one line naming the
    option, and no game played (the players' match functions would fail the test)."""
    from neurocheckers.analysis import gauntlet, replay
    from neurocheckers.match import arena
    from neurocheckers.match import host as engines

    games = tmp_path / "games.json"
    if args[0] == "show":
        assert main(["match", "random", "random", "--games", "2", "--save-games", str(games)]) == 0
    blocked = tmp_path / "blocker"
    blocked.write_text("a file where a folder should be")

    def played(*_, **__):
        raise AssertionError("a game was played before the output path was checked")

    for module, name in ((arena, "run_match"), (engines, "play_any_match"), (gauntlet, "run_gauntlet"),
                         (replay, "lineage_table"), (replay, "compare_runs")):  # fmt: skip
        monkeypatch.setattr(module, name, played)
    filled = [a.format(blocked=blocked, run=runs[0], games=games) for a in args]
    capsys.readouterr()
    assert main(filled) == 2
    error_line(capsys, args[-2])


def test_serve_refuses_a_busy_port_before_printing_a_url(tmp_path, capsys):
    import socket

    busy = socket.create_server(("127.0.0.1", 0))
    try:
        assert (
            main(["serve", str(tmp_path), "--host", "127.0.0.1", "--port", str(busy.getsockname()[1])]) == 2
        )
    finally:
        busy.close()
    error_line(capsys, "cannot listen on 127.0.0.1")  # and nothing on stdout: no URL printed
