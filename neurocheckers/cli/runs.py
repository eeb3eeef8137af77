"""``evolve``, ``sweep``, ``plot`` and ``export``: runs, grids of runs, their curves and agents."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from typer.core import TyperCommand

from neurocheckers.cli import checks
from neurocheckers.cli.common import (
    INTERRUPT_HINTS,
    ConfigOverrides,
    EpochsOverride,
    RunDir,
    UserError,
    app,
    example,
)

EVOLVE_EXAMPLES = (
    "neurocheckers evolve experiments/quick.toml --set population=32 --epochs 20 --out runs",
    "neurocheckers evolve --resume runs/quick_seed0_20260101-120000",
    "neurocheckers evolve experiments/american8/td_leaf.toml --seeds 0,1,2 --set network.width=64",
)


def _config_keys_help() -> str:
    """The experiment config's keys (a loaded plug-in's too), defaults and one-line docs, for
    ``evolve --help``: read when the help is shown (``_StrategiesInHelp``)."""
    from neurocheckers.experiment.config import config_class
    from neurocheckers.experiment.config_doc import config_sections, field_docs

    docs = field_docs()
    lines = [
        "\b",
        "Config keys by section (TOML: top level or [section]; --set KEY=VALUE or SECTION.KEY=VALUE):",
    ]
    for section, keys in config_sections().items():
        lines.append(f"  [{section}]")
        for key in keys:
            default = getattr(config_class(), key)
            shown = str(default).lower() if isinstance(default, bool) else repr(default)  # as in TOML
            lines.append(f"    {key} = {shown}: {docs.get(key, '')}")
    return "\n".join(lines)


def strategy_lines() -> list[str]:
    """One line per registered strategy (built-in, then plug-ins): its name, kind, the config
    sections it reads and its doc."""
    from neurocheckers.experiment.strategy_registry import strategy, strategy_names

    entries = map(strategy, strategy_names())
    rows = [(e.name, e.kind, ",".join(e.section_names()) or "-", e.doc) for e in entries]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return [
        "  ".join(f"{text:<{w}}" for text, w in zip(row, [*widths, 0], strict=True)).rstrip() for row in rows
    ]


class _StrategiesInHelp(TyperCommand):
    """A command whose help lists the registered strategies, read when the help is shown (a plug-in
    registered since the CLI was imported is listed; the CLI's import loads none), and the config's
    keys, a ``--plugin``'s sections among them."""

    def format_epilog(self, ctx, formatter) -> None:
        from neurocheckers.experiment.files import ConfigError
        from neurocheckers.experiment.strategy_registry import PluginError

        try:
            lines = ["  " + line for line in strategy_lines()]
            self.epilog = _config_keys_help() + "\n\n" + example(*EVOLVE_EXAMPLES)
        except (PluginError, ConfigError) as e:
            lines = [f"  cannot list them: {e}"]
            self.epilog = example(*EVOLVE_EXAMPLES)
        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(
                "\b\nStrategies (the config's strategy; `neurocheckers strategies`):\n" + "\n".join(lines)
            )
        super().format_epilog(ctx, formatter)


def _load_plugins(plugins: list[str] | None) -> tuple[str, ...]:
    """Import the ``--plugin`` modules; ``UserError`` naming one that cannot be imported."""
    from neurocheckers.experiment.strategy_registry import PluginError, load_plugins

    modules = tuple(plugins or ())
    try:
        load_plugins(modules)
    except PluginError as e:
        raise UserError(f"--plugin: {e}") from None
    return modules


Plugins = Annotated[
    list[str] | None,
    typer.Option(
        "--plugin",
        metavar="MODULE",
        help="Import this module first: a plug-in that registers strategies (repeatable).",
        is_eager=True,  # imported as soon as parsed: a --help after it lists their strategies
        callback=_load_plugins,
    ),
]
"""A ``--plugin`` option: plug-in modules imported (``_load_plugins``) before the config is read."""


@app.command(epilog=example("neurocheckers strategies --plugin my_pkg.my_strategy"))
def strategies(plugins: Plugins = None) -> None:
    """List the strategies a config may name.

    The built-in ones first, then the plug-ins: the installed packages' entry points (group
    neurocheckers.strategies), a config's plugins key, --plugin. Each line: name, kind (evolution: a
    population around the boss; learner: networks trained from their own games, one or, for pbt, a
    population of them), the config sections it reads, what it is."""
    from neurocheckers.experiment.strategy_registry import PluginError

    try:  # the --plugin modules are imported already (``Plugins``)
        print("\n".join(strategy_lines()))
    except PluginError as e:
        raise UserError(str(e)) from None


@app.command(cls=_StrategiesInHelp)
def evolve(
    config: Annotated[
        str | None, typer.Argument(metavar="CONFIG", help="Experiment TOML file (see experiments/).")
    ] = None,
    out: Annotated[
        str, typer.Option(metavar="FOLDER", help="Folder in which the run folder is created.")
    ] = "runs",
    epochs: EpochsOverride = None,
    seed: Annotated[int | None, typer.Option(metavar="SEED", help="Override the seed (0..2^32-1).")] = None,
    seeds: Annotated[
        str | None,
        typer.Option(metavar="S,S,...", help="One run per seed (e.g. 0,1,2), each in its own folder."),
    ] = None,
    set_: ConfigOverrides = None,
    resume: Annotated[
        str | None,
        typer.Option(metavar="RUN_DIR", help="Continue the run in this folder from its checkpoint."),
    ] = None,
    plot: Annotated[bool, typer.Option(help="Write fitness.png/svg in the run folder at the end.")] = True,
    plugins: Plugins = None,
) -> None:
    """Train a player: evolution against a rising boss, or a learner.

    Writes a run folder: its config, metrics.csv, lineage.csv and the bosses (a learner's network
    snapshots), and checkpoints. A run resumed with --resume goes on from its last checkpoint; a
    finished run is left as it is. A new run's config records its --plugin modules (plugins), so the
    folder reads wherever they import."""
    modules = tuple(plugins or ())  # imported already (``Plugins``)
    prepared_runs = []
    for one_seed in _seed_list(seed, seeds, resume):
        prepared = _prepare_run(config, out, epochs, one_seed, set_, resume, modules)
        if prepared is None:
            return
        prepared_runs.append(prepared)
    # The seeds of --seeds run as one vmapped program where their strategy allows (run_seeds).
    _evolve_with_progress([run_dir for run_dir, _ in prepared_runs], prepared_runs[0][1])
    for run_dir, total in prepared_runs:
        from neurocheckers.experiment.folder import stop_message

        print(stop_message(run_dir, total))
        print(f"metrics: {run_dir}/metrics.csv")
        print(f"lineage: {run_dir}/lineage/")
        if plot:
            from neurocheckers.analysis.plots import plot_fitness, plot_strength, strength_path

            files = plot_fitness([run_dir], f"{run_dir}/fitness.png")
            files += plot_strength([run_dir], strength_path(files[0]))
            print("plot: " + ", ".join(str(f) for f in files))


def _seed_list(seed: int | None, seeds: str | None, resume: str | None) -> list[int | None]:
    """The seed of each run ``evolve`` starts: ``--seeds``' values, else ``[--seed]``."""
    checks.seed("--seed", seed)
    if seeds is None:
        return [seed]
    if seed is not None or resume is not None:
        raise UserError("--seeds starts new runs, one per seed; give no --seed or --resume with it")
    try:
        values = [int(text) for text in seeds.split(",")]
    except ValueError:
        raise UserError(f"--seeds must be comma-separated integers, got {seeds!r}") from None
    if len(set(values)) != len(values):
        raise UserError(f"--seeds must be distinct integers, got {seeds!r}")
    for value in values:
        checks.seed("--seeds", value)
    return values


def _prepare_run(config, out, epochs, seed, overrides, resume, plugins=()) -> tuple[str, int] | None:
    """(run folder, epochs to reach) of a new run or of ``resume``, after printing the folder and its
    config; None (after saying so) when ``resume`` is already complete. Nothing is created for a
    config that is refused. A new run's config records the ``plugins`` (imported already)."""
    from pathlib import Path

    from neurocheckers.experiment.config import ConfigError, load_config, with_plugins
    from neurocheckers.experiment.folder import (
        CHECKPOINT,
        RunError,
        checkpoint_epoch,
        config_summary,
        read_run_config,
        run_metrics,
    )
    from neurocheckers.experiment.run import create_run

    try:
        if resume is not None:
            if config is not None or overrides or seed is not None:
                raise UserError("--resume goes on with the run's own config; give no CONFIG, --set or --seed")
            cfg, sims = read_run_config(resume)
            rows = len(run_metrics(resume))  # a damaged metrics.csv is refused before anything is done
            total = epochs if epochs is not None else cfg.epochs
            done = checkpoint_epoch(resume)
            if done is not None and done >= total:
                print(f"{resume} is already complete: {done} epochs done, {total} asked for; nothing to do")
                return None
            if not (Path(resume) / CHECKPOINT).exists():
                dropped = f"; its {rows} metric rows are replaced" if rows else ""
                print(f"{resume} has no checkpoint: the run starts again from epoch 0{dropped}")
            elif done is None:  # a checkpoint this config.json did not write: say so before compiling
                raise UserError(
                    f"{resume}: its checkpoint cannot be read, or another config than its config.json wrote "
                    "it (was config.json edited?); restore them, or start a new run; nothing was changed"
                )
            else:
                print(f"{resume}: continuing from its checkpoint after epoch {done} of {total}")
            run_dir = resume
        else:
            if config is None:
                raise UserError("give a CONFIG.toml (or --resume RUN_DIR)")
            cfg = with_plugins(load_config(config, overrides, epochs=epochs, seed=seed), plugins)
            run_dir = str(create_run(cfg, out, check_memory=True))
            _, sims = read_run_config(run_dir)
            total = cfg.epochs
    except (ConfigError, RunError) as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"cannot create a run folder in {out!r}: {e.strerror or e}") from None
    print(f"run folder: {run_dir}")
    print(config_summary(cfg, sims))
    return run_dir, total


def _evolve_with_progress(run_dirs: list[str], total: int) -> None:
    """``experiment.run.run_seeds`` of ``run_dirs`` (one run, or the seeds of ``--seeds``) up to
    ``total`` epochs under a progress bar of epochs for each."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from neurocheckers.experiment.folder import RunError, learner_status, read_run_config, run_metrics
    from neurocheckers.experiment.run import run_seeds
    from neurocheckers.experiment.strategy_registry import is_learner

    config = read_run_config(run_dirs[0])[0]
    games, learner = config.games_per_epoch, is_learner(config.strategy)
    columns = (
        TextColumn("epoch"),
        MofNCompleteColumn(),
        BarColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, transient=False) as progress:
        tasks = {}
        for run_dir in run_dirs:
            tasks[str(run_dir)] = progress.add_task("evolve", total=total, status="compiling...")
            progress.update(tasks[str(run_dir)], completed=min(len(run_metrics(run_dir)), total))

        def on_epoch(run_dir, row):
            task = tasks[str(run_dir)]
            if learner:
                progress.update(task, completed=int(row["epoch"]) + 1, status=learner_status(row))
                return
            status = (  # points per game, as in the fitness plot
                f"boss #{int(row['boss_id'])} mean {float(row['fitness_mean']) / games:.2f} "
                f"best {float(row['best_points']) / games:.2f} pts/game "
                f"{float(row['wall_seconds']):.2f} s/epoch"
            )
            progress.update(task, completed=int(row["epoch"]) + 1, status=status)

        INTERRUPT_HINTS[:] = [
            f"the run resumes from its last checkpoint: neurocheckers evolve --resume {run_dir}"
            for run_dir in run_dirs
        ]
        with checks.user_errors(RunError):
            run_seeds(run_dirs, epochs=total, on_epoch=on_epoch)


@app.command(
    epilog=example(
        "neurocheckers sweep experiments/study_grid.toml --epochs 32 --workers 2 --out runs",
        "neurocheckers sweep experiments/study_grid.toml --ray local --out runs",
        "neurocheckers sweep experiments/study_grid.toml --set population=32 --set epochs=4 --out runs/try",
    )
)
def sweep(
    sweep_file: Annotated[
        str,
        typer.Argument(metavar="SWEEP_FILE", help="Sweep TOML file (e.g. experiments/study_grid.toml)."),
    ],
    out: Annotated[
        str, typer.Option(metavar="FOLDER", help="Folder in which the sweep folder is created.")
    ] = "runs",
    epochs: EpochsOverride = None,
    workers: Annotated[
        int, typer.Option(metavar="N", help="Runs at once on this machine, each in its own process.")
    ] = 1,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help="Run each entry as a task on this Ray cluster: an address, 'auto' or 'local'"
            " (pip install 'neurocheckers[ray]'; every node must see the --out folder).",
        ),
    ] = None,
    cpus_per_run: Annotated[
        int, typer.Option(metavar="N", help="CPUs (and host devices) each Ray task takes.")
    ] = 1,
    set_: ConfigOverrides = None,
) -> None:
    """Run every config of a sweep file.

    Writes one run folder per config, sweep.json and summary.csv. Run the same command again to
    continue an interrupted sweep."""
    from pathlib import Path

    from neurocheckers.experiment.config import ConfigError
    from neurocheckers.experiment.folder import RunError
    from neurocheckers.experiment.sweep import run_sweep
    from neurocheckers.experiment.sweep_file import SweepError, load_sweep, with_overrides

    for name, value in (("--epochs", epochs), ("--workers", workers), ("--cpus-per-run", cpus_per_run)):
        checks.at_least(name, value, 1)
    if ray_address is not None and workers != 1:
        raise UserError(
            f"--workers is for runs on this machine; with --ray give --cpus-per-run, got {workers}"
        )
    with checks.user_errors(SweepError):
        plan = with_overrides(load_sweep(sweep_file), set_ or [])
    print(f"sweep {plan.name}: {len(plan.entries)} runs in {Path(out) / plan.name}")
    with _SweepProgress(len(plan.entries)) as progress, checks.user_errors(SweepError, ConfigError, RunError):
        result = run_sweep(plan, out, epochs, workers, ray_address, progress.on_event, cpus_per_run)
    _print_sweep(plan.name, result)
    if result.failed:
        labels = ", ".join(r["label"] for r in result.failed)
        print(
            f"neurocheckers: {len(result.failed)} run(s) failed: {labels}; run again to retry",
            file=sys.stderr,
        )
        raise typer.Exit(1)


class _SweepProgress:
    """Rich progress bars of a sweep: one for the runs, one per run in progress (``on_event``)."""

    def __init__(self, runs: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = (
            TextColumn("{task.description}"),
            MofNCompleteColumn(),
            BarColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
        )
        self.progress = Progress(*columns, transient=False)
        self.overall = self.progress.add_task("runs", total=runs, status="")
        self.bars: dict[str, object] = {}

    def __enter__(self) -> _SweepProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)

    def on_event(self, event) -> None:
        progress, bars = self.progress, self.bars
        if event.kind == "start":
            bars[event.label] = progress.add_task(
                f"  {event.label}", total=event.epochs, completed=event.epochs_done, status="starting..."
            )
        elif event.kind == "progress" and event.label in bars:
            m = event.metrics or {}
            status = f"boss #{int(float(m['boss_id']))} mean {float(m['fitness_mean']):.2f}" if m else ""
            progress.update(bars[event.label], completed=event.epochs_done, status=status)
        elif event.kind in ("skip", "done", "failed"):
            if event.label in bars:
                progress.remove_task(bars.pop(event.label))
            progress.advance(self.overall)
            text = {"skip": "finished earlier", "done": "done", "failed": f"FAILED: {event.message}"}
            epochs = f"{event.epochs_done}/{event.epochs} epochs"
            progress.console.print(f"{event.label}: {text[event.kind]} ({epochs}, {event.run_dir})")


def _print_sweep(name: str, result) -> None:
    """The sweep's summary table (80 columns) and where its files are."""
    from neurocheckers.experiment.sweep import format_summary

    print(format_summary(result.rows))
    print(f"sweep folder: {result.sweep_dir}")
    print(f"summary: {result.summary}")


@app.command(epilog=example("neurocheckers plot runs/study_grid/*_seed0_* --out runs/study_grid/fitness.png"))
def plot(
    run_dirs: Annotated[
        list[str], typer.Argument(metavar="RUN_DIR", help="One or more run folders (overlaid).")
    ],
    out: Annotated[
        str | None,
        typer.Option(
            metavar="PATH", help="Output .png (an .svg is written beside it; default: RUN_DIR/fitness.png)."
        ),
    ] = None,
    smooth: Annotated[
        int | None,
        typer.Option(
            metavar="N", help="Rolling mean over this many epochs (default: 1 for one run, ~1/50 of the run)."
        ),
    ] = None,
    label: Annotated[
        list[str] | None,
        typer.Option(metavar="TEXT", help="Legend label of each run, in order (default: its name)."),
    ] = None,
) -> None:
    """Plot runs' fitness (and strength) over epochs.

    Shows the band, mean and best member per game and the boss promotions, runs overlaid, with the
    number of bosses promoted below. Runs made with strength_every also get a strength figure beside
    it (fitness.png -> strength.png): the boss's probe scores against epochs and against wall time."""
    from neurocheckers.analysis.plots import plot_fitness, plot_strength, strength_path
    from neurocheckers.experiment.folder import RunError, read_run_config

    checks.at_least("--smooth", smooth, 1)
    if out is not None:
        checks.writable_file(out, "--out")
    if label and len(label) != len(run_dirs):
        raise UserError(f"give one --label per run: {len(run_dirs)} runs, {len(label)} labels")
    try:
        for run_dir in run_dirs:
            read_run_config(run_dir)
        fitness_out = out or f"{run_dirs[0]}/fitness.png"
        files = plot_fitness(run_dirs, fitness_out, label, smooth)
        files += plot_strength(run_dirs, strength_path(fitness_out), label)
    except (RunError, ValueError) as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"cannot write the plot: {e.strerror or e}") from None
    for path in files:
        print(path)


@app.command(
    epilog=example("neurocheckers export runs/quick_seed0_20260101-120000 --out runs/agent.safetensors")
)
def export(
    run_dir: RunDir,
    out: Annotated[
        str, typer.Option(metavar="PATH", help="The agent file to write (.safetensors).")
    ] = "agent.safetensors",
    epoch: Annotated[
        int | None,
        typer.Option(
            metavar="EPOCH", help="Export the boss that played this epoch instead of the final one."
        ),
    ] = None,
) -> None:
    """Export a run's boss or a learner's network as an agent file.

    The final boss (a learner's last network) by default, or the one that played --epoch (a
    learner's last snapshot before that epoch)."""
    from pathlib import Path

    from neurocheckers.analysis.lineage import describe_entry, export_boss
    from neurocheckers.experiment.folder import RunError

    if Path(out).is_dir():
        example = Path(out) / "agent.safetensors"
        raise UserError(f"--out {out!r} is a folder; give the agent file's name, e.g. {example}")
    checks.writable_file(out, "--out", (".safetensors",))
    try:
        path, entry = export_boss(run_dir, out, epoch)
    except (RunError, ValueError) as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"cannot write --out {out!r}: {e.strerror or e}") from None
    print(f"{describe_entry(run_dir, entry)} written to {path}")
