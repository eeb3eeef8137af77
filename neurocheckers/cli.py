"""The ``neurocheckers`` command line: a thin shell over functions that the tests call directly."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

app = typer.Typer(
    name="neurocheckers",
    help="Evolve neural checkers players with JAX.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _group() -> None:
    """Evolve neural checkers players with JAX."""


Preset = Annotated[str, typer.Option(metavar="PRESET", help="Rules preset: simple6, american6 or american8.")]
"""A ``--rules`` option."""


class UserError(Exception):
    """A problem with the user's input: reported as one line, without a traceback."""


def _rules(name: str):
    from neurocheckers.rules import get_rules

    try:
        return get_rules(name)
    except ValueError as e:
        raise UserError(str(e)) from None


def _example(*lines: str) -> str:
    """A help epilog of example command lines (``\b`` keeps click from joining the lines)."""
    return "\b\nExample:\n" + "\n".join(f"  {line}" for line in lines)


@app.command(epilog=_example("neurocheckers perft --rules american8 --depth 6"))
def perft(
    rules: Preset = "simple6",
    depth: Annotated[
        int, typer.Option(metavar="N", help="Depth in whole turns (a multi-jump is one turn).")
    ] = 5,
    fen: Annotated[
        str | None, typer.Option(metavar="FEN", help="Start from this PDN FEN instead of the opening.")
    ] = None,
) -> None:
    """Count the positions reachable in 1..N turns (perft).

    Prints one line per depth: 'depth N: COUNT'."""
    preset = _rules(rules)
    if depth < 1:
        raise UserError(f"--depth must be >= 1, got {depth}")
    from neurocheckers.rules import init
    from neurocheckers.rules.notation import parse_fen
    from neurocheckers.rules.perft import perft_iter

    try:
        state = parse_fen(preset, fen) if fen is not None else init(preset)
    except ValueError as e:
        raise UserError(str(e)) from None
    for d, count in perft_iter(preset, state, depth):
        print(f"depth {d}: {count}", flush=True)


@app.command(
    epilog=_example(
        "neurocheckers match alphabeta:3 random --rules american8 --games 200",
        "neurocheckers match mcts:runs/agent.safetensors:16 alphabeta:3 --save-games runs/games.json",
        "neurocheckers match alphabeta:3 openspiel:mcts:100 --rules american8 --games 20 --openings 10"
        " --save-games runs/games.pdn",
    )
)
def match(
    player_a: Annotated[
        str,
        typer.Argument(
            metavar="A",
            help="Player A: random | greedy:FILE | greedy-material | alphabeta:D | alphabeta:D:FILE"
            " | mcts:FILE:SIMS | mcts-rollout:SIMS (D at most 14, SIMS at most 65536); on american8 also"
            " OpenSpiel's bots openspiel:mcts:N | openspiel:alphabeta:D (pip install -e '.[engines]').",
        ),
    ],
    player_b: Annotated[str, typer.Argument(metavar="B", help="Player B, same forms as A.")],
    rules: Preset = "simple6",
    games: Annotated[
        int, typer.Option(metavar="N", help="Games to play; A moves first in every other game.")
    ] = 1000,
    seed: Annotated[int, typer.Option(metavar="SEED", help="Random seed.")] = 0,
    batch: Annotated[
        int, typer.Option(metavar="N", help="Games played at once (in one compiled call).")
    ] = 2048,
    max_plies: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Cap on a game's length; games cut by it are reported as unfinished (default: a bound on"
            " a game's length from the rules' own draw limits, so every game ends by the rules).",
        ),
    ] = None,
    opening_plies: Annotated[
        int,
        typer.Option(
            metavar="N", help="Random plies at the start of each game (0 here; lineage and compare use 2)."
        ),
    ] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    plot: Annotated[
        str | None,
        typer.Option(
            metavar="PATH",
            help="Save the final-material histogram to this PNG file (in a folder: PATH/material.png).",
        ),
    ] = None,
    save_games: Annotated[
        str | None,
        typer.Option(
            metavar="PATH",
            help="Save some games in notation (for 'show'): standard PDN when PATH ends in .pdn, else JSON.",
        ),
    ] = None,
    save_count: Annotated[
        int, typer.Option(metavar="N", help="Games --save-games keeps: the first ones (colours alternate).")
    ] = 16,
    openings: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="Start from the first N committed openings: games 2i and 2i+1 from opening i (mod N),"
            " with the colours swapped.",
        ),
    ] = None,
) -> None:
    """Play a match of A against B and print the score.

    Prints A's wins, draws, losses, unfinished games and score with a 95% confidence interval."""
    preset = _rules(rules)
    _check_match_numbers(games, batch, max_plies, opening_plies, save_count)
    from neurocheckers.engines import parse_any_player
    from neurocheckers.rules.openings import load_openings, opening_states

    try:
        a = parse_any_player(player_a, preset)
        b = parse_any_player(player_b, preset)
        starts = opening_states(preset, load_openings(preset, openings)) if openings is not None else None
    except ValueError as e:
        raise UserError(str(e)) from None
    keep, clock = (save_count if save_games is not None else 0), _match_clock(a, b)
    plot_path = _plot_path(plot) if plot else None
    records = _play_match(
        preset, a, b, games, seed, batch, max_plies, opening_plies, keep, as_json, starts, clock
    )
    _report_match(preset, a, b, records, seed, as_json, plot_path, save_games, starts, clock)


def _match_clock(a, b):
    """A ``MoveClock`` when a host player (an engine, the timed search) plays, else None."""
    from neurocheckers.engines import MoveClock
    from neurocheckers.policies import Player

    return None if isinstance(a, Player) and isinstance(b, Player) else MoveClock()


def _check_match_numbers(
    games: int, batch: int, max_plies: int | None, opening_plies: int, save_count: int
) -> None:
    """``UserError`` naming the first of ``match``'s counts that is out of range."""
    for name, value in (("--games", games), ("--batch", batch), ("--max-plies", max_plies)):
        if value is not None and value < 1:
            raise UserError(f"{name} must be >= 1, got {value}")
    if opening_plies < 0:
        raise UserError(f"--opening-plies must be >= 0, got {opening_plies}")
    if save_count < 1:
        raise UserError(f"--save-count must be >= 1, got {save_count}")


def _play_match(rules, a, b, games: int, seed: int, batch: int, max_plies: int | None, opening_plies: int,
                keep_actions: int, quiet: bool, openings=None, clock=None):  # fmt: skip
    """``engines.play_any_match`` (``arena.run_match`` for our players) under a transient progress
    bar (none when ``quiet``)."""
    from rich.progress import Progress

    from neurocheckers.arena import MemoryLimitError
    from neurocheckers.engines import play_any_match

    with Progress(transient=True, disable=quiet) as progress:
        task = progress.add_task(f"{a.name} vs {b.name}", total=games)
        try:
            return play_any_match(
                rules, a, b, games, seed, batch, max_plies, opening_plies, keep_actions,
                on_progress=lambda done, _: progress.update(task, completed=done), openings=openings,
                clock=clock,
            )  # fmt: skip
        except MemoryLimitError as e:
            hint = f"lower --batch (now {min(batch, games)}) or the players' search sizes"
            raise UserError(f"{e}; {hint}") from None


def _plot_path(text: str):
    """Where ``--plot`` writes: the file named, ``.png`` added when it has no suffix, or
    ``material.png`` inside an existing folder."""
    from pathlib import Path

    path = Path(text)
    if path.is_dir():
        return path / "material.png"
    if path.suffix.lower() not in (".png", ".svg", ".pdf", ".jpg", ".jpeg"):
        if path.suffix:
            raise UserError(f"--plot must name a .png, .svg, .pdf or .jpg file or a folder, got {text!r}")
        return path.with_suffix(".png")
    return path


def _report_match(rules, a, b, records, seed: int, as_json: bool, plot, save_games: str | None,
                  openings=None, clock=None):  # fmt: skip
    """Print the summary of a played match (a table or JSON) with both sides' seconds per move when
    it was timed, and write its games file and plot."""
    import json

    from neurocheckers.analysis.match_report import format_table, summarize

    summary = summarize(records.score, records.length, records.material_diff, records.finished)
    summary.update(player_a=a.name, player_b=b.name, rules=rules.name, seed=seed)
    if clock is not None:
        summary.update(seconds_per_move_a=clock.per_move(True), seconds_per_move_b=clock.per_move(False))
    if save_games is not None:
        summary["games_file"] = _save_match_games(rules, a, b, records, save_games, openings)
    if as_json:
        print(json.dumps(summary, indent=2))
    else:
        print(format_table(a.name, b.name, rules.name, summary))
        if clock is not None:
            print(
                f"seconds per move: A {_seconds(clock.per_move(True))}, B {_seconds(clock.per_move(False))}"
            )
        if save_games is not None:
            print(f"games: {summary['games_file']} ({len(records.actions)} games)")
    if plot:
        from neurocheckers.analysis.match_report import plot_material_histogram
        from neurocheckers.formats import display_name

        title = f"{display_name(a.name)} vs {display_name(b.name)} ({rules.name}, {summary['games']} games)"
        try:
            path = plot_material_histogram(records.material_diff, title, plot)
        except OSError as e:
            raise UserError(f"cannot write --plot {str(plot)!r}: {e.strerror or e}") from None
        if not as_json:
            print(f"histogram: {path}")


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _save_match_games(rules, a, b, records, path: str, openings=None) -> str:
    """Write the games whose actions ``records`` kept (the first ones) in notation, from their paired
    ``openings`` when given (PDN for a ``.pdn`` path, else JSON); returns the path."""
    import numpy as np

    from neurocheckers.analysis.games import games_from_actions
    from neurocheckers.analysis.pdn_games import save_game_file
    from neurocheckers.arena import paired_opening_starts

    kept = len(records.actions)
    a_black = records.a_is_black[:kept]
    names_black = [a.name if x else b.name for x in a_black]
    names_white = [b.name if x else a.name for x in a_black]
    starts = None if openings is None else paired_opening_starts(openings, np.arange(kept))
    try:
        played = games_from_actions(rules, records.actions, names_black, names_white, starts)
        return str(save_game_file(path, rules, played, event=f"neurocheckers match {a.name} vs {b.name}"))
    except OSError as e:
        raise UserError(f"cannot write --save-games {path!r}: {e.strerror or e}") from None


def _config_keys_help() -> str:
    """The experiment config's keys, defaults and one-line docs, for ``evolve --help``."""
    import dataclasses

    from neurocheckers.experiment.config import ExperimentConfig, field_docs

    docs = field_docs()
    lines = ["\b", "Config keys (TOML top level or --set KEY=VALUE), with defaults:"]
    for f in dataclasses.fields(ExperimentConfig):
        default = str(f.default).lower() if isinstance(f.default, bool) else repr(f.default)  # as in TOML
        lines.append(f"  {f.name} = {default}: {docs.get(f.name, '')}")
    examples = (
        "neurocheckers evolve experiments/quick.toml --set population=32 --epochs 20 --out runs",
        "neurocheckers evolve --resume runs/quick_seed0_20260101-120000",
    )
    return "\n".join(lines) + "\n\n" + _example(*examples)


@app.command(epilog=_config_keys_help())
def evolve(
    config: Annotated[
        str | None, typer.Argument(metavar="CONFIG", help="Experiment TOML file (see experiments/).")
    ] = None,
    out: Annotated[
        str, typer.Option(metavar="FOLDER", help="Folder in which the run folder is created.")
    ] = "runs",
    epochs: Annotated[int | None, typer.Option(metavar="N", help="Override the number of epochs.")] = None,
    seed: Annotated[int | None, typer.Option(metavar="SEED", help="Override the seed.")] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="KEY=VALUE", help="Override a config key (repeatable)."),
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(metavar="RUN_DIR", help="Continue the run in this folder from its checkpoint."),
    ] = None,
    plot: Annotated[bool, typer.Option(help="Write fitness.png/svg in the run folder at the end.")] = True,
) -> None:
    """Evolve a population against a rising boss.

    Writes a run folder: its config, metrics.csv, lineage.csv and the bosses, and checkpoints. A run
    resumed with --resume goes on from its last checkpoint; a finished run is left as it is."""
    prepared = _prepare_run(config, out, epochs, seed, set_, resume)
    if prepared is None:
        return
    run_dir, total = prepared
    _evolve_with_progress(run_dir, total)
    print(f"metrics: {run_dir}/metrics.csv")
    print(f"lineage: {run_dir}/lineage/")
    if plot:
        from neurocheckers.analysis.plots import plot_fitness, plot_strength, strength_path

        files = plot_fitness([run_dir], f"{run_dir}/fitness.png")
        files += plot_strength([run_dir], strength_path(files[0]))
        print("plot: " + ", ".join(str(f) for f in files))


def _prepare_run(config, out, epochs, seed, overrides, resume) -> tuple[str, int] | None:
    """(run folder, epochs to reach) of a new run or of ``resume``, after printing the folder and its
    config; None (after saying so) when ``resume`` is already complete. Nothing is created for a
    config that is refused."""
    from pathlib import Path

    from neurocheckers.experiment.config import ConfigError, load_config
    from neurocheckers.experiment.run import (
        CHECKPOINT,
        RunError,
        checkpoint_epoch,
        config_summary,
        create_run,
        read_metrics,
        read_run_config,
    )

    try:
        if resume is not None:
            if config is not None or overrides or seed is not None:
                raise UserError("--resume goes on with the run's own config; give no CONFIG, --set or --seed")
            cfg, sims = read_run_config(resume)
            total = epochs if epochs is not None else cfg.epochs
            done = checkpoint_epoch(resume)
            if done is not None and done >= total:
                print(f"{resume} is already complete: {done} epochs done, {total} asked for; nothing to do")
                return None
            if not (Path(resume) / CHECKPOINT).exists():
                rows = len(read_metrics(resume))
                dropped = f"; its {rows} metric rows are replaced" if rows else ""
                print(f"{resume} has no checkpoint: the run starts again from epoch 0{dropped}")
            run_dir = resume
        else:
            if config is None:
                raise UserError("give a CONFIG.toml (or --resume RUN_DIR)")
            cfg = load_config(config, overrides, epochs=epochs, seed=seed)
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


def _evolve_with_progress(run_dir: str, total: int) -> None:
    """``experiment.run.run`` up to ``total`` epochs under a progress bar of epochs."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from neurocheckers.experiment.run import (
        LEARNERS,
        RunError,
        learner_status,
        read_metrics,
        read_run_config,
        run,
    )

    games = read_run_config(run_dir)[0].games_per_epoch
    learner = read_run_config(run_dir)[0].strategy in LEARNERS
    columns = (
        TextColumn("epoch"),
        MofNCompleteColumn(),
        BarColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task("evolve", total=total, status="compiling...")
        done = len(read_metrics(run_dir))
        progress.update(task, completed=min(done, total))

        def on_epoch(row):
            if learner:
                progress.update(task, completed=int(row["epoch"]) + 1, status=learner_status(row))
                return
            status = (  # points per game, as in the fitness plot
                f"boss #{int(row['boss_id'])} mean {float(row['fitness_mean']) / games:.2f} "
                f"best {float(row['best_points']) / games:.2f} pts/game "
                f"{float(row['wall_seconds']):.2f} s/epoch"
            )
            progress.update(task, completed=int(row["epoch"]) + 1, status=status)

        try:
            run(run_dir, epochs=total, on_epoch=on_epoch)
        except RunError as e:
            raise UserError(str(e)) from None


@app.command(
    epilog=_example(
        "neurocheckers sweep experiments/study_grid.toml --epochs 32 --workers 2 --out runs",
        "neurocheckers sweep experiments/study_grid.toml --ray local --out runs",
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
    epochs: Annotated[
        int | None,
        typer.Option(metavar="N", help="Override every run's epochs (remembered when the sweep resumes)."),
    ] = None,
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
) -> None:
    """Run every config of a sweep file.

    Writes one run folder per config, sweep.json and summary.csv. Run the same command again to
    continue an interrupted sweep."""
    from pathlib import Path

    from neurocheckers.experiment.config import ConfigError
    from neurocheckers.experiment.run import RunError
    from neurocheckers.experiment.sweep import SweepError, load_sweep, run_sweep

    for name, value in (("--epochs", epochs), ("--workers", workers), ("--cpus-per-run", cpus_per_run)):
        if value is not None and value < 1:
            raise UserError(f"{name} must be >= 1, got {value}")
    if ray_address is not None and workers != 1:
        raise UserError(
            f"--workers is for runs on this machine; with --ray give --cpus-per-run, got {workers}"
        )
    try:
        plan = load_sweep(sweep_file)
    except SweepError as e:
        raise UserError(str(e)) from None
    print(f"sweep {plan.name}: {len(plan.entries)} runs in {Path(out) / plan.name}")
    with _SweepProgress(len(plan.entries)) as progress:
        try:
            result = run_sweep(plan, out, epochs, workers, ray_address, progress.on_event, cpus_per_run)
        except (SweepError, ConfigError, RunError) as e:
            raise UserError(str(e)) from None
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


@app.command(
    epilog=_example("neurocheckers plot runs/study_grid/*_seed0_* --out runs/study_grid/fitness.png")
)
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
    """Plot the fitness (and strength) of one or more runs over epochs.

    Shows the band, mean and best member per game and the boss promotions, runs overlaid, with the
    number of bosses promoted below. Runs made with strength_every also get a strength figure beside
    it (fitness.png -> strength.png): the boss's probe scores against epochs and against wall time."""
    from neurocheckers.analysis.plots import plot_fitness, plot_strength, strength_path
    from neurocheckers.experiment.run import RunError, read_run_config

    if smooth is not None and smooth < 1:
        raise UserError(f"--smooth must be >= 1, got {smooth}")
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
    epilog=_example("neurocheckers export runs/quick_seed0_20260101-120000 --out runs/agent.safetensors")
)
def export(
    run_dir: Annotated[str, typer.Argument(metavar="RUN_DIR", help="A run folder.")],
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
    """Export a run's boss as an agent file for match and play.

    The final boss by default, or the one that played --epoch."""
    from pathlib import Path

    from neurocheckers.analysis.lineage import export_boss
    from neurocheckers.experiment.run import RunError

    folder = next((p for p in Path(out).parents if p.exists()), Path("."))
    if Path(out).is_dir():
        example = Path(out) / "agent.safetensors"
        raise UserError(f"--out {out!r} is a folder; give the agent file's name, e.g. {example}")
    if not folder.is_dir():
        raise UserError(f"cannot write --out {out!r}: {str(folder)!r} is a file, not a folder")
    try:
        path, entry = export_boss(run_dir, out, epoch)
    except (RunError, ValueError) as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"cannot write --out {out!r}: {e.strerror or e}") from None
    origin = "the initial random boss" if entry.epoch < 0 else f"promoted after epoch {entry.epoch}"
    print(f"boss #{entry.boss_id} ({origin}) written to {path}")


@app.command(epilog=_example("neurocheckers play --agent runs/agent.safetensors --seconds 2 --human white"))
def play(
    agent: Annotated[
        str, typer.Option(metavar="PATH", help="The agent file to play against (.safetensors, see export).")
    ],
    rules: Annotated[
        str | None, typer.Option(metavar="PRESET", help="Rules preset (default: the agent's own).")
    ] = None,
    seconds: Annotated[
        float, typer.Option(metavar="SECONDS", help="The agent's thinking time per move.")
    ] = 1.0,
    search: Annotated[
        str,
        typer.Option(
            metavar="SEARCH",
            help="How the agent thinks: alphabeta (iterative-deepening alpha-beta, its network scoring"
            " the leaves: timed:SECONDSs:FILE) or mcts (the anytime MCTS).",
        ),
    ] = "alphabeta",
    human: Annotated[
        str, typer.Option(metavar="COLOUR", help="Your colour: black (moves first) or white.")
    ] = "black",
    seed: Annotated[int, typer.Option(metavar="SEED", help="Random seed of the agent's search.")] = 0,
    save: Annotated[
        str | None,
        typer.Option(metavar="PATH", help="Write the game to this file (PDN if it ends in .pdn, else JSON)."),
    ] = None,
) -> None:
    """Play against an agent in the terminal.

    Type moves as 9-14, 9x18 or 1x10x19, or help, moves, board, undo, quit. The agent thinks
    --seconds a move with the timed alpha-beta search, or with MCTS (--search mcts)."""
    import math
    from pathlib import Path

    from neurocheckers.agent_file import load_agent
    from neurocheckers.play import SEARCHES, parse_color, play_game
    from neurocheckers.timed_player import MAX_SECONDS

    preset = _rules(rules) if rules is not None else None
    if search not in SEARCHES:
        raise UserError(f"--search must be one of {', '.join(SEARCHES)}, got {search!r}")
    try:
        color = parse_color(human)
    except ValueError:
        raise UserError(f"--human must be black or white, got {human!r}") from None
    if not (seconds > 0 and math.isfinite(seconds)):
        raise UserError(f"--seconds must be a positive number, got {seconds}")
    if search == "alphabeta" and seconds > MAX_SECONDS:
        raise UserError(f"--seconds must be at most {MAX_SECONDS:g} with --search alphabeta, got {seconds}")
    if not Path(agent).is_file():
        raise UserError(f"no agent file {agent!r}")
    try:
        loaded = load_agent(agent, preset)
    except ValueError as e:
        raise UserError(str(e)) from None
    names = ("human", Path(agent).name)
    game = play_game(loaded, loaded.rules, seconds, color, seed=seed, names=names, search=search)
    if save is not None:
        from neurocheckers.analysis.pdn_games import save_game_file

        try:
            print(f"game saved to {save_game_file(save, loaded.rules, [game])}")
        except OSError as e:
            raise UserError(f"cannot write --save {save!r}: {e.strerror or e}") from None


@app.command(
    epilog=_example(
        "neurocheckers show runs/games.json --game 2           # writes runs/games-game2.gif",
        "neurocheckers show runs/games.json --svg-dir runs/game1",
    )
)
def show(
    games_file: Annotated[
        str,
        typer.Argument(
            metavar="GAMES_FILE",
            help="A game file (from match --save-games or play --save): JSON, or PDN when it ends in .pdn.",
        ),
    ],
    game: Annotated[int, typer.Option(metavar="N", help="Which game of the file, counting from 1.")] = 1,
    out: Annotated[
        str | None,
        typer.Option(
            metavar="PATH",
            help="GIF to write (default: beside GAMES_FILE, named after it: games.json or games.pdn"
            " gives games-game1.gif).",
        ),
    ] = None,
    svg_dir: Annotated[
        str | None, typer.Option(metavar="FOLDER", help="Write one SVG per position into this folder.")
    ] = None,
    fps: Annotated[float, typer.Option(metavar="FPS", help="Frames (moves) per second of the GIF.")] = 1.5,
) -> None:
    """Draw a saved game as an animated GIF or SVG boards.

    Draws the game move by move: a GIF by default, or one SVG board per position with --svg-dir."""
    import math
    from pathlib import Path

    from neurocheckers.analysis.pdn_games import load_game_file

    if not (fps > 0 and math.isfinite(fps)):
        raise UserError(f"--fps must be a positive number, got {fps}")
    if out is not None and (Path(out).is_dir() or Path(out).suffix.lower() != ".gif"):
        raise UserError(f"--out must name a .gif file, got {out!r}")
    if svg_dir is not None and Path(svg_dir).exists() and not Path(svg_dir).is_dir():
        raise UserError(f"--svg-dir {svg_dir!r} is a file, not a folder")
    try:
        loaded = load_game_file(games_file)
    except ValueError as e:
        raise UserError(str(e)) from None
    if not 1 <= game <= len(loaded.games):
        raise UserError(f"--game must be in 1..{len(loaded.games)} for {games_file!r}, got {game}")
    chosen = loaded.games[game - 1]
    from neurocheckers.analysis.board_plot import save_gif, save_svgs

    moves = len(chosen["moves"])
    print(f"{chosen['black']} (Black) vs {chosen['white']} (White): {moves} moves, {chosen['result']}")
    try:
        if svg_dir is not None:
            files = save_svgs(loaded.rules, chosen, svg_dir)
            print(f"{len(files)} SVG boards in {svg_dir}")
        if out is not None or svg_dir is None:
            target = out or str(Path(games_file).with_suffix("")) + f"-game{game}.gif"
            print(f"animation: {save_gif(loaded.rules, chosen, target, fps)}")
    except OSError as e:
        raise UserError(f"cannot write the drawing: {e.strerror or e}") from None


def _match_progress(description: str):
    """A transient rich progress bar and its ``(done, total)`` callback."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn(description), MofNCompleteColumn(), BarColumn(), TimeElapsedColumn(), transient=True
    )
    task = progress.add_task(description, total=None)

    def update(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total)

    return progress, update


@app.command(
    epilog=_example(
        "neurocheckers lineage runs/quick_seed0_20260101-120000 --games 40 --every 16 --out runs/replay"
    )
)
def lineage(
    run_dir: Annotated[str, typer.Argument(metavar="RUN_DIR", help="A run folder.")],
    games: Annotated[int, typer.Option(metavar="N", help="Games per match (even; colours balanced).")] = 20,
    every: Annotated[
        int, typer.Option(metavar="E", help="Table rows every this many epochs (and the last).")
    ] = 32,
    round_robin_games: Annotated[
        int | None, typer.Option(metavar="N", help="Games per round-robin pair (default: --games).")
    ] = None,
    sample: Annotated[
        int, typer.Option(metavar="N", help="Round-robin at most this many evenly spaced bosses (0: all).")
    ] = 12,
    seed: Annotated[int, typer.Option(metavar="SEED", help="Random seed of the matches.")] = 0,
    simulations: Annotated[
        int | None, typer.Option(metavar="SIMS", help="MCTS simulations per move (default: the run's).")
    ] = None,
    opening_plies: Annotated[
        int, typer.Option(metavar="N", help="Random plies at the start of each game (2 here; match uses 0).")
    ] = 2,
    round_robin: Annotated[
        bool, typer.Option("--round-robin/--no-round-robin", help="Also play the round-robin.")
    ] = True,
    out: Annotated[
        str | None, typer.Option(metavar="FOLDER", help="Folder for the outputs (default: RUN_DIR).")
    ] = None,
    save_games: Annotated[
        str | None,
        typer.Option(
            metavar="FILE",
            help="Also write Table 1's games (JSON, or PDN when FILE ends in .pdn) for show and serve.",
        ),
    ] = None,
) -> None:
    """Replay a run's boss lineage: Table 1 and Elo ratings.

    Table 1 is the boss at every E-th epoch against the final boss; the round-robin of the bosses
    gives a heatmap and Elo ratings."""
    from pathlib import Path

    from neurocheckers.analysis import elo, replay
    from neurocheckers.analysis.lineage import lineage as boss_lineage
    from neurocheckers.analysis.matches import check_games
    from neurocheckers.experiment.run import RunError
    from neurocheckers.search.limits import MAX_SIMULATIONS

    rr_games = games if round_robin_games is None else round_robin_games
    try:
        check_games(games)
        check_games(rr_games, "--round-robin-games")
        replay.table_epochs(0, every)
        elo.sample_indices(2, sample or None)
        if simulations is not None and not 1 <= simulations <= MAX_SIMULATIONS:
            raise ValueError(f"--simulations must be in 1..{MAX_SIMULATIONS}, got {simulations}")
        if opening_plies < 0:
            raise ValueError(f"--opening-plies must be >= 0, got {opening_plies}")
        boss_lineage(run_dir)  # a bad folder fails here, before any compiling
        folder = Path(out or run_dir)
        progress, update = _match_progress("lineage table")
        with progress:
            played: list | None = [] if save_games else None
            rows = replay.lineage_table(
                run_dir, games, every, seed, simulations, opening_plies, update, games_out=played
            )
        print(replay.format_lineage_table(rows))
        print(f"table: {replay.write_rows(rows, folder / 'lineage_table.csv')}")
        if save_games:
            print(f"games: {_save_lineage_games(run_dir, save_games, played)}")
        if round_robin:
            progress, update = _match_progress("round-robin")
            with progress:
                result = elo.round_robin(
                    run_dir, rr_games, sample or None, seed, simulations, opening_plies, update
                )
            print()
            print(elo.format_elo(result))
            files = elo.write_round_robin(result, folder)
            print("round-robin: " + ", ".join(str(f) for f in files.values()))
    except (RunError, ValueError) as e:
        raise UserError(str(e)) from None


def _save_lineage_games(run_dir: str, path: str, games: list) -> str:
    """Write a lineage replay's games (JSON, or PDN for a .pdn ``path``)."""
    from neurocheckers.analysis.pdn_games import save_game_file
    from neurocheckers.experiment.run import read_run_config

    return str(save_game_file(path, read_run_config(run_dir)[0].rules, games, event="lineage Table 1"))


@app.command(
    epilog=_example(
        "neurocheckers compare runs/grid/base_seed0_* runs/grid/layers7_seed0_* --out runs/compare.csv"
    )
)
def compare(
    base_run: Annotated[str, typer.Argument(metavar="BASE_RUN", help="The base run folder.")],
    runs: Annotated[
        list[str], typer.Argument(metavar="RUN_DIR", help="Run folders to compare with the base run.")
    ],
    games: Annotated[int, typer.Option(metavar="N", help="Games per match (even; colours balanced).")] = 20,
    seed: Annotated[int, typer.Option(metavar="SEED", help="Random seed of the matches.")] = 0,
    opening_plies: Annotated[
        int, typer.Option(metavar="N", help="Random plies at the start of each game (2 here; match uses 0).")
    ] = 2,
    out: Annotated[
        str | None,
        typer.Option(metavar="PATH", help="CSV to write; a .md beside it (default: BASE_RUN/compare.csv)."),
    ] = None,
) -> None:
    """Compare runs with a base run: Tables 2-4.

    Each run's seconds per epoch, its final boss against the base run's final boss, and the first
    epoch at which its boss beat the base run's final boss."""
    from pathlib import Path

    from neurocheckers.analysis import replay
    from neurocheckers.analysis.lineage import lineage as boss_lineage
    from neurocheckers.analysis.matches import check_games
    from neurocheckers.experiment.run import RunError

    try:
        check_games(games)
        if opening_plies < 0:
            raise ValueError(f"--opening-plies must be >= 0, got {opening_plies}")
        for run_dir in (base_run, *runs):
            boss_lineage(run_dir)  # a bad folder fails here, before any compiling
        progress, update = _match_progress("compare")
        with progress:
            rows = replay.compare_runs(base_run, runs, games, seed, opening_plies, update)
    except (RunError, ValueError) as e:
        raise UserError(str(e)) from None
    print(replay.format_compare(rows))
    path = replay.write_rows(rows, Path(out) if out else Path(base_run) / "compare.csv")
    markdown = path.with_suffix(".md")
    markdown.write_text(replay.format_compare_markdown(rows))
    print(f"table: {path}, {markdown}")


@app.command(
    epilog=_example(
        "neurocheckers gauntlet results/base_final_boss.safetensors --out runs/gauntlet",
        "neurocheckers gauntlet alphabeta:2 --rules american6 --openings 50 --out runs/gauntlet",
    )
)
def gauntlet(
    player: Annotated[
        str,
        typer.Argument(
            metavar="PLAYER",
            help="The player to rate: an agent file (played with the search it was trained with:"
            " mcts:FILE:SIMS or alphabeta:D:FILE) or any player spec, e.g. mcts:FILE:64, alphabeta:3:FILE,"
            " openspiel:mcts:100 (american8).",
        ),
    ],
    rules: Preset = "simple6",
    openings: Annotated[
        int, typer.Option(metavar="N", help="Committed openings per match, each played with both colours.")
    ] = 100,
    depth: Annotated[
        int, typer.Option(metavar="D", help="Deepest material alpha-beta opponent on the ladder.")
    ] = 3,
    equal_depths: Annotated[
        str, typer.Option(metavar="D,D,...", help="Depths of the equal-depth test against material.")
    ] = "1,2,3",
    seed: Annotated[int, typer.Option(metavar="SEED", help="Random seed.")] = 0,
    batch: Annotated[int, typer.Option(metavar="N", help="Games played at once.")] = 512,
    out: Annotated[
        str, typer.Option(metavar="PATH", help="Folder for gauntlet.json, gauntlet.csv and gauntlet.png.")
    ] = "runs/gauntlet",
    ladder: Annotated[
        str,
        typer.Option(
            metavar="NAME",
            help="material (random, greedy-material, alphabeta:1..D) or american8 (material to depth 6,"
            " alphabeta:2..6:heuristic, openspiel:mcts:1000, pydraughts:4/6/8).",
        ),
    ] = "material",
    heuristic_depths: Annotated[
        str, typer.Option(metavar="D,D,...", help="Depths of an equal-depth test against the heuristic.")
    ] = "",
    equal_time: Annotated[
        bool,
        typer.Option(
            "--equal-time", help="Play the ladder with timed:equal:FILE: the opponent's time per move, timed."
        ),
    ] = False,
    engine_openings: Annotated[
        int, typer.Option(metavar="N", help="Openings against openspiel:mcts:1000 and pydraughts:8 (0: all).")
    ] = 0,
    only: Annotated[
        str, typer.Option(metavar="SPEC,...", help="Play only the rows against these opponents.")
    ] = "",
    kinds: Annotated[
        str, typer.Option(metavar="KINDS", help="Only rows of these kinds: ladder, equal-depth, calibration.")
    ] = "",
    first_opening: Annotated[
        int, typer.Option(metavar="K", help="Start at opening K (0-based): part of a row, pooled on merging.")
    ] = 0,
) -> None:
    """Rate a player on a fixed ladder: scores with 95% intervals, Elo.

    Every match is played over the same committed openings, each with both colours; rows against
    engines and timed players give both sides' seconds per move."""
    from neurocheckers.analysis.gauntlet import GauntletConfig, format_gauntlet, run_gauntlet, write_gauntlet

    preset = _rules(rules)
    depths = _depth_list(equal_depths, "--equal-depths")
    _out_folder(out)
    try:
        config = GauntletConfig(
            openings, depth, depths, seed, batch, ladder=ladder, equal_time=equal_time,
            heuristic_depths=_depth_list(heuristic_depths, "--heuristic-depths"),
            engine_openings=engine_openings, only=_names(only), kinds=_names(kinds),
            first_opening=first_opening,
        )  # fmt: skip
        progress, update = _match_progress("gauntlet")
        with progress:
            result = run_gauntlet(preset, player, config, on_row=lambda done, total, row: update(done, total))
    except ValueError as e:
        raise UserError(str(e)) from None
    print(format_gauntlet(result))
    files = write_gauntlet(result, out)
    print("wrote " + ", ".join(str(p) for p in files.values()))


def _out_folder(out: str) -> None:
    """``UserError`` when ``--out`` names a file, before any work."""
    from pathlib import Path

    if Path(out).exists() and not Path(out).is_dir():
        raise UserError(f"--out {out!r} is a file, not a folder")


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def _depth_list(text: str, option: str) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in text.split(",") if d.strip())
    except ValueError:
        raise UserError(f"{option} must be comma-separated integers, got {text!r}") from None


@app.command(epilog=_example("neurocheckers serve results/ --port 8000"))
def serve(
    folder: Annotated[
        str, typer.Argument(metavar="FOLDER", help="The folder to serve: its runs, game and agent files.")
    ] = ".",
    port: Annotated[int, typer.Option(metavar="PORT", help="The port to listen on.")] = 8000,
    host: Annotated[
        str, typer.Option(metavar="HOST", help="The address to listen on (127.0.0.1: this machine only).")
    ] = "127.0.0.1",
) -> None:
    """Open the web app: play, replay games, watch runs.

    Serves FOLDER read-only (it never writes there, nor shows anything outside it); everything
    the page needs ships with the package, so it works offline. Ctrl-C stops it."""
    from pathlib import Path

    if not Path(folder).is_dir():
        raise UserError(f"FOLDER must be a folder, got {folder!r}")
    if not 0 <= port <= 65535:
        raise UserError(f"--port must be in 0..65535, got {port}")
    import uvicorn

    from neurocheckers.web.app import create_app

    print(f"serving {folder} at http://{host}:{port}/ (Ctrl-C stops)", flush=True)
    try:
        uvicorn.run(create_app(folder), host=host, port=port, log_level="warning")
    except OSError as e:
        raise UserError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turning usage and input errors into one-line messages.

    Run as the program (``argv`` None), an interrupt (Ctrl-C) ends the process at once with exit
    status 130 (``os._exit``): compiled work still running in XLA's threads would otherwise keep
    the process, and the cores, busy until it finished. In-process callers get 130 returned.
    """
    import os

    from neurocheckers.devices import backend_initialized, use_host_devices
    from neurocheckers.runtime import configure_jax

    if not backend_initialized():  # in-process callers (tests) keep the devices they already have
        # One host device per core: evolution splits the population across them (same results).
        wanted = os.environ.get("NEUROCHECKERS_DEVICES", "")
        if wanted and not (wanted.isdigit() and int(wanted) >= 1):
            print(
                f"neurocheckers: error: NEUROCHECKERS_DEVICES must be >= 1, got {wanted!r}", file=sys.stderr
            )
            return 2
        use_host_devices(int(wanted) if wanted else None)
    configure_jax()
    if argv is None:
        exit_soon_after_an_interrupt()
    code = _run_app(argv)
    if code == 130:
        print("neurocheckers: aborted", file=sys.stderr)
        if argv is None:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)
    return code


INTERRUPT_GRACE_SECONDS = 3.0
"""How long Ctrl-C waits for the program to stop on its own before the process is ended."""


def exit_soon_after_an_interrupt() -> None:
    """End the process with status 130 a little after Ctrl-C, even if the main thread is stuck.

    Python runs its interrupt handler only when the main thread next executes Python code, which a
    long compile or a blocking wait on XLA's threads can put off for minutes. The C-level signal
    handler writes the signal number to the wakeup descriptor at once, so a watcher thread sees it.
    """
    import os
    import signal
    import socket
    import threading
    import time

    reader, writer = socket.socketpair()
    writer.setblocking(False)
    signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)

    def watch(writer: socket.socket = writer) -> None:  # holds the writer: closing it unsets the fd
        while signal.SIGINT not in (received := reader.recv(64)):
            if not received:
                return
        time.sleep(INTERRUPT_GRACE_SECONDS)  # the main thread usually stops cleanly within this
        print("neurocheckers: aborted", file=sys.stderr, flush=True)
        os._exit(130)

    threading.Thread(target=watch, name="interrupt-watcher", daemon=True).start()


def _run_app(argv: list[str] | None) -> int:
    """The app's exit status; errors are printed as one line, an interrupt gives 130."""
    try:
        # Outside standalone mode typer *returns* the code of a typer.Exit, and turns Ctrl-C into 130.
        code = app(args=argv, standalone_mode=False)
    except UserError as e:
        print(f"neurocheckers: error: {e}", file=sys.stderr)
        return 2
    except (typer.Abort, KeyboardInterrupt):
        return 130
    except typer.Exit as e:
        return e.exit_code
    except typer.TyperException as e:  # usage errors: bad option values, unknown commands
        if type(e).__name__ == "NoArgsIsHelpError":
            print(e.ctx.get_help() if getattr(e, "ctx", None) else "usage: neurocheckers COMMAND --help")
            return 0
        message = " ".join(e.format_message().split())
        print(f"neurocheckers: error: {message}", file=sys.stderr)
        return getattr(e, "exit_code", 2)
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
