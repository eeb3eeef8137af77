"""The evolution driver: run folders, metrics, lineage files, atomic checkpoints and resume.

The jitted ``evolve_epoch`` does the work; this module only logs, saves and shows progress. Epoch
keys depend on the seed and the epoch number alone, so a run resumed from a checkpoint writes the
same metrics (apart from timing columns) as an uninterrupted one.

One process at a time writes a run folder: ``run`` holds an exclusive lock on its ``run.lock`` for
the run's life and refuses a second writer. A finished run is left untouched. CSV files are written
with LF line endings only.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import datetime
import functools
import io
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save

from neurocheckers.agent_file import save_agent
from neurocheckers.architectures import spec_of_settings
from neurocheckers.arena import MemoryLimitError, PopulationSearch, check_memory
from neurocheckers.evaluator import EvaluatorSpec
from neurocheckers.evolution.boss_ga import (
    EvoState,
    Setup,
    epoch_key,
    evolve_epoch,
    init,
    make_setup,
    population_search,
)
from neurocheckers.evolution.selection import fixed_opponent_policy
from neurocheckers.experiment.config import ConfigError, ExperimentConfig, make_config
from neurocheckers.experiment.files import atomic_write_bytes, atomic_write_text
from neurocheckers.experiment.strength import is_probe_epoch, strength_probe
from neurocheckers.formats import (
    CONFIG_FILE,
    LINEAGE_COLUMNS,
    LINEAGE_DIR,
    LINEAGE_FILE,
    METRIC_COLUMNS,
    METRICS_FILE,
    read_lineage,
    read_metrics,
)
from neurocheckers.learners import dqn, td_lambda
from neurocheckers.rules.presets import Rules, get_rules

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: run folders are not locked
    fcntl = None  # type: ignore[assignment]

CHECKPOINT = "checkpoint.safetensors"
LOCK_FILE = "run.lock"
CHECKPOINT_FORMAT = "neurocheckers-checkpoint"
CHECKPOINT_VERSION = "1"


class RunError(ValueError):
    """A run folder or checkpoint that cannot be used; nothing was changed."""


def run_folder_name(config: ExperimentConfig, now: datetime.datetime | None = None) -> str:
    """``{name}_seed{seed}_{YYYYmmdd-HHMMSS}``."""
    now = now or datetime.datetime.now()
    return f"{config.name}_seed{config.seed}_{now:%Y%m%d-%H%M%S}"


def _csv_writer(f):
    """A CSV writer with LF line endings (the csv module's default is CRLF)."""
    return csv.writer(f, lineterminator="\n")


def _calibrated_simulations(config: ExperimentConfig) -> int:
    """The simulation count that fits ``seconds_per_move`` on this machine (measured once)."""
    if config.seconds_per_move <= 0:
        return config.simulations
    from neurocheckers.evaluator import init_params, value_fn
    from neurocheckers.search.mcts import MCTSConfig, calibrate_simulations

    setup = make_setup(config.evolution_settings())
    params = init_params(jax.random.key(0), setup.spec)
    return int(
        calibrate_simulations(
            setup.rules,
            MCTSConfig(),
            value_fn(setup.spec),
            params,
            config.seconds_per_move,
            batch_size=config.population * config.games_per_epoch,
        )
    )


def check_fits(setup: Setup) -> None:
    """Compile one epoch of ``setup`` (cheap whatever the sizes; the run reuses it) and raise
    ``RunError`` when its arrays need more memory than this machine has, before anything runs."""
    state = jax.eval_shape(lambda: init(setup, jax.random.key(0)))
    key = jax.eval_shape(lambda: epoch_key(0, 0))  # shapes only
    try:
        check_memory(evolve_epoch.lower(setup, state, key).compile(), "one epoch of this config")
    except MemoryLimitError as e:
        raise RunError(f"{e}; lower population, games_per_epoch, simulations or max_plies") from None


def create_run(config: ExperimentConfig, out: str | Path = "runs", check_memory: bool = False) -> Path:
    """Make a new run folder under ``out`` with the resolved config; returns its path.

    ``RunError`` if ``out`` is not a folder or (with ``check_memory``) an epoch does not fit in
    memory; nothing is created then.
    """
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise RunError(f"{root} is a file, not a folder to put run folders in")
    simulations = _calibrated_simulations(config)
    if check_memory and config.strategy in LEARNERS:
        check_learner_fits(config)
    elif check_memory:
        check_fits(make_setup(config.evolution_settings(simulations)))
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
        _csv_writer(f).writerow(METRIC_COLUMNS)
    with open(path / LINEAGE_FILE, "w", newline="") as f:
        _csv_writer(f).writerow(LINEAGE_COLUMNS)
    return path


def read_run_config(run_dir: str | Path) -> tuple[ExperimentConfig, int]:
    """(config, simulations used) of a run folder; ``RunError`` if it is not one."""
    run_dir = Path(run_dir)
    path = run_dir / CONFIG_FILE
    if not run_dir.is_dir():
        raise RunError(f"no run folder {run_dir}" + (" (it is a file)" if run_dir.exists() else ""))
    missing = [name for name in (CONFIG_FILE, METRICS_FILE) if not (run_dir / name).is_file()]
    if missing:
        raise RunError(f"{run_dir} is not a neurocheckers run folder: it has no {' and no '.join(missing)}")
    try:
        data = json.loads(path.read_text())
        return make_config(data["config"]), int(data["simulations_used"])
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ConfigError) as e:
        raise RunError(f"{path} is not a valid run config: {e}") from None


def checkpoint_epoch(run_dir: str | Path) -> int | None:
    """Epochs done according to the run's checkpoint; None without a readable checkpoint written
    by the run's own config."""
    config, _ = read_run_config(run_dir)
    try:
        with safe_open(str(Path(run_dir) / CHECKPOINT), framework="numpy") as f:
            metadata = f.metadata() or {}
        if not written_by(metadata.get("config"), config):
            return None
        return int(metadata["epoch"])
    except (SafetensorError, OSError, ValueError, KeyError):
        return None


def written_by(stored: str | None, config: ExperimentConfig) -> bool:
    """Whether a checkpoint's stored config (JSON) is ``config``; keys added to the config since the
    checkpoint was written count at their defaults, so older runs still resume."""
    try:
        return make_config(json.loads(stored or "")).to_dict() == config.to_dict()
    except (ValueError, TypeError, AttributeError):  # not JSON, or not a config (ConfigError too)
        return False


@contextlib.contextmanager
def run_lock(run_dir: str | Path):
    """Hold the exclusive lock of ``run_dir`` (``fcntl.flock`` on its ``run.lock``) while in the
    block; ``RunError`` at once if another process holds it. The lock goes with the process."""
    path = Path(run_dir) / LOCK_FILE
    with open(path, "a") as f:
        if fcntl is not None:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RunError(
                    f"{run_dir} is in use by another process (it holds {path}); wait for it to end"
                ) from None
        yield


def run_is_locked(run_dir: str | Path) -> bool:
    """Whether a process holds ``run_dir``'s lock (a run is going on), found without writing or
    locking anything: from ``/proc/locks`` where there is one (Linux), else by a shared-lock probe of
    an existing ``run.lock``. False when the folder has no ``run.lock``."""
    path = Path(run_dir) / LOCK_FILE
    try:
        status = path.stat()
    except OSError:
        return False
    try:
        locks = Path("/proc/locks").read_text()
    except OSError:
        locks = None
    if locks is not None:
        device = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
        return any(device in line.split() for line in locks.splitlines() if "FLOCK" in line)
    if fcntl is None:  # pragma: no cover - not POSIX
        return False
    with open(path) as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    return False


# --- checkpoints -------------------------------------------------------------------------------


def save_checkpoint(run_dir: Path, config: ExperimentConfig, setup: Setup, state: EvoState) -> None:
    """Write the whole evolution state atomically (a temporary file, fsync, then rename)."""
    write_checkpoint(run_dir, config, setup.settings.simulations, state)


def write_checkpoint(run_dir: Path, config: ExperimentConfig, simulations: int, state: Any) -> None:
    """Write any run state (a pytree with an ``epoch`` field) atomically, as safetensors."""
    leaves = [np.asarray(x) for x in jax.tree.leaves(jax.device_get(state))]
    tensors = {f"leaf_{i:04d}": np.array(x, order="C") for i, x in enumerate(leaves)}  # keeps 0-d
    metadata = {
        "format": CHECKPOINT_FORMAT,
        "format_version": CHECKPOINT_VERSION,
        "epoch": str(int(state.epoch)),
        "config": json.dumps(config.to_dict(), sort_keys=True),
        "simulations": str(simulations),
    }
    atomic_write_bytes(run_dir / CHECKPOINT, save(tensors, metadata=metadata))


def load_checkpoint(run_dir: Path, config: ExperimentConfig, setup: Setup) -> EvoState:
    """The state saved in ``run_dir``; ``RunError`` if it is corrupt or from another config."""
    return read_checkpoint(run_dir, config, jax.eval_shape(lambda: init(setup, jax.random.key(0))))


def read_checkpoint(run_dir: Path, config: ExperimentConfig, template: Any) -> Any:
    """The state saved in ``run_dir``, shaped like ``template`` (a pytree of arrays or shapes);
    ``RunError`` if it is corrupt or from another config."""
    path = run_dir / CHECKPOINT
    treedef = jax.tree.structure(template)
    expected = jax.tree.leaves(template)
    try:
        with safe_open(str(path), framework="numpy") as f:
            metadata = dict(f.metadata() or {})
            tensors = {name: f.get_tensor(name) for name in f.keys()}  # noqa: SIM118 (not a dict)
    except (SafetensorError, OSError, ValueError) as e:
        raise RunError(f"checkpoint {path} cannot be read: {e}") from None
    if metadata.get("format") != CHECKPOINT_FORMAT:
        raise RunError(f"{path} is not a neurocheckers checkpoint")
    if metadata.get("format_version") != CHECKPOINT_VERSION:
        raise RunError(
            f"{path} has checkpoint version {metadata.get('format_version')!r}, not {CHECKPOINT_VERSION}"
        )
    if not written_by(metadata.get("config"), config):
        raise RunError(f"checkpoint {path} was written by another config than {run_dir / CONFIG_FILE}")
    if len(tensors) != len(expected):
        raise RunError(f"checkpoint {path} holds {len(tensors)} arrays, expected {len(expected)}")
    leaves = []
    for i, want in enumerate(expected):
        got = tensors.get(f"leaf_{i:04d}")
        if got is None or got.shape != want.shape or got.dtype != want.dtype:
            found = "missing" if got is None else f"{got.dtype}{list(got.shape)}"
            raise RunError(
                f"checkpoint {path}: array {i} is {found}, this config needs {want.dtype}{list(want.shape)}"
            )
        leaves.append(got)
    return jax.tree.unflatten(treedef, leaves)


# --- metrics and lineage -----------------------------------------------------------------------


def _truncate_run(run_dir: Path, epochs_done: int) -> None:
    """Drop metrics rows and lineage entries from epochs after the checkpoint (they are replayed)."""
    rows = [r for r in read_metrics(run_dir) if int(r["epoch"]) < epochs_done]
    atomic_write_text(run_dir / METRICS_FILE, _csv_text(METRIC_COLUMNS, rows))
    with open(run_dir / LINEAGE_FILE, newline="") as f:
        lineage = list(csv.DictReader(f))
    kept = [r for r in lineage if int(r["epoch"]) < epochs_done]
    for r in lineage:
        if r not in kept:
            (run_dir / LINEAGE_DIR / r["file"]).unlink(missing_ok=True)
    atomic_write_text(run_dir / LINEAGE_FILE, _csv_text(LINEAGE_COLUMNS, kept))


def _csv_text(columns: tuple[str, ...], rows: list[dict[str, str]]) -> str:
    """A whole CSV file (LF line endings) of ``rows`` under ``columns``."""
    buffer = io.StringIO()
    writer = _csv_writer(buffer)
    writer.writerow(columns)
    writer.writerows([r.get(c, "") for c in columns] for r in rows)  # older files lack new columns
    return buffer.getvalue()


def search_metadata(search: str, depth: int) -> dict[str, str]:
    """Agent-file metadata naming the search a run's players used (next to ``simulations``):
    ``search``, and ``depth`` for alpha-beta, so ``gauntlet FILE`` plays the agent the same way."""
    return {"search": search, **({"depth": str(depth)} if search == "alphabeta" else {})}


def _save_boss(run_dir: Path, setup: Setup, params: Any, boss_id: int, epoch: int, points: float) -> None:
    name = f"boss_{boss_id:04d}_epoch_{epoch:04d}.safetensors"
    save_agent(
        run_dir / LINEAGE_DIR / name,
        setup.rules,
        setup.spec,
        jax.device_get(params),
        metadata={
            "boss_id": str(boss_id),
            "epoch": str(epoch),
            "points": str(points),
            "games_per_epoch": str(setup.settings.games_per_epoch),
            "simulations": str(setup.settings.simulations),
            **search_metadata(setup.settings.search, setup.settings.depth),
        },
    )
    with open(run_dir / LINEAGE_FILE, "a", newline="") as f:
        _csv_writer(f).writerow((boss_id, epoch, points, name))


def _format(value: Any) -> str:
    if value is None or isinstance(value, str):  # a column this epoch has no value for
        return value or ""
    value = np.asarray(value)
    if value.dtype == np.bool_:
        return str(int(value))
    if np.issubdtype(value.dtype, np.integer):
        return str(int(value))
    return repr(float(value))


# --- the loop ----------------------------------------------------------------------------------


def run(
    run_dir: str | Path,
    epochs: int | None = None,
    on_epoch: Callable[[dict[str, Any]], None] | None = None,
    stop_after: int | None = None,
) -> Path:
    """Run (or continue) the evolution in ``run_dir`` up to ``epochs`` (default: the config's).

    Starts from the checkpoint when there is one; a run whose checkpoint already has ``epochs``
    epochs is left untouched (``run_is_complete``). ``RunError`` when another process is writing the
    folder, when an epoch would not fit in memory, or when an epoch makes the parameters non-finite
    (the run stops at the checkpoint before it). ``on_epoch`` receives each epoch's metrics row;
    ``stop_after`` stops after that many epochs of this call (for tests of interruption).
    """
    run_dir = Path(run_dir)
    config, simulations = read_run_config(run_dir)
    total = epochs if epochs is not None else config.epochs
    if run_is_complete(run_dir, total):
        return run_dir
    if config.strategy in LEARNERS:
        return run_learner(run_dir, config, simulations, total, on_epoch, stop_after)
    setup = make_setup(config.evolution_settings(simulations))
    with run_lock(run_dir):
        check_fits(setup)  # before anything is written
        state = _start(run_dir, config, setup)
        budget = Budget(config.budget_minutes * 60.0, training_seconds(run_dir))
        done_here = 0
        while (
            int(state.epoch) < total and not budget.spent() and (stop_after is None or done_here < stop_after)
        ):
            state = _run_epoch(run_dir, config, setup, state, total, on_epoch, budget)
            done_here += 1
    return run_dir


@dataclasses.dataclass
class Budget:
    """A run's wall-time budget: ``seconds`` of training (0: none) of which ``used`` are spent."""

    seconds: float
    used: float = 0.0

    def spent(self) -> bool:
        return self.seconds > 0 and self.used >= self.seconds


def training_seconds(run_dir: str | Path) -> float:
    """The training wall time of the epochs in ``metrics.csv`` (the sum of ``wall_seconds``; the
    strength probes are measurement, not training, and are left out)."""
    return float(sum(float(r.get("wall_seconds") or 0.0) for r in read_metrics(run_dir)))


def run_is_complete(run_dir: str | Path, epochs: int) -> bool:
    """Whether the run's checkpoint already holds ``epochs`` (or more) epochs."""
    done = checkpoint_epoch(run_dir)
    return done is not None and done >= epochs


def _start(run_dir: Path, config: ExperimentConfig, setup: Setup) -> EvoState:
    """The state to go on from: the checkpoint's, or a new one (then the folder starts afresh). Rows
    and bosses written after the checkpoint are dropped: they are played again."""
    if (run_dir / CHECKPOINT).exists():
        state = load_checkpoint(run_dir, config, setup)
        _truncate_run(run_dir, int(state.epoch))
        return state
    state = init(setup, jax.random.key(config.seed))
    _truncate_run(run_dir, 0)
    _save_boss(run_dir, setup, state.boss, 0, -1, float("nan"))
    return state


@jax.jit
def _all_finite(state: EvoState) -> jax.Array:
    leaves = jax.tree.leaves((state.population, state.boss))
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in leaves]))


def _run_epoch(
    run_dir: Path,
    config: ExperimentConfig,
    setup: Setup,
    state: EvoState,
    total: int,
    on_epoch: Callable[[dict[str, Any]], None] | None,
    budget: Budget,
) -> EvoState:
    """Play one epoch, append its metrics row (and a new boss), checkpoint when due. The epoch that
    spends the wall-time ``budget`` is the run's last: it is rated and checkpointed."""
    epoch = int(state.epoch)
    start = time.perf_counter()
    state, metrics = evolve_epoch(setup, state, epoch_key(config.seed, epoch))
    metrics = jax.device_get(metrics)
    wall = time.perf_counter() - start
    if not bool(_all_finite(state)):
        raise RunError(
            f"epoch {epoch} made parameters non-finite (inf or nan); the run stops at its last checkpoint: "
            f"lower mutation_rate ({config.mutation_rate}) or learning_rate ({config.learning_rate})"
        )
    row = {"epoch": epoch, **metrics}
    row["plies_per_second"] = float(metrics["plies"]) / max(wall, 1e-9)
    row["wall_seconds"] = wall
    budget.used += wall
    last = int(state.epoch) == total or budget.spent()
    if is_probe_epoch(epoch, config.strength_every, total) or (last and config.strength_every > 0):
        row.update(strength_probe(setup, state.boss))
    with open(run_dir / METRICS_FILE, "a", newline="") as f:
        _csv_writer(f).writerow([_format(row.get(c)) for c in METRIC_COLUMNS])
    if bool(metrics["boss_changed"]):
        points = float(metrics["promoted_points"])
        _save_boss(run_dir, setup, state.boss, int(state.boss_id), epoch, points)
    epoch_done = int(state.epoch)
    if epoch_done % config.checkpoint_every == 0 or last:
        save_checkpoint(run_dir, config, setup, state)
    if on_epoch is not None:
        on_epoch(row)
    return state


def config_summary(config: ExperimentConfig, simulations: int) -> str:
    if config.strategy in LEARNERS:
        return learner_summary(config)
    d = dataclasses.asdict(config)
    search = f"{simulations} simulations/move"
    if config.search == "alphabeta":
        search = f"alpha-beta depth {config.depth}"
    material = " + material input" if config.material_input else ""
    network = network_summary(config)
    return (
        f"{d['name']}: {d['rules']}, {network}{material}, P={d['population']}, "
        f"G={d['games_per_epoch']}, {search}, strategy {d['strategy']}, seed {d['seed']}"
    )


# --- self-play learners ------------------------------------------------------------------------
# A learner run uses the same folder, metrics.csv, checkpoints, resume and lineage as an evolution
# run. Its "boss" is a snapshot of its one network, saved every ``snapshot_every`` epochs (and after
# the last), so lineage, compare, plot, export and gauntlet read it unchanged.


@dataclasses.dataclass(frozen=True)
class Learner:
    """How the run loop drives one self-play learner (a module of ``neurocheckers.learners``)."""

    init: Callable[[Any, jax.Array], Any]
    """``init(settings, key) -> state``: pure; the state is a pytree of plain arrays (no typed PRNG
    keys: it is checkpointed leaf by leaf) with ``params`` (the network, in ``evaluator`` layout: the
    snapshots and exported agents) and ``epoch`` ([] int32, epochs completed)."""
    epoch: Callable[[Any, Any, jax.Array], tuple[Any, dict[str, Any]]]
    """``epoch(settings, state, key) -> (state, metrics)``: pure (the same key gives the same result,
    so a resumed run repeats the metrics) and ``epoch + 1``; metrics are scalars named after
    ``metrics.csv`` columns (others are dropped): ``plies`` at least, and ``loss``/``td_error`` for the
    progress bar."""
    settings: type
    """Its frozen settings dataclass: every field is the experiment config key of the same name."""


def dqn_opponent(settings: dqn.DQNSettings) -> tuple[Any, Any] | None:
    """The (policy, params) DQN plays against: None for random and self-play (built in), else the
    fixed opponent's policy."""
    if settings.opponent in ("random", "self"):
        return None
    return fixed_opponent_policy(get_rules(settings.rules), settings.opponent), None


def dqn_init(settings: dqn.DQNSettings, key: jax.Array) -> dqn.DQNState:
    return dqn.init(settings, key, dqn_opponent(settings))


def dqn_epoch(settings: dqn.DQNSettings, state: dqn.DQNState, key: jax.Array):
    return dqn.epoch(settings, state, key, dqn_opponent(settings))


LEARNERS: dict[str, Learner] = {
    "td_lambda": Learner(td_lambda.init, td_lambda.epoch, td_lambda.TDSettings),
    "td_leaf": Learner(td_lambda.init, td_lambda.epoch, td_lambda.TDLeafSettings),
    "dqn": Learner(dqn_init, dqn_epoch, dqn.DQNSettings),
}
"""The learners by ``strategy`` name (each also listed in ``config.LEARNERS``)."""


@dataclasses.dataclass(frozen=True, eq=False)
class LearnerSetup:
    """The static pieces of a learner run (hashes by identity).

    Fields:
      learner: the learner's functions.
      settings: its settings, built from the config.
      rules: the rules preset.
      spec: the network's shape.
      search: how the network plays (``MCTSConfig`` or ``AlphaBetaConfig``), for the strength probe.
    """

    learner: Learner
    settings: Any
    rules: Rules
    spec: EvaluatorSpec
    search: PopulationSearch


@functools.cache
def learner_setup(config: ExperimentConfig) -> LearnerSetup:
    """The ``LearnerSetup`` of a learner config (cached: one compiled epoch per config)."""
    learner = LEARNERS[config.strategy]
    fields = dataclasses.fields(learner.settings)
    settings = learner.settings(**{f.name: getattr(config, f.name) for f in fields})
    rules = get_rules(config.rules)
    spec = spec_of_settings(config, rules.board_size)
    return LearnerSetup(learner, settings, rules, spec, population_search(config.evolution_settings()))


@functools.cache
def _jitted(function: Callable) -> Callable:
    """``function(settings, ...)`` jitted with the settings static (a jitted one is inlined)."""
    return jax.jit(function, static_argnums=0)


def _learner_template(setup: LearnerSetup) -> Any:
    return jax.eval_shape(lambda: _jitted(setup.learner.init)(setup.settings, jax.random.key(0)))


def check_learner_fits(config: ExperimentConfig) -> None:
    """Compile one learner epoch (the run reuses it) and raise ``RunError`` when it needs more memory
    than this machine has."""
    setup = learner_setup(config)
    key = jax.eval_shape(lambda: epoch_key(0, 0))
    compiled = _jitted(setup.learner.epoch).lower(setup.settings, _learner_template(setup), key).compile()
    try:
        check_memory(compiled, "one epoch of this config")
    except MemoryLimitError as e:
        raise RunError(f"{e}; lower selfplay_games, max_plies, simulations or depth") from None


def run_learner(
    run_dir: Path,
    config: ExperimentConfig,
    simulations: int,
    total: int,
    on_epoch: Callable[[dict[str, Any]], None] | None,
    stop_after: int | None,
) -> Path:
    """``run`` for a learner config (the same folder, lock, metrics, checkpoints and resume)."""
    setup = learner_setup(config)
    with run_lock(run_dir):
        check_learner_fits(config)
        state = _start_learner(run_dir, config, setup, simulations)
        budget = Budget(config.budget_minutes * 60.0, training_seconds(run_dir))
        done_here = 0
        while (
            int(state.epoch) < total and not budget.spent() and (stop_after is None or done_here < stop_after)
        ):
            state = _run_learner_epoch(run_dir, config, setup, simulations, state, total, on_epoch, budget)
            done_here += 1
    return run_dir


def _start_learner(run_dir: Path, config: ExperimentConfig, setup: LearnerSetup, simulations: int) -> Any:
    """The checkpoint's state, or a fresh one (then the folder starts afresh with snapshot 0)."""
    if (run_dir / CHECKPOINT).exists():
        state = read_checkpoint(run_dir, config, _learner_template(setup))
        _truncate_run(run_dir, int(state.epoch))
        return state
    state = _jitted(setup.learner.init)(setup.settings, jax.random.key(config.seed))
    _truncate_run(run_dir, 0)
    _save_snapshot(run_dir, config, setup, simulations, state.params, 0, -1, float("nan"))
    return state


def _save_snapshot(
    run_dir: Path,
    config: ExperimentConfig,
    setup: LearnerSetup,
    simulations: int,
    params: Any,
    snapshot_id: int,
    epoch: int,
    points: float,
) -> None:
    """Save the network as lineage entry ``snapshot_id``, taken after ``epoch`` (-1: the start)."""
    name = f"boss_{snapshot_id:04d}_epoch_{epoch:04d}.safetensors"
    metadata = {
        "boss_id": str(snapshot_id),
        "epoch": str(epoch),
        "points": str(points),
        "strategy": config.strategy,
        "games_per_epoch": str(config.selfplay_games),
        "simulations": str(simulations),
        **search_metadata(config.search, config.depth),
    }
    save_agent(run_dir / LINEAGE_DIR / name, setup.rules, setup.spec, jax.device_get(params), metadata)
    with open(run_dir / LINEAGE_FILE, "a", newline="") as f:
        _csv_writer(f).writerow((snapshot_id, epoch, points, name))


def _last_snapshot(run_dir: Path) -> tuple[int, int]:
    """(id, epoch) of the run's latest snapshot."""
    last = read_lineage(run_dir)[-1]
    return int(last["boss_id"]), int(last["epoch"])


@jax.jit
def _params_finite(params: Any) -> jax.Array:
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in jax.tree.leaves(params)]))


def _run_learner_epoch(
    run_dir: Path,
    config: ExperimentConfig,
    setup: LearnerSetup,
    simulations: int,
    state: Any,
    total: int,
    on_epoch: Callable[[dict[str, Any]], None] | None,
    budget: Budget,
) -> Any:
    """One learner epoch: its metrics row, a snapshot when due, a checkpoint when due. The epoch
    that spends the wall-time ``budget`` is the run's last (snapshot, probe and checkpoint)."""
    epoch = int(state.epoch)
    start = time.perf_counter()
    state, metrics = _jitted(setup.learner.epoch)(setup.settings, state, epoch_key(config.seed, epoch))
    if jax.local_device_count() > 1:
        # Self-play split across host devices returns the state replicated over them; a host copy
        # (uncommitted, like init's) lets the next epoch reuse the same compiled program.
        state = jax.device_get(state)
    metrics = jax.device_get(metrics)
    wall = time.perf_counter() - start
    if not bool(_params_finite(state.params)):
        raise RunError(
            f"epoch {epoch} made the network non-finite (inf or nan); the run stops at its last checkpoint: "
            f"lower learning_rate ({config.learning_rate})"
        )
    budget.used += wall
    last = epoch + 1 == total or budget.spent()
    snapshot = (epoch + 1) % config.snapshot_every == 0 or last
    last_id, last_epoch = _last_snapshot(run_dir)
    row = {"epoch": epoch, **metrics, "boss_changed": snapshot, "boss_id": last_id + snapshot}
    row["boss_age"] = epoch - last_epoch
    row["plies_per_second"] = float(metrics.get("plies", np.nan)) / max(wall, 1e-9)
    row["wall_seconds"] = wall
    if is_probe_epoch(epoch, config.strength_every, total) or (last and config.strength_every > 0):
        row.update(strength_probe(setup, state.params))
    with open(run_dir / METRICS_FILE, "a", newline="") as f:
        _csv_writer(f).writerow([_format(row.get(c)) for c in METRIC_COLUMNS])
    if snapshot:
        points = float(row.get("strength_material", float("nan")))
        _save_snapshot(run_dir, config, setup, simulations, state.params, last_id + 1, epoch, points)
    if (epoch + 1) % config.checkpoint_every == 0 or last:
        write_checkpoint(run_dir, config, simulations, state)
    if on_epoch is not None:
        on_epoch(row)
    return state


def network_summary(config: ExperimentConfig) -> str:
    """The config's network in words, e.g. ``5x32 MLP`` (quoted with every figure)."""
    if config.evaluator == "cnn":
        return f"CNN {config.cnn_channels} + dense {config.cnn_dense}"
    if config.evaluator == "transformer":
        return (
            f"transformer {config.transformer_layers} blocks x {config.transformer_heads} heads x "
            f"width {config.transformer_width}"
        )
    return f"{config.layers}x{config.width} MLP"


def learner_summary(config: ExperimentConfig) -> str:
    """One line describing a learner config (``config_summary``'s)."""
    search = f"alpha-beta depth {config.depth}"
    if config.search == "mcts":
        search = f"{config.simulations} simulations/move"
    material = " + material input" if config.material_input else ""
    if config.strategy == "dqn":
        return (
            f"{config.name}: {config.rules}, {network_summary(config)}{material}, strategy dqn against "
            f"{config.opponent}, {config.envs} games at once, gamma {config.gamma:g}, epsilon "
            f"{config.epsilon_start:g}->{config.epsilon_end:g}, seed {config.seed}"
        )
    extra = f", lambda {config.lambda_:g}" if config.strategy in ("td_lambda", "td_leaf") else ""
    return (
        f"{config.name}: {config.rules}, {network_summary(config)}{material}, strategy "
        f"{config.strategy}{extra}, {config.selfplay_games} self-play games/epoch, {search}, "
        f"{config.exploration} {config.exploration_rate:g}, seed {config.seed}"
    )


def learner_status(row: dict[str, Any]) -> str:
    """The progress bar's status of a learner epoch's metrics row (loss and TD error when it has them)."""
    parts = [f"snapshot #{int(row['boss_id'])}"]
    shown = [name for name in ("loss", "td_error") if name in row]
    parts += [f"{name.replace('_', ' ')} {float(row[name]):.4f}" for name in shown]
    return " ".join([*parts, f"{float(row['wall_seconds']):.2f} s/epoch"])
