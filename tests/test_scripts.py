"""Every script of scripts/ that the README, docs/ or results/ quotes runs here at tiny sizes, so a
change that breaks one fails the suite: a smoke test each (its output folder a temporary one),
asserting it printed or wrote the figure it exists for; no timing is asserted. The benchmarks are in
tests/test_bench_scripts*.py.

The shell scripts that run hour-long studies are checked with ``bash -n`` and run against a stand-in
``neurocheckers`` (and ``python``) that records each command line, every one of which the real
command-line parser must accept. ``scripts/check_unchanged.py`` (a git worktree of another revision
and minutes of runs) is left out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from running_scripts import REPO, SCRIPTS, script

# --- tables of committed results (no JAX work) ------------------------------------------------


def test_config_doc_prints_the_config_reference():
    assert script("config_doc.py") == (REPO / "docs" / "config.md").read_text()


def test_strength_table_prints_the_tables_of_the_committed_runs(tmp_path):
    out = script(
        "strength_table.py", "results/strength", "--names", "study,paired_openings", "--plot",
        str(tmp_path / "curves.png"),
    )  # fmt: skip
    assert "| study |" in out and "paired_openings" in out
    assert (tmp_path / "curves.png").stat().st_size > 0


def test_american8_table_prints_the_8x8_tables(tmp_path):
    seeds = "td_leaf_seed0,td_leaf_seed1,td_leaf_seed2"
    out = script("american8_table.py", "results/american8", "--names", f"{seeds},study", "--seeds", seeds)
    assert "td_leaf_seed0" in out and "study" in out and "|" in out


def test_pbt_width_plot_draws_the_committed_width_run(tmp_path):
    run = REPO / "results" / "american8" / "pbt_width_h200"
    out = script("pbt_width_plot.py", str(run), "--out", str(tmp_path / "width.png"))
    assert "wrote" in out and (tmp_path / "width.png").stat().st_size > 0
    no_width = REPO / "results" / "american8" / "pbt_seed0"  # a run whose width was fixed
    failed = subprocess.run(
        [sys.executable, str(SCRIPTS / "pbt_width_plot.py"), str(no_width), "--out", str(tmp_path / "x.png")],
        capture_output=True,
        text=True,
    )
    assert failed.returncode != 0 and "pbt_width" in failed.stderr and "Traceback" not in failed.stderr


def test_merge_gauntlets_pools_parts_into_one_gauntlet(tmp_path):
    """A committed 8x8 gauntlet and the same again as the part from opening 100 on: each row is
    pooled into one of twice the games."""
    whole = json.loads((REPO / "results" / "american8" / "td_leaf_seed0" / "gauntlet.json").read_text())
    later = {**whole, "config": {**whole["config"], "first_opening": 100}}
    for name, part in (("a", whole), ("b", later)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "gauntlet.json").write_text(json.dumps(part))
    out = script("merge_gauntlets.py", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "m"))
    merged = json.loads((tmp_path / "m" / "gauntlet.json").read_text())
    assert [r["games"] for r in merged["rows"]] == [2 * r["games"] for r in whole["rows"]]
    assert "wrote" in out and (tmp_path / "m" / "gauntlet.txt").exists()


def test_merge_matches_pools_parts_of_a_match(tmp_path):
    """The committed 8x8 match part (openings 0-15) and the same again as openings 16-31: one summary
    of twice the games with the same score."""
    part = REPO / "results" / "american8" / "compiled" / "pydraughts8_equal_db.json"
    first = json.loads(part.read_text())
    (tmp_path / "later.json").write_text(json.dumps({**first, "first_opening": 16}))
    out = script(
        "merge_matches.py", str(part), str(tmp_path / "later.json"), "--out", str(tmp_path / "m.json")
    )
    merged = json.loads((tmp_path / "m.json").read_text())
    assert merged["games"] == 2 * first["games"] and merged["wins"] == 2 * first["wins"]
    assert merged["score"] == first["score"] and merged["parts"] == [[0, 16], [16, 32]]
    assert f"{2 * first['games']} games" in out
    failed = subprocess.run(
        [sys.executable, str(SCRIPTS / "merge_matches.py"), str(part), str(part)],
        capture_output=True,
        text=True,
    )
    assert failed.returncode != 0 and "overlap" in failed.stderr and "Traceback" not in failed.stderr


def test_thin_lineage_keeps_every_nth_boss(tmp_path):
    run_dir = tmp_path / "run"
    (run_dir / "lineage").mkdir(parents=True)
    rows = ["boss_id,epoch,points,file"]
    for boss in range(10):
        name = f"boss_{boss:04d}_epoch_{boss:04d}.safetensors"
        (run_dir / "lineage" / name).write_bytes(b"x")
        rows.append(f"{boss},{boss},1.0,{name}")
    (run_dir / "lineage.csv").write_text("\n".join(rows) + "\n")
    script("thin_lineage.py", str(run_dir), "--every", "4")
    kept = sorted(p.name[:9] for p in (run_dir / "lineage").iterdir())
    assert kept == ["boss_0000", "boss_0004", "boss_0008", "boss_0009"]
    assert (run_dir / "lineage_full.csv").exists()


def test_endgame_targets_table_reads_a_study_folder(tmp_path):
    """The study's layout (scripts/endgame_targets_study.sh), with match files of one seed."""
    from neurocheckers.experiment.config import load_config
    from neurocheckers.experiment.run import create_run

    match = {"score": 0.5, "score_ci95": [0.4, 0.6], "wins": 1, "draws": 2, "losses": 1}
    for arm in ("exact", "plain"):
        config = load_config(None, ["name=td_lambda_american6", "strategy=td_lambda", "seed=0"])
        run_dir = create_run(config, tmp_path / arm)
        (run_dir / "metrics.csv").write_text(
            "epoch,wall_seconds,strength_material\n0,60.0,0.25\n1,60.0,0.75\n"
        )
        (tmp_path / f"{arm}_seed0_vs_material.json").write_text(json.dumps(match))
    (tmp_path / "exact_vs_plain_seed0.json").write_text(json.dumps(match))
    out = script("endgame_targets_table.py", str(tmp_path), "exact", "plain")
    assert "| exact | 0 | 2 | 2.0 | 0.750 | 0.500 (0.400-0.600), 1/2/1 |" in out


# --- endgame databases ----------------------------------------------------------------------------


def test_endgame_table_and_reference_check_read_a_built_database(small_db):
    table = script("endgame_table.py", str(small_db))
    assert "| 3 |" in table or "|3|" in table.replace(" ", "")
    check = script("endgame_reference_check.py", str(small_db), "--pieces", "2")
    assert "disagree" in check or "compared" in check


# --- the study shell scripts: they parse, and every command line they run is accepted -----------


def accepted(argv: list[str]) -> None:
    """Parse a ``neurocheckers`` command line as the real command-line parser does, without running
    it; raises its usage error when an option or argument is refused."""
    from typer.main import get_command

    import neurocheckers.cli  # noqa: F401 (registers every command)
    from neurocheckers.cli.common import app

    command, name, parent, args = get_command(app), "neurocheckers", None, list(argv)
    while True:
        context = command.make_context(name, args, parent=parent)
        if not hasattr(command, "resolve_command"):  # a command, not a group of them
            return
        name, command, args = command.resolve_command(context, [*context._protected_args, *context.args])
        parent = context


STAND_IN = """#!{python}
import json, os, sys
with open(os.environ["COMMAND_LOG"], "a") as log:
    log.write(json.dumps(["{name}", *sys.argv[1:]]) + "\\n")
"""


def recorded_commands(tmp_path: Path, name: str, *args: str, env: dict | None = None) -> list[list[str]]:
    """Run ``bash scripts/NAME ARGS`` with stand-ins for ``neurocheckers`` and ``python`` on the PATH;
    the command lines they were given (``neurocheckers`` ones without the program's name)."""
    bin_dir, log = tmp_path / "bin", tmp_path / "commands.jsonl"
    bin_dir.mkdir(exist_ok=True)
    for program in ("neurocheckers", "python"):
        (bin_dir / program).write_text(STAND_IN.format(python=sys.executable, name=program))
        (bin_dir / program).chmod(0o755)
    environment = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "COMMAND_LOG": str(log)}
    done = subprocess.run(
        ["bash", str(SCRIPTS / name), *args], cwd=REPO, env={**environment, **(env or {})},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, f"{name}: {done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    commands = [json.loads(line) for line in log.read_text().splitlines()]
    for command in commands:
        if command[0] == "python" and command[1:3] == ["-m", "neurocheckers"]:
            command[:] = ["neurocheckers", *command[3:]]
    return commands


def check_commands(commands: list[list[str]], programs: set[str]) -> None:
    assert {c[0] for c in commands} >= programs
    for command in commands:
        if command[0] == "neurocheckers":
            accepted(command[1:])


@pytest.mark.parametrize("name", sorted(p.name for p in SCRIPTS.glob("*.sh")))
def test_shell_script_parses(name):
    assert subprocess.run(["bash", "-n", str(SCRIPTS / name)], capture_output=True).returncode == 0


def test_accepted_refuses_an_unknown_option():
    with pytest.raises(Exception, match="No such option"):
        accepted(["match", "random", "random", "--no-such-option"])


def test_endgame_search_commands_are_accepted(tmp_path):
    commands = recorded_commands(tmp_path, "endgame_search.sh", env={"OUT": str(tmp_path / "out")})
    assert len(commands) == 8
    check_commands(commands, {"neurocheckers"})


def test_endgame_targets_study_commands_are_accepted(tmp_path):
    commands = recorded_commands(tmp_path, "endgame_targets_study.sh", "db", str(tmp_path), "1", "0")
    assert [c[1] for c in commands] == ["evolve", "evolve", "export", "export", "match", "match", "match"]
    check_commands(commands, {"neurocheckers"})


def test_gauntlet_american8_commands_are_accepted(tmp_path):
    commands = recorded_commands(tmp_path, "gauntlet_american8.sh", "agent.safetensors", str(tmp_path))
    assert sum(c[:2] == ["neurocheckers", "gauntlet"] for c in commands) == 8
    [merge] = [c for c in commands if c[0] == "python"]
    assert merge[1] == "scripts/merge_gauntlets.py" and len(merge) == 2 + 8 + 2
    check_commands(commands, {"neurocheckers", "python"})


def test_gpu_td_leaf_seeds_commands_are_accepted(tmp_path):
    env = {"PYTHON": str(tmp_path / "bin" / "python"), "DEST": str(tmp_path / "gpu"), "SEEDS": "0 1"}
    commands = recorded_commands(tmp_path, "gpu_td_leaf_seeds.sh", env=env)
    assert [c[:2] for c in commands] == [["neurocheckers", "evolve"]] * 2
    check_commands(commands, {"neurocheckers"})


def test_strength_study_commands_are_accepted(tmp_path):
    """One setting, its run already in OUT (so the script resumes it and reads its config)."""
    run_dir = tmp_path / "out" / "runs" / "study_seed0_1"
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps({"config": {"rules": "simple6"}}))
    (run_dir / "metrics.csv").write_text("epoch\n")
    commands = recorded_commands(tmp_path, "strength_study.sh", "study", env={"OUT": str(tmp_path / "out")})
    assert [c[1] for c in commands] == ["evolve", "export", "gauntlet", "plot", "plot"]
    check_commands(commands, {"neurocheckers"})


def test_nnue_recipe_commands_are_accepted(tmp_path):
    """TDLeaf, its export, one depth-12 scoring process a core (seeds 100 x SEED + 1, 2, ...), the fit."""
    out = str(tmp_path / "out")
    commands = recorded_commands(tmp_path, "nnue_recipe.sh", "3", out, "db", env={"CORES": "2"})
    assert [c[:2] for c in commands[:2]] == [["neurocheckers", "evolve"], ["neurocheckers", "export"]]
    scoring, fit = commands[2:4], commands[4]
    assert sorted(c[c.index("--seed") + 1] for c in scoring) == ["301", "302"]
    for command in scoring:
        assert command[1:3] == [str(SCRIPTS / "search_targets.py"), "score"]
        assert command[command.index("--depth") + 1] == "12"
        assert command[command.index("--endgame") + 1] == "db"
    assert fit[1:3] == [str(SCRIPTS / "search_targets.py"), "fit"] and "--positions-per-step" in fit
    assert len(commands) == 5
    check_commands(commands, {"neurocheckers", "python"})


def test_reproduce_study_commands_are_accepted(tmp_path):
    """Every stage, with a base run and the grid's runs already in OUT."""
    out = tmp_path / "out"
    (out / "runs" / "base_seed0_1").mkdir(parents=True)
    (out / "runs" / "base_seed0_1" / "metrics.csv").write_text("epoch\n")
    for name in ("base", "mutation_high", "mutation_low", "layers3", "layers7", "games4", "games16"):
        (out / "study_grid" / f"{name}_seed0_1").mkdir(parents=True)
    commands = recorded_commands(tmp_path, "reproduce_study.sh", env={"OUT": str(out)})
    assert {c[1] for c in commands} == {"evolve", "sweep", "lineage", "compare", "export", "match", "plot"}
    check_commands(commands, {"neurocheckers"})


def test_head_to_head_plot_draws_committed_matches_and_refuses_a_bad_row(tmp_path):
    folder = REPO / "results" / "american8" / "pbt_width_60min_seed0"
    rows = [
        f"5x32={folder / 'vs_td_leaf_60min_seed0.json'}",
        f"5x64={folder / 'vs_td_leaf_w64_60min_seed0.json'}",
    ]
    out = script("head_to_head_plot.py", *rows, "--out", str(tmp_path / "h2h.png"), "--target", "0.55")
    assert "wrote" in out and (tmp_path / "h2h.png").stat().st_size > 0
    for bad in ("no-equals-sign", f"x={folder / 'config.json'}"):
        failed = subprocess.run(
            [sys.executable, str(SCRIPTS / "head_to_head_plot.py"), bad, "--out", str(tmp_path / "x.png")],
            capture_output=True,
            text=True,
        )
        assert failed.returncode != 0 and "Traceback" not in failed.stderr
        assert bad.split("=")[-1] in failed.stderr
