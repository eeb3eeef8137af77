"""``serve``: the web app over a folder."""

from __future__ import annotations

from typing import Annotated

import typer

from neurocheckers.cli.common import UserError, app, example


@app.command(
    epilog=example(
        "neurocheckers serve results/ --port 8000",
        "neurocheckers serve results/ --endgame runs/endgame/american6,runs/endgame/american8",
        "neurocheckers serve results/ --engine darkhorse=runs/darkhorse/darkhorse",
    )
)
def serve(
    folder: Annotated[
        str, typer.Argument(metavar="FOLDER", help="The folder to serve: its runs, game and agent files.")
    ] = ".",
    port: Annotated[int, typer.Option(metavar="PORT", help="The port to listen on.")] = 8000,
    host: Annotated[
        str, typer.Option(metavar="HOST", help="The address to listen on (127.0.0.1: this machine only).")
    ] = "127.0.0.1",
    endgame: Annotated[
        list[str] | None,
        typer.Option(
            "--endgame",
            "--endgame-db",
            metavar="DIR",
            help="An endgame database folder (endgame build --out), one a rules preset; repeat it or "
            "give a comma list. The Play page then shows the database's value of the positions it holds,"
            " and a compiled-search opponent of those rules probes it in its search.",
        ),
    ] = None,
    engine: Annotated[
        list[str] | None,
        typer.Option(
            "--engine",
            metavar="NAME=PATH",
            help="An external engine program (docs/engines.md) the Play page may start, as the opponent"
            " engine:NAME:SECONDS; repeat it or give a comma list. No other program is ever started.",
        ),
    ] = None,
    analysis_nodes: Annotated[
        int,
        typer.Option(
            metavar="N",
            help="The analysis panel's search: nodes a position (Games and Play pages: Analyse the game).",
        ),
    ] = 20_000,
) -> None:
    """Open the web app: play, replay games, watch runs.

    Serves FOLDER read-only, but for the Play page's games, saved in FOLDER/.neurocheckers-web/ so
    they survive a restart (it shows nothing outside FOLDER); everything
    the page needs ships with the package, so it works offline. Ctrl-C stops it."""
    from pathlib import Path

    if not Path(folder).is_dir():
        raise UserError(f"FOLDER must be a folder, got {folder!r}")
    if not 0 <= port <= 65535:
        raise UserError(f"--port must be in 0..65535, got {port}")
    from neurocheckers.analysis.game_analysis import MAX_ANALYSIS_NODES

    if not 1 <= analysis_nodes <= MAX_ANALYSIS_NODES:
        raise UserError(f"--analysis-nodes must be in 1..{MAX_ANALYSIS_NODES}, got {analysis_nodes}")
    import socket

    import uvicorn

    from neurocheckers.endgame.database import EndgameError
    from neurocheckers.web.app import create_app

    folders = [part.strip() for given in endgame or [] for part in given.split(",") if part.strip()]
    engines = [part.strip() for given in engine or [] for part in given.split(",") if part.strip()]
    try:  # the databases are opened before the port is taken: a bad one is a one-line error
        web_app = create_app(folder, endgame=folders, engines=engines, analysis_nodes=analysis_nodes)
    except EndgameError as e:
        raise UserError(f"--endgame: {e}") from None
    except ValueError as e:
        raise UserError(f"--engine: {e}") from None
    try:  # the port is taken before the URL is printed: a busy port is an error, not a dead link
        listening = socket.create_server(
            (host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET
        )
    except OSError as e:
        raise UserError(
            f"cannot listen on {host}:{port}: {e.strerror or 'the address is not usable'}"
        ) from None
    port = listening.getsockname()[1]  # the one the system chose for --port 0
    server = uvicorn.Server(uvicorn.Config(web_app, log_level="warning"))
    print(f"serving {folder} at http://{host}:{port}/ (Ctrl-C stops)", flush=True)
    server.run(sockets=[listening])
