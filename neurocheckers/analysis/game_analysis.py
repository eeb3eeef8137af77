"""The analysis of one game, position by position: the compiled search's evaluation, best move and
line at a small fixed budget, the exact verdict where an endgame database holds the position (any
preset) or perfect play answers it (``american6`` and the other boards of at most 27 squares, by
``solve.oracle.PerfectPlay`` over the database), and each move that throws away the value of the
position it was played in (a win to a draw or a loss, a draw to a loss).

Verdicts are for the side to move and value positions by their pieces alone, as the databases and
the solution do: the game's move-count rules and its history are not in them. A decisive end of
the game is its own verdict (``game over``). The search plays by the preset's rules from the
position's ply and quiet counter, without the positions before it (no repetitions).

``analyse_game`` takes a game of a game file (``analysis.games``); ``analyse_states`` the positions
at each turn's start and the moves between them (the web's Play page). ``GameAnalysis.to_json`` is
the web's view, ``analysis_lines`` the text of ``show --analyse``, ``save_analysis_plot`` its PNG.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from neurocheckers.analysis.games import replay_game
from neurocheckers.compiled import endgame as search_db
from neurocheckers.compiled import network
from neurocheckers.compiled.board import Position, SearchRules
from neurocheckers.compiled.driver import CompiledSearch, SearchOptions, SearchResult
from neurocheckers.compiled.game import after, legal_rows
from neurocheckers.compiled.proof import MAX_SQUARES
from neurocheckers.endgame.database import LOSS, VALUE_NAMES, WIN
from neurocheckers.match.turns import timed_win_chance
from neurocheckers.networks.numpy_agent import NumpyAgent
from neurocheckers.players.registry import SearchReport
from neurocheckers.rules.notation import to_fen
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import State
from neurocheckers.rules.tables import tables
from neurocheckers.solve.oracle import PerfectPlay

MAX_ANALYSIS_NODES = 1_000_000
"""The largest node budget a position may be given (the web's cap too)."""
MATERIAL_SCALE = 3.0
"""Men of material lead that bend the graph's value to tanh(1) = 0.76 (material leaves)."""
SOURCES = ("game over", "endgame database", "perfect play")
"""Where a verdict comes from."""


@dataclasses.dataclass(frozen=True)
class AnalysisOptions:
    """How much each position is searched, and how far perfect play may look."""

    nodes: int = 20_000
    """The search's node budget a position (its line's searches get as many each)."""
    depth: int | None = None
    """A depth cap (whole moves; None: the node budget alone)."""
    line_moves: int = 8
    """The most moves of the engine's line shown (the best move included)."""
    perfect_nodes: int = 500_000
    """Perfect play's node budget a question; a position it cannot answer within it gets no perfect
    verdict, nor do the earlier positions of as many pieces or more (they are tried from the end)."""
    table_bits: int = 18
    """The search's table, 2**bits entries (kept over the game's positions)."""

    def __post_init__(self) -> None:
        if not 1 <= self.nodes <= MAX_ANALYSIS_NODES:
            raise ValueError(f"nodes must be in 1..{MAX_ANALYSIS_NODES}, got {self.nodes!r}")
        if self.depth is not None and self.depth < 1:
            raise ValueError(f"depth must be >= 1, got {self.depth!r}")
        if self.line_moves < 1:
            raise ValueError(f"line_moves must be >= 1, got {self.line_moves!r}")


@dataclasses.dataclass(frozen=True)
class PositionAnalysis:
    """One position of the game (at a turn's start) and the move played from it."""

    index: int
    """Whole moves played before it (0: the start)."""
    fen: str
    to_move: str
    """``black`` or ``white``."""
    over: bool
    """Whether the game is over here."""
    black_value: float
    """Black's outlook in [-1, 1] (the graph): ``2 c - 1`` of Black's win chance ``c`` with a network
    at the leaves or a proven result, else ``tanh(score / MATERIAL_SCALE)`` of the material score;
    the result once the game is over."""
    score: float | None = None
    """The search's score from the mover's view (men with material leaves; None at the end)."""
    black_chance: float | None = None
    """Black's chance of winning (network leaves or a proven result; None for a material score)."""
    best_move: str | None = None
    line: tuple[str, ...] = ()
    """The engine's line from here, the best move first."""
    depth: int = 0
    nodes: int = 0
    verdict: str | None = None
    """``win``, ``draw`` or ``loss`` for the side to move, where it is known exactly."""
    source: str | None = None
    """Where the verdict comes from (``SOURCES``)."""
    distance: int | None = None
    """Whole moves to the end under perfect play (the database's; None where it does not say)."""
    move: str | None = None
    """The move played from here (None at the game's last position)."""
    move_leaves: str | None = None
    """The value the played move leaves its mover (the next position's verdict turned over)."""
    throws: bool = False
    """Whether the played move throws away this position's value."""

    def throw_text(self) -> str:
        """``win -> draw`` for a move that throws away the value, else ``""``."""
        return f"{self.verdict} -> {self.move_leaves}" if self.throws else ""


@dataclasses.dataclass(frozen=True)
class GameAnalysis:
    rules: str
    leaves: str
    """What scored the search's leaves: ``material`` or the agent file's name."""
    options: AnalysisOptions
    positions: tuple[PositionAnalysis, ...]
    perfect_play: bool
    """Whether perfect play was asked (a board it covers, with a database)."""
    database_pieces: int
    """The most pieces of the endgame database used (0: none)."""

    def thrown(self) -> list[int]:
        """The indices of the positions whose played move throws away the value."""
        return [p.index for p in self.positions if p.throws]

    def to_json(self) -> dict[str, Any]:
        return {
            "rules": self.rules,
            "leaves": self.leaves,
            "nodes": self.options.nodes,
            "depth": self.options.depth,
            "perfect_play": self.perfect_play,
            "database_pieces": self.database_pieces,
            "thrown": self.thrown(),
            "positions": [dataclasses.asdict(p) | {"line": list(p.line)} for p in self.positions],
        }


def leaf_network(agent: str | Path | None, rules: Rules) -> network.LeafNetwork:
    """The leaves of the agent file ``agent`` (an MLP or NNUE network of ``rules``' board), or material
    for None; ``ValueError`` (one line) for another architecture or board."""
    if agent is None:
        return network.MATERIAL
    leaves = dataclasses.replace(network.from_agent(NumpyAgent.load(agent)), name=Path(agent).name)
    if leaves.num_squares not in (0, rules.num_squares):
        raise ValueError(f"the agent file {Path(agent).name} is for another board than {rules.name}")
    return leaves


def perfect_play(
    rules: Rules, endgame: search_db.SearchDB | None, table_bits: int = 20
) -> PerfectPlay | None:
    """Perfect play over ``endgame`` for a board it covers (at most ``MAX_SQUARES`` squares), else None."""
    if endgame is None or rules.num_squares > MAX_SQUARES:
        return None
    return PerfectPlay(rules, endgame, table_bits=table_bits)


def analyse_game(
    rules: Rules,
    game: dict[str, Any],
    options: AnalysisOptions = AnalysisOptions(),
    leaves: network.LeafNetwork = network.MATERIAL,
    endgame: search_db.SearchDB | None = None,
    perfect: PerfectPlay | None = None,
) -> GameAnalysis:
    """The analysis of ``game`` (a game dict of a game file); ``ValueError`` naming a bad move."""
    states, moves = replay_game(rules, game)
    return analyse_states(rules, states, [m.notation for m in moves], options, leaves, endgame, perfect)


def analyse_states(
    rules: Rules,
    states: Sequence[State],
    moves: Sequence[str],
    options: AnalysisOptions = AnalysisOptions(),
    leaves: network.LeafNetwork = network.MATERIAL,
    endgame: search_db.SearchDB | None = None,
    perfect: PerfectPlay | None = None,
) -> GameAnalysis:
    """The analysis of the positions ``states`` (each at a turn's start; unbatched ``State``s) and the
    whole moves ``moves`` between them (one fewer). ``endgame``: a database of ``rules`` for exact
    verdicts; ``perfect``: perfect play (``perfect_play``) for the positions the database lacks."""
    if len(states) != len(moves) + 1:
        raise ValueError(
            f"{len(states)} positions need {len(states) - 1} moves between them, got {len(moves)}"
        )
    search_rules = SearchRules(rules)
    search = CompiledSearch(search_rules, SearchOptions(table_bits=options.table_bits), leaves, endgame)
    verdicts = _verdicts(states, endgame, perfect, options.perfect_nodes)
    positions = []
    for i, state in enumerate(states):
        move = moves[i] if i < len(moves) else None
        verdict = verdicts[i]
        leaves_value = None if i + 1 >= len(states) or verdicts[i + 1] is None else 2 - verdicts[i + 1][0]
        fields: dict[str, Any] = {
            "index": i,
            "fen": to_fen(state),
            "to_move": "black" if int(state.color) == 0 else "white",
            "over": bool(state.terminated),
            "move": move,
        }
        if verdict is not None:
            fields.update(verdict=VALUE_NAMES[verdict[0]], source=verdict[1], distance=verdict[2])
        if move is not None and verdict is not None and leaves_value is not None:
            fields.update(move_leaves=VALUE_NAMES[leaves_value], throws=leaves_value < verdict[0])
        if bool(state.terminated):
            fields["black_value"] = float(int(state.result))
        else:
            fields.update(_searched(search, rules, state, options, leaves is not network.MATERIAL))
        positions.append(PositionAnalysis(**fields))
    database_pieces = 0 if endgame is None else int(endgame.max_pieces)
    name = "material" if leaves is network.MATERIAL else leaves.name or "network"
    return GameAnalysis(rules.name, name, options, tuple(positions), perfect is not None, database_pieces)


def _searched(
    search: CompiledSearch, rules: Rules, state: State, options: AnalysisOptions, network_leaves: bool
) -> dict[str, Any]:
    """The search's fields of one position that is not over: score, chances, best move, line."""
    position = Position.from_state(state)
    quiet = 0 if search.search_rules.man_moves_reset else int(state.plies_without_capture)
    depth = options.depth or 100
    result = search.search(position, nodes=options.nodes, depth=depth, ply=int(state.ply), quiet=quiet)
    chance = timed_win_chance(SearchReport.of(result), network_leaves)
    mover_black = position.color == 0
    black_chance = None if chance is None else (chance if mover_black else 1.0 - chance)
    if black_chance is not None:
        black_value = 2.0 * black_chance - 1.0
    else:
        black_value = math.tanh((result.score if mover_black else -result.score) / MATERIAL_SCALE)
    line = _line(search, rules, position, result, options)
    return {
        "score": result.score,
        "black_chance": black_chance,
        "black_value": black_value,
        "best_move": line[0] if line else None,
        "line": line,
        "depth": result.depth,
        "nodes": result.nodes,
    }


def _line(
    search: CompiledSearch, rules: Rules, position: Position, first: SearchResult, options: AnalysisOptions
) -> tuple[str, ...]:
    """The best move and the replies the search finds after it, each searched one move shallower
    (the table kept: mostly its own entries), until the depth or ``options.line_moves`` runs out."""
    if not first.move:
        return ()
    line, row, depth = [], first.move, max(first.depth, 1)
    while True:
        line.append(move_notation(rules, row))
        position = after(search.geo, position, row)
        depth -= 1
        if depth < 1 or len(line) >= options.line_moves or len(legal_rows(search.geo, position)) == 0:
            return tuple(line)
        row = search.search(position, nodes=options.nodes, depth=depth).move


def move_notation(rules: Rules, row: Sequence[int]) -> str:
    """``11-15`` or ``9x18x27`` of a compiled whole-turn move (source, destination, captured, path)."""
    t = tables(rules.board_size)
    source, captured, path = int(row[0]), int(row[2]), int(row[3])
    jumps = bin(captured).count("1")
    square, squares = source, [source + 1]
    for k in range(max(jumps, 1)):
        d = (path >> (2 * k)) & 3
        square = int(t.jump_landing[d, square] if jumps else t.neighbor[d, square])
        squares.append(square + 1)
    return ("x" if jumps else "-").join(map(str, squares))


def _verdicts(
    states: Sequence[State], endgame: search_db.SearchDB | None, perfect: PerfectPlay | None, budget: int
) -> list[tuple[int, str, int | None] | None]:
    """Each position's exact value for its mover, its source and distance, or None. From the game's
    end backwards: a decisive end is its own; the database's where it holds the position; else
    perfect play's, until it fails a position within ``budget`` nodes (then not for as many pieces
    or more)."""
    found: list[tuple[int, str, int | None] | None] = [None] * len(states)
    ceiling = math.inf  # perfect play is tried below this many pieces
    for i in reversed(range(len(states))):
        state = states[i]
        if bool(state.terminated) and int(state.result) != 0:
            mover = 1 if int(state.color) == 0 else -1
            found[i] = (WIN if int(state.result) == mover else LOSS, SOURCES[0], 0)
            continue
        position = Position.from_state(state)
        if endgame is not None:
            entry = int(search_db.probe(endgame.array, *position.relative(), np.int64(position.color)))
            if entry >= 0:
                found[i] = (entry & 3, SOURCES[1], entry >> 2)
                continue
        pieces = sum(bin(b).count("1") for b in dataclasses.astuple(position)[:4])
        if perfect is None or pieces >= ceiling:
            continue
        perfect.node_limit = budget
        try:
            found[i] = (perfect.value(position), SOURCES[2], None)
        except RuntimeError:  # no answer within the budget
            ceiling = pieces
    return found


def analysis_lines(analysis: GameAnalysis) -> list[str]:
    """The analysis as text, a line a position: move number, side, the move played (``!?`` marks one
    that throws away the value), Black's outlook, the verdict and the engine's line."""
    lines = [
        f"analysis of a {analysis.rules} game: compiled search, {analysis.options.nodes} nodes a position,"
        f" {analysis.leaves} leaves; verdicts: "
        + (
            f"endgame database up to {analysis.database_pieces} pieces"
            if analysis.database_pieces
            else "none"
        )
        + (", perfect play" if analysis.perfect_play else "")
    ]
    for p in analysis.positions:
        played = (p.move or "(end)") + (" ??" if p.throws else "")
        outlook = f"{p.black_value:+.2f}" if p.black_chance is None else f"{p.black_chance:.0%}"
        verdict = (
            f"{p.verdict} ({p.source}" + (f", {p.distance}" if p.distance else "") + ")" if p.verdict else "-"
        )
        text = f"{p.index:3d} {p.to_move[0].upper()} {played:14s} black {outlook:>6s}  {verdict:28s}"
        if p.line:
            text += f" best {p.best_move}: {' '.join(p.line)}"
        if p.throws:
            text += f"  [throws away the {p.verdict}: {p.throw_text()}]"
        lines.append(text.rstrip())
    thrown = [f"{p.index}. {p.move}" for p in analysis.positions if p.throws]
    lines.append(f"moves that throw away the value: {', '.join(thrown) if thrown else 'none'}")
    return lines


def save_analysis_plot(analysis: GameAnalysis, path: str | Path) -> Path:
    """The evaluation graph as a PNG: Black's outlook over the moves, verdicts as coloured dots and
    the moves that throw away the value as red crosses."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [p.index for p in analysis.positions]
    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    ax.axhline(0, color="#999", linewidth=0.8)
    ax.plot(xs, [p.black_value for p in analysis.positions], color="#1d5a8a", label="Black's outlook")
    colours = {"win": "#2a7", "draw": "#888", "loss": "#c33"}
    for name, colour in colours.items():
        held = [p for p in analysis.positions if p.verdict == name]
        if held:
            ys = [p.black_value for p in held]
            ax.scatter(
                [p.index for p in held], ys, color=colour, s=18, zorder=3, label=f"{name} for the mover"
            )
    thrown = [p for p in analysis.positions if p.throws]
    if thrown:
        ax.scatter([p.index for p in thrown], [p.black_value for p in thrown], marker="x", color="#c00", s=70,
                   zorder=4, label="throws away the value")  # fmt: skip
    ax.set(ylim=(-1.05, 1.05), xlabel="move", ylabel="Black's outlook", title=f"{analysis.rules}: analysis")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path


__all__ = [
    "AnalysisOptions",
    "GameAnalysis",
    "PositionAnalysis",
    "analyse_game",
    "analyse_states",
    "analysis_lines",
    "leaf_network",
    "move_notation",
    "perfect_play",
    "save_analysis_plot",
]
