"""``play`` and ``show``: a game against an agent, and games drawn as boards."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from neurocheckers.cli import checks
from neurocheckers.cli.common import UserError, app, example


@app.command(
    epilog=example(
        "neurocheckers play --agent runs/agent.safetensors --seconds 2 --human white",
        "neurocheckers play --opponent pydraughts:6 --rules american8",
    )
)
def play(
    agent: Annotated[
        str | None,
        typer.Option(metavar="PATH", help="The agent file to play against (.safetensors, see export)."),
    ] = None,
    opponent: Annotated[
        str | None,
        typer.Option(
            metavar="SPEC",
            help="Any player to play against instead of an agent file: a player spec as match takes"
            " (compiled:0.5s:FILE, alphabeta:4:heuristic, pydraughts:6, engine:PATH:1; equal: --seconds).",
        ),
    ] = None,
    rules: Annotated[
        str | None, typer.Option(metavar="PRESET", help="Rules preset (default: the agent's own).")
    ] = None,
    seconds: Annotated[
        float, typer.Option(metavar="SECONDS", help="The agent's thinking time per move.")
    ] = 1.0,
    search: Annotated[
        str | None,
        typer.Option(
            metavar="SEARCH",
            help="How the agent thinks: compiled (the compiled search, its network scoring the leaves:"
            " compiled:SECONDSs:FILE; the default on 8x8 for MLP and NNUE agents), alphabeta"
            " (iterative-deepening alpha-beta in JAX: timed:SECONDSs:FILE; the default otherwise) or mcts"
            " (the anytime MCTS).",
        ),
    ] = None,
    human: Annotated[
        str, typer.Option(metavar="COLOUR", help="Your colour: black (moves first) or white.")
    ] = "black",
    seed: Annotated[
        int, typer.Option(metavar="SEED", help="Random seed of the agent's search, 0..2^32-1.")
    ] = 0,
    save: Annotated[
        str | None,
        typer.Option(metavar="PATH", help="Write the game to this file (PDN if it ends in .pdn, else JSON)."),
    ] = None,
    endgame_db: Annotated[
        str | None,
        typer.Option(
            metavar="DIR",
            help="An endgame database of the agent's rules (endgame build) for the compiled search to probe"
            " (--search compiled; the default with it); each move says what the database decided.",
        ),
    ] = None,
) -> None:
    """Play an agent or any player in the terminal.

    Type moves in standard notation: on 6x6 (simple6, american6) as 5-8, 1x8 or 1x8x15 (multi-jumps
    in american6 only), on 8x8 (american8) as 9-14, 9x18 or 1x10x19; or help, moves, board, undo,
    quit. The agent thinks --seconds a move with the compiled search on 8x8, the timed alpha-beta
    search elsewhere, or with MCTS (--search mcts); each of its moves says the depth it reached
    and, with --endgame-db, the database's value when it decided the position."""
    from neurocheckers.match.turns import SEARCHES

    preset = checks.rules_preset(rules) if rules is not None else None
    if (agent is None) == (opponent is None):
        raise UserError("give --agent PATH or --opponent SPEC, one of them")
    if search is not None and search not in SEARCHES:
        raise UserError(f"--search must be one of {', '.join(SEARCHES)}, got {search!r}")
    color = _checked_play_options(agent, human, seconds, seed, save)
    if opponent is not None:
        _play_spec(opponent, preset, seconds, color, seed, save, search or endgame_db)
    else:
        _play_agent(agent, preset, seconds, color, seed, save, search, endgame_db)


def _play_agent(
    agent: str, preset, seconds: float, color: int, seed: int, save: str | None, search, endgame_db
) -> None:
    """``play --agent PATH``: the game against an agent file with its ``search`` (default: the
    compiled search on 8x8, the timed one elsewhere), probing ``endgame_db`` when given."""
    from pathlib import Path

    from neurocheckers.match.turns import compiled_agent_player, default_search
    from neurocheckers.networks.agent_file import load_agent
    from neurocheckers.play import play_game

    with checks.user_errors(ValueError):
        loaded = load_agent(agent, preset)
    with_db = endgame_db is not None
    with checks.user_errors(ValueError):
        search = default_search(loaded.rules, agent, seconds, with_db) if search is None else search
        if search == "compiled":
            compiled_agent_player(agent, loaded.rules, seconds)  # a network it cannot evaluate: one line
    if with_db and search != "compiled":
        raise UserError(f"--endgame-db is read by the compiled search only (--search compiled), not {search}")
    database = _endgame_for_search(endgame_db, loaded.rules) if with_db else None
    game = play_game(loaded, loaded.rules, seconds, color, seed=seed, names=("human", Path(agent).name),
                     search=search, agent_path=agent, endgame=database)  # fmt: skip
    _save_game(save, loaded.rules, game)


def _play_spec(
    spec: str, preset, seconds: float, color: int, seed: int, save: str | None, agent_only
) -> None:
    """``play --opponent SPEC``: the game against any player (the player protocol), under ``preset``
    (default simple6); ``agent_only``: an option that goes with --agent, refused here."""
    from neurocheckers.match.host import parse_any_player
    from neurocheckers.play import play_game
    from neurocheckers.rules import SIMPLE6

    if agent_only is not None:
        raise UserError(
            "--search and --endgame-db go with --agent; with --opponent the spec says how it plays"
        )
    rules = preset or SIMPLE6
    with checks.user_errors(ValueError):
        player = parse_any_player(spec, rules)
    if player.mirrors_openspiel:
        raise UserError(f"{spec!r}: OpenSpiel's bots cannot play in the terminal (use match)")
    game = play_game(None, rules, seconds, color, seed=seed, names=("human", spec), player=player)
    _save_game(save, rules, game)


def _save_game(save: str | None, rules, game: dict) -> None:
    """Write the game to ``save`` (PDN or JSON by its suffix) when asked."""
    if save is None:
        return
    from neurocheckers.analysis.pdn_games import save_game_file

    try:
        print(f"game saved to {save_game_file(save, rules, [game])}")
    except OSError as e:
        raise UserError(f"cannot write --save {save!r}: {e.strerror or e}") from None


def _checked_play_options(agent: str | None, human: str, seconds: float, seed: int, save: str | None) -> int:
    """``play``'s options checked before anything is loaded (``UserError`` naming a bad one); the
    human's colour."""
    from pathlib import Path

    from neurocheckers.match.turns import parse_color
    from neurocheckers.players.timed import MAX_SECONDS

    try:
        color = parse_color(human)
    except ValueError:
        raise UserError(f"--human must be black or white, got {human!r}") from None
    checks.positive("--seconds", seconds)
    checks.seed("--seed", seed)
    if seconds > MAX_SECONDS:  # the web app's cap too
        raise UserError(f"--seconds must be at most {MAX_SECONDS:g}, got {seconds}")
    if agent is not None and not Path(agent).is_file():
        raise UserError(f"no agent file {agent!r}")
    if save is not None:  # checked before the game: a game is never played only to be lost
        checks.writable_file(save, "--save")
    return color


def _endgame_for_search(folder: str, rules):
    """The compiled search's copy of the endgame database in ``folder`` for ``rules``; a one-line
    error naming the folder for none, an empty one or one of other rules."""
    from neurocheckers.endgame.database import EndgameError
    from neurocheckers.match.turns import load_endgame

    try:
        return load_endgame(folder, rules)
    except EndgameError as e:
        raise UserError(f"--endgame-db {folder!r}: {e}") from None


@app.command(
    epilog=example(
        "neurocheckers show runs/games.json --game 2           # writes runs/games-game2.gif",
        "neurocheckers show runs/games.json --svg-dir runs/game1",
        "neurocheckers show runs/games.pdn --analyse --endgame-db runs/endgame/american6 --plot a.png",
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
    analyse: Annotated[
        bool,
        typer.Option(
            "--analyse",
            help="Print the game's analysis instead of drawing it: per move the compiled search's"
            " evaluation, best move and line, the exact verdict where --endgame-db holds the position"
            " (perfect play over it on american6), and ?? on a move that throws away the value.",
        ),
    ] = False,
    nodes: Annotated[
        int, typer.Option(metavar="N", help="--analyse: the search's node budget a position.")
    ] = 20_000,
    agent: Annotated[
        str | None,
        typer.Option(
            metavar="FILE", help="--analyse: an agent file (MLP or NNUE) to score the search's leaves."
        ),
    ] = None,
    endgame_db: Annotated[
        str | None,
        typer.Option(
            metavar="DIR", help="--analyse: an endgame database of the game's rules (endgame build --out)."
        ),
    ] = None,
    plot: Annotated[
        str | None,
        typer.Option(metavar="PNG", help="--analyse: also save the evaluation graph as this PNG."),
    ] = None,
) -> None:
    """Draw a saved game (GIF or SVG boards), or analyse it.

    Draws the game move by move: a GIF by default, or one SVG board per position with --svg-dir;
    --analyse prints each position's evaluation, verdict and engine line instead (and --plot saves
    the evaluation graph)."""
    from pathlib import Path

    from neurocheckers.analysis.pdn_games import load_game_file

    checks.positive("--fps", fps)
    if out is not None:
        checks.writable_file(out, "--out", (".gif",))
    if svg_dir is not None:
        checks.writable_folder(svg_dir, "--svg-dir")
    _check_analysis_options(analyse, agent, endgame_db, plot)
    with checks.user_errors(ValueError):
        loaded = load_game_file(games_file)
    for reason in loaded.skipped:
        print(f"neurocheckers: warning: skipped {reason}", file=sys.stderr)
    chosen = loaded.game(game)
    if chosen is None:
        raise UserError(f"--game must be in {loaded.number_spans()} for {games_file!r}, got {game}")
    moves = len(chosen["moves"])
    print(f"{chosen['black']} (Black) vs {chosen['white']} (White): {moves} moves, {chosen['result']}")
    if analyse:
        _print_analysis(loaded.rules, chosen, nodes, agent, endgame_db, plot)
        return
    target = out or str(Path(games_file).with_suffix("")) + f"-game{game}.gif"
    _draw_game(loaded.rules, chosen, svg_dir, target if out is not None or svg_dir is None else None, fps)


def _draw_game(rules, game, svg_dir: str | None, gif: str | None, fps: float) -> None:
    """``show``'s drawings of ``game``: SVG boards into ``svg_dir``, an animation into ``gif``."""
    from neurocheckers.analysis.board_plot import save_gif, save_svgs

    try:
        if svg_dir is not None:
            files = save_svgs(rules, game, svg_dir)
            print(f"{len(files)} SVG boards in {svg_dir}")
        if gif is not None:
            print(f"animation: {save_gif(rules, game, gif, fps)}")
    except OSError as e:
        raise UserError(f"cannot write the drawing: {e.strerror or e}") from None


def _check_analysis_options(
    analyse: bool, agent: str | None, endgame_db: str | None, plot: str | None
) -> None:
    if not analyse and (agent or endgame_db or plot):
        raise UserError("--agent, --endgame-db and --plot go with --analyse")
    if plot is not None:
        checks.writable_file(plot, "--plot", (".png",))


def _print_analysis(rules, game, nodes: int, agent: str | None, endgame_db: str | None, plot: str | None):
    """``show --analyse``: the analysis of ``game`` printed, its graph saved to ``plot``."""
    from neurocheckers.analysis.game_analysis import (
        AnalysisOptions,
        analyse_game,
        analysis_lines,
        leaf_network,
        perfect_play,
        save_analysis_plot,
    )

    with checks.user_errors(ValueError):
        options = AnalysisOptions(nodes=nodes)
    try:
        leaves = leaf_network(agent, rules)
    except (ValueError, OSError) as e:
        raise UserError(f"--agent {agent!r}: {e}") from None
    database = None if endgame_db is None else _endgame_for_search(endgame_db, rules)
    analysis = analyse_game(rules, game, options, leaves, database, perfect_play(rules, database))
    print("\n".join(analysis_lines(analysis)))
    if plot is not None:
        try:
            print(f"evaluation graph: {save_analysis_plot(analysis, plot)}")
        except OSError as e:
            raise UserError(f"cannot write the graph: {e.strerror or e}") from None


@app.command(
    epilog=example(
        "neurocheckers verdicts runs/games.pdn --endgame-db runs/endgame/american8",
        "neurocheckers verdicts runs/games.json --endgame-db runs/endgame/american6 --json",
    )
)
def verdicts(
    games_file: Annotated[
        str,
        typer.Argument(
            metavar="GAMES_FILE",
            help="A game file (from match --save-games or play --save): JSON, or PDN when it ends in .pdn.",
        ),
    ],
    endgame_db: Annotated[
        str,
        typer.Option(metavar="DIR", help="An endgame database of the games' rules (endgame build --out)."),
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the counts and each game's value as JSON.")
    ] = False,
    perfect_play: Annotated[
        bool,
        typer.Option(
            "--perfect-play",
            help="Also judge every move against perfect play over the database (american6, the solved"
            " board): each player's share of moves that kept the value, with a 95% interval.",
        ),
    ] = False,
) -> None:
    """Look each saved game's end up in an endgame database.

    Replays every game and looks its last position up: of the draws, how many the database calls won
    for either player or drawn; of the decisive games, whether it agrees; and how many games ended
    with more pieces than it holds (no verdict). A and B are the first game's Black and White (Black
    and White themselves when more than two players play in the file)."""
    import json

    from neurocheckers.analysis.pdn_games import file_verdicts, format_file_verdicts, load_game_file
    from neurocheckers.endgame.database import EndgameDB, EndgameError

    with checks.user_errors(ValueError):
        loaded = load_game_file(games_file)
    for reason in loaded.skipped:
        print(f"neurocheckers: warning: skipped {reason}", file=sys.stderr)
    try:
        db = EndgameDB(endgame_db, loaded.rules)
        if not db.slices:
            raise EndgameError(f"{endgame_db} holds no solved slice yet")
        found = file_verdicts(loaded, db)
    except EndgameError as e:
        raise UserError(f"--endgame-db {endgame_db!r}: {e}") from None
    found = {"games_file": games_file, **found}
    if perfect_play:
        found["perfect_play"] = _perfect_play_of(loaded, endgame_db)
    print(json.dumps(found, indent=1) if as_json else f"{games_file}: {format_file_verdicts(found)}")
    if perfect_play and not as_json:
        graded = found["perfect_play"]
        for side in ("a", "b"):
            print(f"  against perfect play, {graded['player_' + side]}: {graded[side + '_text']}")


def _perfect_play_of(loaded, endgame_db: str) -> dict:
    """``verdicts --perfect-play``: each player's accuracy against perfect play, JSON-ready."""
    import dataclasses

    from neurocheckers.analysis.pdn_games import file_perfect_accuracy
    from neurocheckers.analysis.perfect_play import load_oracle

    with checks.user_errors(ValueError):
        graded = file_perfect_accuracy(loaded, load_oracle(endgame_db, loaded.rules))
    out = {}
    for side in ("a", "b"):
        out[f"player_{side}"] = graded[f"player_{side}"]
        out[side] = dataclasses.asdict(graded[side])
        out[f"{side}_text"] = graded[side].text()
    return out
