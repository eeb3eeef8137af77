"""Players as plug-ins: the registry of player kinds, and the one search-result type of players.

A player spec (``alphabeta:3``, ``compiled:0.1s``, ...) names its kind by its first field. Each kind
is a ``PlayerKind``: the spec's forms, a one-line help text with its limits (``search.limits``), the
parse function as ``"module:function"`` (imported on first use, so that this module and the command
line's ``--help`` import no JAX), whether it is one of our JAX policies (batched by the arena) or a
host player (one game at a time), the rules presets it plays, and whether it runs a program of its
own. ``parse_spec`` parses every spec (``match.host.parse_any_player``), ``--help``'s lists of
players come from ``spec_help``.

A new engine is one module and one line in ``BUILTIN_KINDS`` (or a ``register`` call): its parse
function ``(spec, rules) -> player`` returns a player of the protocol (``players.protocol``: a
``HostPlayer`` subclass with a ``name`` and ``new_game(seed)``). The host loop
(``match.host.play_engine_games``) plays it.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
from collections.abc import Callable, Iterable
from typing import Any

from neurocheckers.search.limits import (
    MAX_ALPHABETA_DEPTH,
    MAX_COMPILED_NODES,
    MAX_MOVE_SECONDS,
    MAX_OPENSPIEL_DEPTH,
    MAX_OPENSPIEL_SIMULATIONS,
    MAX_PYDRAUGHTS_DEPTH,
    MAX_SIMULATIONS,
    MAX_TIMED_NODES,
)

ALL_RULES: tuple[str, ...] = ()
"""``PlayerKind.rules`` of a kind that plays every preset."""


@dataclasses.dataclass(frozen=True)
class PlayerKind:
    """One kind of player: the specs whose first field is ``prefix``."""

    prefix: str
    """The spec's first field, e.g. ``alphabeta`` (``alphabeta:3``)."""
    forms: str
    """The spec's forms, e.g. ``alphabeta:D | alphabeta:D:FILE``."""
    help: str
    """One line: what it plays and its limits."""
    parser: str | Callable[[str, Any], Any]
    """``"module:function"`` (imported on first use) or the function ``(spec, rules) -> player``."""
    host: bool = False
    """True for a host player (one game at a time), False for a JAX policy (``policies.Player``)."""
    rules: tuple[str, ...] = ALL_RULES
    """The presets it plays (empty: all)."""
    files: tuple[tuple[int, int], ...] = ()
    """Where its specs name an agent file: ``(argument count, argument index)`` pairs."""
    starts_program: bool = False
    """True when its player runs a program of its own (an external engine): a server offers only
    the programs named when it started (``web.opponents``), never one a request names."""
    menu: tuple[tuple[str, str], ...] = ()
    """``(spec, label)`` pairs the web's Play page offers under Engines, for the presets it plays."""
    needs: str = ""
    """A module its players import (an optional dependency): without it the menu leaves it out."""

    def offered(self, preset: str) -> tuple[tuple[str, str], ...]:
        """Its menu entries for ``preset``: none where it does not play it or ``needs`` is missing."""
        if (self.rules and preset not in self.rules) or (
            self.needs and importlib.util.find_spec(self.needs) is None
        ):
            return ()
        return self.menu

    def parse(self, spec: str, rules: Any) -> Any:
        """The player of ``spec`` under ``rules`` (a ``Rules``); ``ValueError`` (one line) naming a bad
        spec or rules this kind does not play."""
        self.check_rules(spec, rules)
        parse = self.parser
        if isinstance(parse, str):
            module, _, function = parse.partition(":")
            parse = getattr(importlib.import_module(module), function)
        return parse(spec, rules)

    def check_rules(self, spec: str, rules: Any) -> None:
        """``ValueError`` (one line) when this kind does not play ``rules`` (a ``Rules``)."""
        if self.rules and rules.name not in self.rules:
            only = ", ".join(self.rules)
            raise ValueError(f"{spec.strip()!r} plays {only} only; got --rules {rules.name}")

    def line(self) -> str:
        """``forms: help`` (and the presets it plays when not all)."""
        where = f" ({', '.join(self.rules)} only)" if self.rules else ""
        return f"{self.forms}: {self.help}{where}"


EVALS = "EVAL: FILE, FILE:DB, heuristic or material; FILE an agent file, DB an endgame database folder"
BUDGET = f"seconds in (0, {MAX_MOVE_SECONDS:g}] like 0.1s"

JAX_POLICY = "neurocheckers.players.jax_players:parse_player"
"""The parse function of our JAX policies' specs."""

BUILTIN_KINDS: tuple[PlayerKind, ...] = (
    PlayerKind("random", "random", "uniformly random legal moves", JAX_POLICY),
    PlayerKind(
        "greedy-material",
        "greedy-material",
        "the move that wins the most material now",
        JAX_POLICY,
    ),  # fmt: skip
    PlayerKind(
        "greedy",
        "greedy:FILE",
        "the move the agent's network rates best, no search",
        JAX_POLICY,
        files=((1, 0),),
    ),  # fmt: skip
    PlayerKind(
        "alphabeta",
        "alphabeta:D | alphabeta:D:FILE | alphabeta:D:FILE:DB | alphabeta:D:heuristic",
        f"depth-D alpha-beta (D in 1..{MAX_ALPHABETA_DEPTH}), leaves by material, the agent's network"
        " (with an endgame database DB) or the hand-written evaluation",
        JAX_POLICY,
        files=((2, 1), (3, 1)),
    ),
    PlayerKind(
        "mcts",
        "mcts:FILE:SIMS",
        f"MCTS with the agent's network, SIMS in 1..{MAX_SIMULATIONS}",
        JAX_POLICY,
        files=((2, 0),),
    ),  # fmt: skip
    PlayerKind(
        "mcts-rollout",
        "mcts-rollout:SIMS",
        f"MCTS with random playouts, SIMS in 1..{MAX_SIMULATIONS}",
        JAX_POLICY,
    ),  # fmt: skip
    PlayerKind(
        "timed",
        "timed:SECONDSs:EVAL | timed:NODESn:EVAL | timed:equal:EVAL",
        f"the JAX iterative-deepening search, {BUDGET}, nodes in 1..{MAX_TIMED_NODES:,} like 20000n,"
        f" or equal (the opponent's time a move); {EVALS}",
        "neurocheckers.players.timed:parse_timed",
        host=True,
        files=((2, 1), (3, 1)),
    ),
    PlayerKind(
        "compiled",
        "compiled:SECONDSs[:FILE[:DB]] | compiled:NODESn[:FILE[:DB]] | compiled:equal[:FILE[:DB]]",
        f"the compiled (numba) search, {BUDGET}, nodes in 1..{MAX_COMPILED_NODES:,} or equal;"
        " leaves by the agent FILE's network (an MLP or NNUE agent) or material; DB an endgame database",
        "neurocheckers.players.compiled:parse_compiled",
        host=True,
        files=((2, 1), (3, 1)),
    ),
    PlayerKind(
        "pydraughts",
        "pydraughts:D | pydraughts:Ns",
        f"py-draughts' engine, depth D in 1..{MAX_PYDRAUGHTS_DEPTH} or N {BUDGET}"
        " (pip install -e '.[engines]')",
        "neurocheckers.players.pydraughts:parse_pydraughts",
        host=True,
        rules=("american8",),
        menu=tuple((f"pydraughts:{d}", f"py-draughts to depth {d}") for d in (2, 4, 6, 8)),
        needs="draughts",
    ),
    PlayerKind(
        "openspiel",
        "openspiel:mcts:N | openspiel:alphabeta:D",
        f"OpenSpiel's bots, N in 1..{MAX_OPENSPIEL_SIMULATIONS:,} simulations, D in 1..{MAX_OPENSPIEL_DEPTH}"
        " actions, under OpenSpiel's end rule (--rules american8-openspiel; pip install -e '.[engines]')",
        "neurocheckers.players.openspiel:parse_engine",
        host=True,
    ),
    PlayerKind(
        "engine",
        "engine:PATH:SECONDS | engine:PATH:equal",
        "an external engine program speaking the line protocol of docs/engines.md",
        "neurocheckers.players.external:parse_external",
        host=True,
        starts_program=True,
    ),
    PlayerKind(
        "darkhorse",
        "darkhorse:SECONDS | darkhorse:equal",
        "DarkHorse through its driver (scripts/build_darkhorse.sh; docs/engines.md)",
        "neurocheckers.players.external:parse_external",
        host=True,
        rules=("american8",),
        starts_program=True,
    ),
)
"""The player kinds the project ships; a new engine adds its line here."""

_REGISTRY: dict[str, PlayerKind] = {kind.prefix: kind for kind in BUILTIN_KINDS}


def register(kind: PlayerKind) -> PlayerKind:
    """Add ``kind`` to the registry (replacing a kind with the same prefix); returns it."""
    _REGISTRY[kind.prefix] = kind
    return kind


def unregister(prefix: str) -> None:
    """Remove the kind named ``prefix`` (a test's fake kind); no error when there is none."""
    _REGISTRY.pop(prefix, None)


def player_kinds() -> tuple[PlayerKind, ...]:
    """Every registered kind, the built-in ones first."""
    return tuple(_REGISTRY.values())


def kind_of(spec: str) -> PlayerKind | None:
    """The kind of ``spec`` (by its first field), None when no kind has that prefix."""
    return _REGISTRY.get(spec.strip().partition(":")[0])


def spec_forms(kinds: Iterable[PlayerKind] | None = None) -> str:
    """The forms of ``kinds`` (default: all), joined by `` | ``."""
    return " | ".join(kind.forms for kind in (player_kinds() if kinds is None else kinds))


def policy_forms() -> str:
    """The forms of our JAX policies (``players.parse_player``)."""
    return spec_forms(kind for kind in player_kinds() if not kind.host)


def parse_spec(spec: str, rules: Any) -> Any:
    """The player of ``spec`` under ``rules``: our JAX ``policies.Player`` or a host player;
    ``ValueError`` (one line) naming what is wrong."""
    kind = kind_of(spec)
    if kind is None:
        raise ValueError(f"bad player spec {spec!r}; expected one of: {spec_forms()}")
    return kind.parse(spec.strip(), rules)


def spec_help(preset: str | None = None) -> str:
    """``--help``'s list of player kinds: one ``forms: help`` clause a kind (only those playing
    ``preset`` when given)."""
    kinds = [k for k in player_kinds() if preset is None or not k.rules or preset in k.rules]
    return "; ".join(kind.line() for kind in kinds)


BUILT_IN_EVALUATIONS = ("heuristic", "material")
"""Evaluations named in a spec's agent-file place that are not files."""


def _file_place(spec: str) -> tuple[str, list[str], int | None]:
    """``(kind, arguments, index of the agent file among them or None)`` of ``spec``."""
    kind, _, rest = spec.strip().partition(":")
    args = rest.split(":") if rest else []
    found = kind_of(kind)
    index = dict(found.files).get(len(args)) if found is not None else None
    if index is not None and args[index] in BUILT_IN_EVALUATIONS:
        index = None
    return kind, args, index


def spec_agent_file(spec: str) -> str | None:
    """The agent file a player spec names (``greedy:FILE``, ``alphabeta:D:FILE[:DB]``,
    ``mcts:FILE:SIMS``, ``timed:BUDGET:FILE[:DB]``, ``compiled:BUDGET:FILE[:DB]``), or None."""
    _, args, index = _file_place(spec)
    return None if index is None else args[index]


def with_agent_file(spec: str, path: Any) -> str:
    """``spec`` with its agent file replaced by ``path`` (``ValueError`` when it names none)."""
    kind, args, index = _file_place(spec)
    if index is None:
        raise ValueError(f"player spec {spec!r} names no agent file")
    args[index] = str(path)
    return ":".join([kind, *args])


class PlayerFailed(RuntimeError):
    """A player could not go on with a game (an external engine crashed, hung or broke its protocol):
    the message is one line naming the player and what happened. Callers stop the game and say it."""


@dataclasses.dataclass(frozen=True)
class SearchReport:
    """What one move's search did: the one search-result type of host players (timed, compiled,
    external engines), read by the match clock and shown by ``match``, ``gauntlet``, ``play`` and the
    web."""

    move: tuple[int, ...]
    """The move's actions (our action encoding; a multi-jump is several), or its first action alone."""
    score: float
    """The move's score from the mover's view, in the search's own units (None-free: 0 if unknown)."""
    depth: float
    """The depth the move was chosen at (moves or plies, as the search counts; 0: not searched)."""
    nodes: int
    """Nodes searched."""
    seconds: float
    """Wall time of the search."""
    win_chance: float | None = None
    """The mover's chance of winning as the search estimates it, where it makes one without a depth
    (the anytime MCTS's root value; its ``nodes`` are simulations); None: read from ``score``."""

    @property
    def searched(self) -> bool:
        """Whether a search chose the move (a depth reached, or an estimate made), not the rules."""
        return self.depth > 0 or self.win_chance is not None

    @classmethod
    def of(cls, info: Any) -> SearchReport:
        """The report of any search result with ``depth``, ``nodes``, ``seconds``, ``score`` and
        ``actions`` (or ``move``, or ``action``): the compiled search's ``SearchResult``, the timed
        search's ``SearchInfo``, a report itself."""
        if isinstance(info, SearchReport):
            return info
        move = getattr(info, "actions", None)
        if move is None:
            move = getattr(info, "move", None)
        if move is None:
            move = (getattr(info, "action", -1),)
        return cls(tuple(int(a) for a in move), float(info.score or 0.0), float(info.depth),
                   int(info.nodes), float(info.seconds))  # fmt: skip
