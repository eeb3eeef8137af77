"""``perft`` and ``match``: rules counts and matches between any two players."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from neurocheckers.cli import checks
from neurocheckers.cli.common import (
    FirstOpening,
    Openings,
    Preset,
    SaveGames,
    UserError,
    app,
    example,
    field_option,
    options_from,
)
from neurocheckers.match.options import MatchOptions
from neurocheckers.players.registry import spec_help

SprtOption = Annotated[
    str | None,
    typer.Option(
        metavar="ELO0,ELO1",
        help="Stop once decided: fishtest's SPRT over game pairs (alpha = beta = 0.05, LLR bounds"
        " +-2.94) of A being ELO1 logistic Elo stronger than B against ELO0, asked after each --batch"
        " of games, up to --games.",
    ),
]
"""``match --sprt``: a sequential match (``match.sequential``)."""


def match_option(name: str, *flags: str, metavar: str | None = None) -> typer.models.OptionInfo:
    """A ``match`` option declared by ``MatchOptions``' field ``name`` (its help and default)."""
    return field_option(MatchOptions, name, *flags, metavar=metavar)


@app.command(epilog=example("neurocheckers perft --rules american8 --depth 6"))
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
    preset = checks.rules_preset(rules)
    checks.at_least("--depth", depth, 1)
    from neurocheckers.rules import init
    from neurocheckers.rules.notation import parse_fen
    from neurocheckers.rules.perft import perft_iter

    with checks.user_errors(ValueError):
        state = parse_fen(preset, fen) if fen is not None else init(preset)
    for d, count in perft_iter(preset, state, depth):
        print(f"depth {d}: {count}", flush=True)


@app.command(
    epilog=example(
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
            help=f"Player A, one of: {spec_help()}.",
        ),
    ],
    player_b: Annotated[str, typer.Argument(metavar="B", help="Player B, same forms as A.")],
    rules: Preset = "simple6",
    games: Annotated[int, match_option("games", metavar="N")] = MatchOptions.games,
    seed: Annotated[int, match_option("seed", metavar="SEED")] = MatchOptions.seed,
    batch: Annotated[int, match_option("batch", metavar="N")] = MatchOptions.batch,
    max_plies: Annotated[int | None, match_option("max_plies", metavar="N")] = MatchOptions.max_plies,
    opening_plies: Annotated[int, match_option("opening_plies", metavar="N")] = MatchOptions.opening_plies,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    plot: Annotated[
        str | None,
        typer.Option(
            metavar="PATH",
            help="Save the final-material histogram to this PNG file (in a folder: PATH/material.png).",
        ),
    ] = None,
    save_games: SaveGames = None,
    save_count: Annotated[
        int, typer.Option(metavar="N", help="Games --save-games keeps: the first ones (colours alternate).")
    ] = 16,
    openings: Openings = None,
    first_opening: FirstOpening = 0,
    sprt: SprtOption = None,
    endgame_db: Annotated[
        str | None,
        typer.Option(
            metavar="DIR",
            help="An endgame database of these rules (endgame build): report its value of each game's"
            ' last position it holds ("drawn by rule; the database says a win for A").',
        ),
    ] = None,
) -> None:
    """Play a match of A against B and print the score.

    Prints A's wins, draws, losses, unfinished games and score with a 95% confidence interval."""
    preset = checks.rules_preset(rules)
    numbers = dict(games=games, seed=seed, batch=batch, max_plies=max_plies, opening_plies=opening_plies)
    options_from(MatchOptions, **numbers)  # each option checked where it is declared, before any work
    checks.at_least("--save-count", save_count, 1)
    test = _sprt_test(sprt) if sprt is not None else None
    from neurocheckers.match.host import check_pairing, match_rules, parse_any_player

    with checks.user_errors(ValueError):
        a = parse_any_player(player_a, preset)
        b = parse_any_player(player_b, preset)
        check_pairing(a, b)
        preset = match_rules(preset, a, b)  # OpenSpiel's bots play under OpenSpiel's draw rule
        starts = _opening_starts(preset, openings, first_opening)
    db = _endgame_db(endgame_db, preset) if endgame_db is not None else None
    keep, clock = (save_count if save_games is not None else 0), _match_clock(a, b)
    plot_path = _plot_path(plot) if plot else None
    if plot_path is not None:
        checks.writable_file(str(plot_path), "--plot")
    if save_games is not None:
        checks.writable_file(save_games, "--save-games")
    options = MatchOptions(**numbers, keep_actions=keep, openings=starts)
    report = (preset, a, b, db, None if openings is None else (first_opening, openings))
    try:
        if test is None:
            records, decided = _play_match(preset, a, b, options, as_json, clock), None
        else:
            records, decided = _play_sequential(preset, a, b, options, test, as_json, clock)
    except KeyboardInterrupt as stop:
        _report_interrupted(report, stop, options, as_json, plot_path, save_games, clock)
        raise typer.Exit(130) from None
    _report_match(*report, records, seed, as_json, plot_path, save_games, starts, clock, decided)


def _sprt_test(text: str):
    """The ``stats.SPRT`` of ``--sprt ELO0,ELO1``; ``UserError`` naming a bad value."""
    from neurocheckers.stats import SPRT

    try:
        elo0, elo1 = (float(x) for x in text.split(","))
        return SPRT(elo0, elo1)
    except ValueError as e:
        detail = str(e) if "SPRT" in str(e) else "two numbers, like 0,10"
        raise UserError(f"--sprt must be ELO0,ELO1 with ELO0 < ELO1, got {text!r} ({detail})") from None


def _play_sequential(rules, a, b, options, test, quiet: bool, clock=None):
    """``match.sequential.play_until_decided`` with a line a round (none when ``quiet``); returns the
    records and the test's result for the summary (``sprt_summary``)."""
    from neurocheckers.match.sequential import play_until_decided

    def told(games: int, counts, llr: float) -> None:
        if not quiet:
            print(f"neurocheckers: {games} games, pairs {' '.join(map(str, counts))}, LLR {llr:+.2f}",
                  file=sys.stderr, flush=True)  # fmt: skip

    with checks.user_errors(ValueError):
        result = play_until_decided(rules, a, b, options, test, on_round=told, clock=clock)
    return result.records, sprt_summary(test, result)


def sprt_summary(test, result) -> dict:
    """The summary's ``sprt`` entry: the hypotheses, the bounds, the LLR, the pair counts, the verdict."""
    lower, upper = test.bounds
    return {"elo0": test.elo0, "elo1": test.elo1, "alpha": test.alpha, "beta": test.beta,
            "llr": result.llr, "lower_bound": lower, "upper_bound": upper,
            "pentanomial": [int(c) for c in result.counts], "verdict": result.verdict,
            "rounds": result.rounds}  # fmt: skip


def sprt_text(sprt: dict) -> str:
    """One line, e.g. ``SPRT [0, 10] Elo: LLR +2.97 (bounds -2.94, +2.94), H1 accepted: A is 10 Elo
    stronger (pairs LL..WW 3 40 150 45 2)``."""
    verdicts = {
        "H1": f"H1 accepted: A is {sprt['elo1']:g} Elo stronger",
        "H0": f"H0 accepted: A is not {sprt['elo1']:g} Elo stronger",
        None: "undecided: the games ran out",
    }
    return (f"SPRT [{sprt['elo0']:g}, {sprt['elo1']:g}] Elo: LLR {sprt['llr']:+.2f} (bounds "
            f"{sprt['lower_bound']:+.2f}, {sprt['upper_bound']:+.2f}), {verdicts[sprt['verdict']]} "
            f"(pairs LL..WW {' '.join(map(str, sprt['pentanomial']))})")  # fmt: skip


def _opening_starts(rules, openings: int | None, first_opening: int):
    """The states of committed openings ``first_opening`` .. ``+ openings - 1`` (None without
    ``--openings``); ``ValueError`` naming a bad value."""
    from neurocheckers.rules.openings import load_openings, opening_states

    if openings is None:
        if first_opening:
            raise ValueError(f"--first-opening {first_opening} needs --openings")
        return None
    return opening_states(rules, load_openings(rules, openings, first_opening))


def _report_interrupted(report, stop, options, as_json: bool, plot, save_games: str | None, clock):
    """Ctrl-C during a match: the summary of the batches already played, their games saved, and a
    line saying how many (``stop``: ``arena.MatchInterrupted`` with them, else none had ended)."""
    from neurocheckers.cli.main import saving_after_an_interrupt
    from neurocheckers.match.arena import MatchInterrupted

    if not isinstance(stop, MatchInterrupted):
        batch = min(options.batch, options.games)
        print(f"neurocheckers: interrupted before the first batch of {batch} games ended", file=sys.stderr)
        return
    records = stop.records
    with saving_after_an_interrupt():
        _report_match(*report, records, options.seed, as_json, plot, save_games, options.openings, clock)
    saved = f"; {len(records.actions)} of them saved in {save_games}" if save_games is not None else ""
    print(
        f"neurocheckers: interrupted: {len(records.score)} of {options.games} games played{saved}",
        file=sys.stderr,
    )


def _match_clock(a, b):
    """A ``MoveClock`` when a host player (an engine, the timed search) plays, else None."""
    from neurocheckers.match.clock import MoveClock

    return None if a.batched and b.batched else MoveClock()


def _play_match(rules, a, b, options, quiet: bool, clock=None):
    """``match.host.play_any_match`` (``arena.run_match`` for our players) under a transient progress
    bar (none when ``quiet``)."""
    from rich.progress import Progress

    from neurocheckers.match.host import play_any_match
    from neurocheckers.players.registry import PlayerFailed
    from neurocheckers.sharding import MemoryLimitError

    with Progress(transient=True, disable=quiet) as progress:
        task = progress.add_task(f"{a.name} vs {b.name}", total=options.games)
        lines = not (quiet or progress.console.is_terminal)  # a log: a line at each tenth of the games
        printed = [-1]  # the last tenth a line was printed for

        def update(done: int, games: int) -> None:
            progress.update(task, completed=done)
            if lines and done and 10 * done // games > printed[0]:
                printed[0] = 10 * done // games
                print(f"neurocheckers: played {done} of {games} games", file=sys.stderr, flush=True)

        try:
            return play_any_match(rules, a, b, options, on_progress=update, clock=clock)
        except MemoryLimitError as e:
            hint = f"lower --batch (now {min(options.batch, options.games)}) or the players' search sizes"
            raise UserError(f"{e}; {hint}") from None
        except PlayerFailed as e:  # an external engine crashed, hung or broke the protocol
            raise UserError(str(e)) from None


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


def _endgame_db(folder: str, rules):
    """The endgame database in ``folder`` for ``rules``; a one-line error for none or other rules."""
    from neurocheckers.endgame.database import EndgameDB, EndgameError

    try:
        return EndgameDB(folder, rules)
    except EndgameError as e:
        raise UserError(f"--endgame-db {folder!r}: {e}") from None


def _report_match(rules, a, b, db, opening_range, records, seed: int, as_json: bool, plot,
                  save_games: str | None, openings=None, clock=None, sprt=None):  # fmt: skip
    """Print the summary of a played match (a table or JSON) with both sides' seconds per move when
    it was timed, the endgame database's verdicts when ``db`` is given, the sequential test's result
    (``sprt``) when it played one, and write its games file and plot."""
    import json

    from neurocheckers.analysis.match_report import endgame_verdicts, format_table, format_verdicts, summarize

    r = records
    summary = summarize(r.score, r.length, r.material_diff, r.finished, r.repetition)
    summary.update(player_a=a.name, player_b=b.name, rules=rules.name, seed=seed)
    if opening_range is not None:  # which committed openings, so that parts of a match can be pooled
        summary.update(first_opening=opening_range[0], openings=opening_range[1])
    if sprt is not None:
        summary["sprt"] = sprt
    if db is not None:
        args = (records.final_boards, records.score, records.finished, records.a_is_black)
        summary["endgame"] = endgame_verdicts(db, *args)
    if clock is not None:
        summary.update(seconds_per_move_a=clock.per_move(True), seconds_per_move_b=clock.per_move(False))
        summary.update(
            depth_per_move_a=clock.depth_per_move(True), depth_per_move_b=clock.depth_per_move(False)
        )
    if save_games is not None:
        summary["games_file"] = _save_match_games(rules, a, b, records, save_games, openings)
    if as_json:
        print(json.dumps(summary, indent=2))
    else:
        print(format_table(a.name, b.name, rules.name, summary))
        if sprt is not None:
            print(sprt_text(sprt))
        if db is not None:
            print(format_verdicts(summary["endgame"]))
        if clock is not None:
            print(clock_text(clock))
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


def _depth(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def clock_text(clock) -> str:
    """Both sides' mean seconds and search depth a move, e.g. ``seconds per move: A 0.0950, B 0.1000;
    depth per move: A 14.2, B -`` (``-``: not timed, or no search reported a depth)."""
    seconds = f"seconds per move: A {_seconds(clock.per_move(True))}, B {_seconds(clock.per_move(False))}"
    depth = f"depth per move: A {_depth(clock.depth_per_move(True))}, B {_depth(clock.depth_per_move(False))}"
    return f"{seconds}; {depth}"


def _save_match_games(rules, a, b, records, path: str, openings=None) -> str:
    """Write the games whose actions ``records`` kept (the first ones) in notation, from their paired
    ``openings`` when given (PDN for a ``.pdn`` path, else JSON); returns the path."""
    import numpy as np

    from neurocheckers.analysis.games import games_from_actions
    from neurocheckers.analysis.pdn_games import save_game_file
    from neurocheckers.match.arena import paired_opening_starts

    kept = len(records.actions)
    a_black = records.a_is_black[:kept]
    names_black = [a.name if x else b.name for x in a_black]
    names_white = [b.name if x else a.name for x in a_black]
    starts = None if openings is None else paired_opening_starts(openings, np.arange(kept))
    try:
        ended = [
            int(r) if f else None for r, f in zip(records.result[:kept], records.finished[:kept], strict=True)
        ]
        played = games_from_actions(rules, records.actions, names_black, names_white, starts, ended)
        return str(save_game_file(path, rules, played, event=f"neurocheckers match {a.name} vs {b.name}"))
    except OSError as e:
        raise UserError(f"cannot write --save-games {path!r}: {e.strerror or e}") from None
