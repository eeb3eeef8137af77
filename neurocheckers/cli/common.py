"""What every command shares: the app, the one-line ``UserError``, shared options and helpers
(the checks of the user's input are in ``checks``)."""

from __future__ import annotations

import dataclasses
import functools
from typing import Annotated, Any

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


Preset = Annotated[
    str,
    typer.Option(
        metavar="PRESET",
        help="Rules preset: simple6, american6, american8, or american8-openspiel (american8 under"
        " OpenSpiel's end rule: a draw after 40 plies without a capture).",
    ),
]
"""A ``--rules`` option."""


class UserError(Exception):
    """A problem with the user's input: reported as one line, without a traceback."""


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

Seed = Annotated[int, typer.Option(metavar="SEED", help="Random seed, 0..2^32-1.")]
"""A ``--seed`` option."""

PairedGames = Annotated[int, typer.Option(metavar="N", help="Games per match (even; colours balanced).")]
"""A ``--games`` option of the commands that replay a lineage."""

Batch = Annotated[int, typer.Option(metavar="N", help="Games played at once.")]
"""A ``--batch`` option (the default is the command's)."""

SaveGames = Annotated[
    str | None,
    typer.Option(
        metavar="PATH",
        help="Save games in notation, for show and serve: standard PDN when PATH ends in .pdn, else JSON"
        " (match: the first --save-count games; lineage: Table 1's).",
    ),
]
"""A ``--save-games`` option (checked with ``writable_file`` before any game is played)."""

Openings = Annotated[
    int | None,
    typer.Option(
        metavar="N",
        help="Start from the first N committed openings (gauntlet: in every match, from --first-opening):"
        " games 2i and 2i+1 from opening i (mod N), with the colours swapped.",
    ),
]
"""An ``--openings`` option: committed openings, each played with both colours."""

FirstOpening = Annotated[
    int, typer.Option(metavar="K", help="Start at opening K (0-based): part of a row, pooled on merging.")
]
"""A ``--first-opening`` option: play committed openings K .. K + --openings - 1."""

EpochsOverride = Annotated[
    int | None,
    typer.Option(
        "--epochs",
        metavar="N",
        help="Override every run's number of epochs (sweep: remembered when the sweep resumes).",
    ),
]
"""An ``--epochs`` option of the commands that start runs."""

ConfigOverrides = Annotated[
    list[str] | None,
    typer.Option("--set", metavar="KEY=VALUE", help="Override a key of every run's config (repeatable)."),
]
"""A ``--set`` option of the commands that start runs."""

RunDir = Annotated[str, typer.Argument(metavar="RUN_DIR", help="A run folder.")]
"""A ``RUN_DIR`` argument: one run folder."""


INTERRUPT_HINTS: list[str] = []
"""Lines printed after "aborted" when Ctrl-C stops the program (e.g. how to resume a run)."""


@functools.cache
def _field_docs(settings: type) -> dict[str, str]:
    from neurocheckers.sections import field_docs

    return field_docs(settings)


def field_option(settings: type, name: str, *flags: str, metavar: str | None = None, more: str = "") -> Any:
    """A ``typer.Option`` whose help is the docstring of field ``name`` of the dataclass ``settings``
    (``MatchOptions``, ``GauntletConfig``: the one declaration of the option, as a config key's is
    its section's), then ``more``; the parameter's default is the field's (``settings.NAME``)."""
    if name not in {f.name for f in dataclasses.fields(settings)}:
        raise KeyError(f"{settings.__name__} has no field {name!r}")
    doc = _field_docs(settings)[name].replace("``", "")  # the docstring's code marks, not the terminal's
    return typer.Option(*flags, metavar=metavar, help=f"{doc} {more}".strip())


def options_from(settings: type, **values: Any) -> Any:
    """``settings(**values)``: a command's options as the dataclass its fields declare; its own checks'
    ``ValueError`` becomes a one-line ``UserError`` naming the option (``--max-plies must be >= 1``)."""
    try:
        return settings(**values)
    except ValueError as e:
        text = str(e)
        name = text.split(" ", 1)[0]
        if name in values:
            text = "--" + name.replace("_", "-") + text[len(name) :]
        raise UserError(text) from None


def comma_text(values: tuple[Any, ...]) -> str:
    """A tuple field's default as its option's text (``(1, 2, 3)`` -> ``"1,2,3"``)."""
    return ",".join(str(v) for v in values)
