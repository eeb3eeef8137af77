"""Time a benchmark on other revisions and on the working tree side by side, in one run.

A speed claim ("faster", "unchanged") compares old and new code measured on the same machine in the
same hour: this machine's speed varies by 2x between days. This script checks out each REV
(``git worktree``), then runs the same benchmark script for every revision in turn, ``--rounds``
times, the order rotated each round so that no revision always runs first, and reads one figure
from each run's output (``--figure``: a regular expression whose first group is a number; without
it, the run's wall time in seconds). It prints each run's figure as it comes, then each revision's
median (min .. max) and its ratio to the first.

    python scripts/bench_against.py b046634 --figure '^\\s*256\\s+8\\s+16\\s+([\\d.]+)' \\
        -- scripts/bench_evolve.py --devices 2 --no-scaling --repeats 7

    python scripts/bench_against.py db11e60 -- -m neurocheckers match compiled:1000n compiled:1000n \
        --rules american8 --games 100 --openings 50      # the wall time of a 100-game match

The script and its arguments follow ``--`` (or ``-m MODULE`` and its arguments); each revision runs
its own copy of the script (the benchmark as that revision had it) with its own package first on
``PYTHONPATH``, from its own folder, with the same compile cache. ``WORK`` is the working tree,
uncommitted changes included.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import REPO, checked_out  # scripts/benchlib.py (the script's folder is on sys.path)

WORK = "WORK"
"""The name of the working tree among the revisions."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("revs", nargs="+", metavar="REV", help="revisions to time beside the working tree")
    parser.add_argument(
        "--figure", help="a regular expression; its first group is the figure (default: wall s)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="runs of each revision (default 3)")
    parser.add_argument("--lower-is-better", action=argparse.BooleanOptionalAction, default=True,
                        help="how to read the ratio (default: a time, lower is better)")  # fmt: skip
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        parser.error("give the benchmark after --, e.g. -- scripts/bench_evolve.py --quick")
    split = argv.index("--")
    args = parser.parse_args(argv[:split])
    args.command = argv[split + 1 :]
    module = args.command[:1] == ["-m"] and len(args.command) > 1
    if not module and (not args.command or not args.command[0].endswith(".py")):
        parser.error(
            f"the benchmark after -- must be a .py script of the repository or -m MODULE, got {args.command}"
        )
    if not module and not (REPO / args.command[0]).is_file():
        parser.error(f"no script {args.command[0]!r} in the working tree")
    if args.rounds < 1:
        parser.error(f"--rounds must be >= 1, got {args.rounds}")
    args.pattern = None
    if args.figure is not None:
        try:
            args.pattern = re.compile(args.figure, re.MULTILINE)
        except re.error as error:
            parser.error(f"--figure {args.figure!r} is not a regular expression: {error}")
        if args.pattern.groups < 1:
            parser.error(f"--figure {args.figure!r} has no group to read the figure from")
    return args


def resolve(rev: str) -> str:
    """The commit of ``rev`` (short), or exit with a one-line error."""
    done = subprocess.run(["git", "rev-parse", "--short", f"{rev}^{{commit}}"], cwd=REPO,
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode:
        sys.exit(f"bench_against.py: error: {rev!r} is not a revision of this repository")
    return done.stdout.strip()


def run_once(code: Path, command: list[str], pattern: re.Pattern | None) -> tuple[float, str]:
    """Run ``command`` (a script path relative to the repository, or ``-m MODULE``, and its
    arguments) with the code in ``code``; its figure (the wall time without ``pattern``) and its
    whole output."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(code), os.environ.get("PYTHONPATH", "")])}
    program = command if command[0] == "-m" else [str(code / command[0]), *command[1:]]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *program], cwd=code, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    output = done.stdout + done.stderr
    if done.returncode:
        sys.exit(f"bench_against.py: error: {' '.join(command[:2])} failed in {code}:\n{output[-3000:]}")
    if pattern is None:
        return round(wall, 2), output
    found = pattern.search(done.stdout)
    if found is None:
        sys.exit(
            f"bench_against.py: error: --figure matched nothing in the output of {code}:\n{output[-3000:]}"
        )
    return float(found.group(1).replace(",", "")), output


def package_of(code: Path) -> str:
    """Where ``import neurocheckers`` finds the package with ``code`` first on ``PYTHONPATH``."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    probe = "import neurocheckers, os; print(os.path.dirname(neurocheckers.__file__))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=code, env=env, capture_output=True, text=True)
    return done.stdout.strip()


def compare(codes: dict[str, Path], args: argparse.Namespace) -> dict[str, list[float]]:
    """Each revision's figures over ``args.rounds`` rounds, the order rotated each round."""
    for name, code in codes.items():
        found = package_of(code)
        if Path(found).resolve() != (code / "neurocheckers").resolve():
            sys.exit(f"bench_against.py: error: {name} imports the package from {found}, not {code}")
    names = list(codes)
    figures: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(args.rounds):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            figure, _ = run_once(codes[name], args.command, args.pattern)
            figures[name].append(figure)
            took = time.perf_counter() - start
            print(f"round {round_ + 1}/{args.rounds} {name:>10}: {figure:g}   ({took:.0f} s)", flush=True)
    return figures


def report(figures: dict[str, list[float]], args: argparse.Namespace) -> None:
    first = next(iter(figures))
    base = statistics.median(figures[first])
    better = "lower" if args.lower_is_better else "higher"
    print(f"\n{'revision':>10} {'median':>10} {'min .. max':>20}  ratio to {first} ({better} is better)")
    for name, values in figures.items():
        median = statistics.median(values)
        spread = f"{min(values):g} .. {max(values):g}"
        print(f"{name:>10} {median:>10g} {spread:>20}  {median / base if base else float('nan'):.3f}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    commits = {resolve(rev): rev for rev in args.revs}
    print(f"benchmark: {' '.join(args.command)}")
    figure = args.figure or "the wall time of each run, s"
    print(f"figure: {figure}; {args.rounds} rounds, the order rotated; machine: {os.cpu_count()} cores")
    print(
        "revisions: " + ", ".join(f"{c} ({r})" for c, r in commits.items()) + f", {WORK} (the working tree)"
    )
    with tempfile.TemporaryDirectory(prefix="bench-against-") as work, contextlib.ExitStack() as trees:
        codes = {commit: trees.enter_context(checked_out(commit, Path(work) / commit)) for commit in commits}
        report(compare({**codes, WORK: REPO}, args), args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
