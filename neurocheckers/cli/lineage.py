"""``lineage``, ``compare`` and ``gauntlet``: a run's bosses replayed, runs compared, an agent rated."""

from __future__ import annotations

from typing import Annotated

import typer

from neurocheckers.analysis.gauntlet_config import GauntletConfig
from neurocheckers.cli import checks
from neurocheckers.cli.common import (
    OpeningPlies,
    PairedGames,
    Preset,
    RunDir,
    SaveGames,
    Seed,
    UserError,
    app,
    comma_text,
    example,
    field_option,
    match_progress,
    options_from,
)
from neurocheckers.players.registry import spec_forms


@app.command(
    epilog=example(
        "neurocheckers lineage runs/quick_seed0_20260101-120000 --games 40 --every 16 --out runs/replay"
    )
)
def lineage(
    run_dir: RunDir,
    games: PairedGames = 20,
    every: Annotated[
        int, typer.Option(metavar="E", help="Table rows every this many epochs (and the last).")
    ] = 32,
    round_robin_games: Annotated[
        int | None, typer.Option(metavar="N", help="Games per round-robin pair (default: --games).")
    ] = None,
    sample: Annotated[
        int, typer.Option(metavar="N", help="Round-robin at most this many evenly spaced bosses (0: all).")
    ] = 12,
    seed: Seed = 0,
    simulations: Annotated[
        int | None, typer.Option(metavar="SIMS", help="MCTS simulations per move (default: the run's).")
    ] = None,
    opening_plies: OpeningPlies = 2,
    round_robin: Annotated[
        bool, typer.Option("--round-robin/--no-round-robin", help="Also play the round-robin.")
    ] = True,
    out: Annotated[
        str | None, typer.Option(metavar="FOLDER", help="Folder for the outputs (default: RUN_DIR).")
    ] = None,
    save_games: SaveGames = None,
) -> None:
    """Replay a run's boss lineage: Table 1 and Elo ratings.

    Table 1 is the boss at every E-th epoch against the final boss; the round-robin of the bosses
    gives a heatmap and Elo ratings."""
    from pathlib import Path

    from neurocheckers.analysis import elo, replay, replay_figures
    from neurocheckers.analysis.lineage import lineage as boss_lineage
    from neurocheckers.analysis.matches import check_games
    from neurocheckers.experiment.folder import RunError
    from neurocheckers.search.limits import MAX_SIMULATIONS

    rr_games = games if round_robin_games is None else round_robin_games
    with checks.user_errors(RunError, ValueError):
        check_games(games)
        check_games(rr_games, "--round-robin-games")
        checks.seed("--seed", seed)
        replay.table_epochs(0, every)
        elo.sample_indices(2, sample or None)
        if simulations is not None and not 1 <= simulations <= MAX_SIMULATIONS:
            raise ValueError(f"--simulations must be in 1..{MAX_SIMULATIONS}, got {simulations}")
        checks.at_least("--opening-plies", opening_plies, 0)
        boss_lineage(run_dir)  # a bad folder fails here, before any compiling
        folder = Path(out or run_dir)
        checks.writable_folder(str(folder))
        if save_games:
            checks.writable_file(save_games, "--save-games")
        progress, update = match_progress("lineage table")
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
            progress, update = match_progress("round-robin")
            with progress:
                result = elo.round_robin(
                    run_dir, rr_games, sample or None, seed, simulations, opening_plies, update
                )
            print()
            print(elo.format_elo(result))
            files = replay_figures.write_round_robin(result, folder)
            print("round-robin: " + ", ".join(str(f) for f in files.values()))


def _save_lineage_games(run_dir: str, path: str, games: list) -> str:
    """Write a lineage replay's games (JSON, or PDN for a .pdn ``path``)."""
    from neurocheckers.analysis.pdn_games import save_game_file
    from neurocheckers.experiment.folder import read_run_config

    return str(save_game_file(path, read_run_config(run_dir)[0].rules, games, event="lineage Table 1"))


@app.command(
    epilog=example(
        "neurocheckers compare runs/grid/base_seed0_* runs/grid/layers7_seed0_* --out runs/compare.csv"
    )
)
def compare(
    base_run: Annotated[str, typer.Argument(metavar="BASE_RUN", help="The base run folder.")],
    runs: Annotated[
        list[str], typer.Argument(metavar="RUN_DIR", help="Run folders to compare with the base run.")
    ],
    games: PairedGames = 20,
    seed: Seed = 0,
    opening_plies: OpeningPlies = 2,
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
    from neurocheckers.experiment.folder import RunError

    with checks.user_errors(RunError, ValueError):
        check_games(games)
        checks.seed("--seed", seed)
        checks.at_least("--opening-plies", opening_plies, 0)
        for run_dir in (base_run, *runs):
            boss_lineage(run_dir)  # a bad folder fails here, before any compiling
        checks.writable_file(out or str(Path(base_run) / "compare.csv"), "--out", (".csv",))
        progress, update = match_progress("compare")
        with progress:
            rows = replay.compare_runs(base_run, runs, games, seed, opening_plies, update)
    print(replay.format_compare(rows))
    path = replay.write_rows(rows, Path(out) if out else Path(base_run) / "compare.csv")
    markdown = path.with_suffix(".md")
    markdown.write_text(replay.format_compare_markdown(rows))
    print(f"table: {path}, {markdown}")


def gauntlet_option(name: str, *flags: str, metavar: str | None = None) -> typer.models.OptionInfo:
    """A ``gauntlet`` option declared by ``GauntletConfig``'s field ``name`` (its help and default)."""
    return field_option(GauntletConfig, name, *flags, metavar=metavar)


@app.command(
    epilog=example(
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
            f" compiled:0.1s (american8); the specs: {spec_forms()}.",
        ),
    ],
    rules: Preset = "simple6",
    openings: Annotated[int, gauntlet_option("openings", metavar="N")] = GauntletConfig.openings,
    depth: Annotated[int, gauntlet_option("depth", metavar="D")] = GauntletConfig.depth,
    equal_depths: Annotated[str, gauntlet_option("equal_depths", metavar="D,D,...")] = comma_text(
        GauntletConfig.equal_depths
    ),
    seed: Annotated[int, gauntlet_option("seed", metavar="SEED")] = GauntletConfig.seed,
    batch: Annotated[int, gauntlet_option("batch", metavar="N")] = GauntletConfig.batch,
    out: Annotated[
        str, typer.Option(metavar="PATH", help="Folder for gauntlet.json, gauntlet.csv and gauntlet.png.")
    ] = "runs/gauntlet",
    ladder: Annotated[str, gauntlet_option("ladder", metavar="NAME")] = GauntletConfig.ladder,
    heuristic_depths: Annotated[str, gauntlet_option("heuristic_depths", metavar="D,D,...")] = comma_text(
        GauntletConfig.heuristic_depths
    ),
    equal_time: Annotated[bool, gauntlet_option("equal_time", "--equal-time")] = GauntletConfig.equal_time,
    engine_openings: Annotated[
        int, gauntlet_option("engine_openings", metavar="N")
    ] = GauntletConfig.engine_openings,
    only: Annotated[str, gauntlet_option("only", metavar="SPEC,...")] = comma_text(GauntletConfig.only),
    kinds: Annotated[str, gauntlet_option("kinds", metavar="KINDS")] = comma_text(GauntletConfig.kinds),
    first_opening: Annotated[
        int, gauntlet_option("first_opening", metavar="K")
    ] = GauntletConfig.first_opening,
    endgame: Annotated[str | None, gauntlet_option("endgame", metavar="DIR")] = GauntletConfig.endgame,
    perfect_play: Annotated[
        str | None, gauntlet_option("perfect_play", metavar="DIR")
    ] = GauntletConfig.perfect_play,
) -> None:
    """Rate a player on a fixed ladder (scores, 95% intervals, Elo).

    Every match is played over the same committed openings, each with both colours; rows against
    engines and timed players give both sides' seconds per move."""
    from neurocheckers.analysis.gauntlet import gauntlet_plan

    preset = checks.rules_preset(rules)
    depths = {"equal_depths": equal_depths, "heuristic_depths": heuristic_depths}
    depths = {name: _depth_list(text, name) for name, text in depths.items()}
    config = options_from(
        GauntletConfig, openings=openings, depth=depth, seed=seed, batch=batch, ladder=ladder,
        equal_time=equal_time, engine_openings=engine_openings, only=_names(only), kinds=_names(kinds),
        first_opening=first_opening, endgame=endgame, perfect_play=perfect_play, **depths,
    )  # fmt: skip
    with checks.user_errors(ValueError):
        gauntlet_plan(preset, player, config)  # a bad player or selection leaves no --out folder behind
    checks.writable_folder(out)
    _play_gauntlet(preset, player, config, out)


def _play_gauntlet(preset, player: str, config, out: str) -> None:
    """Play a gauntlet with a progress bar, print its table and write its files into ``out``."""
    from neurocheckers.analysis.gauntlet import format_gauntlet, run_gauntlet, write_gauntlet

    with checks.user_errors(ValueError):
        progress, update = match_progress("gauntlet")
        with progress:
            result = run_gauntlet(preset, player, config, on_row=lambda done, total, row: update(done, total))
    print(format_gauntlet(result))
    files = write_gauntlet(result, out)
    print("wrote " + ", ".join(str(p) for p in files.values()))


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def _depth_list(text: str, name: str) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in text.split(",") if d.strip())
    except ValueError:
        option = "--" + name.replace("_", "-")
        raise UserError(f"{option} must be comma-separated integers, got {text!r}") from None


@app.command(
    epilog=example(
        "neurocheckers accuracy runs/quick_american6_seed0_20260101-120000 --db runs/endgame/american6_7"
        " --every 10 --openings 10 --out runs/accuracy.png"
    )
)
def accuracy(
    run_dir: RunDir,
    db: Annotated[
        str,
        typer.Option(
            metavar="DIR", help="The american6 endgame database for perfect play (endgame build --out)."
        ),
    ] = "runs/endgame/american6_7",
    opponent: Annotated[
        str, typer.Option(metavar="SPEC", help="The fixed opponent each boss plays (a player spec).")
    ] = "alphabeta:1",
    openings: Annotated[
        int, typer.Option(metavar="N", help="Committed openings, each played with both colours.")
    ] = 10,
    every: Annotated[
        int, typer.Option(metavar="E", help="Grade the boss every this many epochs (and the last).")
    ] = 10,
    simulations: Annotated[
        int | None, typer.Option(metavar="SIMS", help="MCTS simulations per move (default: the run's).")
    ] = None,
    out: Annotated[
        str | None,
        typer.Option(metavar="PATH", help="The PNG (default: RUN_DIR/accuracy.png; a CSV beside it)."),
    ] = None,
) -> None:
    """Plot a 6x6 run's accuracy under perfect play by epoch.

    The boss after every E-th epoch plays the opponent from the same openings with both colours; each
    of its moves is graded by the solution: did it keep the position's value?"""
    from pathlib import Path

    from neurocheckers.analysis.perfect_epochs import epoch_accuracy, plot_epoch_accuracy, write_accuracy_csv
    from neurocheckers.analysis.replay import table_epochs
    from neurocheckers.experiment.folder import RunError

    with checks.user_errors(RunError, ValueError):
        table_epochs(0, every)
        checks.at_least("--openings", openings, 1)
        png = Path(out) if out else Path(run_dir) / "accuracy.png"
        progress, update = match_progress("accuracy")
        with progress:
            rows = epoch_accuracy(run_dir, db, opponent, openings, every, simulations, update)
    for r in rows:
        print(f"epoch {r.epoch:>5} boss #{r.boss_id:<4} {r.accuracy.text()}  score {r.score:.3f}")
    csv = write_accuracy_csv(rows, png.with_suffix(".csv"))
    print(f"wrote {plot_epoch_accuracy(run_dir, rows, png, opponent)}, {csv}")
