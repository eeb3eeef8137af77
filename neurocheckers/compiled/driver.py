"""Iterative deepening over ``search.negamax`` for one game: a deadline or a node budget per move,
aspiration windows as a switch, and the transposition table, history and game record kept between
the moves of a game."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from neurocheckers.compiled import endgame as eg
from neurocheckers.compiled import network as nw
from neurocheckers.compiled import reductions
from neurocheckers.compiled import search as s
from neurocheckers.compiled.board import Position, SearchRules, geometry, move_actions
from neurocheckers.compiled.movegen import M_CAPTURED, M_FROM, M_PATH, M_TO, generate, move_buffer
from neurocheckers.rules.fen import check_position
from neurocheckers.rules.presets import Rules

MAX_DEPTH = 100
"""The deepest nominal depth (whole moves) iterative deepening tries."""
NEXT_ITERATION_SHARE = 0.7
"""No new iteration starts once this share of the move's time is spent (it would seldom finish). At
0.1 s a move (50 middlegame positions): 0.5 used 0.065 s and completed depth 14.9 on average, 0.7
0.089 s and 15.5, 0.9 0.096 s and 15.3."""


def tunable(default: Any, low: float, high: float, step: float) -> Any:
    """A ``SearchOptions`` field that tuning may move: its default, range and step (the one place
    they are declared; ``tunable_fields`` lists them). A boolean switch is tunable over 0..1."""
    return dataclasses.field(default=default, metadata={"tunable": (low, high, step)})


def switch(default: bool) -> Any:
    """A boolean switch of the search, tunable (on or off)."""
    return tunable(default, 0, 1, 1)


@dataclasses.dataclass(frozen=True)
class SearchOptions:
    """The compiled search's switches and numbers (the defaults are the ones measured best). Every
    field but ``table_bits`` is tunable, with a range and a step (``tunable_fields``); an agent file
    may carry a tuned set (``options_metadata``), which ``compiled:`` then plays."""

    table_bits: int = 20
    """The transposition table holds 2**table_bits entries (16 bytes each)."""
    table: bool = switch(True)
    """Probe and store the transposition table."""
    pvs: bool = switch(True)
    """Principal-variation search: null windows after the first move, re-searched when they fail high."""
    killers: bool = switch(True)
    """Order two quiet moves per ply that cut off before the others."""
    history: bool = switch(True)
    """Order the other quiet moves by the history of their cut-offs."""
    quiescence: bool = switch(True)
    """Search captures on past the nominal depth until the position is quiet."""
    lmr: bool = switch(True)
    """Late-move reductions: quiet moves late in the order searched one move shallower first (on:
    two moves deeper at 0.1 s, and 6 wins to 2 losses in 60 games against it off)."""
    lmr_deep: bool = switch(False)
    """With ``lmr``, quiet moves from the sixth on at depth 4 or more are searched two moves shallower
    first (with MLP leaves about a move deeper, no measurable strength in 40 games: off)."""
    lmr_log: bool = switch(False)
    """With ``lmr``, late quiet moves reduced by ``ln(depth) ln(k + 1) / 2`` moves (rounded, at least
    1, leaving at least one), ``k`` the move's place in the order: about half the nodes to depth 14,
    31 wins to 23 losses in 180 games against it off at equal nodes, but against DarkHorse at 0.1 s
    0.355 (8/55/37) where off scored 0.400 (8/64/28): off."""
    counter: bool = switch(False)
    """Order the quiet reply that last cut off after the opponent's previous move (a counter-move)
    after the killers, before history."""
    iir: bool = switch(False)
    """Internal iterative reduction: a node of depth 4 or more without a move in the table is searched
    a move shallower."""
    aspiration: float = tunable(0.0, 0.0, 1.0, 0.05)
    """Half-width of the aspiration window around the last iteration's score, in men (0: off)."""
    lmr_min_depth: int = tunable(3, 2, 8, 1)
    """With ``lmr``: the least remaining depth (moves) at which a late quiet move is reduced."""
    lmr_min_move: int = tunable(3, 1, 12, 1)
    """With ``lmr``: the first place in the move order (0-based) that counts as late."""
    lmr_deep_min_depth: int = tunable(4, 3, 10, 1)
    """With ``lmr_deep``: the least remaining depth of the deeper reduction."""
    lmr_deep_min_move: int = tunable(5, 2, 16, 1)
    """With ``lmr_deep``: the first place in the move order the deeper reduction takes."""
    lmr_deep_reduction: int = tunable(2, 1, 4, 1)
    """With ``lmr_deep``: moves the deeper reduction takes off (leaving at least one)."""
    iir_min_depth: int = tunable(4, 2, 10, 1)
    """With ``iir``: the least remaining depth of an internal iterative reduction."""
    next_iteration_share: float = tunable(NEXT_ITERATION_SHARE, 0.3, 1.0, 0.05)
    """No new iteration starts once this share of a move's time is spent (``NEXT_ITERATION_SHARE``)."""
    database_pieces: int = tunable(0, 0, 10, 1)
    """Probe the endgame database in positions of at most this many pieces (0: every position it
    holds): fewer probes, less time in them."""

    def __post_init__(self) -> None:
        if not 4 <= self.table_bits <= 28:
            raise ValueError(f"table_bits must be in 4..28, got {self.table_bits!r}")
        for name, (low, high, _) in tunable_fields().items():
            value = getattr(self, name)
            if isinstance(value, str) or not low <= value <= high:
                raise ValueError(f"{name} must be in {low:g}..{high:g}, got {value!r}")

    @property
    def flags(self) -> int:
        pairs = (
            (self.table, s.OPT_TABLE),
            (self.pvs, s.OPT_PVS),
            (self.killers, s.OPT_KILLERS),
            (self.history, s.OPT_HISTORY),
            (self.quiescence, s.OPT_QUIESCENCE),
            (self.lmr, reductions.OPT_LMR),
            (self.lmr_deep, reductions.OPT_LMR_DEEP),
            (self.lmr_log, reductions.OPT_LMR_LOG),
            (self.iir, s.OPT_IIR),
            (self.counter, s.OPT_COUNTER),
        )
        return sum(flag for on, flag in pairs if on)

    @property
    def tuned(self) -> tuple[int, ...]:
        """The ``aux`` entries at ``search.A_TUNED`` (``T_*`` order)."""
        return (self.lmr_min_depth, self.lmr_min_move, self.lmr_deep_min_depth, self.lmr_deep_min_move,
                self.lmr_deep_reduction, self.iir_min_depth)  # fmt: skip

    def changed(self) -> dict[str, Any]:
        """The tunable fields whose values differ from the defaults."""
        return {k: getattr(self, k) for k in tunable_fields() if getattr(self, k) != DEFAULTS[k]}


def tunable_fields() -> dict[str, tuple[float, float, float]]:
    """Each tunable field of ``SearchOptions`` with its (low, high, step), in declaration order."""
    return {
        f.name: f.metadata["tunable"] for f in dataclasses.fields(SearchOptions) if "tunable" in f.metadata
    }


OPTIONS_KEY = "search_options"
"""The agent-file metadata entry holding a tuned ``SearchOptions`` (JSON of the changed fields)."""


def options_metadata(options: SearchOptions) -> dict[str, str]:
    """The agent-file metadata of ``options``: its changed tunable fields as JSON (``{}``: defaults)."""
    changed = options.changed()
    return {OPTIONS_KEY: json.dumps(changed, sort_keys=True)} if changed else {}


def options_from_metadata(metadata: Mapping[str, str], base: SearchOptions) -> SearchOptions:
    """``base`` with the tuned fields an agent file's metadata holds (``options_metadata``);
    ``ValueError`` (one line) for an entry that is not a tuned set."""
    text = metadata.get(OPTIONS_KEY)
    if not text:
        return base
    try:
        values = json.loads(text)
        unknown = sorted(set(values) - set(tunable_fields()))
        if unknown:
            raise ValueError(f"no tunable search option {unknown[0]!r}")
        return dataclasses.replace(base, **values)
    except (ValueError, TypeError, AttributeError) as e:
        raise ValueError(f"its {OPTIONS_KEY} metadata is not a tuned search: {e}") from None


DEFAULTS = {name: getattr(SearchOptions(), name) for name in tunable_fields()}
"""The tunable fields' defaults."""
PLAIN = SearchOptions(table=False, pvs=False, killers=False, history=False, quiescence=False, lmr=False)
"""Plain fixed-depth alpha-beta: the same scores as the JAX ``alphabeta_search``."""


CACHE_LINE = 64
"""Bytes of a CPU cache line: a bucket of the table (two 16-byte entries) never straddles two."""


def aligned_table(bits: int) -> np.ndarray:
    """A zeroed transposition table of ``2**bits`` entries ([rows, 2] int64: key, data) whose start is
    aligned to a cache line, so each bucket's probe touches one line (NumPy aligns to 16 bytes)."""
    rows = 1 << bits
    raw = np.zeros(2 * rows + CACHE_LINE // 8, np.int64)
    skip = (-raw.ctypes.data % CACHE_LINE) // 8
    return raw[skip : skip + 2 * rows].reshape(rows, 2)


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """One move's search: the move (its JAX actions), its score and what it cost."""

    actions: tuple[int, ...]
    """The move as our JAX actions (one per step or jump); empty when there is no legal move."""
    move: tuple[int, ...]
    """The move as source, destination, captured bitboard and path (``movegen``'s row; empty with
    no legal move)."""
    score: float
    """The move's score from the mover's view, in men (a won game near ``WIN_SCORE``)."""
    depth: int
    """The deepest completed iteration (whole moves); 0 for an only move."""
    nodes: int
    """Nodes searched (positions entered, leaves included)."""
    seconds: float
    """Wall time of the search."""
    seldepth: int
    """The longest path searched (whole moves, capture extensions included)."""


class CompiledSearch:
    """The compiled search of one game at a time (its table kept between moves; ``new_game`` clears)."""

    def __init__(
        self,
        rules: SearchRules | Rules,
        options: SearchOptions | None = None,
        leaves: nw.LeafNetwork | None = None,
        endgame: eg.SearchDB | None = None,
    ):
        self.search_rules = rules if isinstance(rules, SearchRules) else SearchRules(rules)
        self.options = SearchOptions() if options is None else options
        self.leaves = nw.MATERIAL if leaves is None else leaves
        n = self.search_rules.rules.num_squares
        if self.leaves.num_squares not in (0, n):
            raise ValueError(
                f"the network {self.leaves.name!r} reads {self.leaves.num_squares} squares, the board has {n}"
            )
        self.endgame = endgame
        if endgame is not None and int(endgame.array[eg.E_SQUARES]) != n:
            raise ValueError(f"the endgame database {endgame.name!r} is for another board than {n} squares")
        self.edb = eg.NONE if endgame is None else endgame.array
        self.net = self.leaves.fresh(s.MAX_PLY + 1)
        self.geo = geometry(self.search_rules)
        self.tt = aligned_table(self.options.table_bits)
        self.moves = move_buffer(s.MAX_PLY)
        self.aux = np.zeros(s.AUX_SIZE, np.int64)

    @property
    def rules(self) -> Rules:
        return self.search_rules.rules

    def new_game(self) -> None:
        """Forget the table and the move-ordering statistics."""
        self.tt[:] = 0
        self.aux[:] = 0

    def legal_moves(self, position: Position) -> np.ndarray:
        """[n, 4] int64 rows (source, destination, captured, path) of the position's whole-turn moves."""
        om, ok, pm, pk = position.relative()
        n = generate(self.geo, om, ok, pm, pk, np.int64(position.color), self.moves, np.int64(0))
        return self.moves[:n, [M_FROM, M_TO, M_CAPTURED, M_PATH]].copy()

    def key(self, position: Position) -> int:
        return int(s.position_key(self.geo, *position.relative(), np.int64(position.color)))

    def search(
        self,
        position: Position,
        *,
        seconds: float | None = None,
        nodes: int | None = None,
        depth: int | None = None,
        ply: int = 0,
        quiet: int = 0,
        history: Sequence[Position] = (),
    ) -> SearchResult:
        """The best move of ``position`` within ``seconds``, ``nodes`` and ``depth`` (at least one of
        them). ``ply``: actions played in the game so far; ``quiet``: plies since the quiet counter's
        last reset; ``history``: the positions since the last capture or man's move, oldest first (for
        repetitions)."""
        if seconds is None and nodes is None and depth is None:
            raise ValueError("give a budget: seconds, nodes or depth")
        if seconds is not None and seconds <= 0:
            raise ValueError(f"seconds must be > 0, got {seconds!r}")
        for name, value in (("nodes", nodes), ("depth", depth)):
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1, got {value!r}")
        start = time.monotonic_ns()
        self._check(position)
        legal = self.legal_moves(position)
        if len(legal) == 0 or (len(legal) == 1 and depth is None):
            actions, move = (self._actions(legal[0]), tuple(map(int, legal[0]))) if len(legal) else ((), ())
            return SearchResult(actions, move, 0.0, 0, 0, (time.monotonic_ns() - start) / 1e9, 0)
        self._prepare(position, start, seconds, nodes, history)
        args = self._root_args(position, ply, quiet, len(history))
        best, best_score, done = legal[0], 0, 0
        for d in range(1, min(MAX_DEPTH, depth or MAX_DEPTH) + 1):
            score, complete = self._iteration(args, d, best_score if done else None)
            if self.aux[s.A_BEST_SET] and (complete or self._trusted_partial(score)):
                best = self.aux[[s.A_BEST_FROM, s.A_BEST_TO, s.A_BEST_CAPTURED, s.A_BEST_PATH]].copy()
                best_score = int(self.aux[s.A_BEST_SCORE])
            if not complete:
                break
            done = d
            elapsed = (time.monotonic_ns() - start) / 1e9
            if abs(best_score) > s.WIN_BOUND or (
                seconds and elapsed > self.options.next_iteration_share * seconds
            ):
                break
        elapsed = (time.monotonic_ns() - start) / 1e9
        nodes, seldepth = int(self.aux[s.A_NODES]), int(self.aux[s.A_SELDEPTH])
        move = tuple(map(int, best))
        return SearchResult(self._actions(best), move, best_score / s.UNIT, done, nodes, elapsed, seldepth)

    def _check(self, position: Position) -> None:
        """``ValueError`` (one line) for a position that cannot occur on this board."""
        if position.color not in (0, 1):
            raise ValueError(f"color must be 0 (Black) or 1 (White), got {position.color!r}")
        p, r = position, self.rules
        check_position(r.board_size, r.men_per_side, p.black_men, p.black_kings, p.white_men, p.white_kings)

    def _prepare(self, position, start, seconds, nodes, history) -> None:
        aux = self.aux
        aux[s.A_NODES] = aux[s.A_STOP] = aux[s.A_SELDEPTH] = 0
        aux[s.A_DEADLINE] = start + int(seconds * 1e9) if seconds else 2**62
        aux[s.A_NODE_LIMIT] = nodes if nodes else 2**62
        aux[s.A_OPTIONS] = self.options.flags
        aux[s.A_NET : s.A_NET + nw.N_SIZE] = self.leaves.header
        pieces = int(self.edb[eg.E_PIECES])
        limit = self.options.database_pieces
        aux[s.A_ENDGAME_PIECES] = min(pieces, limit) if limit else pieces
        aux[s.A_TUNED : s.A_TUNED + s.N_TUNED] = self.options.tuned
        aux[s.A_KILLERS : s.A_HISTORY] = -1
        aux[s.A_HISTORY : s.A_PATH] //= 2  # old history counts half
        history = list(history)[-s.MAX_HISTORY :]
        aux[s.A_HISTORY_LEN] = len(history)
        for j, earlier in enumerate(history):
            aux[s.A_PATH + j] = self.key(earlier)

    def _root_args(self, position: Position, ply: int, quiet: int, rev: int) -> tuple:
        om, ok, pm, pk = position.relative()
        color = np.int64(position.color)
        key = s.position_key(self.geo, om, ok, pm, pk, color)
        if self.leaves.kind != nw.KIND_MATERIAL:
            nw.refresh(self.geo, self.net, self.aux[s.A_NET :], om, ok, pm, pk, color, np.int64(0))
        self.aux[s.A_ACC_VALID] = 0
        return om, ok, pm, pk, color, key, np.int64(ply), np.int64(quiet), np.int64(rev)

    def _iteration(self, args, depth: int, previous: int | None) -> tuple[int, bool]:
        """One iteration of ``depth`` (with an aspiration window around ``previous`` when switched on):
        ``(score, complete)``."""
        window = int(self.options.aspiration * s.UNIT)
        lo, hi = -s.INFINITE, s.INFINITE
        if window and previous is not None and abs(previous) < s.WIN_BOUND:
            lo, hi = previous - window, previous + window
        while True:
            self.aux[s.A_BEST_SET] = 0
            self._window = lo
            score = int(self._negamax(args, depth, lo, hi))
            if self.aux[s.A_STOP]:
                return score, False
            if lo < score < hi or (lo == -s.INFINITE and hi == s.INFINITE):
                return score, True
            lo, hi = (-s.INFINITE, hi) if score <= lo else (lo, s.INFINITE)

    def _trusted_partial(self, score: int) -> bool:
        """Whether a cut-off iteration's best move may replace the last one: it beat the window."""
        return int(self.aux[s.A_BEST_SCORE]) > self._window

    def _negamax(self, args, depth: int, alpha: int, beta: int) -> int:
        om, ok, pm, pk, color, key, ply, quiet, rev = args
        i64 = np.int64
        return s.negamax(self.geo, self.tt, self.moves, self.aux, self.net, self.edb, om, ok, pm, pk, color,
                         key, i64(depth), i64(alpha), i64(beta), i64(0), i64(0), ply, quiet, rev)  # fmt: skip

    def _actions(self, row) -> tuple[int, ...]:
        return move_actions(self.rules, int(row[0]), int(row[2]), int(row[3]))
