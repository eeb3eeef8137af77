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


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turning usage and input errors into one-line messages."""
    from neurocheckers._setup import configure_jax

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
