"""The play-time search as a player: ``timed:BUDGET:EVAL``.

- ``BUDGET``: ``0.5s`` (seconds of wall time per move), ``20000n`` (nodes per move: deterministic),
  or ``equal`` (the opponent's mean time per move so far in the match: the equal-time mode);
- ``EVAL``: an agent file (its network scores the leaves), ``FILE:DB`` (the same, with the positions
  of the endgame database in folder ``DB`` scored exactly), ``heuristic`` (the hand-written 8x8
  evaluation, ``search.heuristic``) or ``material`` (men 1, kings 1.5).

Unlike the pure JAX policies of ``players``, a timed player runs on the host, one game at a time
(``search.timed``): the match loop (``match.host.play_engine_games``) calls ``new_game`` once per game
and then the game's mover at each of its turns.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, ClassVar

import jax
import numpy as np

from neurocheckers.networks.agent_file import Agent, load_agent
from neurocheckers.networks.evaluator import value_fn
from neurocheckers.players.jax_players import endgame_evaluator
from neurocheckers.players.protocol import HostPlayer
from neurocheckers.rules.engine import init, material_balance
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import State
from neurocheckers.search.alphabeta import NETWORK_ROOT_MARGIN, ROOT_MARGIN, value_heuristic
from neurocheckers.search.heuristic import heuristic_score
from neurocheckers.search.limits import MAX_MOVE_SECONDS, MAX_TIMED_NODES
from neurocheckers.search.timed import TABLE_BITS, Deepening, SearchInfo, iteration_kernel
from neurocheckers.search.types import ValueFn

PREFIX = "timed:"
SPECS = (
    "timed:SECONDSs:EVAL | timed:NODESn:EVAL | timed:equal:EVAL (EVAL: FILE, FILE:DB, heuristic or material;"
    " DB an endgame database folder)"
)
MAX_SECONDS = MAX_MOVE_SECONDS
"""The longest think time a move may be given (the web app's cap too)."""
MAX_NODES = MAX_TIMED_NODES
EQUAL_TIME_SHARE = 0.95
"""In the equal-time mode the player may spend this share of the opponent's mean time per move, as
a time bank over the match, spread over the moves (``match.clock.MoveClock.allowance``)."""
FIRST_MOVE_SECONDS = 0.05
"""The equal-time budget before the opponent has moved."""
WARM_UP_NODES = 64
"""The nodes of the search that compiles a timed player before its first move: enough to compile
(its one jitted iteration serves every depth and position afterwards), too small to take time."""
MIN_SECONDS = 0.001
"""The budget of a move when the bank is spent: the first iteration (depth 1) still runs."""


@functools.cache
def network_leaf(evaluator: ValueFn) -> Callable:
    """``(params, key) -> Heuristic`` scoring leaves with a network's value function."""
    return lambda params, key: value_heuristic(evaluator, params, key)


@functools.cache
def material_leaf() -> Callable:
    return lambda params, key: material_balance


@functools.cache
def heuristic_leaf(rules: Rules) -> Callable:
    return lambda params, key: functools.partial(heuristic_score, rules)


@dataclasses.dataclass
class TimedGame:
    """One game's mover: ``mover(state, seconds=None) -> action``; ``seconds`` is the time an
    ``equal`` player may spend on this move (``match.clock.MoveClock.allowance``)."""

    player: TimedPlayer
    seed: int
    infos: list[SearchInfo] = dataclasses.field(default_factory=list)
    key: jax.Array | None = None
    """The evaluator's key (deterministic evaluators ignore it), made once: a host-side key op costs
    about a millisecond, a real share of a small time budget."""
    table: Any = None
    """The game's transposition table, passed from each move's search to the next."""

    def __call__(self, state: State, seconds: float | None = None) -> int:
        p = self.player
        if self.key is None:
            self.key = jax.random.key(self.seed)
        if p.equal_time:
            seconds = FIRST_MOVE_SECONDS if seconds is None else max(seconds, MIN_SECONDS)
        else:
            seconds = p.seconds
        rng = np.random.default_rng([self.seed, int(state.ply)])
        info = p.deepening.search(state, self.key, seconds=seconds, nodes=p.nodes, rng=rng, table=self.table)
        self.table, info = info.table, dataclasses.replace(info, table=None)
        self.infos.append(info)
        return info.action


@dataclasses.dataclass
class TimedPlayer(HostPlayer):
    """An iterative-deepening player named by a ``timed:`` spec (see the module docstring)."""

    name: str
    deepening: Deepening
    seconds: float | None = None
    nodes: int | None = None
    equal_time: bool = False
    search_label: ClassVar[str] = "alpha-beta"

    def new_game(self, seed: int) -> TimedGame:
        return TimedGame(self, seed)

    def warm_up(self, rules: Rules) -> None:
        """Compile the search's one iteration (it serves every depth and position afterwards)."""
        self.deepening.search(jax.device_get(init(rules)), jax.random.key(0), nodes=WARM_UP_NODES)


def is_timed_spec(spec: str) -> bool:
    return spec.strip().startswith(PREFIX)


def _budget(text: str, spec: str) -> tuple[float | None, int | None, bool]:
    """``(seconds, nodes, equal_time)`` of a spec's budget part."""
    if text == "equal":
        return None, None, True
    try:
        if text.endswith("s") and 0 < float(text[:-1]) <= MAX_SECONDS:
            return float(text[:-1]), None, False
        if text.endswith("n") and 1 <= int(text[:-1]) <= MAX_NODES:
            return None, int(text[:-1]), False
    except ValueError:
        pass
    raise ValueError(
        f"bad player spec {spec!r}: the budget {text!r} must be seconds in (0, {MAX_SECONDS:g}] like 0.5s,"
        f" nodes in 1..{MAX_NODES} like 20000n, or equal"
    )


def _leaf(rules: Rules, evaluator: str, spec: str) -> tuple[Callable, Any, float]:
    """``(leaf score builder, params, root margin)`` of a spec's evaluator part."""
    if evaluator == "material":
        return material_leaf(), None, ROOT_MARGIN
    if evaluator == "heuristic":
        return heuristic_leaf(rules), None, NETWORK_ROOT_MARGIN
    path, _, database = evaluator.partition(":")
    try:
        agent = load_agent(path, rules)
    except FileNotFoundError:
        raise ValueError(f"bad player spec {spec!r}: no agent file {path!r}") from None
    except ValueError as e:
        raise ValueError(f"bad player spec {spec!r}: {e}") from None
    if database:
        evaluate, params = endgame_evaluator(rules, database, value_fn(agent.spec), agent.params, spec)
        return network_leaf(evaluate), params, NETWORK_ROOT_MARGIN
    return network_leaf(value_fn(agent.spec)), agent.params, NETWORK_ROOT_MARGIN


def agent_player(agent: Agent, rules: Rules, seconds: float | None = None, nodes: int | None = None,
                 name: str = "timed") -> TimedPlayer:  # fmt: skip
    """The timed player of a loaded agent (its network scores the leaves) with a budget of
    ``seconds`` or ``nodes`` a move: ``timed:BUDGET:FILE`` without reading the file again."""
    leaf = network_leaf(value_fn(agent.spec))
    deepening = Deepening(iteration_kernel(rules, leaf, NETWORK_ROOT_MARGIN), agent.params)
    return TimedPlayer(name, deepening, seconds, nodes)


def parse_timed(spec: str, rules: Rules, table_bits: int = TABLE_BITS) -> TimedPlayer:
    """The timed player of a ``timed:BUDGET:EVAL`` spec, its search with a transposition table of
    ``2 ** table_bits`` entries (0: none); ``ValueError`` (one line) naming what is wrong."""
    parts = spec.strip().split(":", 2)
    if len(parts) != 3 or parts[0] != "timed" or not parts[2]:
        raise ValueError(f"bad player spec {spec!r}; expected {SPECS}")
    seconds, nodes, equal_time = _budget(parts[1], spec)
    leaf, params, margin = _leaf(rules, parts[2], spec)
    deepening = Deepening(iteration_kernel(rules, leaf, margin, table_bits), params)
    return TimedPlayer(spec.strip(), deepening, seconds, nodes, equal_time)
