"""Boards drawn with matplotlib: one position, or a whole saved game as an animated GIF or SVGs.

The board is drawn as in the text diagrams: Black at the top, square numbers (American notation) in
the corner of each dark square, Black's pieces dark and White's light, kings with a gold ring and a
``K``. The squares of the last move are outlined and its path drawn as a line. Figures are
``matplotlib.figure.Figure`` objects, never pyplot's, so no backend is chosen and no display needed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib import animation, patches
from matplotlib.figure import Figure

from neurocheckers.analysis.games import replay_game
from neurocheckers.formats import display_name
from neurocheckers.rules.notation import Move
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State
from neurocheckers.rules.tables import tables

LIGHT, DARK = "#efe3c8", "#7a5236"
BLACK_PIECE, WHITE_PIECE = "#1d1d1d", "#f7f4ec"
HIGHLIGHT, KING_RING = "#f2c230", "#d4a017"
OUTCOMES = {"1-0": "Black wins", "0-1": "White wins", "1/2-1/2": "draw", "*": "unfinished"}


@dataclass(frozen=True)
class Frame:
    """One picture of a game: the position, the move that led to it (None at the start), a caption."""

    state: State
    move: Move | None
    caption: str


def _center(rules: Rules, square: int) -> tuple[float, float]:
    """(x, y) of the centre of 1-based ``square``; y grows downwards (the axes are inverted)."""
    row, col = tables(rules.board_size).coords[square - 1]
    return col + 0.5, row + 0.5


def draw_position(
    ax: Any, rules: Rules, state: State, last_move: Move | None = None, caption: str = "", title: str = ""
) -> None:
    """Draw ``state`` on the matplotlib axes ``ax`` (cleared first), outlining ``last_move``."""
    size = rules.board_size
    t = tables(size)
    ax.clear()
    ax.set_xlim(0, size)
    ax.set_ylim(size, 0)  # row 0 (Black's side) at the top
    ax.set_aspect("equal")
    ax.axis("off")
    for row in range(size):
        for col in range(size):
            dark = (row + col) % 2 == 1
            ax.add_patch(patches.Rectangle((col, row), 1, 1, color=DARK if dark else LIGHT, lw=0))
    for square, (row, col) in enumerate(t.coords, start=1):
        ax.text(col + 0.06, row + 0.08, str(square), color="#f3e7d3", fontsize=7, ha="left", va="top")
    if last_move is not None:
        for square in last_move.path:
            x, y = _center(rules, square)
            ax.add_patch(
                patches.Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, ec=HIGHLIGHT, lw=2.5, zorder=2)
            )
        xs, ys = zip(*(_center(rules, s) for s in last_move.path), strict=True)
        ax.plot(xs, ys, color=HIGHLIGHT, lw=2, alpha=0.8, zorder=4)
    kinds = (
        (int(state.black_men), BLACK_PIECE, False),
        (int(state.black_kings), BLACK_PIECE, True),
        (int(state.white_men), WHITE_PIECE, False),
        (int(state.white_kings), WHITE_PIECE, True),
    )
    for bits, face, king in kinds:
        for index in range(t.num_squares):
            if not bits >> index & 1:
                continue
            x, y = _center(rules, index + 1)
            edge = "#000000" if face == WHITE_PIECE else "#555555"
            ax.add_patch(patches.Circle((x, y), 0.38, fc=face, ec=edge, lw=1.2, zorder=3))
            if king:
                ax.add_patch(patches.Circle((x, y), 0.27, fill=False, ec=KING_RING, lw=2.2, zorder=5))
                text = "#ffffff" if face == BLACK_PIECE else "#000000"
                ax.text(
                    x, y, "K", color=text, fontsize=11, fontweight="bold", ha="center", va="center", zorder=6
                )
    if title:
        ax.set_title(title, fontsize=9)
    ax.text(size / 2, size + 0.1, caption, ha="center", va="top", fontsize=9)


def game_frames(rules: Rules, game: dict[str, Any]) -> list[Frame]:
    """The [M + 1] frames of a game dict (see ``analysis.games``): the start, then after each move.

    The caption gives the move's number, colour and notation; the last one adds the result.
    """
    states, moves = replay_game(rules, game)
    frames = []
    total = len(moves)
    for index, state in enumerate(states):
        if index == 0:
            side = "Black" if int(state.color) == BLACK else "White"
            caption = f"start, {side} to move"
            move = None
        else:
            move = moves[index - 1]
            mover = "Black" if int(states[index - 1].color) == BLACK else "White"
            caption = f"move {index}/{total}: {mover} {move.notation}"
        if index == total:
            result = game.get("result", "*")
            caption += f"  -  {result} ({OUTCOMES.get(result, result)})"
        frames.append(Frame(state, move, caption))
    return frames


def _figure(rules: Rules):
    fig = Figure(figsize=(4.2, 4.8), dpi=100)
    ax = fig.subplots()
    fig.subplots_adjust(left=0.03, right=0.97, top=0.89, bottom=0.08)
    return fig, ax


def _title(game: dict[str, Any]) -> str:
    black, white = (display_name(str(game.get(side, "?"))) for side in ("black", "white"))
    return f"Black: {black}\nWhite: {white}"


def save_gif(rules: Rules, game: dict[str, Any], path: str | os.PathLike, fps: float = 1.5) -> Path:
    """Write ``game`` as an animated GIF with one frame per position (M moves: M + 1 frames)."""
    if not fps > 0:
        raise ValueError(f"fps must be > 0, got {fps!r}")
    frames = game_frames(rules, game)
    fig, ax = _figure(rules)
    title = _title(game)

    def draw(i: int):
        draw_position(ax, rules, frames[i].state, frames[i].move, frames[i].caption, title)
        return []

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    movie = animation.FuncAnimation(fig, draw, frames=len(frames), blit=False, repeat=False)
    movie.save(str(path), writer=animation.PillowWriter(fps=fps), dpi=80)
    return path


def save_svgs(rules: Rules, game: dict[str, Any], folder: str | os.PathLike) -> list[Path]:
    """Write one SVG per position of ``game`` into ``folder``: ``move_000.svg`` (the start),
    ``move_001.svg`` (after the first move), ...; returns the files in order."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    frames = game_frames(rules, game)
    width = max(3, len(str(len(frames))))
    fig, ax = _figure(rules)
    title = _title(game)
    written = []
    for index, frame in enumerate(frames):
        draw_position(ax, rules, frame.state, frame.move, frame.caption, title)
        path = folder / f"move_{index:0{width}d}.svg"
        fig.savefig(path)
        written.append(path)
    return written
