"""Shared test setup: a persistent JAX compilation cache so repeated compiles are cheap, and the
published perft counts (tests/data/perft.json, inside the checkout)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from neurocheckers.runtime import configure_jax

REPO = Path(__file__).resolve().parents[1]
PERFT_TABLE = Path(__file__).resolve().parent / "data" / "perft.json"

# The session's cache folder and threshold go into the environment too, so the processes the tests
# start (``neurocheckers`` commands, ``python -c`` scripts) share the programs this process compiled:
# a child loads a program instead of compiling it again. Every program is written (no minimum compile
# time): the tests compile the same small programs in many processes and modules.
CACHE_DIR = str(os.environ.setdefault("NEUROCHECKERS_CACHE", str(REPO / ".jax_cache")))
MIN_SECONDS = os.environ.setdefault("NEUROCHECKERS_CACHE_MIN_SECONDS", "0")
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", CACHE_DIR)  # children that run JAX alone
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", MIN_SECONDS)
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")
# The tests compile hundreds of small programs and run each briefly: XLA:CPU's backend optimisation
# (LLVM's passes) costs more than it saves there. Level 0 cut the CPU time of compile-heavy tests by
# 25-35% on the 2-core machine. The flag goes into the environment before JAX creates its backend, so
# the processes the tests start compile (and look up the shared cache) with it too. A level already
# in XLA_FLAGS is kept.
XLA_TEST_FLAGS = "--xla_backend_optimization_level=0"
if "--xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = " ".join([*os.environ.get("XLA_FLAGS", "").split(), XLA_TEST_FLAGS])
# Two XLA:CPU choices for the tests' many small programs: its older element-wise code emitters instead
# of its fusion emitters (at level 0 they compile a test's search programs in 40% less CPU time and run
# them 2-3x faster: tests/test_fullwidth.py 174 -> 109 CPU s cold), and Eigen's matrix products instead
# of XNNPACK's (10-12% less compile time again). The same results. An XLA that does not know a flag
# aborts on it, so a short process tries them first.
PROBED_TEST_FLAGS = ("--xla_cpu_use_fusion_emitters=false", "--xla_cpu_use_xnnpack=false")


def xla_accepts(flags: list[str]) -> bool:
    """Whether a JAX process starts and compiles with ``flags`` added to XLA_FLAGS."""
    import subprocess
    import sys

    xla_flags = " ".join([os.environ.get("XLA_FLAGS", ""), *flags])
    env = {**os.environ, "XLA_FLAGS": xla_flags, "JAX_PLATFORMS": "cpu"}
    probe = [sys.executable, "-c", "import jax; jax.jit(lambda x: x + 1)(1).block_until_ready()"]
    return subprocess.run(probe, env=env, capture_output=True).returncode == 0


def accepted_flags(flags: list[str]) -> list[str]:
    """``flags`` that XLA accepts (those whose name XLA_FLAGS does not already set)."""
    new = [flag for flag in flags if flag.split("=")[0] not in os.environ.get("XLA_FLAGS", "")]
    if not new or xla_accepts(new):
        return new
    return [flag for flag in new if xla_accepts([flag])]


os.environ["XLA_FLAGS"] = " ".join([os.environ["XLA_FLAGS"], *accepted_flags(list(PROBED_TEST_FLAGS))])
configure_jax(CACHE_DIR)

# Every compiled XLA:CPU program holds about ten memory mappings until it is freed. A whole test session
# compiles thousands of programs; past Linux's vm.max_map_count (65530 by default) the next compile or
# cache write segfaults. Dropping JAX's in-memory caches between modules, once the process nears that
# limit, frees them (the persistent disk cache keeps later recompiles cheap).
MAP_COUNT_LIMIT = 25_000


def memory_map_count() -> int:
    """How many memory mappings this process holds (0 where /proc is unavailable)."""
    maps = Path("/proc/self/maps")
    if not maps.exists():
        return 0
    with maps.open() as lines:
        return sum(1 for _ in lines)


@pytest.fixture(scope="module", autouse=True)
def free_compiled_programs_when_many():
    yield
    if memory_map_count() > MAP_COUNT_LIMIT:
        import gc

        import jax

        jax.clear_caches()
        gc.collect()


@pytest.fixture(scope="session")
def small_db(tmp_path_factory) -> Path:
    """An american6 endgame database of at most 3 pieces, built once for the session (seconds)."""
    from neurocheckers.endgame.solve import build
    from neurocheckers.rules import AMERICAN6

    folder = tmp_path_factory.mktemp("endgame") / "american6"
    build(AMERICAN6, 3, folder)
    return folder


@pytest.fixture(scope="session")
def four_piece_db(tmp_path_factory) -> Path:
    """An american6 endgame database of at most 4 pieces, built once for the session (seconds)."""
    from neurocheckers.endgame.solve import build
    from neurocheckers.rules import AMERICAN6

    folder = tmp_path_factory.mktemp("endgame4") / "american6"
    build(AMERICAN6, 4, folder)
    return folder


@pytest.fixture(scope="session")
def perft_table() -> dict:
    import json

    return json.loads(PERFT_TABLE.read_text())


def pytest_sessionfinish(session, exitstatus):
    """In CI (``CI`` set, as ``.ci/run`` does) a skipped test fails the run: every test must run there,
    OpenSpiel's and Ray's included (the test and ray extras are installed)."""
    if not os.environ.get("CI"):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped:
        reporter.write("\n")
        reporter.write_sep("=", f"CI: {len(skipped)} test(s) skipped; in CI every test must run", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


SLOW_TESTS = Path(__file__).resolve().parent / "slow_tests.txt"
"""The tests (node ids) and test modules marked ``slow``, measured; the inner loop leaves them out."""


LONGEST_FILES_FIRST = (
    "tests/test_devices.py",
    "tests/test_fullwidth.py",
    "tests/test_every_strategy.py",
    "tests/test_gauntlet.py",
    "tests/test_bench_scripts.py",
    "tests/test_selection.py",
    "tests/test_pbt.py",
    "tests/test_learner_runs.py",
    "tests/test_hybrid.py",
    "tests/test_bench_scripts_search.py",
    "tests/test_baselines.py",
    "tests/test_run_folder.py",
    "tests/test_endgame.py",
    "tests/test_mcts.py",
    "tests/test_sweep.py",
    "tests/test_evolution_search.py",
    "tests/test_td_leaf.py",
    "tests/test_cli.py",
    "tests/test_strength_probe.py",
    "tests/test_epochs_per_call.py",
)
"""The files whose tests take longest in all (CPU seconds of a cold whole-suite run with
``NEUROCHECKERS_CPU_DURATIONS``), longest first. pytest-xdist hands whole files to its workers in
collection order (``--no-loadscope-reorder`` in pyproject.toml), so these start first and short
files fill in at the end. xdist's own order, by test count, handed out a 3-test file of 90 s
(test_devices) among the last, for one worker to run while the other had finished."""


def file_of(item) -> str:
    return item.nodeid.split("::")[0]


def pytest_collection_modifyitems(config, items):
    listed = {line.strip() for line in SLOW_TESTS.read_text().splitlines() if line.strip() and line[0] != "#"}
    for item in items:
        if item.nodeid in listed or file_of(item) in listed:
            item.add_marker(pytest.mark.slow)
    # The longest files first, then the others by test count (most first), each file's tests in order.
    rank = {name: i for i, name in enumerate(LONGEST_FILES_FIRST)}
    count = Counter(file_of(item) for item in items)
    items.sort(key=lambda item: (rank.get(file_of(item), len(rank)), -count[file_of(item)]))


CPU_DURATIONS = os.environ.get("NEUROCHECKERS_CPU_DURATIONS")
"""A file to which each test's CPU seconds are appended (this process's and the processes it waited
for), one ``CPU seconds<TAB>wall seconds<TAB>node id`` line a test: wall-clock durations mean
little on a loaded machine."""


if CPU_DURATIONS:
    import resource
    import time

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        def cpu_seconds() -> float:
            own = resource.getrusage(resource.RUSAGE_SELF)
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

        start, wall = cpu_seconds(), time.perf_counter()
        COMPILE_SECONDS.clear()
        TEST_PROGRAMS.clear()
        yield
        spent = "\t".join(f"{COMPILE_SECONDS[event]:.2f}" for event in COMPILE_EVENTS)
        with open(CPU_DURATIONS, "a") as out:
            seconds = f"{cpu_seconds() - start:.2f}\t{time.perf_counter() - wall:.2f}"
            out.write(f"{seconds}\t{item.nodeid}\t{spent}\n")
        with open(f"{CPU_DURATIONS}.tests", "a") as out:  # each program a test compiled, or loaded (hit)
            for name, seconds, hit in TEST_PROGRAMS:
                out.write(f"{item.nodeid}\t{name}\t{seconds:.2f}\t{'hit' if hit else 'miss'}\n")

    # This process's seconds tracing, lowering and compiling (or loading) XLA programs, a test each
    # (appended after the node id), and each program's in all (to FILE.programs at the end).
    COMPILE_EVENTS = (
        "/jax/core/compile/jaxpr_trace_duration",
        "/jax/core/compile/jaxpr_to_mlir_module_duration",
        "/jax/core/compile/backend_compile_duration",
    )
    COMPILE_SECONDS: Counter = Counter()
    PROGRAM_SECONDS: Counter = Counter()
    PROGRAM_COUNTS: Counter = Counter()
    CACHE_HIT = [False]  # the persistent cache's hit event comes just before its compile event
    TEST_PROGRAMS: list[tuple[str, float, bool]] = []

    def record_compile(event: str, seconds: float, **metadata) -> None:
        if event in COMPILE_EVENTS:
            COMPILE_SECONDS[event] += seconds
        if event == COMPILE_EVENTS[-1]:
            PROGRAM_SECONDS[metadata.get("fun_name", "?")] += seconds
            PROGRAM_COUNTS[metadata.get("fun_name", "?")] += 1
            TEST_PROGRAMS.append((metadata.get("fun_name", "?"), seconds, CACHE_HIT[0]))
            CACHE_HIT[0] = False

    def record_cache_hit(event: str, **_) -> None:
        if event == "/jax/compilation_cache/cache_hits":
            CACHE_HIT[0] = True

    import jax.monitoring

    jax.monitoring.register_event_duration_secs_listener(record_compile)
    jax.monitoring.register_event_listener(record_cache_hit)

    def pytest_unconfigure(config):
        with open(f"{CPU_DURATIONS}.programs", "a") as out:
            for name, seconds in PROGRAM_SECONDS.items():
                out.write(f"{seconds:.2f}\t{PROGRAM_COUNTS[name]}\t{name}\n")
