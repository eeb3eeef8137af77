"""An external engine as a player, over a line protocol: ``engine:PATH:SECONDS`` and ``darkhorse:SECONDS``.

The engine is a program of its own, spoken to over its stdin and stdout one line at a time (the
protocol is in ``docs/engines.md``): on start it says ``ready NAME``; ``go MS FEN`` asks for its
move in a position (PDN FEN, the project's square numbers) in ``MS`` milliseconds and it answers
``bestmove MOVE`` (``11-15``, ``9x18x27`` or ``9x27 captured 14,23``, then optional ``depth``,
``nodes`` and ``score``); ``newgame`` (answered ``ok``) and ``quit`` complete it. An engine that
says ``ready NAME history`` also gets, after the FEN, ``history FEN FEN ...``: the game's positions
since its last capture or man's move, oldest first, so that its search can see repetitions.

Like the other host players (``timed:``, ``compiled:``, ``pydraughts:``) it moves one game at a
time: ``new_game(seed)`` returns the game's mover, called with the game's ``State`` at each of its
turns (each jump of a multi-jump included) and the equal-time allowance, returning our action. The
engine's whole-turn move is matched against our legal moves (``compiled.game.legal_rows``) and
played as our action sequence; the games are judged by our rules alone. A player keeps one engine
process for all its games (a match plays its games ply by ply together), started with the first
game's mover, before any move is timed, and ended when the player is closed or collected.

Whatever goes wrong (the program missing, a crash, a silence past the move's time plus
``REPLY_GRACE``, a line it should not print, a move that is not legal here) raises ``EngineError``:
one line naming the engine and what happened, the process killed.

``darkhorse:SECONDS`` is this player with DarkHorse (``scripts/build_darkhorse.sh``), found at
``$NEUROCHECKERS_DARKHORSE`` or ``runs/darkhorse/darkhorse``; ``american8`` only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import selectors
import subprocess
import tempfile
import time
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from neurocheckers.compiled.board import Position, geometry, move_actions
from neurocheckers.compiled.game import after, legal_rows
from neurocheckers.players.protocol import HostPlayer
from neurocheckers.players.registry import PlayerFailed, SearchReport
from neurocheckers.rules.notation import to_fen
from neurocheckers.rules.presets import AMERICAN8, Rules
from neurocheckers.rules.state import State

ENGINE_PREFIX = "engine:"
DARKHORSE_PREFIX = "darkhorse:"
SPECS = "engine:PATH:SECONDS | engine:PATH:equal | darkhorse:SECONDS | darkhorse:equal"
"""The external-engine player specs: seconds a move like ``0.1`` (or ``0.1s``), or ``equal``."""
DARKHORSE_ENV = "NEUROCHECKERS_DARKHORSE"
"""The environment variable naming the DarkHorse driver executable."""
DARKHORSE_DEFAULT = "runs/darkhorse/darkhorse"
"""Where ``scripts/build_darkhorse.sh`` puts it by default (relative to the working folder)."""
MAX_SECONDS = 60.0
FIRST_MOVE_SECONDS = 0.05
"""The equal-time budget before the opponent has moved."""
MIN_MILLISECONDS = 1
START_TIMEOUT = 60.0
"""Seconds an engine may take to say ``ready`` (loading a network, allocating its table)."""
REPLY_GRACE = 5.0
"""Seconds past a move's time after which a silent engine is given up."""
QUIT_WAIT = 2.0
"""Seconds an engine is given to exit after ``quit`` before it is killed."""
MAX_HISTORY = 100
"""The most earlier positions a ``go`` line carries (the 40-move rule allows 80 plies of them)."""


class EngineError(PlayerFailed):
    """An external engine failed: the message is one line naming the engine and what went wrong."""


@dataclasses.dataclass(frozen=True)
class Reply:
    """A parsed ``bestmove`` line."""

    squares: tuple[int, ...]
    """The squares the move visits as written (1-based): from, [landings...,] to."""
    capture: bool
    """Whether it is written as a capture (``x``)."""
    captured: frozenset[int] | None
    """The captured squares, when given."""
    info: dict[str, int]
    """``depth``, ``nodes``, ``score`` when given."""


def _number(text: str, what: str) -> int:
    if not text.lstrip("-").isdigit():
        raise ValueError(f"{what} {text!r} is not an integer")
    return int(text)


def parse_reply(line: str) -> Reply:
    """The move of a ``bestmove MOVE [captured S,S] [depth D] [nodes N] [score V]`` line;
    ``ValueError`` saying what is wrong with it."""
    words = line.split()
    if len(words) < 2 or words[0] != "bestmove" or len(words) % 2:
        raise ValueError("expected 'bestmove MOVE' and KEY VALUE pairs")
    move = words[1]
    capture = "x" in move
    parts = move.split("x" if capture else "-")
    if len(parts) < 2 or (not capture and len(parts) != 2) or not all(p.isdigit() for p in parts):
        raise ValueError(f"bad move {move!r}")
    captured, info = None, {}
    for key, value in zip(words[2::2], words[3::2], strict=True):
        if key == "captured":
            items = [] if value == "-" else value.split(",")
            captured = frozenset(_number(s, "captured square") for s in items)
        elif key in ("depth", "nodes", "score"):
            info[key] = _number(value, key)
    return Reply(tuple(int(p) for p in parts), capture, captured, info)


def _row_squares(geo: np.ndarray, rules: Rules, row) -> tuple[int, ...]:
    """The squares (1-based) a legal-move row visits: its source, each landing, its destination."""
    source, dest, captured, path = (int(x) for x in row[:4])
    squares = [source + 1]
    if captured:
        from neurocheckers.rules.tables import tables

        t = tables(rules.board_size)
        square = source
        for k in range(bin(captured).count("1")):
            square = int(t.jump_landing[(path >> (2 * k)) & 3, square])
            squares.append(square + 1)
    else:
        squares.append(dest + 1)
    return tuple(squares)


def _matches(reply: Reply, squares: tuple[int, ...], captured: int) -> bool:
    if reply.capture != bool(captured):
        return False
    if reply.captured is not None and reply.captured != {s + 1 for s in range(32) if captured >> s & 1}:
        return False
    if len(reply.squares) > 2:
        return reply.squares == squares
    return (reply.squares[0], reply.squares[-1]) == (squares[0], squares[-1])


def reply_actions(rules: Rules, position: Position, reply: Reply) -> tuple[int, ...]:
    """Our action sequence of the engine's move in ``position``; ``ValueError`` naming the legal moves
    when it is none of them, or is ambiguous (two moves to different positions fit what it wrote)."""
    return reply_move(rules, position, reply)[0]


def reply_move(rules: Rules, position: Position, reply: Reply) -> tuple[tuple[int, ...], Position]:
    """``reply_actions`` and the position the move leads to."""
    geo = geometry(rules)
    rows = legal_rows(geo, position)
    paths = [_row_squares(geo, rules, row) for row in rows]
    fits = [k for k, row in enumerate(rows) if _matches(reply, paths[k], int(row[2]))]
    legal = ", ".join(
        ("x" if int(row[2]) else "-").join(map(str, p)) for row, p in zip(rows, paths, strict=True)
    )
    if not fits:
        raise ValueError(f"it is not legal here (legal: {legal or 'none'})")
    if len({after(geo, position, rows[k]) for k in fits}) > 1:
        raise ValueError(f"it fits several moves; give the whole path (legal: {legal})")
    source, _, captured, path = (int(x) for x in rows[fits[0]][:4])
    return move_actions(rules, source, captured, path), after(geo, position, rows[fits[0]])


def reversible(before: Position, later: Position) -> bool:
    """Whether a move from ``before`` to ``later`` neither moved a man (men only go forward) nor
    captured: only such positions can repeat."""
    kings = (int(before.black_kings).bit_count(), int(before.white_kings).bit_count())
    same_men = (before.black_men, before.white_men) == (later.black_men, later.white_men)
    return same_men and kings == (int(later.black_kings).bit_count(), int(later.white_kings).bit_count())


class EngineProcess:
    """One running engine: ``request(line, timeout)`` sends a line and returns its reply line."""

    def __init__(self, name: str, command: tuple[str, ...], cpu: int | None = None) -> None:
        self.name = name
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (kept open while the engine runs)
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=self._stderr, start_new_session=True)  # fmt: skip
        except OSError as error:
            raise EngineError(
                f"engine {name}: cannot start {command[0]!r}: {error.strerror or error}"
            ) from None
        self._finalizer = weakref.finalize(self, _kill, self.process, self._stderr)
        if cpu is not None and hasattr(os, "sched_setaffinity"):
            with contextlib.suppress(OSError):
                os.sched_setaffinity(self.process.pid, {cpu})
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.process.stdout, selectors.EVENT_READ)
        hello = self._read_line(START_TIMEOUT, "start")
        if hello.split()[:1] != ["ready"]:
            self.fail(f"said {hello[:80]!r} on start instead of 'ready NAME'")
        self.features = frozenset(hello.split()[2:])
        """What the engine said it understands after its name (``history``: see docs/engines.md)."""

    def fail(self, what: str) -> None:
        """Kill the engine and raise ``EngineError`` naming it and ``what``."""
        self.close(kill=True)
        raise EngineError(f"engine {self.name}: {what}")

    def request(self, line: str, timeout: float) -> str:
        """Send ``line``; its reply (the first line not starting with ``info``)."""
        try:
            self.process.stdin.write(line.encode() + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            self._died(f"'{line[:40]}'")
        while True:
            reply = self._read_line(timeout, f"'{line[:40]}'")
            if reply.startswith("error"):
                self.fail(f"answered '{line[:40]}' with {reply[:120]!r}")
            if not reply.startswith("info"):
                return reply

    def _read_line(self, timeout: float, what: str) -> str:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                self.fail(f"no reply to {what} within {timeout:g} s")
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                self._died(what)
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode(errors="replace").strip()

    def _died(self, what: str) -> None:
        try:
            code = self.process.wait(QUIT_WAIT)
        except subprocess.TimeoutExpired:  # it closed its output but runs on
            code = "none yet"
        self._stderr.seek(0)
        last = (self._stderr.read().decode(errors="replace").strip().splitlines() or [""])[-1]
        said = f"; its last words: {last[:120]!r}" if last else ""
        self.fail(f"exited (code {code}) before answering {what}{said}")

    def close(self, kill: bool = False) -> None:
        """Ask the engine to quit (kill it if it does not, or at once with ``kill``)."""
        if self.process.poll() is None and not kill:
            with contextlib.suppress(OSError):
                self.process.stdin.write(b"quit\n")
                self.process.stdin.flush()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(QUIT_WAIT)
        self._selector.close()
        self._finalizer()


def _kill(process: subprocess.Popen, stderr) -> None:
    if process.poll() is None:
        process.kill()
        process.wait()
    for stream in (process.stdin, process.stdout):
        with contextlib.suppress(OSError):
            stream.close()
    stderr.close()


@dataclasses.dataclass
class ExternalEnginePlayer(HostPlayer):
    """An external engine named by a spec (see the module docstring)."""

    name: str
    """The spec, e.g. ``darkhorse:0.1``."""
    command: tuple[str, ...]
    """The program and its arguments."""
    rules: Rules
    """The rules the games are played by (the match's preset)."""
    seconds: float | None = None
    """Wall time a move (None: the equal-time mode)."""
    cpu: int | None = None
    """The CPU the engine is pinned to (None: not pinned)."""
    _process: EngineProcess | None = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def equal_time(self) -> bool:
        """Whether each move gets the match clock's equal-time allowance."""
        return self.seconds is None

    def process(self) -> EngineProcess:
        """The running engine (started if it is not running)."""
        if self._process is None or self._process.process.poll() is not None:
            self._process = EngineProcess(self.name, self.command, self.cpu)
        return self._process

    def new_game(self, seed: int = 0) -> EngineGame:
        """The mover of one new game; starts the engine (``seed`` is unused)."""
        self.process()
        return EngineGame(self)

    def warm_up(self, rules: Rules | None = None) -> None:
        """Start the engine and load the move generator before any move is timed (the player's own
        rules)."""
        self.process()
        legal_rows(geometry(self.rules), Position.start(self.rules))

    def close(self) -> None:
        """End the engine process (a later game starts a new one)."""
        if self._process is not None:
            self._process.close()
            self._process = None


class EngineGame:
    """One game's mover: ``game(state, seconds=None) -> action``."""

    def __init__(self, player: ExternalEnginePlayer) -> None:
        self.player = player
        self.infos: list[SearchReport] = []
        """One report a searched move: the depth, nodes and score the engine says, the wall time."""
        self._pending: list[int] = []
        self._line: list[Position] = []
        """The game's positions since its last capture or man's move, oldest first, before now."""
        self._after: Position | None = None
        """The position our previous move led to."""

    def _history(self, now: Position) -> str:
        """`` history FEN FEN ...`` (the positions since the last capture or man's move, at most
        ``MAX_HISTORY``), or nothing when there are none or the engine did not ask for them."""
        if self._after is not None:
            self._line = [*self._line, self._after] if reversible(self._after, now) else []
        if not self._line or "history" not in self.player.process().features:
            return ""
        return " history " + " ".join(to_fen(p) for p in self._line[-MAX_HISTORY:])

    def __call__(self, state: State, seconds: float | None = None) -> int:
        if bool(np.asarray(state.terminated)):
            return 0
        if int(np.asarray(state.continuing)) != 0:
            if self._pending:
                return self._pending.pop(0)
            raise EngineError(f"engine {self.player.name}: asked to go on with a multi-jump it did not start")
        p = self.player
        seconds = (FIRST_MOVE_SECONDS if seconds is None else seconds) if p.equal_time else p.seconds
        ms = max(MIN_MILLISECONDS, round(1000 * seconds))
        fen, now = to_fen(state), Position.from_state(state)
        engine = p.process()
        history = self._history(now)
        start = time.perf_counter()
        line = engine.request(f"go {ms} {fen}{history}", ms / 1000 + REPLY_GRACE)
        spent = time.perf_counter() - start
        try:
            reply = parse_reply(line)
            actions, self._after = reply_move(p.rules, now, reply)
        except ValueError as error:
            engine.fail(f"answered {line[:80]!r} in {fen}: {error}")
        self._line = [*self._line, now] if reversible(now, self._after) else []
        info = reply.info
        report = SearchReport(
            actions, info.get("score", 0), info.get("depth", 0), info.get("nodes", 0), spent
        )
        self.infos.append(report)
        self._pending = list(actions[1:])
        return actions[0]


def _seconds(text: str, spec: str) -> float | None:
    """The seconds a move of a spec's last field (``0.1``, ``0.1s``), None for ``equal``."""
    if text == "equal":
        return None
    try:
        seconds = float(text.removesuffix("s"))
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= MAX_SECONDS:
        raise ValueError(
            f"bad player spec {spec!r}: the time {text!r} must be seconds in (0, {MAX_SECONDS:g}] like 0.1,"
            " or equal"
        )
    return seconds


def is_external_spec(spec: str) -> bool:
    return spec.strip().startswith((ENGINE_PREFIX, DARKHORSE_PREFIX))


def darkhorse_path() -> str:
    """The DarkHorse driver executable: ``$NEUROCHECKERS_DARKHORSE`` or ``DARKHORSE_DEFAULT``."""
    return os.environ.get(DARKHORSE_ENV) or DARKHORSE_DEFAULT


def darkhorse_built() -> bool:
    """Whether the DarkHorse driver is there to play (``darkhorse_path`` is an executable): the ladders
    add it when it is."""
    return executable(darkhorse_path())


def parse_external(spec: str, rules: Rules) -> ExternalEnginePlayer:
    """The player of an ``engine:PATH:SECONDS`` or ``darkhorse:SECONDS`` spec; ``ValueError`` (one line
    naming the bad value) for a bad time, a program that is not there, or DarkHorse off ``american8``."""
    text = spec.strip()
    head, _, last = text.rpartition(":")
    if text.startswith(DARKHORSE_PREFIX) and head == "darkhorse":
        program = darkhorse_path()
        if rules.name != AMERICAN8.name:
            raise ValueError(f"{text!r} plays American checkers, american8 only; got --rules {rules.name}")
        hint = f"; build it with scripts/build_darkhorse.sh SRC_DIR, or set {DARKHORSE_ENV}"
    elif text.startswith(ENGINE_PREFIX) and head[len(ENGINE_PREFIX) :]:
        program, hint = head[len(ENGINE_PREFIX) :], ""
    else:
        raise ValueError(f"bad player spec {spec!r}; expected one of: {SPECS}")
    seconds = _seconds(last, spec)
    if not executable(program):
        raise ValueError(f"bad player spec {spec!r}: no executable {program!r}{hint}")
    return ExternalEnginePlayer(text, (str(Path(program).resolve()),), rules, seconds)


ENGINE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
"""A name a server gives an engine program (``serve --engine NAME=PATH``)."""


def executable(path: str) -> bool:
    """Whether ``path`` is a file this process may run."""
    return Path(path).is_file() and os.access(path, os.X_OK)


def named_engines(items: Iterable[str]) -> dict[str, str]:
    """``{name: program}`` of ``NAME=PATH`` items (``serve --engine``), each program's absolute path;
    ``ValueError`` (one line) naming a bad item, a bad name, a name given twice or a path that is not
    an executable file."""
    engines: dict[str, str] = {}
    for item in items:
        name, equals, path = item.partition("=")
        name, path = name.strip(), path.strip()
        if not equals or not path:
            raise ValueError(f"{item!r} is not NAME=PATH (for example darkhorse=runs/darkhorse/darkhorse)")
        if not ENGINE_NAME.fullmatch(name):
            raise ValueError(f"engine name {name!r} must be letters, digits, '.', '_' or '-' (at most 40)")
        if name in engines:
            raise ValueError(f"engine name {name!r} is given twice")
        if not executable(path):
            raise ValueError(f"engine {name}: no executable file {path!r}")
        engines[name] = str(Path(path).resolve())
    return engines


def named_engine_spec(spec: str, engines: Mapping[str, str]) -> str:
    """The playable spec of an external-engine spec that names its program by a server's name for it
    (``engines``: name -> program): ``engine:NAME:SECONDS`` (or ``:equal``) -> ``engine:PROGRAM:...``,
    and ``darkhorse:SECONDS`` -> the program named ``darkhorse``. ``ValueError`` (one line, naming the
    allowed engines) for any other spec: a path is never run."""
    text = spec.strip()
    head, _, last = text.rpartition(":")
    name = head.removeprefix(ENGINE_PREFIX) if text.startswith(ENGINE_PREFIX) else head
    if name in engines:
        return f"{ENGINE_PREFIX}{engines[name]}:{last}"
    offered = ", ".join(f"engine:{n}:SECONDS" for n in sorted(engines)) or "none were named"
    raise ValueError(
        f"{text!r}: this server runs only the engines named when it started ({offered});"
        " serve --engine NAME=PATH names one"
    )
