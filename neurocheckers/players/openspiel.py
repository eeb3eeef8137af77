"""OpenSpiel's checkers bots as players (``american8`` only, OpenSpiel's ``checkers`` being English
draughts on 8x8; they play under OpenSpiel's end rule, ``american8-openspiel``):

- ``openspiel:mcts:N``: OpenSpiel's ``MCTSBot`` (Python), UCT constant ``UCT_C``, ``N``
  simulations a move, each leaf rated by one uniformly random playout
  (``RandomRolloutEvaluator``), solved subtrees backed up;
- ``openspiel:alphabeta:D``: OpenSpiel's ``minimax.alpha_beta_search`` to depth ``D`` in OpenSpiel
  actions (each jump of a multi-jump is one), the unfinished leaves rated by material (men 1, kings
  1.5, scaled below a win's value).

The host loop (``match.host``) plays each game in OpenSpiel beside ours. OpenSpiel is an optional
dependency: ``pip install -e ".[engines]"``.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from neurocheckers.players.protocol import HostPlayer
from neurocheckers.players.registry import kind_of
from neurocheckers.rules.openspiel_actions import position_of
from neurocheckers.rules.outcome import KING_VALUE
from neurocheckers.rules.presets import Rules, openspiel_rules
from neurocheckers.rules.state import BLACK, State
from neurocheckers.search.limits import MAX_OPENSPIEL_DEPTH, MAX_OPENSPIEL_SIMULATIONS

PREFIX = "openspiel:"
INSTALL_HINT = 'pip install -e ".[engines]"'
UCT_C = 2.0
"""UCT exploration constant of ``openspiel:mcts`` (OpenSpiel's own examples use 2)."""
_MATERIAL_SCALE = 1.0 / (12 * KING_VALUE + 1.0)  # material below a win's value (1) in alpha-beta


@dataclasses.dataclass(frozen=True)
class EngineBot(HostPlayer):
    """An OpenSpiel bot named by a spec."""

    mirrors_openspiel: ClassVar[bool] = True

    name: str
    """The spec, e.g. ``openspiel:mcts:100``."""
    kind: str
    """``mcts`` or ``alphabeta``."""
    strength: int
    """Simulations a move (``mcts``) or depth in actions (``alphabeta``)."""


def is_engine_spec(spec: str) -> bool:
    return spec.strip().startswith(PREFIX)


def openspiel_modules() -> tuple[Any, Any, Any]:
    """``(pyspiel, mcts, minimax)`` of OpenSpiel; ``ValueError`` saying how to install it."""
    try:
        return (
            importlib.import_module("pyspiel"),
            importlib.import_module("open_spiel.python.algorithms.mcts"),
            importlib.import_module("open_spiel.python.algorithms.minimax"),
        )
    except ImportError:
        raise ValueError(f"OpenSpiel players need OpenSpiel: {INSTALL_HINT}") from None


def parse_engine(spec: str, rules: Rules) -> EngineBot:
    """The bot of an ``openspiel:...`` spec; ``ValueError`` (one line) for a bad spec, rules other than
    ``american8``, or OpenSpiel not installed."""
    parts = spec.strip().split(":")
    limits = {
        "mcts": ("simulation count", MAX_OPENSPIEL_SIMULATIONS),
        "alphabeta": ("depth", MAX_OPENSPIEL_DEPTH),
    }
    if len(parts) != 3 or parts[1] not in limits:
        raise ValueError(f"bad player spec {spec!r}; expected one of: {kind_of(PREFIX).forms}")
    what, maximum = limits[parts[1]]
    if not (parts[2].isdigit() and 1 <= int(parts[2]) <= maximum):
        raise ValueError(f"bad player spec {spec!r}: the {what} must be an integer in 1..{maximum}")
    openspiel_rules(rules)  # ValueError unless american8
    openspiel_modules()
    return EngineBot(spec.strip(), parts[1], int(parts[2]))


def material_for(player: int) -> Callable[[Any], float]:
    """An OpenSpiel state's material balance for OpenSpiel ``player`` (0 is our Black), scaled into
    (-1, 1)."""

    def value(state) -> float:
        board = "".join(line[1:9] for line in str(state).splitlines()[:8])  # without the labels
        black = board.count("o") + KING_VALUE * board.count("8")
        white = board.count("+") + KING_VALUE * board.count("*")
        return (black - white if player == 0 else white - black) * _MATERIAL_SCALE

    return value


def make_bot(bot: EngineBot, game: Any, seed: int | list[int]) -> Callable[[Any], int]:
    """``state -> OpenSpiel action`` of ``bot`` in ``game``, its randomness from ``seed`` (a
    ``numpy.random.RandomState`` seed: an int or a list of ints)."""
    _, mcts, minimax = openspiel_modules()
    if bot.kind == "mcts":
        rng = np.random.RandomState(seed)
        evaluator = mcts.RandomRolloutEvaluator(1, rng)
        return mcts.MCTSBot(game, UCT_C, bot.strength, evaluator, random_state=rng).step

    def alphabeta(state) -> int:
        value = material_for(state.current_player())
        return minimax.alpha_beta_search(game, state, value_function=value, maximum_depth=bot.strength)[1]

    return alphabeta


def opening_path(game: Any, start: State) -> list[int]:
    """OpenSpiel actions from the initial position to ``start`` (a host ``State``) in exactly
    ``start.ply`` actions, found by depth-first search; ``ValueError`` when there are none."""
    target = {
        "black_men": {s + 1 for s in range(32) if int(start.black_men) >> s & 1},
        "black_kings": {s + 1 for s in range(32) if int(start.black_kings) >> s & 1},
        "white_men": {s + 1 for s in range(32) if int(start.white_men) >> s & 1},
        "white_kings": {s + 1 for s in range(32) if int(start.white_kings) >> s & 1},
        "black_to_move": int(start.color) == BLACK,
    }

    def search(state, depth: int) -> list[int] | None:
        if depth == 0:
            return [] if position_of(state) == target else None
        for action in [] if state.is_terminal() else state.legal_actions():
            child = state.clone()
            child.apply_action(action)
            rest = search(child, depth - 1)
            if rest is not None:
                return [int(action)] + rest
        return None

    path = search(game.new_initial_state(), int(start.ply))
    if path is None:
        raise ValueError(f"no sequence of {int(start.ply)} actions reaches the opening position")
    return path
