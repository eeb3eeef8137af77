"""What every command shares: the app, the one-line ``UserError``, shared options and helpers."""

from __future__ import annotations

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


def rules_preset(name: str):
    from neurocheckers.rules import get_rules

    try:
        return get_rules(name)
    except ValueError as e:
        raise UserError(str(e)) from None


def example(*lines: str) -> str:
    """A help epilog of example command lines (``\b`` keeps click from joining the lines)."""
    return "\b\nExample:\n" + "\n".join(f"  {line}" for line in lines)


def match_progress(description: str):
    """A transient rich progress bar and its ``(done, total)`` callback."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(
        TextColumn(description), MofNCompleteColumn(), BarColumn(), TimeElapsedColumn(), transient=True
    )
    task = progress.add_task(description, total=None)

    def update(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total)

    return progress, update


OpeningPlies = Annotated[
    int,
    typer.Option(
        metavar="N", help="Random plies at each game's start (match: 0; lineage and compare use 2)."
    ),
]
"""An ``--opening-plies`` option (the default is the command's)."""

Seed = Annotated[int, typer.Option(metavar="SEED", help="Random seed.")]
"""A ``--seed`` option."""

PairedGames = Annotated[int, typer.Option(metavar="N", help="Games per match (even; colours balanced).")]
"""A ``--games`` option of the commands that replay a lineage."""


def at_least(option: str, value: int | float | None, low: int) -> None:
    """``UserError`` naming ``option`` and ``value`` when ``value`` is below ``low`` (None passes)."""
    if value is not None and value < low:
        raise UserError(f"{option} must be >= {low}, got {value}")


def writable_folder(path: str, option: str = "--out") -> None:
    """Create folder ``path`` (and its parents) now, before any work, or raise ``UserError`` naming
    ``option``: a result is never computed only to be lost for want of somewhere to write it."""
    from pathlib import Path

    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{option} {path!r} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create {option} folder {path!r}: {e.strerror or e}") from None
    if not os_writable(folder):
        raise UserError(f"cannot write in {option} folder {path!r}: permission denied")


def writable_file(path: str, option: str, suffixes: tuple[str, ...] = (), make_folder: bool = True) -> None:
    """Check before any work that file ``path`` can be written: it is not a folder, it ends in one of
    ``suffixes`` (when given), and its folder exists (is created, with ``make_folder``) and is
    writable; else ``UserError`` naming ``option``."""
    from pathlib import Path

    file = Path(path)
    if file.is_dir():
        raise UserError(f"{option} {path!r} is a folder; give a file name")
    if suffixes and file.suffix.lower() not in suffixes:
        raise UserError(f"{option} {path!r} must end in {' or '.join(suffixes)}")
    if not make_folder and not file.parent.is_dir():
        raise UserError(f"{option} {path!r}: there is no folder {str(file.parent)!r}")
    writable_folder(str(file.parent), option)


def os_writable(folder) -> bool:
    import os

    return os.access(folder, os.W_OK | os.X_OK)


INTERRUPT_HINTS: list[str] = []
"""Lines printed after "aborted" when Ctrl-C stops the program (e.g. how to resume a run)."""
