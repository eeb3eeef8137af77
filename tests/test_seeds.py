"""``evolve --seeds`` (issue 32, part 3): the seeds run one after another in one process, sharing
one compiled epoch, and each seed's metrics and lineage equal a single-seed run of the same config."""

from __future__ import annotations

from killing import lineage_rows, stable_rows
from tiny import TINY_RUN

from neurocheckers.cli import main
from neurocheckers.evolution import boss_ga


def _config_file(tmp_path):
    config_file = tmp_path / "tiny.toml"
    config_file.write_text("\n".join(f'{k} = "{v}"' if k == "rules" else f"{k} = {v}" for k, v in (
        item.split("=", 1) for item in TINY_RUN)) + '\nname = "seeds"\nstrength_every = 0\n')  # fmt: skip
    return config_file


def test_each_seed_of_one_process_equals_its_single_seed_run(tmp_path):
    config_file = _config_file(tmp_path)
    together, alone = tmp_path / "together", tmp_path / "alone"
    args = ["--epochs", "3", "--no-plot"]
    before = boss_ga.evolve_epoch._cache_size()
    assert main(["evolve", str(config_file), "--seeds", "5,6", "--out", str(together), *args]) == 0
    compiled = boss_ga.evolve_epoch._cache_size()
    assert compiled - before <= 1  # both seeds ran one compiled epoch (none if an earlier test made it)
    for seed in (5, 6):
        assert (
            main(["evolve", str(config_file), "--seed", str(seed), "--out", str(alone / str(seed)), *args])
            == 0
        )
    assert boss_ga.evolve_epoch._cache_size() == compiled  # every seed ran the one compiled epoch
    runs = sorted(together.iterdir())
    assert [run.name.split("_")[1] for run in runs] == ["seed5", "seed6"]
    for seed, run in zip((5, 6), runs, strict=True):
        (single,) = (alone / str(seed)).iterdir()
        assert len(stable_rows(run)) == 3
        assert stable_rows(run) == stable_rows(single)
        assert lineage_rows(run) == lineage_rows(single)
    assert stable_rows(runs[0]) != stable_rows(runs[1])  # the seeds differ
