"""Check that a change of the code left results unchanged: the same short runs of every kind (the boss
GA, TD(lambda), an evosax strategy, DQN, the hybrid) and the same gauntlets, played by the code at
REV and by the working tree, must give the same metrics (timing columns aside), lineage, networks,
checkpoints and gauntlet rows.

    python scripts/check_unchanged.py REV [--work DIR] [--ignore COLUMN,...]

REV is checked out with ``git worktree`` into DIR/old (and removed afterwards); both sides run on one
host device (``NEUROCHECKERS_DEVICES=1``) with the same compile cache. Prints one line per
comparison and exits 1 when anything differs. Takes a few minutes on 2 cores (warm caches).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import REPO, checked_out  # scripts/benchlib.py (the script's folder is on sys.path)

TIMING = {
    "wall_seconds",
    "plies_per_second",
    "strength_seconds",
    "player_seconds",
    "opponent_seconds",
    "player_depth",
    "opponent_depth",
}


def sets(*items: str) -> list[str]:
    return [word for item in items for word in ("--set", item)]


SMALL_GA = sets("population=8", "games_per_epoch=2")
RUNS = {
    "boss_ga": ["experiments/quick.toml", *SMALL_GA, *sets("strength_every=2")],
    "snes": ["experiments/quick.toml", *SMALL_GA, *sets("strategy=SNES")],
    "hybrid": ["experiments/learners/hybrid_simple6.toml", *SMALL_GA],
    "td_lambda": [
        "experiments/learners/td_lambda_simple6.toml",
        *sets(
            "selfplay_games=8",
            "updates_per_epoch=2",
            "bootstrap_steps=2",
            "strength_every=2",
            "snapshot_every=2",
        ),
    ],
    "dqn": ["experiments/learners/dqn_simple6.toml", *sets("envs=8", "strength_every=2", "snapshot_every=2")],
}
"""Three epochs of each, in a folder of its own."""

MLP_8X8 = "results/american8/td_leaf_w64_seed0/final.safetensors"
"""The 5 x 64 MLP that was ``best_american8`` when this check was written (its figures are recorded)."""
GAUNTLETS = {
    "simple6": ["results/best_simple6.safetensors", "--rules", "simple6", "--openings", "6", "--depth", "2"],
    "american8": [MLP_8X8, "--rules", "american8", "--openings", "3"],
}
"""Short gauntlets of the committed agents (american8: its equal-depth rows only)."""
GAUNTLET_ROWS = {
    "simple6": ["--equal-depths", "1,2"],
    "american8": ["--equal-depths", "1,2", "--heuristic-depths", "2", "--kinds", "equal-depth"],
}


def play_everything(code: Path, out: Path) -> None:
    """Every run and gauntlet with the package at ``code`` (run from there, so that it is the one
    imported), into ``out``; the config files are ``code``'s own (a change may rewrite them), the
    agent files this checkout's."""
    env = {**os.environ, "PYTHONPATH": str(code), "NEUROCHECKERS_DEVICES": "1"}

    def ours(args: list[str]) -> list[str]:  # each side's own config files, this checkout's agents
        return [str((code if a.startswith("experiments/") else REPO) / a) if "/" in a else a for a in args]

    for name, args in RUNS.items():
        command = [sys.executable, "-m", "neurocheckers", "evolve", *ours(args), "--epochs", "3", "--no-plot"]
        subprocess.run(
            [*command, "--out", str(out / name)], cwd=code, env=env, check=True, capture_output=True
        )
    for name, args in GAUNTLETS.items():
        command = [sys.executable, "-m", "neurocheckers", "gauntlet", *ours(args)]
        command += ["--out", str(out / f"gauntlet_{name}")]
        subprocess.run(command, cwd=code, env=env, check=True, capture_output=True)


def stable_rows(path: Path, ignored: frozenset[str] = frozenset()) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return [{k: v for k, v in row.items() if k not in TIMING | ignored} for row in csv.DictReader(f)]


def tensors(path: Path) -> dict[str, str]:
    from safetensors.numpy import load_file

    return {name: hashlib.sha256(array.tobytes()).hexdigest() for name, array in load_file(path).items()}


def compare(old: Path, new: Path, ignored: frozenset[str] = frozenset()) -> bool:
    """Print each comparison (metrics without the ``ignored`` columns); True when everything agrees."""
    same = True
    for name in RUNS:
        (a,), (b,) = list((old / name).iterdir()), list((new / name).iterdir())
        checks = {
            "metrics": stable_rows(a / "metrics.csv", ignored) == stable_rows(b / "metrics.csv", ignored),
            "lineage": (a / "lineage.csv").read_text() == (b / "lineage.csv").read_text(),
            "networks": [tensors(p) for p in sorted((a / "lineage").iterdir())]
            == [tensors(p) for p in sorted((b / "lineage").iterdir())],
            "checkpoint": tensors(a / "checkpoint.safetensors") == tensors(b / "checkpoint.safetensors"),
        }
        print(f"{name}: " + ", ".join(f"{k} {'same' if v else 'DIFFERENT'}" for k, v in checks.items()))
        same &= all(checks.values())
    for name in GAUNTLETS:
        rows = [stable_rows(side / f"gauntlet_{name}" / "gauntlet.csv") for side in (old, new)]
        print(f"gauntlet {name}: {'same' if rows[0] == rows[1] else 'DIFFERENT'} ({len(rows[1])} rows)")
        same &= rows[0] == rows[1]
    return same


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("rev", help="the revision to compare the working tree with, e.g. HEAD~3")
    parser.add_argument("--work", help="folder for the checkout and the outputs (default: a temporary one)")
    parser.add_argument(
        "--ignore", default="", help="metrics columns a change meant to alter, comma-separated"
    )
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="unchanged-"))
    with checked_out(args.rev, work / "old") as old_code:
        play_everything(old_code, work / "old_results")
        play_everything(REPO, work / "new_results")
        ignored = frozenset(c for c in args.ignore.split(",") if c)
        same = compare(work / "old_results", work / "new_results", ignored)
    print("unchanged" if same else "CHANGED")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
