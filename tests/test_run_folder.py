"""Run folders under faults: a second writer, a finished run resumed, an interrupted run resumed,
settings that make parameters non-finite or need more memory than there is, bad paths, file modes.

Every evolution here uses one tiny config (population 4, 1 x 4 MLP, 2 simulations), so the epoch
compiles once for the file; only the two refused configs compile their own.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neurocheckers.cli import main
from neurocheckers.experiment.config import ConfigError, load_config
from neurocheckers.experiment.folder import RunError, read_run_config, run_lock
from neurocheckers.experiment.run import create_run, run
from neurocheckers.formats import read_metrics

sys.path.insert(0, str(Path(__file__).resolve().parent))
from interrupting import child_env, children_hear_ctrl_c, not_interrupted  # noqa: E402
from tiny import TINY_BY_STRATEGY, TINY_RUN  # noqa: E402

TINY = [
    *TINY_RUN,
    "epochs=2",
    "checkpoint_every=1",
    "name=folder",
]


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _error(capsys, *names: str) -> str:
    """The one error line of a refused command (stdout may hold progress lines before it)."""
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("neurocheckers: error: "), err
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    return run(create_run(load_config(None, TINY), tmp_path_factory.mktemp("runs")))


def test_a_finished_run_is_left_untouched(finished_run, capsys):
    before = _files(finished_run)
    assert main(["evolve", "--resume", str(finished_run)]) == 0
    out = capsys.readouterr().out
    assert "already complete: 2 epochs done" in out and "fitness" not in out
    run(finished_run)
    assert _files(finished_run) == before  # byte for byte, and no file added


def test_csv_files_have_lf_line_endings_after_an_interrupted_run_resumes(tmp_path):
    run_dir = create_run(load_config(None, TINY), tmp_path)
    run(run_dir, stop_after=1)
    # A folder written by an older version: CRLF rows (the csv module's default).
    lineage = run_dir / "lineage.csv"
    lineage.write_bytes(lineage.read_bytes().replace(b"\n", b"\r\n"))
    run(run_dir)
    for name in ("metrics.csv", "lineage.csv"):
        data = (run_dir / name).read_bytes()
        assert b"\r" not in data, name
    assert [r["epoch"] for r in read_metrics(run_dir)] == ["0", "1"]


def test_a_second_writer_is_refused_and_a_run_without_checkpoint_says_it_restarts(tmp_path, capsys):
    run_dir = create_run(load_config(None, TINY), tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(run_dir)], stdout=subprocess.PIPE, text=True, env=child_env()
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = _files(run_dir)
        assert main(["evolve", "--resume", str(run_dir), "--no-plot"]) == 2
        _error(capsys, str(run_dir), "in use by another process")
        assert _files(run_dir) == before
        with pytest.raises(RunError, match="in use by another process"):
            run(run_dir)
    finally:
        holder.kill()
        holder.wait()
    # The lock goes with the process that held it: the run can go on now.
    assert main(["evolve", "--resume", str(run_dir), "--no-plot"]) == 0
    assert "has no checkpoint: the run starts again from epoch 0" in capsys.readouterr().out
    assert [r["epoch"] for r in read_metrics(run_dir)] == ["0", "1"]


HOLD_LOCK = """
import sys, time
from neurocheckers.experiment.folder import run_lock
with run_lock(sys.argv[1]):
    print("locked", flush=True)
    time.sleep(120)
"""


def test_the_lock_is_exclusive_within_a_process_too(tmp_path):
    with run_lock(tmp_path), pytest.raises(RunError, match="in use"), run_lock(tmp_path):
        pass
    with run_lock(tmp_path):  # released on leaving the block
        pass


def test_non_finite_parameters_stop_the_run(tmp_path):
    run_dir = create_run(load_config(None, [*TINY, "mutation_rate=3e38"]), tmp_path)
    with pytest.raises(RunError, match=r"epoch 0 made parameters non-finite .*mutation_rate \(3e\+38\)"):
        run(run_dir)
    assert read_metrics(run_dir) == [] and not (run_dir / "checkpoint.safetensors").exists()
    # The run says it failed, and why, until it is started again.
    from neurocheckers.experiment.folder import failure, run_status, stop_message

    assert run_status(run_dir) == "failed" and failure(run_dir).startswith("RunError: epoch 0 made")
    assert stop_message(run_dir).startswith("failed after 0 of ")
    (run_dir / "failed.txt").write_text("OldError: from before\n")
    with pytest.raises(RunError):
        run(run_dir)  # a retry clears the old failure, then records its own
    assert failure(run_dir).startswith("RunError")


@pytest.mark.parametrize("key", ["mutation_rate", "learning_rate", "seconds_per_move", "promotion_threshold"])
@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_non_finite_settings_are_refused(key, value):
    with pytest.raises(ConfigError, match=f"{key} must be a finite number, got {value}"):
        load_config(None, [f"{key}={value}"])


def test_sizes_are_checked_before_anything_is_created(tmp_path, capsys):
    # Game numbers would overflow int32: refused by the config, no folder.
    config = tmp_path / "big.toml"
    config.write_text("population = 1000000000\n")
    assert main(["evolve", str(config), "--out", str(tmp_path / "a")]) == 2
    _error(capsys, "population x games_per_epoch must be below 2**31")
    assert not (tmp_path / "a").exists()
    # A recorded trace of 4 x 2 games x 10**9 plies cannot fit: refused before the folder is made.
    huge = load_config(None, [*TINY, "rules=american6", "max_plies=1000000000"])
    with pytest.raises(RunError, match="one epoch of this config needs about .* GiB of memory"):
        create_run(huge, tmp_path / "b", check_memory=True)
    assert not (tmp_path / "b").exists()


def test_run_folder_messages_say_what_is_missing(finished_run, tmp_path):
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "config.json").write_bytes((finished_run / "config.json").read_bytes())
    (partial / "checkpoint.safetensors").write_bytes((finished_run / "checkpoint.safetensors").read_bytes())
    with pytest.raises(RunError, match="not a neurocheckers run folder: it has no metrics.csv$"):
        read_run_config(partial)
    with pytest.raises(RunError, match="it has no config.json and no metrics.csv"):
        read_run_config(tmp_path)
    with pytest.raises(RunError, match="no run folder .*missing"):
        read_run_config(tmp_path / "missing")


def test_agent_and_checkpoint_files_are_shared_by_the_umask(finished_run):
    umask = os.umask(0)
    os.umask(umask)
    expected = 0o666 & ~umask
    files = [finished_run / "checkpoint.safetensors", *sorted((finished_run / "lineage").iterdir())]
    assert len(files) >= 2
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == expected, path


def test_config_paths_that_are_not_files(tmp_path, capsys):
    assert main(["evolve", str(tmp_path)]) == 2
    _error(capsys, str(tmp_path), "is a folder, not a TOML file")
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00name")
    assert main(["evolve", str(binary)]) == 2
    _error(capsys, str(binary), "not a UTF-8 text file")
    (tmp_path / "file").write_text("x")
    assert main(["evolve", str(binary.with_name("none.toml")), "--out", str(tmp_path / "file")]) == 2
    _error(capsys, "none.toml", "not found")
    good = tmp_path / "good.toml"
    good.write_text('rules = "simple6"\n')
    assert main(["evolve", str(good), "--out", str(tmp_path / "file")]) == 2
    _error(capsys, "is a file, not a folder")


def test_an_interrupt_ends_a_match_at_once(tmp_path):
    """Ctrl-C during a long match ends the process promptly with status 130, not when the compiled
    work in XLA's threads would have finished (minutes here)."""
    command = [sys.executable, "-m", "neurocheckers", "match", "mcts-rollout:65536", "random"]
    command += ["--rules", "american8", "--games", "2", "--batch", "2"]
    log = tmp_path / "stderr.txt"  # a file, not a pipe: a pipe nobody reads fills and blocks the child
    with log.open("w") as stderr, children_hear_ctrl_c():
        child = subprocess.Popen(command, stderr=stderr, text=True, env=child_env(), cwd=tmp_path)
    time.sleep(15)  # imports and compiling (cached after the first run); the match takes minutes
    assert child.poll() is None, log.read_text()
    child.send_signal(signal.SIGINT)
    try:
        code = child.wait(timeout=90)
    except subprocess.TimeoutExpired:
        child.kill()
        pytest.fail(not_interrupted(log.read_text()))
    finally:
        child.kill()
    assert code == 130
    assert "neurocheckers: aborted" in log.read_text()


STUCK_ON_INTERRUPT = """
import signal, sys, time
from neurocheckers.cli import exit_soon_after_an_interrupt
exit_soon_after_an_interrupt()
signal.signal(signal.SIGINT, lambda *_: None)  # a main thread that never reacts, as in a long XLA call
print("ready", flush=True)
time.sleep(120)
"""


def test_an_interrupt_ends_the_process_even_when_the_main_thread_never_reacts():
    with children_hear_ctrl_c():
        child = subprocess.Popen(
            [sys.executable, "-c", STUCK_ON_INTERRUPT],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
    try:
        assert child.stdout.readline().strip() == "ready"
        child.send_signal(signal.SIGINT)
        code = child.wait(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        pytest.fail(not_interrupted(child.stderr.read()))
    finally:
        child.kill()
    assert code == 130
    assert "neurocheckers: aborted" in child.stderr.read()


def test_a_learner_whose_network_turns_non_finite_stops(tmp_path):
    config = load_config(None, [*TINY_BY_STRATEGY["td_lambda"], "learning_rate=3e38", "epochs=3"])
    run_dir = create_run(config, tmp_path)
    with pytest.raises(RunError, match=r"made parameters non-finite .*learning_rate \(3e\+38\)"):
        run(run_dir)
    assert not (run_dir / "checkpoint.safetensors").exists()


def _tiny_toml(path: Path) -> str:
    items = (item.split("=", 1) for item in TINY_RUN)
    lines = [f'{k} = "{v}"' if k == "rules" else f"{k} = {v}" for k, v in items]
    path.write_text("\n".join([*lines, 'name = "says"', "strength_every = 0"]) + "\n")
    return str(path)


def test_evolve_says_why_it_stopped_and_where_a_resume_goes_on(tmp_path, capsys):
    config = _tiny_toml(tmp_path / "tiny.toml")
    out = tmp_path / "runs"
    assert main(["evolve", config, "--epochs", "2", "--out", str(out), "--no-plot"]) == 0
    assert "finished: 2 of 2 epochs" in capsys.readouterr().out
    (run_dir,) = out.iterdir()
    assert main(["evolve", "--resume", str(run_dir), "--epochs", "3", "--no-plot"]) == 0
    said = capsys.readouterr().out
    assert "continuing from its checkpoint after epoch 2 of 3" in said and "finished: 3 of 3 epochs" in said
    budget = ["--set", "budget_minutes=0.000001", "--epochs", "50"]
    assert main(["evolve", config, *budget, "--out", str(tmp_path / "budget"), "--no-plot"]) == 0
    said = capsys.readouterr().out
    assert "stopped: the training budget is spent" in said and "after 1 of 50 epochs" in said


def test_ctrl_c_on_evolve_prints_the_resume_command(tmp_path):
    config = _tiny_toml(tmp_path / "tiny.toml")
    out = tmp_path / "runs"
    command = [
        sys.executable,
        "-m",
        "neurocheckers",
        "evolve",
        config,
        "--epochs",
        "100000",
        "--out",
        str(out),
    ]
    log = tmp_path / "stderr.txt"  # files, not pipes: a pipe nobody reads fills and blocks the child
    with log.open("w") as stderr, children_hear_ctrl_c():
        child = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=stderr, text=True, env=child_env()
        )
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not list(out.glob("*/lineage/boss_0000_*")):
            time.sleep(0.05)
        time.sleep(1.0)  # into the epochs
        child.send_signal(signal.SIGINT)
        code = child.wait(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        pytest.fail(not_interrupted(log.read_text()))
    finally:
        child.kill()
    (run_dir,) = out.iterdir()
    err = log.read_text()
    assert code == 130 and "neurocheckers: aborted" in err
    assert f"neurocheckers evolve --resume {run_dir}" in err


def test_a_resume_refuses_an_edited_config_or_a_damaged_history(tmp_path, capsys):
    import json

    config = _tiny_toml(tmp_path / "tiny.toml")
    out = tmp_path / "runs"
    assert (
        main(
            ["evolve", config, "--epochs", "2", "--set", "checkpoint_every=1", "--out", str(out), "--no-plot"]
        )
        == 0
    )
    (run_dir,) = out.iterdir()
    before = _files(run_dir)
    stored = json.loads((run_dir / "config.json").read_text())
    edited = {**stored, "config": {**stored["config"], "mutation_rate": 0.5}}
    (run_dir / "config.json").write_text(json.dumps(edited))
    capsys.readouterr()
    assert main(["evolve", "--resume", str(run_dir), "--epochs", "3", "--no-plot"]) == 2
    _error(capsys, "was config.json edited?")
    (run_dir / "config.json").write_text(json.dumps(stored))
    rows = (run_dir / "metrics.csv").read_text().splitlines()
    (run_dir / "metrics.csv").write_text("\n".join(rows[:2]) + "\n")  # epoch 1's row lost
    damaged = _files(run_dir)
    with pytest.raises(RunError, match=r"metrics.csv lacks the rows of epochs 1..1, which its checkpoint"):
        run(run_dir, epochs=3)
    assert _files(run_dir) == damaged and set(before) == set(damaged)
