"""``endgame build``, ``endgame probe`` and ``endgame check``: perfect-play databases of endgames."""

from __future__ import annotations

from typing import Annotated

import typer

from neurocheckers.cli import checks
from neurocheckers.cli.common import Preset, UserError, app, example

endgame_app = typer.Typer(
    help="Endgame databases: build, probe, check.",
    no_args_is_help=True,
)
app.add_typer(endgame_app, name="endgame")

Database = Annotated[
    str, typer.Option("--db", metavar="DIR", help="A database folder (endgame build --out).")
]


def _open(folder: str):
    from neurocheckers.endgame.database import EndgameDB, EndgameError

    with checks.user_errors(EndgameError):
        return EndgameDB(folder)


def _build_progress():
    """A rich progress bar over the positions of each slice, with positions/s and an ETA."""
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]} positions/s"),
        TimeRemainingColumn(),
    )
    task = progress.add_task("starting", total=None, rate="-")

    def update(name: str, done: int, total: int) -> None:
        progress.update(task, description=name, completed=done, total=total)
        speed = progress.tasks[task].speed
        progress.update(task, rate=f"{speed:,.0f}" if speed else "-")

    return progress, update


@endgame_app.command(
    epilog=example("neurocheckers endgame build --rules american6 --pieces 4 --out runs/endgame/american6")
)
def build(
    rules: Preset = "american6",
    pieces: Annotated[int, typer.Option(metavar="N", help="Every position with at most N pieces.")] = 4,
    out: Annotated[str, typer.Option(metavar="DIR", help="The database folder (built on if it exists).")] = (
        "runs/endgame"
    ),
) -> None:
    """Build an endgame database by retrograde analysis, slice by slice; an interrupted build goes on
    from the slice it stopped in. Values ignore the no-capture draw rule, as published databases do."""
    import time

    from neurocheckers.endgame.database import EndgameError
    from neurocheckers.endgame.solve import build as build_database

    preset = checks.rules_preset(rules)
    if preset.name not in ("american6", "american8"):
        raise UserError(f"--rules {rules!r}: endgame databases are built for american6 and american8")
    checks.at_least("--pieces", pieces, 2)
    if pieces > 8:
        raise UserError(f"--pieces {pieces}: at most 8 (larger databases do not fit one machine)")
    checks.writable_folder(out)
    began = time.perf_counter()
    progress, update = _build_progress()
    with checks.user_errors(EndgameError), progress:
        db = build_database(preset, pieces, out, update)
    slices = db.manifest["slices"].values()
    total = sum(s["positions"] for s in slices)
    print(f"{len(slices)} slices, {total:,} positions in {out} ({time.perf_counter() - began:.1f} s)")


@endgame_app.command(
    epilog=example(
        "neurocheckers endgame probe --db runs/endgame/american6 'B:W18:B14'",
        "neurocheckers endgame probe --db runs/endgame/american6 --file positions.txt",
    )
)
def probe(
    fens: Annotated[list[str] | None, typer.Argument(metavar="FEN...", help="Positions (PDN FEN).")] = None,
    db: Database = "runs/endgame",
    file: Annotated[str | None, typer.Option(metavar="F", help="A file of FENs, one a line.")] = None,
) -> None:
    """Print one line per position, in order: win, draw or loss for the side to move, the distance in
    whole moves under perfect play, and the best moves."""
    from neurocheckers.endgame.database import EndgameError
    from neurocheckers.endgame.probe import probe_fen

    queries = list(fens or [])
    if file is not None:
        try:
            with open(file) as f:
                queries += [line.strip() for line in f if line.strip()]
        except OSError as e:
            raise UserError(f"--file {file!r}: {e.strerror}") from None
    if not queries:
        raise UserError("give at least one FEN, or --file")
    database = _open(db)
    for fen in queries:
        with checks.user_errors(EndgameError):
            print(probe_fen(database, fen).line())


@endgame_app.command(epilog=example("neurocheckers endgame check --db runs/endgame/american6 --sample 10000"))
def check(
    db: Database = "runs/endgame",
    sample: Annotated[int, typer.Option(metavar="N", help="Positions checked per slice (0: all).")] = 0,
    seed: Annotated[int, typer.Option(metavar="SEED", help="Random seed of the sample, 0..2^32-1.")] = 0,
) -> None:
    """Check that every stored value is what the position's moves give from the stored values of the
    positions they reach; exits 1 if any slice disagrees."""
    from neurocheckers.endgame.database import EndgameError
    from neurocheckers.endgame.verify import check_slice

    checks.at_least("--sample", sample, 0)
    checks.seed("--seed", seed)
    database = _open(db)
    failed = 0
    for s in sorted(database.slices):
        with checks.user_errors(EndgameError):  # a damaged or missing slice: one line, exit 2
            checked, wrong = check_slice(database, s, sample or None, seed)
        failed += wrong > 0
        print(f"{s.name}: {checked:,} checked, {wrong:,} wrong")
    if failed:
        raise typer.Exit(1)
