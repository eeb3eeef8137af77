"""The Starlette app of ``neurocheckers serve``: a thin shell of JSON endpoints over ``session`` (the
Play page's games) and ``folder`` (runs, game files, agent files), plus the static page.

Requests name files by their path relative to the served folder (a query parameter ``path``);
paths outside it are refused with 403, missing ones get 404, a client's mistake (a bad setting, a
malformed body or path) 400, and every error is JSON ``{"error": "..."}``. The server writes only
its Play page's games into the served folder (``sessions.GAMES_DIR``, a hidden folder).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from neurocheckers.players.external import named_engines
from neurocheckers.players.registry import PlayerFailed
from neurocheckers.rules.presets import PRESETS, get_rules
from neurocheckers.web import agents as agent_listing
from neurocheckers.web import folder
from neurocheckers.web import games as game_listing
from neurocheckers.web.analysis import DEFAULT_NODES, Analyst, session_positions
from neurocheckers.web.board import start_position
from neurocheckers.web.endgame import database_info, open_databases
from neurocheckers.web.opponents import SessionError
from neurocheckers.web.session import (
    game_pdn,
    human_step,
    opponent_reply,
    position_after,
    resign,
    undo,
)
from neurocheckers.web.sessions import Sessions
from neurocheckers.web.setup import setup_position

STATIC = Path(__file__).resolve().parent / "static"
"""The page's HTML, JavaScript and CSS (package data)."""


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _handle(request: Request, error: Exception) -> JSONResponse:
    """Errors as JSON, paths in them relative to the served folder: refused paths 403, missing
    things 404, the server's own checks of a request 400 (an opponent that failed mid-game:
    ``_opponent_failed``); anything else is the server's fault: a 500 with a generic message, logged
    with its traceback."""
    root = request.app.state.root
    if isinstance(error, folder.PathRefused):
        return _error(403, folder.relative_message(root, str(error)))
    if isinstance(error, folder.NotFound):
        return _error(404, folder.relative_message(root, str(error)))
    if isinstance(error, (SessionError, folder.BadFile, folder.BadPath)):
        return _error(400, folder.relative_message(root, str(error)))
    if isinstance(error, HTTPException):
        return _error(error.status_code, error.detail)
    folder.LOG.error("%s %s failed", request.method, request.url.path, exc_info=error)
    return _error(500, "internal error: the server could not answer this request (it is in the server's log)")


async def _opponent_failed(request: Request, error: Exception) -> JSONResponse:
    """A 502 for an opponent that failed mid-game (``PlayerFailed``: an engine that crashed, hung or
    broke its protocol): its one line, paths relative to the served folder; not the server's fault."""
    message = folder.relative_message(request.app.state.root, str(error))
    return _error(502, f"the opponent failed: {message}")


MAX_BODY_BYTES = 64 * 1024
"""The largest request body read (the API's bodies are a few hundred bytes)."""


async def _body(request: Request) -> dict[str, Any]:
    """The request's JSON object; ``SessionError`` for anything else, and a 413 for a body over
    ``MAX_BODY_BYTES`` (read no further than that)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise HTTPException(
            413, f"the request body is {int(declared)} bytes; at most {MAX_BODY_BYTES} are read"
        )
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise HTTPException(413, f"the request body is over {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks))
    except RecursionError:
        raise SessionError("the request body is nested too deeply") from None
    except ValueError:
        raise SessionError("the request body must be a JSON object") from None
    if not isinstance(body, dict):
        raise SessionError("the request body must be a JSON object")
    return body


def _path(request: Request) -> Path:
    """The served-folder file named by the ``path`` query parameter."""
    root = request.app.state.root
    return folder.inside(root, request.query_params.get("path", ""))


def _whole_number(text: str, what: str) -> int:
    """``text`` as a whole number (ASCII digits, at most 9); ``SessionError`` naming ``what``."""
    if not (text.isascii() and text.isdigit() and len(text) <= 9):
        raise SessionError(f"{what} must be a whole number, got {text[:40]!r}")
    return int(text)


def _square(body: dict[str, Any], key: str) -> int:
    value = body.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise SessionError(f"{key!r} must be a square number, got {value!r}")
    return value


def _pdn_download(text: str, filename: str) -> Response:
    """PDN text as a file download named ``filename``."""
    headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
    return Response(text, media_type="application/x-pdn; charset=utf-8", headers=headers)


def _play_routes(root: Path, sessions: Sessions) -> list[Route]:
    """The page and the Play page's API: game sessions held in ``sessions``."""

    async def index(request: Request) -> FileResponse:
        return FileResponse(STATIC / "index.html")

    async def info(request: Request) -> JSONResponse:
        agents = await run_in_threadpool(agent_listing.agent_files, root)
        best = await run_in_threadpool(agent_listing.best_agents, root, agents)
        rules_of = await run_in_threadpool(agent_listing.agent_rules, root, agents)
        return JSONResponse(
            {
                "folder": root.resolve().name,  # its name only: never where it is on the server
                "presets": list(PRESETS),
                "default_rules": agent_listing.default_rules(best),
                "agents": agents,
                "best": best,
                "opponents": {
                    rules: agent_listing.opponent_choices(rules, rules_of, best, sessions.engines)
                    for rules in PRESETS
                },
                "suggestions": {
                    rules: agent_listing.opponent_suggestions(rules, agents, best) for rules in PRESETS
                },
                "start": {rules: start_position(get_rules(rules)) for rules in PRESETS},
                "endgame": database_info(sessions.endgame),  # the rules with a database, no paths
            }
        )

    async def new_game(request: Request) -> JSONResponse:
        body = await _body(request)
        settings = {k: body[k] for k in ("opponent", "rules", "human", "think_seconds", "seed") if k in body}
        if not isinstance(settings.get("opponent"), str):
            raise SessionError("'opponent' must be a player spec such as random, FILE or mcts:FILE:SIMS")
        start = await run_in_threadpool(setup_position, settings.get("rules", "simple6"), body)
        session = await run_in_threadpool(sessions.create, start=start, **settings)
        return JSONResponse(await run_in_threadpool(sessions.act, session.id), status_code=201)

    async def game(request: Request) -> JSONResponse:
        return JSONResponse(await run_in_threadpool(sessions.act, request.path_params["id"]))

    async def move(request: Request) -> JSONResponse:
        body = await _body(request)
        src, dst = _square(body, "from"), _square(body, "to")
        view = await run_in_threadpool(sessions.act, request.path_params["id"], human_step, src, dst)
        return JSONResponse(view)

    async def reply(request: Request) -> JSONResponse:
        return JSONResponse(await run_in_threadpool(sessions.act, request.path_params["id"], opponent_reply))

    async def take_back(request: Request) -> JSONResponse:
        return JSONResponse(await run_in_threadpool(sessions.act, request.path_params["id"], undo))

    async def give_up(request: Request) -> JSONResponse:
        return JSONResponse(await run_in_threadpool(sessions.act, request.path_params["id"], resign))

    async def position(request: Request) -> JSONResponse:
        turn = _whole_number(request.path_params["turn"], "turn")
        return JSONResponse(
            await run_in_threadpool(sessions.read, request.path_params["id"], position_after, turn)
        )

    async def pdn(request: Request) -> Response:
        game_id = request.path_params["id"]
        text = await run_in_threadpool(sessions.read, game_id, game_pdn)
        return _pdn_download(text, f"neurocheckers-{game_id}.pdn")

    return [
        Route("/", index),
        Route("/api/info", info),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{id}", game),
        Route("/api/games/{id}/move", move, methods=["POST"]),
        Route("/api/games/{id}/reply", reply, methods=["POST"]),
        Route("/api/games/{id}/undo", take_back, methods=["POST"]),
        Route("/api/games/{id}/resign", give_up, methods=["POST"]),
        Route("/api/games/{id}/positions/{turn}", position),
        Route("/api/games/{id}/pdn", pdn),
    ]


async def _saved_game(request: Request) -> tuple[game_listing.GameFile, int]:
    """The game file named by ``path`` and the game number ``game`` (default 1) checked against it."""
    games = await run_in_threadpool(game_listing.open_games, _path(request))
    text = request.query_params.get("game", "1")
    number = _whole_number(text, "game")
    if games.game(number) is None:  # numbered as in the file: a skipped game keeps its number
        raise SessionError(f"game must be in {games.number_spans()}, got {text!r}")
    return games, number


def _folder_routes(root: Path) -> list[Route]:
    """The Runs and Games pages' API: read-only views of the folder ``root``."""

    async def runs(request: Request) -> JSONResponse:
        found = await run_in_threadpool(lambda: [folder.run_row(root, r) for r in folder.find_runs(root)])
        return JSONResponse({"runs": found})

    async def run(request: Request) -> JSONResponse:
        run_dir = _path(request)
        if not folder.is_run_folder(run_dir):
            raise folder.NotFound(f"{request.query_params.get('path')!r} is not a run folder")
        return JSONResponse(await run_in_threadpool(folder.run_detail, root, run_dir))

    async def curves(request: Request) -> JSONResponse:
        run_dir = _path(request)
        if not folder.is_run_folder(run_dir):
            raise folder.NotFound(f"{request.query_params.get('path')!r} is not a run folder")
        return JSONResponse(await run_in_threadpool(folder.run_curves, run_dir))

    async def agent_file(request: Request) -> FileResponse:
        path = _path(request)
        if path.suffix != ".safetensors" or not path.is_file():
            raise folder.NotFound(f"{request.query_params.get('path')!r} is not an agent file")
        return FileResponse(path, filename=path.name, media_type="application/octet-stream")

    async def game_files(request: Request) -> JSONResponse:
        return JSONResponse({"files": await run_in_threadpool(game_listing.game_files, root)})

    async def game_file(request: Request) -> JSONResponse:
        games = await run_in_threadpool(game_listing.open_games, _path(request))
        listing = [
            {
                "number": number,
                "black": g.get("black"),
                "white": g.get("white"),
                "result": g.get("result"),
                "moves": len(g["moves"]),
            }
            for number, g in games.numbered()
        ]
        skipped = [folder.relative_message(root, reason) for reason in games.skipped]
        return JSONResponse({"rules": games.rules.name, "games": listing, "skipped": skipped})

    async def saved_game(request: Request) -> JSONResponse:
        games, number = await _saved_game(request)
        view = await run_in_threadpool(game_listing.game_view, root, games.rules, games.game(number))
        return JSONResponse({"rules": games.rules.name, **view})

    async def saved_game_pdn(request: Request) -> Response:
        games, number = await _saved_game(request)
        text = await run_in_threadpool(game_listing.game_pdn, games.rules, games.game(number))
        return _pdn_download(text, f"{_path(request).stem}-game{number}.pdn")

    return [
        Route("/api/runs", runs),
        Route("/api/run", run),
        Route("/api/run/curves", curves),
        Route("/api/agent-file", agent_file),
        Route("/api/game-files", game_files),
        Route("/api/game-file", game_file),
        Route("/api/game-file/game", saved_game),
        Route("/api/game-file/pdn", saved_game_pdn),
    ]


def _analysis_routes(sessions: Sessions, analyst: Analyst) -> list[Route]:
    """The analysis panel's API: a Play page game's analysis, and a saved game's."""

    async def game_analysis(request: Request) -> JSONResponse:
        game_id = request.path_params["id"]
        rules, states, moves = await run_in_threadpool(sessions.read, game_id, session_positions)
        return JSONResponse(await run_in_threadpool(analyst.analyse, rules, states, moves))

    async def saved_game_analysis(request: Request) -> JSONResponse:
        games, number = await _saved_game(request)
        view = await run_in_threadpool(analyst.analyse_saved, games.rules, games.game(number))
        return JSONResponse(view)

    return [
        Route("/api/games/{id}/analysis", game_analysis),
        Route("/api/game-file/analysis", saved_game_analysis),
    ]


def create_app(
    root: str | Path,
    endgame: Iterable[str | Path] = (),
    save_games: bool = True,
    engines: Iterable[str] = (),
    analysis_nodes: int = DEFAULT_NODES,
) -> Starlette:
    """The web app over the folder ``root`` (which must exist), with the endgame databases in the
    folders ``endgame`` (one a rules preset, opened here once: ``EndgameError`` for a bad one); the
    Play page's games saved in ``root / GAMES_DIR`` unless ``save_games`` is False. ``engines``
    (``NAME=PATH`` items, ``ValueError`` for a bad one) are the only programs a game may start,
    asked for by their names (``engine:NAME:SECONDS``). The analysis panel searches each position
    for ``analysis_nodes`` nodes (``ValueError`` outside ``1..MAX_ANALYSIS_NODES``)."""
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"{str(root)!r} is not a folder")
    programs = named_engines(engines)
    sessions = Sessions(root, endgame=open_databases(endgame), save=save_games, engines=programs)
    analyst = Analyst(root, sessions.endgame, analysis_nodes)
    routes = [
        *_play_routes(root, sessions),
        *_folder_routes(root),
        *_analysis_routes(sessions, analyst),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        # Starlette answers these in place; any other exception reaches _handle too, then the server.
        exception_handlers={
            **dict.fromkeys((ValueError, KeyError, OSError, TypeError, HTTPException), _handle),
            PlayerFailed: _opponent_failed,
            Exception: _handle,
        },
    )
    app.state.root = root
    app.state.sessions = sessions  # the games in play (tests set up positions through it)
    return app
