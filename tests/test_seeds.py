"""``evolve --seeds`` (issue 32, part 3): the seeds run in one process, as one program vmapped over a
leading seed axis of their states where the strategy's epoch is pure (``run.run_seeds``), and each
seed's metrics and lineage equal a single-seed run of the same config (within float tolerance)."""

from __future__ import annotations

import math

from killing import lineage_rows, stable_rows
from tiny import TINY_RUN

from neurocheckers.cli import main
from neurocheckers.experiment import run as run_module
from neurocheckers.experiment.run import seed_group
from neurocheckers.sharding import MemoryLimitError


def _config_file(tmp_path):
    config_file = tmp_path / "tiny.toml"
    config_file.write_text("\n".join(f'{k} = "{v}"' if k == "rules" else f"{k} = {v}" for k, v in (
        item.split("=", 1) for item in TINY_RUN)) + '\nname = "seeds"\nstrength_every = 0\n')  # fmt: skip
    return config_file


def _close(a: list[dict[str, str]], b: list[dict[str, str]]) -> bool:
    """Whether two lists of CSV rows are equal, their numbers within float tolerance."""

    def same(x: str, y: str) -> bool:
        try:
            return math.isclose(float(x), float(y), rel_tol=1e-5, abs_tol=1e-6) or x == y
        except ValueError:
            return x == y

    return len(a) == len(b) and all(
        r.keys() == s.keys() and all(same(r[k], s[k]) for k in r) for r, s in zip(a, b, strict=True)
    )


def test_seeds_vmapped_in_one_program_equal_their_single_seed_runs(tmp_path, monkeypatch):
    config_file = _config_file(tmp_path)
    together, alone = tmp_path / "together", tmp_path / "alone"
    args = ["--epochs", "3", "--no-plot"]

    def not_one_by_one(*args, **kwargs):
        raise AssertionError("the seeds ran one after another, not vmapped")

    with monkeypatch.context() as patch:
        patch.setattr(run_module, "run", not_one_by_one)
        # Two epochs a call: a call of 2 then one of 1, both vmapped.
        command = ["evolve", str(config_file), "--seeds", "5,6", "--set", "run.epochs_per_call=2"]
        assert main([*command, "--out", str(together), *args]) == 0
    for seed in (5, 6):
        assert (
            main(["evolve", str(config_file), "--seed", str(seed), "--out", str(alone / str(seed)), *args])
            == 0
        )
    runs = sorted(together.iterdir())
    assert [run.name.split("_")[1] for run in runs] == ["seed5", "seed6"]
    for seed, run in zip((5, 6), runs, strict=True):
        (single,) = (alone / str(seed)).iterdir()
        assert len(stable_rows(run)) == 3
        assert _close(stable_rows(run), stable_rows(single))
        assert _close(lineage_rows(run), lineage_rows(single))
    assert stable_rows(runs[0]) != stable_rows(runs[1])  # the seeds differ
    assert seed_group(runs, None) is None  # runs with a checkpoint go on one after another
    assert seed_group(runs[:1], None) is None  # and so does a single run

    # Seeds that do not fit in memory together run one after another, as single runs.
    real = run_module.compiled_program

    def out_of_memory_when_vmapped(trainer, length, seeds=0):
        if seeds:
            raise MemoryLimitError(f"{seeds} seeds of this config vmapped need about 99 GiB")
        return real(trainer, length, seeds)

    monkeypatch.setattr(run_module, "compiled_program", out_of_memory_when_vmapped)
    fallback = tmp_path / "fallback"
    assert main(["evolve", str(config_file), "--seeds", "5,6", "--out", str(fallback), *args]) == 0
    for seed, run in zip((5, 6), sorted(fallback.iterdir()), strict=True):
        (single,) = (alone / str(seed)).iterdir()
        assert stable_rows(run) == stable_rows(single)  # played by ``run``, as the single run was
