"""The host loop: any two players, one game at a time where a side needs it, judged by our rules.

Our arena is jitted JAX and host players (OpenSpiel's bots, py-draughts, the timed and compiled
searches, external engines) move one game at a time, so ``run_engine_match`` plays its games on the
host, all games of a chunk ply by ply together: our players' moves come from one jitted, batched
call of their policy a ply, host players' one game at a time. With an OpenSpiel bot
(``players.openspiel``) every game runs in both engines at once; each move is mapped between our
actions and OpenSpiel's (``rules.openspiel_actions``) and must be legal in both, and both must end
the game together: every game against its bots is played under ``american8-openspiel``, whatever
the match's 8x8 rules. The match is laid out as ``arena.run_match``'s: game ``i`` has A as Black
when ``i`` is even, paired openings start games ``2i`` and ``2i + 1`` from opening ``i`` (OpenSpiel
cannot be set up from a position, so it replays moves found to reach the opening), and the result
is the same ``GameRecords``. ``play_any_match`` picks this loop or ``run_match``. Every game is
judged by our rules alone (py-draughts' own draw rules are never consulted), and each side's
thinking time per move is measured (``MoveClock``); an ``equal`` player gets, at each move, the
opponent's mean time per move so far: the equal-time mode.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from neurocheckers.match.arena import (
    GameRecords,
    MatchInterrupted,
    MatchOptions,
    final_boards,
    game_keys,
    join_records,
    paired_opening_starts,
    run_match,
)
from neurocheckers.match.clock import MoveClock
from neurocheckers.players.openspiel import make_bot, opening_path, openspiel_modules
from neurocheckers.players.policies import Player, jitted_policy
from neurocheckers.players.protocol import HostPlayer
from neurocheckers.players.registry import SearchReport, parse_spec
from neurocheckers.rules.engine import init_batch, material_balance, piece_counts, random_action, step
from neurocheckers.rules.openspiel_actions import legal_moves_of, openspiel_action_to_ours
from neurocheckers.rules.outcome import points_for
from neurocheckers.rules.presets import Rules, openspiel_rules
from neurocheckers.rules.repetition import RepetitionWatch
from neurocheckers.rules.state import BLACK, State

AnyPlayer = Player | HostPlayer
"""Any player of the protocol (``players.protocol``): our batched ``Player`` or a host player."""


def parse_any_player(spec: str, rules: Rules) -> AnyPlayer:
    """The player of any registered spec (``players.registry.parse_spec``): our ``Player`` or a host player;
    ``ValueError`` (one line) naming what is wrong."""
    return parse_spec(spec, rules)


@functools.cache
def _batched(policy: Callable) -> Callable:
    return jax.jit(jax.vmap(policy, in_axes=(None, 0, 0)))


@functools.cache
def _batched_engine(rules: Rules) -> tuple[Callable, Callable]:
    batch_step = jax.jit(jax.vmap(functools.partial(step, rules)))
    batch_random = jax.jit(jax.vmap(functools.partial(random_action, rules)))
    return batch_step, batch_random


def _opening_states(game: Any, openings: State, game_ids: np.ndarray) -> list[Any]:
    """OpenSpiel states at each game's paired opening (``arena.paired_opening_starts``)."""
    host = jax.device_get(openings)
    count = jax.tree.leaves(host)[0].shape[0]
    paths: dict[int, list[int]] = {}
    states = []
    for game_id in game_ids:
        index = int(game_id) // 2 % count
        if index not in paths:
            start = jax.tree.map(lambda x, index=index: x[index], host)
            try:
                paths[index] = opening_path(game, start)
            except ValueError as error:
                raise ValueError(f"opening {index + 1}: {error}") from None
        state = game.new_initial_state()
        for action in paths[index]:
            state.apply_action(action)
        states.append(state)
    return states


def _apply_to_openspiel(os_states: list, host: State, actions: np.ndarray, live: np.ndarray, ply: int,
                        game_ids: np.ndarray) -> None:  # fmt: skip
    """Play each live game's action in OpenSpiel too; ``RuntimeError`` unless both engines allow it."""
    for i in np.flatnonzero(live):
        legal = legal_moves_of(os_states[i])
        action = int(actions[i])
        ours = bool(host.legal_action_mask[i, action])
        if action not in legal or not ours:
            raise RuntimeError(
                f"game {int(game_ids[i])}, ply {ply}: action {action} is legal in our engine: {ours},"
                f" in OpenSpiel: {action in legal}"
            )
        os_states[i].apply_action(legal[action])


def _check_ends(os_states: list, final: State, game_ids: np.ndarray) -> None:
    """``RuntimeError`` unless both engines ended each game together, with the same result."""
    for i, os_state in enumerate(os_states):
        ours = bool(final.terminated[i])
        theirs = os_state.is_terminal()
        same = ours == theirs and (not ours or int(np.sign(os_state.returns()[0])) == int(final.result[i]))
        if not same:
            raise RuntimeError(f"game {int(game_ids[i])}: our engine and OpenSpiel end it differently")


def _engine_records(
    rules: Rules, final: State, a_is_black: np.ndarray, length, played, repeated: set[int]
) -> GameRecords:
    """Host ``GameRecords`` of finished engine games (no positions), as ``arena.run_match`` gives;
    ``repeated``: the games a threefold repetition ended."""
    count = len(a_is_black)
    result = np.where(final.terminated, final.result, 0).astype(np.int32)
    sign = np.where(a_is_black, 1.0, -1.0).astype(np.float32)
    return GameRecords(
        score=np.asarray(points_for(result, a_is_black)),
        result=result,
        a_is_black=a_is_black,
        length=length,
        finished=np.asarray(final.terminated),
        pieces=np.asarray(piece_counts(final)),
        material_diff=sign * np.asarray(material_balance(final)),
        positions=np.zeros((count, 0, 2 * rules.num_squares), np.float32),
        a_to_move=np.zeros((count, 0), bool),
        recorded=np.zeros((count, 0), bool),
        actions=played,
        final_boards=np.asarray(final_boards(final)),
        repetition=np.isin(np.arange(count), sorted(repeated)),
    )


Mover = Callable[[State, Any, "float | None"], int]
"""One game's host player: ``(state, openspiel_state, equal_time_seconds) -> our action``."""


def _side_keys(keys: jax.Array, side: bool) -> jax.Array:
    """The keys of A's (``side``) or B's moves in each game, from the ply's game keys."""
    return keys if side else jax.vmap(jax.random.fold_in, in_axes=(0, None))(keys, 1)


class HostMover:
    """One game of a host player with ``new_game(seed)`` (``players.protocol``): its mover, and
    the search reports of the moves it played since last asked."""

    def __init__(self, game: Callable) -> None:
        self.game = game
        self._seen = 0

    def __call__(self, state: State, os_state: Any, seconds: float | None) -> int:
        return int(self.game(state, seconds))

    def new_reports(self) -> list[SearchReport]:
        """The reports of the searches since the last call (none from a player keeping no ``infos``)."""
        infos = getattr(self.game, "infos", ())
        fresh, self._seen = infos[self._seen :], len(infos)
        return [SearchReport.of(info) for info in fresh]


def _mover(player: AnyPlayer, game: Any, seed: list[int], key: jax.Array) -> Mover:
    """One game's mover of a host player (``seed``: the match seed, the game, the side), or of one
    of our players moving one game at a time (its key folded with the ply)."""
    if player.batched:
        side_key = key if seed[2] else jax.random.fold_in(key, 1)
        return lambda state, os_state, seconds: int(
            jitted_policy(player.policy)(player.params, state, jax.random.fold_in(side_key, int(state.ply)))
        )
    if player.mirrors_openspiel:
        bot = make_bot(player, game, seed)
        return lambda state, os_state, seconds: openspiel_action_to_ours(bot(os_state))
    return HostMover(player.new_game(int(np.random.SeedSequence(seed).generate_state(1)[0])))


def _warm_up(players: dict[bool, AnyPlayer], one_at_a_time: dict[bool, bool], rules: Rules) -> None:
    """Compile or start every player that moves one game at a time (``warm_up``) before any move is
    timed: a compile would otherwise count as thinking time, and hand an equal-time opponent
    seconds."""
    for side, player in players.items():
        if not player.batched or one_at_a_time[side]:
            player.warm_up(rules)


def check_pairing(a: AnyPlayer, b: AnyPlayer) -> None:
    """``ValueError`` (one line) when ``a`` and ``b`` both play equal time: each would be given the
    other's time a move, which neither has (they would move at the first move's allowance)."""
    if equal_time(a) and equal_time(b):
        raise ValueError(
            f"{a.name!r} and {b.name!r} both play 'equal' (the opponent's time a move): give one of them"
            " a budget, like 0.1s or 1000n"
        )


def equal_time(player: AnyPlayer) -> bool:
    """Whether ``player`` plays in the equal-time mode (the protocol's ``equal_time``)."""
    return bool(player.equal_time)


def _host_moves(
    movers: list[Mover], host: State, need: np.ndarray, os_states: list | None, actions: np.ndarray,
    clock: MoveClock, side: bool,
) -> None:  # fmt: skip
    """Each needing game's move from its host mover, timed into ``clock`` (an equal-time player
    gets the clock's allowance for each move)."""
    for i in np.flatnonzero(need):
        state = jax.tree.map(lambda x, i=i: x[i], host)
        start = time.perf_counter()
        os_state = None if os_states is None else os_states[i]
        actions[i] = movers[i](state, os_state, clock.allowance(side))
        clock.add(side, time.perf_counter() - start, int(host.continuing[i] == 0))
        if isinstance(movers[i], HostMover):
            clock.add_searches(side, movers[i].new_reports())


def match_rules(rules: Rules, a: AnyPlayer, b: AnyPlayer) -> Rules:
    """The rules A and B play under: ``rules``, or ``american8-openspiel`` (OpenSpiel's own draw
    rule, 40 plies without a capture) when an OpenSpiel bot plays, since every game also runs in
    OpenSpiel and both must end it together. Summaries and saved games name these rules."""
    mirror = a.mirrors_openspiel or b.mirrors_openspiel
    return openspiel_rules(rules) if mirror else rules


def play_engine_games(
    rules: Rules,
    a: AnyPlayer,
    b: AnyPlayer,
    game_ids: np.ndarray,
    options: MatchOptions,
    on_game_end: Callable[[int], None] | None = None,
    clock: MoveClock | None = None,
) -> GameRecords:
    """Match games ``game_ids`` of A against B (any players: OpenSpiel bots, py-draughts, timed
    search, ours), all played ply by ply together on the host; with an OpenSpiel bot every game is
    also played in OpenSpiel (see the module docstring). Games are judged by our rules alone,
    threefold repetition included where the rules have it (``RepetitionWatch``). Host ``GameRecords``
    with every game's actions ([N, max_plies], -1 after its end); the seed, the ply cap, the random
    opening plies and the openings are ``options``'. The thinking time of each side goes into
    ``clock``. ``on_game_end(finished)`` is called whenever more games have ended."""
    mirror = a.mirrors_openspiel or b.mirrors_openspiel
    game = openspiel_modules()[0].load_game("checkers") if mirror else None
    rules = match_rules(rules, a, b)
    seed, opening_plies, openings = options.seed, options.opening_plies, options.openings
    max_plies = options.plies_cap(rules)
    clock = MoveClock() if clock is None else clock
    game_ids = np.asarray(game_ids, np.int32)
    count, ids = len(game_ids), jnp.asarray(game_ids)
    a_is_black = game_ids % 2 == 0
    states = init_batch(rules, count) if openings is None else paired_opening_starts(openings, ids)
    repetitions = RepetitionWatch(rules)  # the game's threefold-repetition draw, which JAX's step lacks
    states = repetitions.observe(states)
    os_states = None
    if mirror:
        initial = [game.new_initial_state() for _ in range(count)]
        os_states = initial if openings is None else _opening_states(game, openings, game_ids)
    players = {True: a, False: b}
    # Facing an equal-time player, our batched players move one game at a time, so that their time
    # per move (which the equal-time player is given) is not a batch's share.
    one_at_a_time = {side: equal_time(players[not side]) for side in players}
    keys0 = game_keys(jax.random.key(seed), ids)
    movers = {
        side: [
            _mover(p, game, [seed, int(g), int(side)], key) for g, key in zip(game_ids, keys0, strict=True)
        ]
        for side, p in players.items()
        if not p.batched or one_at_a_time[side]
    }
    batch_step, batch_random = _batched_engine(rules)
    _warm_up(players, one_at_a_time, rules)
    key = jax.random.key(seed)
    played = np.full((count, max_plies), -1, np.int32)
    length = np.zeros(count, np.int32)
    for ply in range(max_plies):
        host = jax.device_get(states)
        live = ~np.asarray(host.terminated)
        if on_game_end is not None and ply:
            on_game_end(int(count - live.sum()))
        if not live.any():
            break
        a_to_move = (np.asarray(host.color) == BLACK) == a_is_black
        keys = game_keys(jax.random.fold_in(key, ply), ids)
        actions = np.asarray(batch_random(keys, states)).copy()  # the random opening plies
        for side, player in players.items():
            need = live & (a_to_move == side) & (ply >= opening_plies)
            if not need.any():
                continue
            if player.batched and not one_at_a_time[side]:
                start = time.perf_counter()
                chosen = np.asarray(_batched(player.policy)(player.params, states, _side_keys(keys, side)))
                actions[need] = chosen[need]
                clock.add(side, time.perf_counter() - start, int((need & (host.continuing == 0)).sum()))
            else:
                _host_moves(movers[side], host, need, os_states, actions, clock, side)
        if mirror:
            _apply_to_openspiel(os_states, host, actions, live, ply, game_ids)
        played[:, ply] = np.where(live, actions, -1)
        length += live
        states = repetitions.observe(batch_step(states, jnp.asarray(actions, jnp.int32)))
    final = jax.device_get(states)
    if mirror:
        _check_ends(os_states, final, game_ids)
    return _engine_records(rules, final, a_is_black, length, played, repetitions.drawn)


def run_engine_match(
    rules: Rules,
    a: AnyPlayer,
    b: AnyPlayer,
    options: MatchOptions,
    on_progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    clock: MoveClock | None = None,
) -> GameRecords:
    """``arena.run_match`` with host players: the games of ``options``, ``batch`` at a time
    (``play_engine_games``), A Black in the even games. Host ``GameRecords`` [N] with the actions of
    the first ``keep_actions`` games; ``on_progress(done, games)`` as games end, ``should_stop()``
    asked before each batch; thinking times into ``clock``. Ctrl-C raises ``arena.MatchInterrupted``
    with the records of the batches already played (``KeyboardInterrupt`` before the first ended)."""
    games, batch = options.games, options.batch
    parts: list[GameRecords] = []
    done = 0
    try:
        while done < games and not (should_stop is not None and should_stop()):
            ids = np.arange(done, min(done + batch, games))
            ended = None if on_progress is None else lambda n, done=done: on_progress(done + n, games)
            parts.append(play_engine_games(rules, a, b, ids, options, on_game_end=ended, clock=clock))
            done += len(ids)
            if on_progress is not None:
                on_progress(done, games)
    except KeyboardInterrupt:
        if not parts:
            raise
        raise MatchInterrupted(join_records(parts, options.keep_actions)) from None
    if not parts:
        raise ValueError("the match was stopped before its first game")
    return join_records(parts, options.keep_actions)


def play_any_match(
    rules: Rules,
    a: AnyPlayer,
    b: AnyPlayer,
    options: MatchOptions,
    on_progress: Callable[[int, int], None] | None = None,
    clock: MoveClock | None = None,
) -> GameRecords:
    """A match of A against B: ``arena.run_match`` when both are our players and no ``clock`` is
    asked for, else ``run_engine_match`` (which times both sides into ``clock``); the same
    options and records either way; ``ValueError`` for players that cannot meet (``check_pairing``)."""
    check_pairing(a, b)
    if a.batched and b.batched and clock is None:
        return run_match(rules, a.policy, a.params, b.policy, b.params, options, on_progress=on_progress)
    return run_engine_match(rules, a, b, options, on_progress, clock=clock)
