"""Many games at once: player A against player B (and, through ``play_games``, the population games of
``population``), from the initial position or from paired openings.

Every batch of games in the package is played by one loop, ``play_plies``: a jitted ``lax.while_loop``
over plies with every game of the batch stepping together. Matches and population games use it through
``play_games``; the learners' self-play (the network against itself, recording every position), their
random openings and DQN's opponent replies call it with a move choice and a recorder of their own. (Leaf
rollouts inside a search and the random-playout benchmark of ``rules.playout`` play single games or raw
bitboards and stay where they are.) Finished games stay put (``step`` leaves a terminated state
unchanged) until all are over or the ply cap is reached. The cap defaults to
``rules.playout.default_max_plies``, a length no game under the rules reaches, so by default every game
ends by the rules; a game cut by a smaller cap is recorded as unfinished (``GameRecords.finished``
False) and scores half a point.

``run_match`` plays a match of any length in fixed-size chunks of ``play_match``. Game ``i`` of a
match (counted over the whole match, not per chunk) has A as Black when ``i`` is even and draws its
randomness from its own id, so the colours differ by at most one game and the games do not depend
on the chunk size.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from neurocheckers.match.options import MatchOptions
from neurocheckers.networks.evaluator import encode
from neurocheckers.rules.engine import init_batch, material_balance, piece_counts, random_action, step
from neurocheckers.rules.outcome import points_for
from neurocheckers.rules.playout import default_max_plies
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State
from neurocheckers.search.baselines import AlphaBetaConfig
from neurocheckers.search.mcts import MCTSConfig
from neurocheckers.search.types import Policy
from neurocheckers.sharding import any_lane, check_memory

PopulationSearch = MCTSConfig | AlphaBetaConfig
"""How members and boss choose their moves in ``play_population``: MCTS with ``MCTSConfig``, or
depth-limited alpha-beta with ``AlphaBetaConfig``, each over the mover's own network."""


@struct.dataclass
class GameRecords:
    """Per-game outcomes ([N] games, or [P, G] for a population) seen from player A (the member).

    Fields:
      score: [N] float32, A's points: win 1, draw (or unfinished) 1/2, loss 0.
      result: [N] int32, +1 Black won, -1 White won, 0 draw or unfinished.
      a_is_black: [N] bool, whether A had the first move.
      length: [N] int32, plies played.
      finished: [N] bool, whether the game ended by the rules (not by the ply cap).
      pieces: [N, 4] int32, final Black men, Black kings, White men, White kings.
      material_diff: [N] float32, A's final material minus B's (men 1, kings ``KING_VALUE``).
      positions: [N, L, 2S] float32 encoded positions before each ply (only with ``record``; else
        [N, 0, 2S]), from the side to move.
      a_to_move: [N, L] bool, whether A was to move in each recorded position.
      recorded: [N, L] bool, whether the position at that ply was reached.
      actions: [N, L] int32 actions played at each ply, -1 once the game is over (only with
        ``record_actions``; else [N, 0]). Random opening plies are included: replaying them from the
        initial position with ``step`` gives the game.
      final_boards: [N, 5] uint32, the last position: Black men, Black kings, White men, White kings
        bitboards and the side to move (0 Black), for an endgame database's verdict on a drawn game.
      repetition: [N] bool, whether the game ended by a threefold repetition: set where games are
        played on the host (``match.host``); None for batched JAX games, which cannot see one.
    """

    score: jax.Array
    result: jax.Array
    a_is_black: jax.Array
    length: jax.Array
    finished: jax.Array
    pieces: jax.Array
    material_diff: jax.Array
    positions: jax.Array
    a_to_move: jax.Array
    recorded: jax.Array
    actions: jax.Array
    final_boards: jax.Array
    repetition: jax.Array | None = None


def final_boards(states: State) -> jax.Array:
    """[..., 5] uint32: each state's four bitboards and its side to move (``GameRecords.final_boards``)."""
    boards = (states.black_men, states.black_kings, states.white_men, states.white_kings, states.color)
    return jnp.stack([jnp.asarray(b).astype(jnp.uint32) for b in boards], axis=-1)


def _records(
    rules: Rules, states: State, a_is_black: jax.Array, length: jax.Array, trace: tuple, actions: jax.Array
) -> GameRecords:
    result = jnp.where(states.terminated, states.result, 0)
    diff = jnp.where(a_is_black, 1.0, -1.0) * material_balance(states)
    positions, a_to_move, recorded = trace
    return GameRecords(
        score=points_for(result, a_is_black),
        result=result,
        a_is_black=a_is_black,
        length=length,
        finished=states.terminated,
        pieces=piece_counts(states),
        material_diff=diff,
        positions=positions,
        a_to_move=a_to_move,
        recorded=recorded,
        actions=actions,
        final_boards=final_boards(states),
    )


def game_keys(key: jax.Array, game_ids: jax.Array) -> jax.Array:
    """One key per game from its global id, so a batch split across devices draws what the whole
    batch would on one device."""
    fold = functools.partial(jax.random.fold_in, key)
    for _ in game_ids.shape:
        fold = jax.vmap(fold)
    return fold(game_ids)


def a_is_black_in_game(game_ids: jax.Array) -> jax.Array:
    """Whether player A has the first move (Black) in match game ``game_ids``: in the even games."""
    return game_ids % 2 == 0


def paired_opening_starts(openings: State, game_numbers: jax.Array) -> State:
    """The start of each game of a paired-openings match: games ``2i`` and ``2i + 1`` start from
    opening ``i`` (modulo the M openings of ``openings``, [M] states); the result has the shape of
    ``game_numbers``."""
    count = jax.tree.leaves(openings)[0].shape[0]
    return jax.tree.map(lambda x: x[(game_numbers // 2) % count], openings)


def over_games(fn: Callable, shape: tuple[int, ...], in_axes: tuple) -> Callable:
    """``fn`` of one game vmapped over a batch of games of any leading ``shape``."""
    for _ in shape:
        fn = jax.vmap(fn, in_axes=in_axes)
    return fn


def where_games(mask: jax.Array, new: State, old: State) -> State:
    """Per game: ``new`` where ``mask`` (the games' leading shape), else ``old``."""
    return jax.tree.map(
        lambda a, b: jnp.where(mask.reshape(mask.shape + (1,) * (a.ndim - mask.ndim)), a, b), new, old
    )


def play_plies(
    rules: Rules,
    states: State,
    choose: Callable[[State, jax.Array], jax.Array],
    max_plies: int | jax.Array | None = None,
    record: Callable[[Any, State, jax.Array, jax.Array, jax.Array], Any] | None = None,
    records: Any = None,
    moving: Callable[[State, jax.Array], jax.Array] | None = None,
    stop_at: int = 0,
    first_ply: int | jax.Array = 0,
) -> tuple[State, jax.Array, Any]:
    """The one game loop: every match, population game, self-play game, opening and DQN reply is
    played by it. A ``lax.while_loop`` over plies of a batch of games (``states``, any leading shape).

    Each ply, ``choose(states, ply)`` gives every game's action; ``record(records, states, actions,
    ply, moving)`` (when given) updates the caller's ``records`` before the step. The games that move
    are those ``moving(states, ply)`` says ([shape] bool; the others stay as they are), by default
    the unfinished ones (a finished game stays put under ``step`` anyway). The loop ends once no more
    than ``stop_at`` games move, or after ply ``max_plies - 1`` (None: no cap). Returns the states,
    the next ply and the records."""
    shape = states.terminated.shape
    batch_step = over_games(step, shape, (None, 0, 0))
    is_moving = (lambda s, _: ~s.terminated) if moving is None else moving

    def cond(carry):
        states, ply, _ = carry
        # Lanes of a lockstep vmap (PBT's members) ply on together: a finished game stays put.
        going = any_lane(jnp.sum(is_moving(states, ply)) > stop_at)
        return going if max_plies is None else (ply < max_plies) & going

    def body(carry):
        states, ply, records = carry
        actions = choose(states, ply)
        live = is_moving(states, ply)
        if record is not None:
            records = record(records, states, actions, ply, live)
        stepped = batch_step(rules, states, actions)
        if moving is not None:
            stepped = where_games(live, stepped, states)
        return stepped, ply + 1, records

    return jax.lax.while_loop(cond, body, (states, jnp.asarray(first_ply, jnp.int32), records))


def play_games(
    rules: Rules,
    choose: Callable[[State, jax.Array, jax.Array], jax.Array],
    a_is_black: jax.Array,
    game_ids: jax.Array,
    key: jax.Array,
    max_plies: int,
    opening_plies: int,
    record: bool,
    record_actions: bool = False,
    starts: State | None = None,
) -> GameRecords:
    """The games of both arenas (``play_plies``). ``choose(states, a_to_move, keys)`` gives the
    actions of the whole batch (any leading shape, the shape of ``a_is_black``) from one key per
    game. Games start from ``starts`` (that shape of states) when given, else from the initial
    position."""
    shape = a_is_black.shape
    batch_random = over_games(random_action, shape, (None, 0, 0))
    batch_encode = over_games(encode, shape, (None, 0))
    steps_kept = max_plies if record else 0
    trace = (
        jnp.zeros(shape + (steps_kept, 2 * rules.num_squares), jnp.float32),
        jnp.zeros(shape + (steps_kept,), jnp.bool_),
        jnp.zeros(shape + (steps_kept,), jnp.bool_),
    )
    played = jnp.full(shape + (max_plies if record_actions else 0,), -1, jnp.int32)

    def choose_ply(states: State, ply: jax.Array) -> jax.Array:
        keys = game_keys(jax.random.fold_in(key, ply), game_ids)
        actions = choose(states, (states.color == BLACK) == a_is_black, keys)
        if opening_plies:
            actions = jnp.where(ply < opening_plies, batch_random(rules, keys, states), actions)
        return actions

    def record_ply(records, states, actions, ply, live):
        length, trace, played = records
        if record:
            positions, movers, reached = trace
            positions = positions.at[..., ply, :].set(batch_encode(rules, states))
            movers = movers.at[..., ply].set((states.color == BLACK) == a_is_black)
            trace = (positions, movers, reached.at[..., ply].set(live))
        if record_actions:
            played = played.at[..., ply].set(jnp.where(states.terminated, -1, actions))
        return length + live.astype(jnp.int32), trace, played

    states = init_batch(rules, shape) if starts is None else starts
    records = (jnp.zeros(shape, jnp.int32), trace, played)
    states, _, (length, trace, played) = play_plies(rules, states, choose_ply, max_plies, record_ply, records)
    return _records(rules, states, a_is_black, length, trace, played)


@functools.partial(
    jax.jit,
    static_argnames=(
        "rules",
        "policy_a",
        "policy_b",
        "num_games",
        "max_plies",
        "opening_plies",
        "record",
        "record_actions",
    ),
)
def play_match(
    rules: Rules,
    policy_a: Policy,
    params_a: Any,
    policy_b: Policy,
    params_b: Any,
    key: jax.Array,
    num_games: int,
    max_plies: int | None = None,
    opening_plies: int = 0,
    record: bool = False,
    record_actions: bool = False,
    first_game: int | jax.Array = 0,
    openings: State | None = None,
) -> GameRecords:
    """Games ``first_game .. first_game + num_games - 1`` of a match of A against B; A has the first
    move in the even-numbered games (``a_is_black_in_game``).

    Each game's randomness comes from ``key`` and its number alone, so a match split into chunks
    (``run_match``) plays the same games whatever the chunk size. Both policies are evaluated for
    every game at every ply and the mover's choice is kept, so any two policies can meet; the
    population arena below avoids that double work. With ``record_actions`` the records hold every
    game's actions ([N, max_plies], -1 after its end), e.g. for ``analysis.games.games_from_actions``.
    ``max_plies`` defaults to ``default_max_plies(rules)``.

    ``openings`` ([M] states) makes the match one of paired openings: games ``2i`` and ``2i + 1``
    both start from opening ``i`` (modulo M), A playing Black in the first and White in the second.
    """
    max_plies = default_max_plies(rules) if max_plies is None else max_plies
    game_ids = first_game + jnp.arange(num_games, dtype=jnp.int32)
    a_is_black = a_is_black_in_game(game_ids)
    starts = None if openings is None else paired_opening_starts(openings, game_ids)

    def choose(states: State, a_to_move: jax.Array, keys: jax.Array) -> jax.Array:
        keys_b = jax.vmap(jax.random.fold_in, in_axes=(0, None))(keys, 1)
        actions_a = jax.vmap(policy_a, in_axes=(None, 0, 0))(params_a, states, keys)
        actions_b = jax.vmap(policy_b, in_axes=(None, 0, 0))(params_b, states, keys_b)
        return jnp.where(a_to_move, actions_a, actions_b)

    return play_games(
        rules, choose, a_is_black, game_ids, key, max_plies, opening_plies, record, record_actions, starts
    )


def join_records(parts: list[GameRecords], keep_actions: int) -> GameRecords:
    """One host-side ``GameRecords`` of a match's chunks, in game order; actions of the first
    ``keep_actions`` games only."""
    joined = jax.tree.map(lambda *xs: np.concatenate(xs), *parts)
    return joined.replace(actions=joined.actions[:keep_actions])


class MatchInterrupted(KeyboardInterrupt):
    """Ctrl-C during a match after some of its chunks were played: ``records`` holds their games
    (host ``GameRecords``, in game order, as the whole match would have returned them)."""

    def __init__(self, records: GameRecords) -> None:
        super().__init__(f"the match was interrupted after {len(records.score)} games")
        self.records = records


def fetch_when_ready(tree: Any) -> Any:
    """``jax.device_get(tree)``, waiting in Python: Ctrl-C stops the wait at once, where a blocking
    wait on XLA's threads would put off Python's interrupt until the computation ended."""
    delay = 0.001
    while not all(x.is_ready() for x in jax.tree.leaves(tree) if isinstance(x, jax.Array)):
        time.sleep(delay)
        delay = min(2 * delay, 0.05)
    return jax.device_get(tree)


def run_match(
    rules: Rules,
    policy_a: Policy,
    params_a: Any,
    policy_b: Policy,
    params_b: Any,
    options: MatchOptions,
    on_progress: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> GameRecords:
    """A match of A against B as ``options`` says, played ``batch`` games at a time (one compile).

    Game ``i`` has A as Black when ``i`` is even, so the colours differ by at most one game; the
    same ``seed`` plays the same games whatever ``batch`` is. Returns host (NumPy) ``GameRecords``
    of shape [N] in game order, with the actions ([K, max_plies], -1 after a game's end) of the
    first ``K = min(keep_actions, N)`` games; no positions. ``on_progress(done, games)`` is called
    after each chunk. ``should_stop()`` is asked before each chunk; when it says True the match ends
    early and the records hold the ``N < games`` games played so far. Ctrl-C raises
    ``MatchInterrupted`` with the records of the chunks already played (``KeyboardInterrupt`` before
    the first one ended). ``MemoryLimitError`` before any game when a batch needs more memory than
    the machine has.
    """
    games, keep_actions, opening_plies, openings = (
        options.games, options.keep_actions, options.opening_plies, options.openings
    )  # fmt: skip
    max_plies = options.plies_cap(rules)
    batch = min(options.batch, games)
    key = jax.random.key(options.seed)
    compiled = play_match.lower(
        rules, policy_a, params_a, policy_b, params_b, key, batch, max_plies, opening_plies,
        record_actions=keep_actions > 0, first_game=0, openings=openings,
    ).compile()  # fmt: skip
    check_memory(compiled, f"a batch of {batch} games")
    parts: list[GameRecords] = []
    played = 0
    try:
        while played < games and not (should_stop is not None and should_stop()):
            records = play_match(
                rules, policy_a, params_a, policy_b, params_b, key, batch, max_plies, opening_plies,
                record_actions=keep_actions > 0, first_game=played, openings=openings,
            )  # fmt: skip
            take = min(batch, games - played)
            parts.append(jax.tree.map(lambda x, take=take: np.asarray(x)[:take], fetch_when_ready(records)))
            played += take
            if on_progress is not None:
                on_progress(played, games)
    except KeyboardInterrupt:
        if not parts:
            raise
        raise MatchInterrupted(join_records(parts, keep_actions)) from None
    if not parts:  # stopped before the first chunk: an empty match of the right shapes
        parts = [jax.tree.map(lambda x: np.zeros((0, *x.shape[1:]), x.dtype), compiled.out_info)]
    return join_records(parts, keep_actions)
