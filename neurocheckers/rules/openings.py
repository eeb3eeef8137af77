"""Fixed opening sets: distinct positions a few random turns into the game, shipped with the package.

A strength match plays every opening twice, once with each colour, so that neither player profits
from a lucky start (the "double games" of Othello leagues; cutechess-cli's paired openings). The sets
are made once by ``make_openings`` from a fixed seed and committed as text files in
``neurocheckers/data/openings_<preset>.txt``, so every rating uses the same starts.

File format, one opening a line: ``FEN PLY QUIET`` where ``PLY`` is the number of actions played to
reach it and ``QUIET`` the actions since the last capture (both restore the draw counters); lines
starting with ``#`` are comments.
"""

from __future__ import annotations

import functools
from importlib import resources

import jax
import jax.numpy as jnp
import numpy as np

from neurocheckers.rules.engine import init
from neurocheckers.rules.notation import apply_move, legal_moves, parse_fen, to_fen
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import State

DEFAULT_TURNS = 4
"""Random whole turns (a multi-jump is one turn) played from the start to make an opening."""


def make_openings(rules: Rules, count: int, turns: int = DEFAULT_TURNS, seed: int = 0) -> list[str]:
    """Up to ``count`` distinct openings, each ``turns`` uniformly random whole turns from the start,
    as file lines ``FEN PLY QUIET``. Positions that already ended are skipped; fewer than ``count``
    come back when the game has fewer distinct positions at that depth (then tries stop after
    ``50 * count`` draws)."""
    rng = np.random.default_rng(seed)
    seen: dict[str, str] = {}
    for _ in range(50 * count):
        if len(seen) >= count:
            break
        state = init(rules)
        for _ in range(turns):
            moves = legal_moves(rules, state)
            if not moves:
                break
            state = apply_move(rules, state, moves[int(rng.integers(len(moves)))])
        if bool(state.terminated):
            continue
        fen = to_fen(state)
        seen.setdefault(fen, f"{fen} {int(state.ply)} {int(state.plies_without_capture)}")
    return list(seen.values())


def openings_text(rules: Rules, lines: list[str], turns: int, seed: int) -> str:
    """The committed file's text: a header saying how the set was made, then the lines."""
    header = [
        f"# {len(lines)} distinct {rules.name} openings: {turns} uniformly random whole turns from the",
        f"# start, seed {seed} (neurocheckers.rules.openings.make_openings). Columns: FEN PLY QUIET.",
    ]
    return "\n".join(header + lines) + "\n"


def read_openings(rules: Rules, text: str) -> list[tuple[str, int, int]]:
    """``(fen, ply, quiet)`` for each opening line of ``text``; ``ValueError`` naming a bad line."""
    openings = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 3 or not (parts[1].isdigit() and parts[2].isdigit()):
            raise ValueError(f"bad opening line {number}: {raw!r} (expected 'FEN PLY QUIET')")
        parse_fen(rules, parts[0])  # validates the position
        openings.append((parts[0], int(parts[1]), int(parts[2])))
    return openings


@functools.cache
def committed_openings(rules: Rules) -> tuple[tuple[str, int, int], ...]:
    """Every committed opening of ``rules``, read and checked once a process (each engine-game share
    asks for them, and checking 500 positions takes a sixth of a second)."""
    name = f"openings_{rules.base_name}.txt"
    try:
        text = resources.files("neurocheckers.data").joinpath(name).read_text()
    except FileNotFoundError:
        raise ValueError(f"no committed opening set for rules {rules.name!r} ({name})") from None
    return tuple(read_openings(rules, text))


def load_openings(rules: Rules, count: int | None = None, first: int = 0) -> list[tuple[str, int, int]]:
    """The committed openings ``first`` .. ``first + count - 1`` of ``rules`` (default: all from
    ``first``); ``ValueError`` naming the bad value if the set has fewer."""
    openings = list(committed_openings(rules))
    if not 0 <= first < len(openings):
        raise ValueError(f"--first-opening must be in 0..{len(openings) - 1} for {rules.name}, got {first}")
    if count is None:
        return openings[first:]
    if not 1 <= count <= len(openings):
        raise ValueError(f"--openings must be in 1..{len(openings)} for {rules.name}, got {count}")
    if first + count > len(openings):
        raise ValueError(
            f"--first-opening {first} + --openings {count} = {first + count} is more than "
            f"the {len(openings)} committed openings of {rules.name}"
        )
    return openings[first : first + count]


def opening_states(rules: Rules, openings: list[tuple[str, int, int]]) -> State:
    """The openings as one batch of states ([N] leading axis)."""
    states = [parse_fen(rules, fen, ply, quiet) for fen, ply, quiet in openings]
    return jax.tree.map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *states)


def paired_starts(states: State) -> tuple[State, jax.Array]:
    """Each of the [N] openings twice, ``(starts [2N], a_is_black [2N])``: game ``2i`` gives player A
    Black from opening ``i`` and game ``2i + 1`` gives A White from the same position."""
    starts = jax.tree.map(lambda x: jnp.repeat(x, 2, axis=0), states)
    n = jax.tree.leaves(states)[0].shape[0]
    a_is_black = jnp.tile(jnp.array([True, False]), n)
    return starts, a_is_black
