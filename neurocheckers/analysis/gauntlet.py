"""The gauntlet: rate any player on a fixed ladder of opponents over paired openings.

Every match of the gauntlet starts from the same committed openings (``rules.openings``), each played
twice with the colours swapped, so a score reflects the players and not the starts. Three kinds of
rows:

- ``ladder``: the player against ``random``, ``greedy-material`` and ``alphabeta:1..D`` (material
  evaluation);
- ``equal-depth``: when the player has a network (an agent file), that network at the leaves of a
  depth-``d`` alpha-beta against the material count at the same depth (``alphabeta:d:FILE`` against
  ``alphabeta:d``; Fogel's test);
- ``calibration``: neighbouring ladder opponents against each other, so that one Elo fit over all
  games puts every player on one scale, anchored at ``random`` = 0 (``islands``).

The ``american8`` ladder (``ladder = "american8"``) adds the real rulers: material alpha-beta to
depth 6, the hand-written evaluation (``alphabeta:D:heuristic``) at depths 2-6, OpenSpiel's MCTS
with 1,000 simulations and py-draughts' engine at depths 4, 6 and 8, and a second equal-depth test
against the heuristic. With ``equal_time`` the player's ladder rows are played by the timed search
with its network (``timed:equal:FILE``; on the american8 ladder the compiled search,
``compiled:equal:FILE``, once its registry forms take a FILE), which gets at each move the
opponent's mean thinking time per move so far; every row then reports both sides' seconds and
search depth per move, each game's moves timed one game at a time (``match.clock.MoveClock``).

A score's 95% interval treats each opening's pair of games as one observation (the games of a pair
are correlated), as engine testers do with paired openings.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

from neurocheckers.analysis.gauntlet_config import GauntletConfig
from neurocheckers.analysis.gauntlet_rows import ANCHOR, Rating, Row, islands, rate
from neurocheckers.formats import display_name
from neurocheckers.match.arena import MatchOptions
from neurocheckers.match.host import MoveClock, parse_any_player, play_any_match
from neurocheckers.players.external import darkhorse_built
from neurocheckers.players.jax_players import trained_player_spec
from neurocheckers.players.registry import kind_of, spec_agent_file
from neurocheckers.rules.openings import load_openings, opening_states
from neurocheckers.rules.presets import Rules
from neurocheckers.stats import paired_interval

AMERICAN8_LADDER = (
    ("random",)
    + tuple(f"alphabeta:{d}" for d in range(1, 7))
    + tuple(f"alphabeta:{d}:heuristic" for d in range(2, 7))
    + ("openspiel:mcts:1000", "pydraughts:4", "pydraughts:6", "pydraughts:8", "compiled:100000n")
)
"""The opponents of the ``american8`` ladder, weakest first within each family; the compiled search
(material leaves, 100,000 nodes a move: deterministic) last."""
DARKHORSE_RUNG = "darkhorse:0.1"
"""DarkHorse at 0.1 s a move: the top rung of the ``american8`` ladder where its driver is built
(``scripts/build_darkhorse.sh``; ``players.external.darkhorse_built``)."""
SLOW_ENGINES = ("openspiel:mcts:1000", "pydraughts:8", DARKHORSE_RUNG)
"""Opponents slow enough (about a second a move in Python, or a tenth of one in long games) to get
``engine_openings``."""


def american8_ladder() -> list[str]:
    """``AMERICAN8_LADDER``, and DarkHorse on top where it is built here."""
    return [*AMERICAN8_LADDER, *([DARKHORSE_RUNG] if darkhorse_built() else [])]


@dataclasses.dataclass(frozen=True)
class GauntletResult:
    rules: str
    player: str
    config: GauntletConfig
    rows: tuple[Row, ...]
    ratings: tuple[Rating, ...]

    def rating_of(self, player: str) -> Rating:
        return next(r for r in self.ratings if r.player == player)


def agent_file_of(spec: str) -> str | None:
    """The agent file a player spec uses, if any (``players.registry.spec_agent_file``), or a bare
    ``FILE.safetensors``."""
    if ":" not in spec and spec.endswith(".safetensors"):
        return spec
    return spec_agent_file(spec)


def player_spec(spec: str, rules: Rules) -> str:
    """A bare agent file becomes the player it was trained as, from its metadata: ``alphabeta:D:FILE``
    when its ``search`` is alphabeta (``depth`` D), else ``mcts:FILE:SIMS`` (``simulations``; 16 when
    not recorded); other specs pass through."""
    if ":" in spec or not spec.endswith(".safetensors"):
        return spec
    from neurocheckers.networks.agent_file import load_agent

    try:
        metadata = load_agent(spec, rules).metadata
    except (FileNotFoundError, ValueError) as e:
        raise ValueError(f"bad player {spec!r}: {e}") from None
    return trained_player_spec(spec, metadata)


def pairings(player: str, config: GauntletConfig) -> list[tuple[str, str, str]]:
    """``(kind, player, opponent)`` for every match of the gauntlet of ``player``."""
    agent = agent_file_of(player)
    if config.ladder == "american8":
        ladder = american8_ladder()
        material_depths = list(range(1, 7))
    else:
        ladder = [ANCHOR, "greedy-material"] + [f"alphabeta:{d}" for d in range(1, config.depth + 1)]
        material_depths = list(range(1, config.depth + 1))
    ladder_player = (
        equal_time_player(agent, config.ladder) if config.equal_time and agent is not None else player
    )
    rows = [("ladder", ladder_player, opponent) for opponent in ladder if opponent != player]
    if agent is not None:
        rows += [("equal-depth", f"alphabeta:{d}:{agent}", f"alphabeta:{d}") for d in config.equal_depths]
        rows += [
            ("equal-depth", f"alphabeta:{d}:{agent}", f"alphabeta:{d}:heuristic")
            for d in config.heuristic_depths
        ]
    material_depths = sorted({*material_depths, *(config.equal_depths if agent else ())})
    calibration = [ANCHOR, "greedy-material"] if config.ladder == "material" else [ANCHOR]
    calibration += [f"alphabeta:{d}" for d in material_depths]
    rows += [("calibration", b, a) for a, b in zip(calibration, calibration[1:], strict=False)]
    if config.ladder == "american8":
        heuristic = [f"alphabeta:{d}:heuristic" for d in range(2, 7)]
        rows += [("calibration", h, f"alphabeta:{d}") for h, d in zip(heuristic, range(2, 7), strict=True)]
    return _selected(rows, config)


def _selected(rows: list[tuple[str, str, str]], config: GauntletConfig) -> list[tuple[str, str, str]]:
    """The ``rows`` that ``config.only`` and ``config.kinds`` select; ``ValueError`` naming them and
    what there is when they select none."""
    chosen = [row for row in rows if not config.only or row[2] in config.only]
    chosen = [row for row in chosen if not config.kinds or row[0] in config.kinds]
    if rows and not chosen:
        opponents = ", ".join(dict.fromkeys(row[2] for row in rows))
        kinds = ", ".join(dict.fromkeys(row[0] for row in rows))
        options = (("--only", config.only), ("--kinds", config.kinds))
        asked = " and ".join(f"{option} {','.join(names)}" for option, names in options if names)
        raise ValueError(
            f"{asked} selects no match of this gauntlet (opponents: {opponents}; kinds: {kinds})"
        )
    return chosen


def equal_time_player(agent: str, ladder: str) -> str:
    """The equal-time spec of ``agent``'s ladder rows: ``compiled:equal:FILE`` on the american8 ladder
    when the compiled search takes a network (its registry forms name a FILE) and evaluates this one
    (an MLP or NNUE agent; a file not there is refused later, by the spec), else ``timed:equal:FILE``."""
    compiled = kind_of("compiled")
    if ladder != "american8" or compiled is None or ":FILE" not in compiled.forms:
        return f"timed:equal:{agent}"
    if Path(agent).is_file():
        from neurocheckers.compiled import network

        try:
            network.load(agent)
        except ValueError:  # a CNN or a transformer
            return f"timed:equal:{agent}"
    return f"compiled:equal:{agent}"


def play_row(rules: Rules, kind: str, a_spec: str, b_spec: str, starts, config: GauntletConfig) -> Row:
    """One match of ``a_spec`` against ``b_spec`` from every opening of ``starts`` with both colours
    (either may be a host player, ``match.host``), both sides timed when either is a host player."""
    a, b = parse_any_player(a_spec, rules), parse_any_player(b_spec, rules)
    openings = (
        config.engine_openings if config.engine_openings and b_spec in SLOW_ENGINES else config.openings
    )
    starts = jax.tree.map(lambda x: x[:openings], starts)
    games = 2 * openings
    clock = None if a.batched and b.batched else MoveClock()
    options = MatchOptions(
        games,
        config.seed,
        min(config.batch, games),
        config.max_plies,
        keep_actions=games if config.endgame or config.perfect_play else 0,
        openings=starts,
    )
    records = play_any_match(rules, a, b, options, clock=clock)
    score = np.asarray(records.score)
    mean, low, high = paired_interval(score)
    accuracy = _accuracy(rules, config.endgame, starts, records) if config.endgame else {}
    if config.perfect_play:
        accuracy |= _perfect(rules, config.perfect_play, starts, records)
    return Row(
        kind=kind,
        player=a_spec,
        opponent=b_spec,
        games=games,
        wins=int((score == 1.0).sum()),
        draws=int((score == 0.5).sum()),
        losses=int((score == 0.0).sum()),
        unfinished=int((~np.asarray(records.finished)).sum()),
        score=mean,
        low=low,
        high=high,
        player_seconds=None if clock is None else clock.per_move(True),
        opponent_seconds=None if clock is None else clock.per_move(False),
        player_depth=None if clock is None else clock.depth_per_move(True),
        opponent_depth=None if clock is None else clock.depth_per_move(False),
        pair_points=tuple(float(p) for p in score.reshape(-1, 2).mean(axis=1)),
        **accuracy,
    )


def _accuracy(rules: Rules, folder: str, starts, records) -> dict[str, int]:
    """The ``Row`` fields of both sides' move accuracy against the endgame database in ``folder``;
    game ``g`` started from opening ``g // 2``."""
    from neurocheckers.endgame.accuracy import move_accuracy
    from neurocheckers.endgame.database import EndgameDB

    games = len(np.asarray(records.score))
    game_starts = jax.tree.map(lambda x: np.asarray(x)[np.arange(games) // 2], starts)
    mine, theirs = move_accuracy(
        EndgameDB(folder, rules), game_starts, np.asarray(records.actions), np.asarray(records.a_is_black)
    )
    return {
        "player_db_positions": mine.positions,
        "player_blunders": mine.blunders,
        "opponent_db_positions": theirs.positions,
        "opponent_blunders": theirs.blunders,
    }


def _perfect(rules: Rules, folder: str, starts, records) -> dict[str, int]:
    """The ``Row`` fields of both sides' accuracy against perfect play over the database in
    ``folder`` (``analysis.perfect_play``); game ``g`` started from opening ``g // 2``."""
    from neurocheckers.analysis.perfect_play import load_oracle, perfect_accuracy, row_fields

    games = len(np.asarray(records.score))
    game_starts = jax.tree.map(lambda x: np.asarray(x)[np.arange(games) // 2], starts)
    mine, theirs = perfect_accuracy(
        load_oracle(folder, rules), game_starts, np.asarray(records.actions), np.asarray(records.a_is_black)
    )
    return row_fields("player", mine) | row_fields("opponent", theirs)


def blunder_text(positions: int | None, blunders: int | None) -> str:
    """``12.3 (4.1..28.0) /1000 of 812``: blunders per 1,000 database positions, 95% interval."""
    from neurocheckers.endgame.accuracy import Accuracy

    rate = Accuracy(positions or 0, blunders or 0).per_thousand()
    if rate is None:
        return "-"
    return f"{rate[0]:.1f} ({rate[1]:.1f}..{rate[2]:.1f}) of {positions}"


def gauntlet_openings(rules: Rules, config: GauntletConfig) -> list[tuple[str, int, int]]:
    """The committed openings ``config.first_opening`` .. ``+ openings - 1``; ``ValueError`` past the
    end of the set."""
    return load_openings(rules, config.openings, config.first_opening)


def gauntlet_plan(
    rules: Rules, player: str, config: GauntletConfig
) -> tuple[str, list[tuple[str, str, str]]]:
    """The player's spec (``player_spec``) and its matches (``pairings``), checked before any game is
    played: ``ValueError`` (one line) for a bad spec, a missing database or one of other rules, or
    ``--only`` / ``--kinds`` that select no match."""
    player = player_spec(player, rules)
    parse_any_player(player, rules)
    if config.endgame:
        from neurocheckers.endgame.database import EndgameDB

        EndgameDB(config.endgame, rules)
    if config.perfect_play:
        from neurocheckers.analysis.perfect_play import load_oracle

        load_oracle(config.perfect_play, rules)
    return player, pairings(player, config)


def run_gauntlet(
    rules: Rules,
    player: str,
    config: GauntletConfig = GauntletConfig(),  # noqa: B008 (frozen)
    on_row: Callable[[int, int, Row], None] | None = None,
) -> GauntletResult:
    """Play every match of the gauntlet of ``player`` (a player spec or an agent file) and rate it.
    ``on_row(done, total, row)`` is called after each match."""
    player, plan = gauntlet_plan(rules, player, config)
    starts = opening_states(rules, gauntlet_openings(rules, config))
    rows = []
    for n, (kind, a, b) in enumerate(plan):
        rows.append(play_row(rules, kind, a, b, starts, config))
        if on_row is not None:
            on_row(n + 1, len(plan), rows[-1])
    return GauntletResult(rules.name, player, config, tuple(rows), rate(rows))


def seconds_text(row: Row) -> str:
    """Both sides' mean seconds per move, or ``-`` for an untimed row, and their mean search depths
    where reported (``d 14.1 -``)."""
    if row.player_seconds is None or row.opponent_seconds is None:
        return "-"
    depths = [d for d in (row.player_depth, row.opponent_depth)]
    shown = (
        "" if depths == [None, None] else " d " + " ".join("-" if d is None else f"{d:.1f}" for d in depths)
    )
    return f"{row.player_seconds:.4f} {row.opponent_seconds:.4f}{shown}"


def format_gauntlet(result: GauntletResult) -> str:
    """The result as a text table: one line per match, then the ratings."""
    names = [display_name(r.player) for r in result.rows]
    width = max(len(n) for n in names + ["player"])
    opponent_width = max(len(r.opponent) for r in result.rows)
    lines = [
        f"gauntlet of {display_name(result.player)} on {result.rules}: {result.config.openings} openings"
        f" x 2 colours per match (seed {result.config.seed})",
        f"{'kind':<12} {'player':<{width}} {'opponent':<{opponent_width}} {'games':>5} {'W':>4} {'D':>4}"
        f" {'L':>4} {'score':>6}  95% CI        s/move (player, opponent), d: depth",
    ]
    for name, r in zip(names, result.rows, strict=True):
        lines.append(
            f"{r.kind:<12} {name:<{width}} {r.opponent:<{opponent_width}} {r.games:>5} {r.wins:>4}"
            f" {r.draws:>4} {r.losses:>4} {r.score:>6.3f}  {r.low:.3f}..{r.high:.3f}  {seconds_text(r)}"
        )
    if result.config.endgame:
        lines.append(
            "blunders per 1,000 endgame-database positions (95% CI) of N positions, player | opponent:"
        )
        for name, r in zip(names, result.rows, strict=True):
            lines.append(
                f"  {name:<{width}} vs {r.opponent:<{opponent_width}} "
                f"{blunder_text(r.player_db_positions, r.player_blunders)} | "
                f"{blunder_text(r.opponent_db_positions, r.opponent_blunders)}"
            )
    if result.config.perfect_play:
        lines += perfect_lines(result.rows, names, width, opponent_width)
    lines += format_ratings(result.rows, result.ratings, width)
    return "\n".join(lines)


def perfect_lines(rows: Sequence[Row], names: list[str], width: int, opponent_width: int) -> list[str]:
    """The table of both sides' accuracy against perfect play, one line a row."""
    from neurocheckers.analysis.perfect_play import from_row

    lines = ["moves that kept the value under perfect play (95% CI) of N graded, player | opponent:"]
    for name, r in zip(names, rows, strict=True):
        mine, theirs = (from_row(r, side) for side in ("player", "opponent"))
        shown = [a.text() if a is not None else "-" for a in (mine, theirs)]
        lines.append(f"  {name:<{width}} vs {r.opponent:<{opponent_width}} {shown[0]} | {shown[1]}")
    return lines


def format_ratings(rows: Sequence[Row], ratings: Sequence[Rating], width: int) -> list[str]:
    """The Elo block: the rated island's players, strongest first, on the scale of its anchor, then
    the islands that no game joins to it (not rated)."""
    anchor, found = islands(rows)
    if anchor is None:
        return ["ratings: none (no games)"]
    lines = [f"ratings (Elo, {display_name(anchor)} = 0, 95% CI):"]
    for rating in sorted(ratings, key=lambda x: -x.elo):
        interval = f"({rating.low:+.0f}..{rating.high:+.0f})"
        lines.append(f"  {display_name(rating.player):<{width}} {rating.elo:+6.0f}  {interval}")
    if len(found) > 1:
        groups = "; ".join(" + ".join(display_name(p) for p in island) for island in found[1:])
        lines.append(f"not rated: no games join these to {display_name(anchor)}: {groups}")
    return lines


def result_dict(result: GauntletResult) -> dict[str, Any]:
    return {
        "rules": result.rules,
        "player": result.player,
        "config": dataclasses.asdict(result.config),
        "rows": [dataclasses.asdict(r) for r in result.rows],
        "ratings": [dataclasses.asdict(r) for r in result.ratings],
    }


def read_gauntlet(path: str | Path) -> GauntletResult:
    """A ``gauntlet.json`` written by ``write_gauntlet``; ``ValueError`` naming the file if it is not one."""
    try:
        data = json.loads(Path(path).read_text())
        config = data["config"]
        config = GauntletConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in config.items()})
        rows = tuple(Row(**{**row, "pair_points": tuple(row.get("pair_points", ()))}) for row in data["rows"])
        ratings = tuple(Rating(**r) for r in data["ratings"])
        return GauntletResult(data["rules"], data["player"], config, rows, ratings)
    except (OSError, KeyError, TypeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a gauntlet.json ({e})") from None


def write_gauntlet(result: GauntletResult, out_dir: str | Path) -> dict[str, Path]:
    """``gauntlet.json``, ``gauntlet.csv`` and ``gauntlet.png`` (scores with intervals) in ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {"gauntlet.json": out / "gauntlet.json", "gauntlet.csv": out / "gauntlet.csv"}
    files["gauntlet.json"].write_text(json.dumps(result_dict(result), indent=2) + "\n")
    with files["gauntlet.csv"].open("w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        fields = [field.name for field in dataclasses.fields(Row) if field.name != "pair_points"]
        writer.writerow(fields)
        for r in result.rows:
            writer.writerow([getattr(r, name) for name in fields])
    files["gauntlet.png"] = plot_gauntlet(result, out / "gauntlet.png")
    return files


def plot_gauntlet(result: GauntletResult, path: Path) -> Path:
    """Horizontal bars of each match's score with its 95% interval; 0.5 marked."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    rows = [r for r in result.rows if r.kind != "calibration"]
    colors = {"ladder": "tab:blue", "equal-depth": "tab:orange"}
    fig = Figure(figsize=(8, 0.45 * len(rows) + 1.8))
    ax = fig.add_subplot()
    y = np.arange(len(rows))[::-1]
    errors = np.array([[r.score - r.low for r in rows], [r.high - r.score for r in rows]])
    ax.barh(y, [r.score for r in rows], xerr=errors, color=[colors[r.kind] for r in rows], capsize=3)
    ax.set_yticks(y, [f"{display_name(r.player)} vs {r.opponent}" for r in rows], fontsize=8)
    ax.axvline(0.5, color="black", lw=0.8, ls="--")
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"score (points per game, 95% CI; {max(r.games for r in rows)} games a row at most)")
    ax.set_title(f"gauntlet of {display_name(result.player)} on {result.rules}", fontsize=10)
    handles = [Patch(color=c, label=k) for k, c in colors.items() if any(r.kind == k for r in rows)]
    ax.legend(handles=handles, loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path
