"""The anytime MCTS of an agent file, as a player of the protocol: what ``play --search mcts`` and the
web's ``mcts:FILE:SIMS`` opponent play against a person (the batched ``mcts:FILE:SIMS`` policy plays
matches at a fixed simulation count).

Each turn searches until ``seconds`` have passed (``search.anytime.anytime_search``: the simulation
count doubles from the config's while the next run is predicted to end in time); a multi-jump's later
jumps share what is left of the turn's time, and a single legal action is played at once. Its
reports carry the search's root value as the mover's win chance, and its simulations as nodes.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, ClassVar

import jax

from neurocheckers.networks.agent_file import Agent
from neurocheckers.networks.evaluator import value_fn
from neurocheckers.players.protocol import HostPlayer
from neurocheckers.players.registry import SearchReport
from neurocheckers.rules.engine import init
from neurocheckers.rules.notation import legal_actions
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import State
from neurocheckers.search.anytime import anytime_search
from neurocheckers.search.mcts import MCTSConfig

DEFAULT_SEARCH = MCTSConfig()
"""The anytime MCTS's search settings; the simulation count grows from 16."""
MAX_SIMULATIONS = 1 << 16
"""The most simulations one search of a turn runs."""

_WARMED: dict[tuple[Any, ...], int] = {}
"""The largest size ``prepare_agent`` compiled, by (network architecture, rules, seconds, config,
limit): the compiled searches depend on the shapes alone, so a web server warms each kind of
opponent and thinking time up once a process."""


def prepare_agent(
    agent: Agent, rules: Rules, seconds: float, config: MCTSConfig = DEFAULT_SEARCH,
    max_simulations: int = MAX_SIMULATIONS,
) -> int:  # fmt: skip
    """Compile the searches ``anytime_search`` may use within ``seconds`` per move; returns the
    largest simulation count compiled.

    ``anytime_search`` only grows the search into a size already compiled or cheap to compile, so
    without this it would stay at ``config.num_simulations`` whenever compiling takes longer than a
    move. Sizes double from ``config.num_simulations`` while a run takes under ``seconds / 2.2``
    (``anytime_search``'s own growth test).
    """
    evaluate = value_fn(agent.spec)
    state = jax.device_get(init(rules))
    key = jax.random.key(0)
    sims = config.num_simulations
    while True:
        sized = dataclasses.replace(config, num_simulations=sims)
        # seconds=0 runs exactly one search of this size (compiling it the first time).
        anytime_search(rules, sized, evaluate, agent.params, state, key, 0.0, max_simulations)
        started = time.perf_counter()
        anytime_search(rules, sized, evaluate, agent.params, state, key, 0.0, max_simulations)
        took = time.perf_counter() - started
        if 2.2 * took > seconds or sims * 2 > max_simulations:
            return sims
        sims *= 2


@dataclasses.dataclass(frozen=True)
class AnytimeMCTSPlayer(HostPlayer):
    """An agent's network at the leaves of the anytime MCTS, ``seconds`` a turn (see the module
    docstring). ``name``: its spec, as the page or the saved game shows it."""

    name: str
    agent: Agent
    rules: Rules
    seconds: float
    config: MCTSConfig = DEFAULT_SEARCH
    max_simulations: int = MAX_SIMULATIONS
    search_label: ClassVar[str] = "MCTS"

    def warm_up(self, rules: Rules) -> None:
        """Compile the sizes a turn of ``seconds`` may grow into (``prepare_agent``), once a process
        for this network architecture, rules and time."""
        key = (self.agent.spec, rules, self.seconds, self.config, self.max_simulations)
        if key not in _WARMED:
            _WARMED[key] = prepare_agent(self.agent, rules, self.seconds, self.config, self.max_simulations)

    def new_game(self, seed: int) -> AnytimeGame:
        return AnytimeGame(self, seed)


class AnytimeGame:
    """One game of an ``AnytimeMCTSPlayer``: ``game(state, seconds=None) -> action`` (its own time a
    turn; ``seconds`` is for equal-time players, which it is not), ``infos`` a ``SearchReport`` a
    search."""

    def __init__(self, player: AnytimeMCTSPlayer, seed: int) -> None:
        self.player = player
        self.key = jax.random.key(seed)
        self.infos: list[SearchReport] = []
        self.deadline = 0.0
        self.turn_key = self.key
        self.done = 0

    def __call__(self, state: State, seconds: float | None = None) -> int:
        if not int(state.continuing):  # a new turn: its time starts now
            self.deadline = time.perf_counter() + self.player.seconds
            self.turn_key, self.done = jax.random.fold_in(self.key, int(state.ply)), 0
        legal = legal_actions(state)
        self.done += 1
        if len(legal) == 1:
            return legal[0]
        player, started = self.player, time.perf_counter()
        left = max(self.deadline - started, 0.0)
        key = jax.random.fold_in(self.turn_key, self.done - 1)
        found = anytime_search(player.rules, player.config, value_fn(player.agent.spec),
                               player.agent.params, state, key, left, player.max_simulations)  # fmt: skip
        action = int(found.action)
        simulations = int(found.visit_counts.sum())
        chance = float(found.root_value)
        seconds = time.perf_counter() - started
        self.infos.append(SearchReport((action,), chance, 0.0, simulations, seconds, win_chance=chance))
        return action
