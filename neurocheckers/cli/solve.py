"""``solve prove``, ``solve check`` and ``solve exact``: the value of a small game, its proof, the
proof's independent check, and a second method."""

from __future__ import annotations

from typing import Annotated

import typer

from neurocheckers.cli import checks
from neurocheckers.cli.common import Preset, UserError, app, example

solve_app = typer.Typer(help="Solve a small game: prove its value, check the proof.", no_args_is_help=True)
app.add_typer(solve_app, name="solve")

Database = Annotated[
    str,
    typer.Option(
        "--db", metavar="DIR", help="The endgame database at the proof's leaves (endgame build --out)."
    ),
]
SOLVABLE = ("american6",)


def _database(folder: str, rules):
    from neurocheckers.endgame.database import EndgameDB, EndgameError

    with checks.user_errors(EndgameError):
        return EndgameDB(folder, rules)


def _preset(rules: str):
    preset = checks.rules_preset(rules)
    if preset.name not in SOLVABLE:
        raise UserError(f"--rules {rules!r}: proofs are made for {', '.join(SOLVABLE)}")
    return preset


def _peak_memory_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@solve_app.command(
    epilog=example(
        "neurocheckers solve prove --rules american6 --db runs/endgame/american6_7"
        " --out results/american6/solution.npz"
    )
)
def prove(
    rules: Preset = "american6",
    db: Database = "runs/endgame/american6_7",
    out: Annotated[
        str, typer.Option(metavar="FILE", help="The solution file written (.npz).")
    ] = "solution.npz",
    table_bits: Annotated[
        int, typer.Option(metavar="B", help="The search's table holds 2^B positions (24 bytes each), 16..30.")
    ] = 24,
    keep_line_results: Annotated[
        bool,
        typer.Option(
            "--keep-line-results",
            help="Keep values that rest on a repetition in the table as if they held on every line: far"
            " faster with a database of 6 pieces or fewer; the proof written out is walked again in full.",
        ),
    ] = False,
) -> None:
    """Prove the game's value and write its proof.

    The value of the start and of every first move, by proof-number search down to the database;
    the file holds the strategy tables that prove them."""
    import time

    from neurocheckers.compiled.endgame import load as load_search_db
    from neurocheckers.endgame.database import EndgameError
    from neurocheckers.solve import ProverSettings, save_solution, solve_start

    preset = _preset(rules)
    if not 16 <= table_bits <= 30:
        raise UserError(f"--table-bits must be in 16..30, got {table_bits}")
    checks.writable_file(out, "--out", (".npz",))
    began = time.perf_counter()
    with checks.user_errors(EndgameError):
        search_db = load_search_db(db, preset)
    loaded = time.perf_counter() - began
    solution = solve_start(
        preset, search_db, ProverSettings(table_bits=table_bits, keep_line_results=keep_line_results)
    )
    solution.info.update(database_seconds=round(loaded, 1), seconds=round(time.perf_counter() - began, 1),
                         peak_memory_mb=round(_peak_memory_mb()))  # fmt: skip
    save_solution(solution, out)
    info = solution.info
    rate = info["nodes"] / max(info["search_seconds"], 1e-9)
    print(f"{solution.claims[0].label}: {solution.claims[0].value_name} for the side to move")
    print(f"{info['nodes']:,} nodes in {info['search_seconds']:.2f} s ({rate:,.0f} nodes/s); "
          f"{solution.records():,} proof positions written to {out}")  # fmt: skip


@solve_app.command(
    epilog=example("neurocheckers solve check results/american6/solution.npz --db runs/endgame/american6_7")
)
def check(
    solution_file: Annotated[
        str, typer.Argument(metavar="FILE", help="A solution file (solve prove --out).")
    ],
    db: Database = "runs/endgame/american6_7",
) -> None:
    """Check a proof independently of the search.

    With the JAX rules and the database's files alone: every recorded move is legal, every reply is
    met, every leaf holds its value, no win goes round in a cycle, and every claimed value follows;
    exits 1 at the first fault."""
    from neurocheckers.rules.presets import get_rules
    from neurocheckers.solve import ProofError, check_solution, load_solution

    with checks.user_errors(ValueError):
        solution = load_solution(solution_file)
        preset = get_rules(solution.rules)
    database = _database(db, preset)
    try:
        report = check_solution(solution, database)
    except ProofError as e:
        print(f"REJECTED: {e}")
        raise typer.Exit(1) from None
    for line in report.claims:
        print(line)
    for name, count in report.records.items():
        print(
            f"{name}: {count:,} positions, {report.replies[name]:,} replies, {report.leaves[name]:,} leaves"
        )
    print(f"verified in {report.seconds:.1f} s")


@solve_app.command(
    epilog=example("neurocheckers solve exact --rules american6 --db runs/endgame/american6_7")
)
def exact(
    rules: Preset = "american6",
    db: Database = "runs/endgame/american6_7",
    against: Annotated[
        str | None,
        typer.Option(metavar="FILE", help="A solution file whose claims must agree (exit 1 if not)."),
    ] = None,
) -> None:
    """The game's value by a second method.

    The value of the start and of every first move by alpha-beta over loss, draw and win with null
    windows, deepened until exact (no proof numbers, no proof)."""
    import time

    from neurocheckers.compiled import exact as exact_search
    from neurocheckers.compiled.board import Position, game_rule, geometry
    from neurocheckers.compiled.endgame import load as load_search_db
    from neurocheckers.endgame.database import VALUE_NAMES, EndgameError
    from neurocheckers.solve import first_moves, load_solution

    preset = _preset(rules)
    with checks.user_errors(EndgameError):
        search_db = load_search_db(db, preset)
    claimed = {}
    if against is not None:
        with checks.user_errors(ValueError):
            claimed = {c.label: c.value_name for c in load_solution(against).claims}
    geo = geometry(game_rule(preset))
    table, moves = exact_search.new_table(24), exact_search.move_buffer()
    disagree = 0
    for label, position in [("start", Position.start(preset))] + [
        (f"start {m}", p) for m, p in first_moves(preset)
    ]:
        aux, began = exact_search.new_aux(), time.perf_counter()
        value = exact_search.exact_value(
            geo, search_db.array, table, moves, aux, (*position.relative(), position.color)
        )
        name = VALUE_NAMES[value + 1]
        note = (
            ""
            if label not in claimed
            else " (agrees)"
            if claimed[label] == name
            else f" (DISAGREES: {claimed[label]})"
        )
        disagree += note.startswith(" (DIS")
        print(f"{label}: {name} for the side to move, {int(aux[exact_search.Y_NODES]):,} nodes, "
              f"{time.perf_counter() - began:.2f} s{note}")  # fmt: skip
    if disagree:
        raise typer.Exit(1)
