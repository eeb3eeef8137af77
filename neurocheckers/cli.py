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
    save_games: Annotated[
        str | None, typer.Option(help="Save some games in notation to this JSON file (for 'show').")
    ] = None,
    save_count: Annotated[
        int, typer.Option(help="Games --save-games keeps: the first ones, half with A as Black.")
    ] = 16,
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
    if save_count < 1:
        raise UserError(f"--save-count must be >= 1, got {save_count}")
    try:
        a = parse_player(player_a, preset)
        b = parse_player(player_b, preset)
    except ValueError as e:
        raise UserError(str(e)) from None
    batch = min(batch, games)
    batch += batch % 2  # colours balanced within every batch
    chunks = []
    saved = []  # (a_is_black [n], actions [n, L]) of the first chunks, for --save-games
    from rich.progress import Progress

    with Progress(transient=True, disable=as_json) as progress:
        task = progress.add_task(f"{a.name} vs {b.name}", total=games)
        played = 0
        chunk_index = 0
        while played < games:
            key = jax.random.fold_in(jax.random.key(seed), chunk_index)
            records = jax.device_get(
                play_match(
                    preset,
                    a.policy,
                    a.params,
                    b.policy,
                    b.params,
                    key,
                    batch,
                    max_plies,
                    opening_plies,
                    record_actions=save_games is not None,
                )
            )
            take = min(batch, games - played)
            if save_games is not None and played < 2 * save_count:  # enough to pick both colours from
                saved.append((records.a_is_black[:take], records.actions[:take]))
            records = records.replace(actions=records.actions[:, :0])
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
    if save_games is not None:
        from neurocheckers.analysis.games import games_from_actions, pick_balanced
        from neurocheckers.analysis.games import save_games as write_games

        a_black = np.concatenate([s[0] for s in saved])
        picked = pick_balanced(a_black, save_count)
        names_black = [a.name if a_black[i] else b.name for i in picked]
        names_white = [b.name if a_black[i] else a.name for i in picked]
        actions = np.concatenate([s[1] for s in saved])[picked]
        try:
            games_saved = games_from_actions(preset, actions, names_black, names_white)
            path = write_games(save_games, preset, games_saved)
        except OSError as e:
            raise UserError(f"cannot write --save-games {save_games!r}: {e.strerror or e}") from None
        summary["games_file"] = str(path)
    if as_json:
        print(json.dumps(summary, indent=2))
    else:
        print(format_table(a.name, b.name, preset.name, summary))
        if save_games is not None:
            print(f"games: {summary['games_file']} ({len(picked)} games)")
    if plot:
        from neurocheckers.formats import display_name

        title = f"{display_name(a.name)} vs {display_name(b.name)} ({preset.name}, {games} games)"
        path = plot_material_histogram(material, title, plot)
        if not as_json:
            print(f"histogram: {path}")


def _config_keys_help() -> str:
    """The experiment config's keys, defaults and one-line docs, for ``evolve --help``."""
    import dataclasses

    from neurocheckers.experiment.config import ExperimentConfig, field_docs

    docs = field_docs()
    lines = ["\b", "Config keys (TOML top level or --set key=value), with defaults:"]
    for f in dataclasses.fields(ExperimentConfig):
        lines.append(f"  {f.name} = {f.default!r}: {docs.get(f.name, '')}")
    return "\n".join(lines)


@app.command(epilog=_config_keys_help())
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
    from neurocheckers.experiment.run import (
        RunError,
        config_summary,
        create_run,
        read_metrics,
        read_run_config,
        run,
    )

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
        done = len(read_metrics(run_dir))
        progress.update(task, completed=min(done, total))

        def on_epoch(row):
            status = (  # points per game, as in the fitness plot
                f"boss #{int(row['boss_id'])} mean {float(row['fitness_mean']) / cfg.games_per_epoch:.2f} "
                f"best {float(row['best_points']) / cfg.games_per_epoch:.2f} pts/game "
                f"{float(row['wall_seconds']):.2f}s"
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
def sweep(
    sweep_file: Annotated[str, typer.Argument(help="Sweep TOML file (e.g. experiments/study_grid.toml).")],
    out: Annotated[str, typer.Option(help="Folder in which the sweep folder is created.")] = "runs",
    epochs: Annotated[
        int | None, typer.Option(help="Override every run's epochs (remembered when the sweep resumes).")
    ] = None,
    workers: Annotated[int, typer.Option(help="Runs at once on this machine, each in its own process.")] = 1,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray",
            help="Run each entry as a task on this Ray cluster: an address, 'auto' or 'local'"
            " (pip install 'neurocheckers[ray]'; every node must see the --out folder).",
        ),
    ] = None,
    cpus_per_run: Annotated[int, typer.Option(help="CPUs (and host devices) each Ray task takes.")] = 1,
) -> None:
    """Run every config of a sweep file: one run folder each, sweep.json and summary.csv. Run the same
    command again to continue an interrupted sweep."""
    from pathlib import Path

    from neurocheckers.experiment.config import ConfigError
    from neurocheckers.experiment.run import RunError
    from neurocheckers.experiment.sweep import SweepError, format_summary, load_sweep, run_sweep

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
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("{task.description}"),
        MofNCompleteColumn(),
        BarColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, transient=False) as progress:
        overall = progress.add_task("runs", total=len(plan.entries), status="")
        bars: dict[str, object] = {}

        def on_event(event) -> None:
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
                progress.advance(overall)
                text = {"skip": "finished earlier", "done": "done", "failed": f"FAILED: {event.message}"}
                progress.console.print(
                    f"{event.label}: {text[event.kind]} ({event.epochs_done}/{event.epochs} epochs, "
                    f"{event.run_dir})"
                )

        try:
            result = run_sweep(plan, out, epochs, workers, ray_address, on_event, cpus_per_run)
        except (SweepError, ConfigError, RunError) as e:
            raise UserError(str(e)) from None
    print(format_summary(result.rows))
    print(f"sweep folder: {result.sweep_dir}")
    print(f"summary: {result.summary}")
    if result.failed:
        labels = ", ".join(r["label"] for r in result.failed)
        print(
            f"neurocheckers: {len(result.failed)} run(s) failed: {labels}; run again to retry",
            file=sys.stderr,
        )
        raise typer.Exit(1)


@app.command()
def plot(
    run_dirs: Annotated[list[str], typer.Argument(help="One or more run folders (overlaid).")],
    out: Annotated[str | None, typer.Option(help="Output file (PNG and SVG are both written).")] = None,
    smooth: Annotated[
        int | None,
        typer.Option(help="Rolling mean over this many epochs (default: 1 for one run, ~1/50 of the run)."),
    ] = None,
    label: Annotated[
        list[str] | None, typer.Option(help="Legend label of each run, in order (default: its name).")
    ] = None,
) -> None:
    """Plot fitness over epochs (band, mean and best member per game, boss promotions) for one or more
    runs, overlaid, with the number of bosses promoted below."""
    from neurocheckers.analysis.plots import plot_fitness
    from neurocheckers.experiment.run import RunError, read_run_config

    if smooth is not None and smooth < 1:
        raise UserError(f"--smooth must be >= 1, got {smooth}")
    if label and len(label) != len(run_dirs):
        raise UserError(f"give one --label per run: {len(run_dirs)} runs, {len(label)} labels")
    try:
        for run_dir in run_dirs:
            read_run_config(run_dir)
        files = plot_fitness(run_dirs, out or f"{run_dirs[0]}/fitness.png", label, smooth)
    except (RunError, ValueError) as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"cannot write the plot: {e.strerror or e}") from None
    for path in files:
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


@app.command()
def play(
    agent: Annotated[str, typer.Option(help="The agent file to play against (.safetensors, see export).")],
    rules: Annotated[str | None, typer.Option(help="Rules preset (default: the agent's own).")] = None,
    seconds: Annotated[float, typer.Option(help="The agent's thinking time per move, in seconds.")] = 1.0,
    human: Annotated[str, typer.Option(help="Your colour: black (moves first) or white.")] = "black",
    seed: Annotated[int, typer.Option(help="Random seed of the agent's search.")] = 0,
    save: Annotated[str | None, typer.Option(help="Write the game to this JSON game file.")] = None,
) -> None:
    """Play against an agent in the terminal; type moves as 9-14, 9x18 or 1x10x19, or help, undo, quit."""
    import math
    from pathlib import Path

    from neurocheckers.agent_file import load_agent
    from neurocheckers.play import parse_color, play_game

    preset = _rules(rules) if rules is not None else None
    try:
        color = parse_color(human)
    except ValueError:
        raise UserError(f"--human must be black or white, got {human!r}") from None
    if not (seconds > 0 and math.isfinite(seconds)):
        raise UserError(f"--seconds must be a positive number, got {seconds}")
    if not Path(agent).is_file():
        raise UserError(f"no agent file {agent!r}")
    try:
        loaded = load_agent(agent, preset)
    except ValueError as e:
        raise UserError(str(e)) from None
    game = play_game(loaded, loaded.rules, seconds, color, seed=seed, names=("human", Path(agent).name))
    if save is not None:
        from neurocheckers.analysis.games import save_games

        try:
            print(f"game saved to {save_games(save, loaded.rules, [game])}")
        except OSError as e:
            raise UserError(f"cannot write --save {save!r}: {e.strerror or e}") from None


@app.command()
def show(
    games_file: Annotated[str, typer.Argument(help="A game file (from match --save-games or play --save).")],
    game: Annotated[int, typer.Option(help="Which game of the file, counting from 1.")] = 1,
    out: Annotated[str | None, typer.Option(help="GIF to write (default: GAMES_FILE-gameI.gif).")] = None,
    svg_dir: Annotated[str | None, typer.Option(help="Write one SVG per position into this folder.")] = None,
    fps: Annotated[float, typer.Option(help="Frames (moves) per second of the GIF.")] = 1.5,
) -> None:
    """Draw a saved game move by move as an animated GIF (default) or a folder of SVG boards."""
    import math
    from pathlib import Path

    from neurocheckers.analysis.games import load_games

    if not (fps > 0 and math.isfinite(fps)):
        raise UserError(f"--fps must be a positive number, got {fps}")
    try:
        loaded = load_games(games_file)
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


@app.command()
def lineage(
    run_dir: Annotated[str, typer.Argument(help="A run folder.")],
    games: Annotated[int, typer.Option(help="Games per match (even; colours balanced).")] = 20,
    every: Annotated[int, typer.Option(help="Table rows every this many epochs (and the last).")] = 32,
    round_robin_games: Annotated[
        int | None, typer.Option(help="Games per round-robin pair (default: --games).")
    ] = None,
    sample: Annotated[
        int, typer.Option(help="Round-robin at most this many evenly spaced bosses (0: all).")
    ] = 12,
    seed: Annotated[int, typer.Option(help="Random seed of the matches.")] = 0,
    simulations: Annotated[
        int | None, typer.Option(help="MCTS simulations per move (default: the run's).")
    ] = None,
    opening_plies: Annotated[int, typer.Option(help="Random plies at the start of each game.")] = 2,
    round_robin: Annotated[
        bool, typer.Option("--round-robin/--no-round-robin", help="Also play the round-robin.")
    ] = True,
    out: Annotated[str | None, typer.Option(help="Folder for the outputs (default: RUN_DIR).")] = None,
) -> None:
    """Replay the boss lineage: Table 1 (the boss at every E-th epoch against the final boss) and a
    round-robin of the bosses with a heatmap and Elo ratings."""
    from pathlib import Path

    from neurocheckers.analysis import elo, replay
    from neurocheckers.analysis.lineage import lineage as boss_lineage
    from neurocheckers.analysis.matches import check_games
    from neurocheckers.experiment.run import RunError

    rr_games = games if round_robin_games is None else round_robin_games
    try:
        check_games(games)
        check_games(rr_games, "--round-robin-games")
        replay.table_epochs(0, every)
        elo.sample_indices(2, sample or None)
        if simulations is not None and simulations < 1:
            raise ValueError(f"--simulations must be >= 1, got {simulations}")
        if opening_plies < 0:
            raise ValueError(f"--opening-plies must be >= 0, got {opening_plies}")
        boss_lineage(run_dir)  # a bad folder fails here, before any compiling
        folder = Path(out or run_dir)
        progress, update = _match_progress("lineage table")
        with progress:
            rows = replay.lineage_table(run_dir, games, every, seed, simulations, opening_plies, update)
        print(replay.format_lineage_table(rows))
        print(f"table: {replay.write_rows(rows, folder / 'lineage_table.csv')}")
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


@app.command()
def compare(
    base_run: Annotated[str, typer.Argument(help="The base run folder.")],
    runs: Annotated[list[str], typer.Argument(help="Run folders to compare with the base run.")],
    games: Annotated[int, typer.Option(help="Games per match (even; colours balanced).")] = 20,
    seed: Annotated[int, typer.Option(help="Random seed of the matches.")] = 0,
    opening_plies: Annotated[int, typer.Option(help="Random plies at the start of each game.")] = 2,
    out: Annotated[
        str | None, typer.Option(help="CSV to write; a .md beside it (default: BASE_RUN/compare.csv).")
    ] = None,
) -> None:
    """Tables 2-4: each run's seconds per epoch, its final boss against the base run's final boss,
    and the first epoch at which its boss beat the base run's final boss."""
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


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turning usage and input errors into one-line messages."""
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
    try:
        # Outside standalone mode typer *returns* the code of a typer.Exit, and turns Ctrl-C into 130.
        code = app(args=argv, standalone_mode=False)
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
    if code == 130:
        print("neurocheckers: aborted", file=sys.stderr)
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
