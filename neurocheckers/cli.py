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


class UserError(Exception):
    """A problem with the user's input: reported as one line, without a traceback."""


def _rules(name: str):
    from neurocheckers.rules import get_rules

    try:
        return get_rules(name)
    except ValueError as e:
        raise UserError(str(e)) from None


@app.command()
def perft(
    rules: Annotated[str, typer.Option(help="Rules preset: simple6, american6 or american8.")] = "simple6",
    depth: Annotated[int, typer.Option(help="Depth in whole turns (a multi-jump is one turn).")] = 5,
    fen: Annotated[str | None, typer.Option(help="Start from this PDN FEN instead of the opening.")] = None,
) -> None:
    """Count the leaves of the legal-move tree, one line per depth: 'depth N: COUNT'."""
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


@app.command()
def match(
    player_a: Annotated[
        str,
        typer.Argument(
            help="Player A: random | greedy:FILE | greedy-material | alphabeta:D | mcts:FILE:SIMS"
            " | mcts-rollout:SIMS"
        ),
    ],
    player_b: Annotated[str, typer.Argument(help="Player B, same forms as A.")],
    rules: Annotated[str, typer.Option(help="Rules preset: simple6, american6 or american8.")] = "simple6",
    games: Annotated[int, typer.Option(help="Games to play; A moves first in half of them.")] = 1000,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    batch: Annotated[int, typer.Option(help="Games played at once (in one compiled call).")] = 2048,
    max_plies: Annotated[
        int, typer.Option(help="Cap on a game's length; unfinished games count as draws.")
    ] = 400,
    opening_plies: Annotated[int, typer.Option(help="Random plies at the start of each game.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    plot: Annotated[str | None, typer.Option(help="Save the final-material histogram to this PNG.")] = None,
) -> None:
    """Play GAMES games of A against B and print A's wins, draws, losses and score with a 95% CI."""
    import json

    import jax
    import numpy as np

    from neurocheckers.analysis.match_report import format_table, plot_material_histogram, summarize
    from neurocheckers.arena import play_match
    from neurocheckers.players import parse_player

    preset = _rules(rules)
    for name, value in (("--games", games), ("--batch", batch), ("--max-plies", max_plies)):
        if value < 1:
            raise UserError(f"{name} must be >= 1, got {value}")
    if opening_plies < 0:
        raise UserError(f"--opening-plies must be >= 0, got {opening_plies}")
    try:
        a = parse_player(player_a, preset)
        b = parse_player(player_b, preset)
    except ValueError as e:
        raise UserError(str(e)) from None
    batch = min(batch, games)
    batch += batch % 2  # colours balanced within every batch
    chunks = []
    from rich.progress import Progress

    with Progress(transient=True, disable=as_json) as progress:
        task = progress.add_task(f"{a.name} vs {b.name}", total=games)
        played = 0
        chunk_index = 0
        while played < games:
            key = jax.random.fold_in(jax.random.key(seed), chunk_index)
            records = jax.device_get(
                play_match(
                    preset, a.policy, a.params, b.policy, b.params, key, batch, max_plies, opening_plies
                )
            )
            take = min(batch, games - played)
            chunks.append(jax.tree.map(lambda x, take=take: np.asarray(x)[:take], records))
            played += take
            chunk_index += 1
            progress.update(task, completed=played)
    score = np.concatenate([c.score for c in chunks])
    length = np.concatenate([c.length for c in chunks])
    material = np.concatenate([c.material_diff for c in chunks])
    finished = np.concatenate([c.finished for c in chunks])
    summary = summarize(score, length, material, finished)
    summary.update(player_a=a.name, player_b=b.name, rules=preset.name, seed=seed)
    if as_json:
        print(json.dumps(summary, indent=2))
    else:
        print(format_table(a.name, b.name, preset.name, summary))
    if plot:
        path = plot_material_histogram(material, f"{a.name} vs {b.name} ({preset.name}, {games} games)", plot)
        if not as_json:
            print(f"histogram: {path}")


@app.command()
def evolve(
    config: Annotated[str | None, typer.Argument(help="Experiment TOML file (see experiments/).")] = None,
    out: Annotated[str, typer.Option(help="Folder in which the run folder is created.")] = "runs",
    epochs: Annotated[int | None, typer.Option(help="Override the number of epochs.")] = None,
    seed: Annotated[int | None, typer.Option(help="Override the seed.")] = None,
    set_: Annotated[
        list[str] | None, typer.Option("--set", help="Override a config key: --set key=value (repeatable).")
    ] = None,
    resume: Annotated[
        str | None, typer.Option(help="Continue the run in this folder from its checkpoint.")
    ] = None,
    plot: Annotated[bool, typer.Option(help="Write fitness.png/svg in the run folder at the end.")] = True,
) -> None:
    """Evolve a population against a rising boss; writes a run folder with metrics, lineage, checkpoints."""
    from neurocheckers.experiment.config import ConfigError, load_config
    from neurocheckers.experiment.run import RunError, config_summary, create_run, read_run_config, run

    try:
        if resume is not None:
            if config is not None or set_:
                raise UserError("--resume continues a run with its own config; give no CONFIG or --set")
            run_dir = resume
            cfg, sims = read_run_config(run_dir)
        else:
            if config is None:
                raise UserError("give a CONFIG.toml (or --resume RUN_DIR)")
            cfg = load_config(config, set_, epochs=epochs, seed=seed)
            run_dir = str(create_run(cfg, out))
            _, sims = read_run_config(run_dir)
    except (ConfigError, RunError) as e:
        raise UserError(str(e)) from None
    total = epochs if epochs is not None else cfg.epochs
    print(f"run folder: {run_dir}")
    print(config_summary(cfg, sims))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("epoch"),
        MofNCompleteColumn(),
        BarColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task("evolve", total=total, status="compiling...")
        done = len(
            __import__("neurocheckers.experiment.run", fromlist=["read_metrics"]).read_metrics(run_dir)
        )
        progress.update(task, completed=min(done, total))

        def on_epoch(row):
            status = (
                f"boss #{int(row['boss_id'])} mean {float(row['fitness_mean']):.2f} "
                f"best {float(row['best_points']):.1f} {float(row['wall_seconds']):.2f}s"
            )
            progress.update(task, completed=int(row["epoch"]) + 1, status=status)

        try:
            run(run_dir, epochs=total, on_epoch=on_epoch)
        except RunError as e:
            raise UserError(str(e)) from None
    print(f"metrics: {run_dir}/metrics.csv")
    print(f"lineage: {run_dir}/lineage/")
    if plot:
        from neurocheckers.analysis.plots import plot_fitness

        files = plot_fitness([run_dir], f"{run_dir}/fitness.png")
        print("plot: " + ", ".join(str(f) for f in files))


@app.command()
def plot(
    run_dirs: Annotated[list[str], typer.Argument(help="One or more run folders (overlaid).")],
    out: Annotated[str | None, typer.Option(help="Output file (PNG and SVG are both written).")] = None,
) -> None:
    """Plot fitness over epochs (min/mean/max band, best member, boss changes) for one or more runs."""
    from neurocheckers.analysis.plots import plot_fitness
    from neurocheckers.experiment.run import RunError, read_run_config

    try:
        for run_dir in run_dirs:
            read_run_config(run_dir)
    except RunError as e:
        raise UserError(str(e)) from None
    target = out or f"{run_dirs[0]}/fitness.png"
    for path in plot_fitness(run_dirs, target):
        print(path)


@app.command()
def export(
    run_dir: Annotated[str, typer.Argument(help="A run folder.")],
    out: Annotated[str, typer.Option(help="The agent file to write (.safetensors).")] = "agent.safetensors",
    epoch: Annotated[
        int | None, typer.Option(help="Export the boss in charge at this epoch instead of the last.")
    ] = None,
) -> None:
    """Export a run's boss (the final one by default) as an agent file for match and play."""
    from neurocheckers.analysis.lineage import export_boss
    from neurocheckers.experiment.run import RunError

    try:
        path, entry = export_boss(run_dir, out, epoch)
    except (RunError, ValueError) as e:
        raise UserError(str(e)) from None
    print(f"boss #{entry.boss_id} (promoted after epoch {entry.epoch}) written to {path}")


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turning usage and input errors into one-line messages."""
    import os

    from neurocheckers._setup import configure_jax
    from neurocheckers.devices import backend_initialized, use_host_devices

    if not backend_initialized():  # in-process callers (tests) keep the devices they already have
        # One host device per core: evolution splits the population across them (same results).
        wanted = os.environ.get("NEUROCHECKERS_DEVICES", "")
        if wanted and not (wanted.isdigit() and int(wanted) >= 1):
            print(f"neurocheckers: error: NEUROCHECKERS_DEVICES must be >= 1, got {wanted!r}", file=sys.stderr)
            return 2
        use_host_devices(int(wanted) if wanted else None)
    configure_jax()
    try:
        app(args=argv, standalone_mode=False)
    except UserError as e:
        print(f"neurocheckers: error: {e}", file=sys.stderr)
        return 2
    except typer.Abort:
        print("neurocheckers: aborted", file=sys.stderr)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
