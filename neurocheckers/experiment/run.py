"""The one run loop of every strategy: run folders, metrics, lineage files, atomic checkpoints and
resume.

A strategy is a ``trainers.Trainer``: its jitted ``epoch`` does the work; this module only logs,
saves (the folder's files through ``run_files``) and shows progress. Epoch keys depend on the seed
and the epoch number alone, so a run resumed from a checkpoint writes the same metrics (apart from
timing columns) as an uninterrupted one.

One process at a time writes a run folder: ``run`` holds an exclusive lock on its ``run.lock`` for
the run's life and refuses a second writer. A finished run is left untouched. CSV files are written
with LF line endings only.
"""

from __future__ import annotations

import contextlib
import functools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from neurocheckers.experiment.config import ExperimentConfig
from neurocheckers.experiment.files import atomic_write_text
from neurocheckers.experiment.folder import (
    CHECKPOINT,
    DISCARDED_FILE,
    FAILURE_FILE,
    Budget,
    RunError,
    csv_writer,
    discarded_seconds,
    read_run_config,
    run_budget,
    run_folder_name,
    run_is_complete,
    run_lock,
)
from neurocheckers.experiment.run_files import (
    check_history,
    end_at_latest_row,
    metric_columns,
    read_checkpoint,
    save_network,
    truncate_run,
    write_checkpoint,
    write_row,
)
from neurocheckers.experiment.strategy_registry import strategy
from neurocheckers.experiment.trainers import Trainer, all_finite, make_trainer
from neurocheckers.formats import (
    CONFIG_FILE,
    LINEAGE_COLUMNS,
    LINEAGE_DIR,
    LINEAGE_FILE,
    METRICS_FILE,
)
from neurocheckers.search.play_settings import epoch_key
from neurocheckers.sharding import SEEDS_AXIS, MemoryLimitError, on_every_device, replicated_sharding
from neurocheckers.sharding import check_memory as check_program_memory


def _calibrated_simulations(config: ExperimentConfig) -> int:
    """The simulation count that fits ``seconds_per_move`` on this machine (measured once)."""
    if config.seconds_per_move <= 0:
        return config.simulations
    from neurocheckers.networks.evaluator import init_params, value_fn
    from neurocheckers.search.anytime import calibrate_simulations
    from neurocheckers.search.mcts import MCTSConfig

    trainer = make_trainer(config)
    params = init_params(jax.random.key(0), trainer.spec)
    return int(
        calibrate_simulations(
            trainer.rules,
            MCTSConfig(),
            value_fn(trainer.spec),
            params,
            config.seconds_per_move,
            batch_size=config.population * config.games_per_epoch,
        )
    )


def create_run(config: ExperimentConfig, out: str | Path = "runs", check_memory: bool = False) -> Path:
    """Make a new run folder under ``out`` with the resolved config; returns its path.

    ``RunError`` if ``out`` is not a folder or (with ``check_memory``) an epoch does not fit in
    memory; nothing is created then.
    """
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise RunError(f"{root} is a file, not a folder to put run folders in")
    simulations = _calibrated_simulations(config)
    if check_memory:
        make_trainer(config, simulations).check_fits()
    root.mkdir(parents=True, exist_ok=True)
    path = root / run_folder_name(config)
    suffix = 1
    while path.exists():
        path = root / f"{run_folder_name(config)}-{suffix}"
        suffix += 1
    path.mkdir()
    resolved = {"config": config.to_dict(), "simulations_used": simulations}
    atomic_write_text(path / CONFIG_FILE, json.dumps(resolved, indent=2) + "\n")
    (path / LINEAGE_DIR).mkdir()
    with open(path / METRICS_FILE, "w", newline="") as f:
        csv_writer(f).writerow(metric_columns(config))
    with open(path / LINEAGE_FILE, "w", newline="") as f:
        csv_writer(f).writerow(LINEAGE_COLUMNS)
    return path


# --- the loop ----------------------------------------------------------------------------------


def run(
    run_dir: str | Path,
    epochs: int | None = None,
    on_epoch: Callable[[dict[str, Any]], None] | None = None,
    stop_after: int | None = None,
) -> Path:
    """Run (or continue) the run in ``run_dir``, whatever its strategy, up to ``epochs`` (default: the
    config's).

    Starts from the checkpoint when there is one; a run whose checkpoint already has ``epochs``
    epochs is left untouched (``run_is_complete``). ``RunError`` when another process is writing the
    folder, when an epoch would not fit in memory, or when an epoch makes the parameters non-finite
    (the run stops at the checkpoint before it). ``on_epoch`` receives each epoch's metrics row;
    ``stop_after`` stops after the call that reaches that many epochs of this ``run`` (for tests of
    interruption). The config's ``epochs_per_call`` epochs go to the device in one call
    (``call_length``); the budget is checked between calls.
    """
    run_dir = Path(run_dir)
    config, simulations = read_run_config(run_dir)
    total = epochs if epochs is not None else config.epochs
    if run_is_complete(run_dir, total):
        return run_dir
    trainer = make_trainer(config, simulations)
    with run_lock(run_dir):
        saved = _saved_state(run_dir, config, trainer)  # a checkpoint is checked before compiling
        _check_fits(config, trainer, int(saved.epoch) if saved is not None else 0, total)
        (run_dir / FAILURE_FILE).unlink(missing_ok=True)
        with _failures_recorded([run_dir]):
            state = _start(run_dir, config, trainer, saved)
            budget = run_budget(run_dir, config.budget_minutes)
            done_here = 0
            while (
                int(state.epoch) < total
                and not budget.spent()
                and (stop_after is None or done_here < stop_after)
            ):
                before = int(state.epoch)
                played = _run_call(run_dir, config, trainer, state, total, on_epoch, budget)
                if played is None:  # the budget ran out inside the epoch: it is discarded
                    write_checkpoint(run_dir, config, trainer.simulations, state)
                    end_at_latest_row(
                        run_dir, config, trainer, trainer.network(state), trainer.metadata_of(state)
                    )
                    break
                state = played
                done_here += int(state.epoch) - before
    return run_dir


@contextlib.contextmanager
def _failures_recorded(run_dirs: list[Path]):
    """Write each run's ``FAILURE_FILE`` (the error in one line) when the block raises; an interrupt
    is not a failure (``BaseException`` passes through untouched)."""
    try:
        yield
    except Exception as error:
        for run_dir in run_dirs:
            message = " ".join(str(error).split()) or type(error).__name__
            for path in sorted({str(run_dir.resolve()), str(run_dir)}, key=len, reverse=True):
                message = message.replace(path, run_dir.name)  # the Runs page shows no server paths
            atomic_write_text(run_dir / FAILURE_FILE, f"{type(error).__name__}: {message}\n")
        raise


def _saved_state(run_dir: Path, config: ExperimentConfig, trainer: Trainer) -> Any | None:
    """The checkpoint's state, its history checked (``check_history``), or None without one;
    ``RunError`` for a checkpoint of another config (an edited config.json) or a damaged history."""
    if not (run_dir / CHECKPOINT).exists():
        return None
    state = read_checkpoint(run_dir, config, trainer.template())
    check_history(run_dir, int(state.epoch))
    return state


def _start(run_dir: Path, config: ExperimentConfig, trainer: Trainer, saved: Any | None) -> Any:
    """The state to go on from: ``saved`` (the checkpoint's), or a new one (then the folder starts
    afresh with its first network as lineage entry 0). Rows and lineage entries written after the
    checkpoint are dropped: they are played again."""
    if saved is not None:
        truncate_run(run_dir, int(saved.epoch), metric_columns(config))
        return saved
    state = trainer.init(trainer.settings, jax.random.key(config.seed))
    truncate_run(run_dir, 0, metric_columns(config))
    save_network(run_dir, trainer, trainer.network(state), 0, -1, float("nan"), trainer.metadata_of(state))
    return state


# --- device calls: one epoch, or several scanned ------------------------------------------------


def scans_epochs(config: ExperimentConfig, trainer: Trainer) -> bool:
    """Whether the run's calls are ``epochs_program``s: ``epochs_per_call`` > 1, and the trainer does
    not play its epoch in pieces to stop inside it at a wall-time budget (``Trainer.epoch_steps``) nor
    on the host (``Trainer.host_epoch``)."""
    pieces = trainer.epoch_steps is not None and config.budget_minutes > 0
    return config.epochs_per_call > 1 and not pieces and trainer.host_epoch is None


def call_length(config: ExperimentConfig, trainer: Trainer, epoch: int, total: int) -> int:
    """Epochs in the next device call: ``epochs_per_call`` when the run ``scans_epochs``, fewer for
    the run's last call; else one."""
    return max(1, min(config.epochs_per_call, total - epoch)) if scans_epochs(config, trainer) else 1


def _check_fits(config: ExperimentConfig, trainer: Trainer, epoch: int, total: int) -> None:
    """``RunError`` when the run's first call would not fit in memory (``Trainer.check_fits`` for one
    epoch a call, else its compiled ``epochs_program``, which the calls then use)."""
    if not scans_epochs(config, trainer):
        trainer.check_fits()  # before anything is written: a refusal changes nothing
        return
    try:
        compiled_program(trainer, call_length(config, trainer, epoch, total))
    except MemoryLimitError as e:
        raise RunError(f"{e}; lower {trainer.memory_hint} or epochs_per_call") from None


def epochs_program(trainer: Trainer, length: int, batched: bool = False) -> Callable:
    """``length`` epochs of ``trainer`` as one jitted ``lax.scan``: ``program(state, seed,
    *trainer.epoch_data) -> (state, (metrics, networks))``, each epoch's metrics and network
    (``trainer.network``) stacked on a leading [length] axis. Epoch keys come from the seed and the
    epoch number (``epoch_key``), so the result is that of ``length`` calls of the epoch. ``batched``:
    vmapped over a leading [seeds] axis of the state and the seed (the epoch data shared). Trainers of
    one epoch function and settings (the seeds of one config) share one program."""
    key = (trainer.epoch, trainer.settings, len(trainer.epoch_data), length, batched)
    if key not in _PROGRAMS:
        _PROGRAMS[key] = _scanned_program(trainer, length, batched)
    return _PROGRAMS[key]


_PROGRAMS: dict[tuple, Callable] = {}
"""``epochs_program``'s programs, by epoch function, settings, epoch data count, length and batching."""


def _scanned_program(trainer: Trainer, length: int, batched: bool) -> Callable:
    def scanned(state: Any, seed: jax.Array, *data: Any) -> tuple[Any, tuple[Any, Any]]:
        def one_epoch(state: Any, _: None) -> tuple[Any, tuple[Any, Any]]:
            state, metrics = trainer.epoch(trainer.settings, state, epoch_key(seed, state.epoch), *data)
            return state, (metrics, trainer.network(state))

        return jax.lax.scan(one_epoch, state, None, length=length)

    if batched:
        # The axis name keeps the seeds' game loops in lockstep (``sharding.LOCKSTEP_AXES``).
        scanned = jax.vmap(scanned, in_axes=(0, 0, *[None] * len(trainer.epoch_data)), axis_name=SEEDS_AXIS)
    return jax.jit(scanned)


def _per_epoch(stacked: dict[str, Any], length: int) -> list[dict[str, Any]]:
    """Each epoch's metrics of metrics stacked on a leading [length] axis."""
    return [{name: value[i] for name, value in stacked.items()} for i in range(length)]


def _run_call(
    run_dir: Path,
    config: ExperimentConfig,
    trainer: Trainer,
    state: Any,
    total: int,
    on_epoch: Callable[[dict[str, Any]], None] | None,
    budget: Budget,
) -> Any:
    """Play the next call's epochs (one epoch as itself, or ``call_length`` epochs as a compiled
    ``epochs_program``) and record them (``_record_call``). None, with nothing written but the seconds
    spent (``DISCARDED_FILE``), when the budget runs out inside an epoch played in pieces."""
    epoch = int(state.epoch)
    start = time.perf_counter()
    if trainer.host_epoch is None:  # as every call gets it: one program, its devices in parallel
        state = on_every_device(state)
    networks = None  # a one-epoch call: the network is the state's
    if not scans_epochs(config, trainer):
        played = _play_epoch(trainer, state, epoch_key(config.seed, epoch), budget, start)
        if played is None:
            spent = discarded_seconds(run_dir) + time.perf_counter() - start
            atomic_write_text(run_dir / DISCARDED_FILE, f"{spent!r}\n")
            budget.used += time.perf_counter() - start
            return None
        state, metrics = played
        metrics = [jax.device_get(metrics)]
    else:
        length = call_length(config, trainer, epoch, total)
        program = compiled_program(trainer, length)
        played = jax.device_get(program(state, np.uint32(config.seed), *trainer.epoch_data))
        state, (stacked, networks) = played
        metrics = _per_epoch(stacked, length)
    wall = time.perf_counter() - start
    _record_call(run_dir, config, trainer, state, metrics, networks, wall, total, on_epoch, budget)
    return state


def _record_call(
    run_dir: Path,
    config: ExperimentConfig,
    trainer: Trainer,
    state: Any,
    metrics: list[dict[str, Any]],
    networks: Any | None,
    wall: float,
    total: int,
    on_epoch: Callable[[dict[str, Any]], None] | None,
    budget: Budget,
) -> None:
    """Record a call's epochs: check its end ``state`` is finite, charge ``wall`` to the budget, write
    each epoch's row (``write_row``, ``wall`` shared evenly) in order, then checkpoint the end state
    when a checkpoint fell due inside the call or the run ends: with ``checkpoint_every`` not a
    multiple of the call's length a checkpoint moves to the end of the call it falls in. A call that
    spends the budget (or leaves too little of it for another) is the run's last. ``networks``: each
    epoch's network, stacked (None: the state's, for a call of one epoch)."""
    first = int(state.epoch) - len(metrics)
    if not bool(all_finite(trainer.checked(state))):
        epochs = f"epoch {first}" if len(metrics) == 1 else f"epochs {first}..{first + len(metrics) - 1}"
        raise RunError(
            f"{epochs} made parameters non-finite (inf or nan); the run stops at its last "
            f"checkpoint: lower {trainer.non_finite_hint}"
        )
    budget.used += wall
    budget.next_epoch = wall  # the next call's expected time
    rows, due = [], False
    for i, epoch_metrics in enumerate(metrics):
        epoch = first + i
        last = epoch + 1 == total or (i == len(metrics) - 1 and budget.spent())
        network = trainer.network(state) if networks is None else _seed_slice(networks, i)
        extra = trainer.metadata_of(state) if networks is None else {}
        share = wall / len(metrics)
        rows.append(
            write_row(run_dir, config, trainer, epoch, epoch_metrics, network, share, total, last, extra)
        )
        due = due or (epoch + 1) % config.checkpoint_every == 0 or last
    if due:
        write_checkpoint(run_dir, config, trainer.simulations, state)
    if on_epoch is not None:
        for row in rows:
            on_epoch(row)


def _play_epoch(trainer: Trainer, state: Any, key: jax.Array, budget: Budget, start: float) -> Any | None:
    """``trainer.run_epoch``, or where the budget may run out inside it and the trainer plays its
    epoch in pieces (``Trainer.epoch_steps``), those pieces with the budget checked between them:
    None when it runs out before the last (the partial epoch is dropped; the same key replays it
    whole). Both give the same epoch."""
    if trainer.epoch_steps is None or not budget.may_end_in_next_epoch():
        return trainer.run_epoch(state, key)
    steps = trainer.run_epoch_steps(state, key)
    while True:
        try:
            next(steps)
        except StopIteration as finished:
            return finished.value
        if budget.over(time.perf_counter() - start):
            steps.close()
            return None


# --- seeds vmapped -----------------------------------------------------------------------------


def run_seeds(
    run_dirs: list[str | Path],
    epochs: int | None = None,
    on_epoch: Callable[[Path, dict[str, Any]], None] | None = None,
) -> list[Path]:
    """Run the new runs in ``run_dirs``, which differ only in their seed, up to ``epochs`` (default:
    their config's): as one program vmapped over a leading seed axis of their states
    (``epochs_program``, ``epochs_per_call`` epochs a call) when ``seed_group`` allows it, else one
    after another (``run``). Each run's folder ends as its own ``run`` would leave it, its metrics
    equal within float tolerance, apart from timing: each seed is charged an even share of a vmapped
    call's wall time, so a budget buys each run what it would alone. ``on_epoch(run_dir, row)``
    receives each epoch's row."""
    run_dirs = [Path(d) for d in run_dirs]
    group = seed_group(run_dirs, epochs)
    if group is None:
        for run_dir in run_dirs:
            run(run_dir, epochs, functools.partial(on_epoch, run_dir) if on_epoch else None)
        return run_dirs
    configs, trainers, total = group
    try:
        compiled_program(trainers[0], min(configs[0].epochs_per_call, total), len(run_dirs))
    except MemoryLimitError:  # the seeds do not fit together: the first alone, then the others
        return run_seeds([run_dirs[0]], epochs, on_epoch) + run_seeds(run_dirs[1:], epochs, on_epoch)
    with contextlib.ExitStack() as locks:
        for run_dir in run_dirs:
            locks.enter_context(run_lock(run_dir))
            (run_dir / FAILURE_FILE).unlink(missing_ok=True)
        with _failures_recorded(run_dirs):
            _run_group(run_dirs, configs, trainers, total, on_epoch)
    return run_dirs


def _run_group(
    run_dirs: list[Path],
    configs: list[ExperimentConfig],
    trainers: list[Trainer],
    total: int,
    on_epoch: Callable[[Path, dict[str, Any]], None] | None,
) -> None:
    """``run_seeds``' loop over calls, the folders locked: each call plays every seed (the states
    stacked on the host between calls), then each run records its part (``_record_call``)."""
    states = [_start(d, c, t, None) for d, c, t in zip(run_dirs, configs, trainers, strict=True)]
    budgets = [run_budget(d, c.budget_minutes) for d, c in zip(run_dirs, configs, strict=True)]
    stacked = jax.device_get(jax.tree.map(lambda *xs: jnp.stack(xs), *states))
    seeds = np.asarray([c.seed for c in configs], np.uint32)
    epoch = 0
    while epoch < total and not any(b.spent() for b in budgets):
        length = min(configs[0].epochs_per_call, total - epoch)
        program = compiled_program(trainers[0], length, len(run_dirs))
        start = time.perf_counter()
        stacked, (metrics, networks) = jax.device_get(
            program(on_every_device(stacked), seeds, *trainers[0].epoch_data)
        )
        wall = (time.perf_counter() - start) / len(run_dirs)  # each seed's share: budgets stay per run
        for i, run_dir in enumerate(run_dirs):
            _record_call(
                run_dir, configs[i], trainers[i], _seed_slice(stacked, i),
                _per_epoch(_seed_slice(metrics, i), length), _seed_slice(networks, i), wall, total,
                functools.partial(on_epoch, run_dir) if on_epoch else None, budgets[i],
            )  # fmt: skip
        epoch += length


def _seed_slice(tree: Any, i: int) -> Any:
    """Part ``i`` of ``tree``'s arrays along their leading axis (a seed's, or an epoch's)."""
    return jax.tree.map(lambda x: x[i], tree)


def seed_group(run_dirs: list[Path], epochs: int | None) -> tuple[list, list[Trainer], int] | None:
    """(configs, trainers, epochs to reach) of runs that can be vmapped as one program, or None: two or
    more new runs (no checkpoint) of one config apart from the seed, of a strategy whose epoch is pure
    (``StrategyEntry.pure_epoch``), with equal trainer settings, none playing its epoch in pieces or on
    the host (``Trainer.host_epoch``: the seeds then run one after another)."""
    if len(run_dirs) < 2 or any((d / CHECKPOINT).exists() for d in run_dirs):
        return None
    read = [read_run_config(d) for d in run_dirs]
    configs = [config for config, _ in read]
    trainers = [make_trainer(config, simulations) for config, simulations in read]
    reference = {**configs[0].to_dict(), "seed": None}
    if (
        any({**c.to_dict(), "seed": None} != reference for c in configs)
        or not strategy(configs[0].strategy).pure_epoch
        or any(
            (t.settings, t.simulations) != (trainers[0].settings, trainers[0].simulations) for t in trainers
        )
        or (trainers[0].epoch_steps is not None and configs[0].budget_minutes > 0)
        or trainers[0].host_epoch is not None
    ):
        return None
    return configs, trainers, epochs if epochs is not None else configs[0].epochs


def compiled_program(trainer: Trainer, length: int, seeds: int = 0) -> Any:
    """``epochs_program`` of ``length`` epochs compiled (once, from shapes alone: a
    ``MemoryLimitError`` comes before anything is written), vmapped over ``seeds`` seeds when > 0."""
    template = trainer.template()
    seed_shape = jax.ShapeDtypeStruct((), np.uint32)
    if seeds:
        template = jax.tree.map(lambda s: jax.ShapeDtypeStruct((seeds, *s.shape), s.dtype), template)
        seed_shape = jax.ShapeDtypeStruct((seeds,), np.uint32)
    whole = replicated_sharding()  # the state as every call gives it (``on_every_device``)
    template = jax.tree.map(lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=whole), template)
    program = epochs_program(trainer, length, batched=seeds > 0)
    if (program, seeds) not in _COMPILED:
        compiled = program.lower(template, seed_shape, *trainer.epoch_data).compile()
        what = f"{seeds} seeds of this config vmapped" if seeds else f"{length} epochs of this config"
        check_program_memory(compiled, what)
        _COMPILED[program, seeds] = compiled
    return _COMPILED[program, seeds]


_COMPILED: dict[tuple[Callable, int], Any] = {}
"""``compiled_program``'s programs that fit in memory, by program and seed count."""
