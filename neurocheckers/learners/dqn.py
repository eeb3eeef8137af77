"""Afterstate deep Q-learning (the 6x6 DQN study's method), vectorised over many games at once.

The network is the project's evaluator (``evaluator.value``): the chance that the side to move wins
a position, a sigmoid in (0, 1) with a draw worth 1/2. The value of an action is the value of the
position after it (its *afterstate*), seen by the mover:

    Q(s, a) = v(s_a)        when the mover goes on jumping in s_a (it is still to move there),
    Q(s, a) = 1 - v(s_a)    otherwise (the opponent is to move in s_a),

and a move that ends the game is worth its exact outcome for the mover (1 win, 1/2 draw, 0 loss),
as in ``baselines.greedy_policy``: the learner acts with that very policy (plus epsilon-random
moves), so a saved network plays exactly as it learned with ``greedy:FILE``.

Everything is on the [0, 1] scale of the sigmoid. A transition (s, a, r, s') runs from a position
where the learner is to move to the next one where it is to move again (after the opponent's
reply, or at once inside a multi-jump); its target is

    y = clip(r + gamma * max_a' Q_target(s', a'), 0, 1),   or y = clip(r, 0, 1) when the game ended,

with r = the learner's points when the game ended (1 / 1/2 / 0), plus the optional shaping
``capture_reward`` x opponent pieces it captured, ``crown_reward`` x men it crowned, minus
``piece_lost_penalty`` x its pieces the opponent's reply captured. The clip keeps targets where a
sigmoid can reach them. The loss is the mean squared error of Q(s, a) against y.

One ``epoch`` (one jitted function, ``lax.scan`` over steps then updates) plays ``steps_per_epoch``
learner moves in each of ``envs`` games (finished games restart at once, the learner switching
colour; where it plays White the game opens with a random Black move, see ``new_games``), stores
every transition in a replay buffer (``replay``), then takes ``updates_per_epoch`` Adam steps on
sampled batches; the target network copies the online one every
``target_update_every`` updates. The opponent is ``random``, the learner's own network (``self``:
greedy with the same epsilon), or any ``(policy, params)`` pair (e.g. from ``players.parse_player``).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import optax

from neurocheckers.learners import replay
from neurocheckers.learners.dqn_settings import OPPONENTS, DQNSettings, DQNState, Transition
from neurocheckers.match.arena import play_plies, where_games
from neurocheckers.networks.evaluator import EvaluatorSpec, Params, encode, init_params, value, value_fn
from neurocheckers.networks.fitting import adam_step
from neurocheckers.rules.engine import init_batch, legal_action_slots, piece_counts, random_action, step
from neurocheckers.rules.outcome import points_for
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State
from neurocheckers.search.baselines import greedy_policy, outcome_for, random_policy
from neurocheckers.search.types import Policy

# --- Q values and targets -----------------------------------------------------------------------


def afterstate_q(
    rules: Rules, spec: EvaluatorSpec, params: Params, state: State
) -> tuple[jax.Array, jax.Array]:
    """([K] Q values, [K] valid) of the legal actions of ``state`` (``legal_action_slots`` order, K =
    ``rules.max_legal_moves``) for its side to move: ``v`` or ``1 - v`` of each afterstate, the exact
    outcome where the move ends the game. One position; vmap for batches."""
    slots = legal_action_slots(rules, state)
    children = jax.vmap(lambda a: step(rules, state, a))(jnp.maximum(slots, 0))
    v = value(spec, params, jax.vmap(encode, in_axes=(None, 0))(rules, children))
    q = jnp.where(children.color == state.color, v, 1.0 - v)
    q = jnp.where(children.terminated, outcome_for(children, state.color), q)
    return q, slots >= 0


def q_of_afterstate(
    spec: EvaluatorSpec, params: Params, afterstate: jax.Array, same_mover: jax.Array
) -> jax.Array:
    """[...] Q of moves given by their encoded afterstates [..., 2N] and ``same_mover`` [...]."""
    v = value(spec, params, afterstate.astype(jnp.float32))
    return jnp.where(same_mover, v, 1.0 - v)


def targets(settings: DQNSettings, target_params: Params, batch: Transition) -> jax.Array:
    """[B] ``clip(r + gamma * max_a' Q_target(s', a'), 0, 1)``, just ``clip(r, 0, 1)`` where done."""
    rules, spec = settings.rules_preset, settings.spec
    q, valid = jax.vmap(afterstate_q, in_axes=(None, None, None, 0))(
        rules, spec, target_params, batch.next_state
    )
    best = jnp.max(jnp.where(valid, q, -jnp.inf), axis=-1)
    bootstrap = jnp.where(batch.done | ~jnp.any(valid, axis=-1), 0.0, settings.gamma * best)
    return jnp.clip(batch.reward + bootstrap, 0.0, 1.0)


def loss(spec: EvaluatorSpec, params: Params, batch: Transition, y: jax.Array) -> jax.Array:
    """[] mean squared error of Q(s, a) (``q_of_afterstate``) against the targets ``y`` [B]."""
    q = q_of_afterstate(spec, params, batch.afterstate, batch.same_mover)
    return jnp.mean(jnp.square(q - jax.lax.stop_gradient(y)))


def epsilon_at(settings: DQNSettings, epoch: jax.Array) -> jax.Array:
    """[] float32: the chance of a random learner move in ``epoch`` (linear decay, then constant)."""
    if settings.epsilon_decay_epochs == 0:
        return jnp.float32(settings.epsilon_end)
    done = jnp.minimum(jnp.asarray(epoch, jnp.float32) / settings.epsilon_decay_epochs, 1.0)
    return jnp.float32(settings.epsilon_start + (settings.epsilon_end - settings.epsilon_start) * done)


# --- policies -------------------------------------------------------------------------------------


@functools.cache
def learner_policy(rules: Rules, spec: EvaluatorSpec) -> Policy:
    """Epsilon-greedy over afterstates, a policy over params ``(network params, epsilon)``: with
    chance epsilon a uniformly random legal move, else ``greedy_policy`` with the network."""
    greedy = greedy_policy(rules, value_fn(spec))

    def policy(params: Any, state: State, key: jax.Array) -> jax.Array:
        network, epsilon = params
        explore_key, random_key, greedy_key = jax.random.split(key, 3)
        explore = jax.random.uniform(explore_key) < epsilon
        return jnp.where(explore, random_action(rules, random_key, state), greedy(network, state, greedy_key))

    return policy


@functools.cache
def random_opponent(rules: Rules) -> Policy:
    """``baselines.random_policy``, one object per rules (so it compiles once as a static argument)."""
    return random_policy(rules)


def _opponent(settings: DQNSettings, opponent: tuple[Policy, Any] | None) -> tuple[Policy, Any]:
    """The opponent's (policy, params) for ``settings.opponent``; for self-play the params are
    filled in inside the epoch (the learner's current network and epsilon)."""
    name = settings.opponent
    if name in OPPONENTS and opponent is not None:
        raise ValueError(f"opponent {name!r} is built by the learner; pass no (policy, params) pair")
    if name == "random":
        return random_opponent(settings.rules_preset), None
    if name == "self":
        return learner_policy(settings.rules_preset, settings.spec), None
    if opponent is None:
        raise ValueError(f"opponent {name!r} needs its (policy, params) pair, e.g. from players.parse_player")
    return opponent


# --- playing --------------------------------------------------------------------------------------


def _opponent_moves(
    rules: Rules, policy: Policy, params: Any, games: State, learner_black: jax.Array, key: jax.Array
) -> tuple[State, jax.Array]:
    """(games, plies): the opponent moves in every game where it is to move, until the learner is to
    move or the game is over (a multi-jump is several moves); plies counts the opponent's moves."""

    def choose(games: State, turn: jax.Array) -> jax.Array:
        keys = jax.random.split(jax.random.fold_in(key, turn), learner_black.shape[0])
        return jax.vmap(policy, in_axes=(None, 0, 0))(params, games, keys)

    def waiting(games: State, _turn: jax.Array) -> jax.Array:
        return ~games.terminated & ((games.color == BLACK) != learner_black)

    def count(plies: jax.Array, _games, _actions, _turn, moving: jax.Array) -> jax.Array:
        return plies + jnp.sum(moving, dtype=jnp.int32)

    games, _, plies = play_plies(rules, games, choose, record=count, records=jnp.int32(0), moving=waiting)
    return games, plies


def _side_counts(games: State, learner_black: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """[E] learner pieces, [E] learner kings, [E] opponent pieces."""
    c = piece_counts(games)
    black_pieces, white_pieces = c[..., 0] + c[..., 1], c[..., 2] + c[..., 3]
    own = jnp.where(learner_black, black_pieces, white_pieces)
    kings = jnp.where(learner_black, c[..., 1], c[..., 3])
    return own, kings, jnp.where(learner_black, white_pieces, black_pieces)


def reward(
    settings: DQNSettings, before: State, after: State, reply: State, learner_black: jax.Array
) -> jax.Array:
    """[...] r of the learner's move from ``before`` to ``after`` and the opponent's reply up to ``reply``:
    the learner's points (1 / 1/2 / 0) where ``reply`` ended the game, plus the shaping (captures and
    crownings of the move, minus the learner's pieces the reply captured). Batches broadcast."""
    own0, kings0, opp0 = _side_counts(before, learner_black)
    own1, kings1, opp1 = _side_counts(after, learner_black)
    own2, _, _ = _side_counts(reply, learner_black)
    result = jnp.where(reply.terminated, points_for(reply.result, learner_black), 0.0)
    shaping = (
        settings.capture_reward * (opp0 - opp1)
        + settings.crown_reward * (kings1 - kings0)
        - settings.piece_lost_penalty * (own1 - own2)
    )
    return result + shaping.astype(jnp.float32)


def new_games(rules: Rules, learner_black: jax.Array, key: jax.Array) -> State:
    """[E] games at their start, the learner to move: where it plays White, Black has opened with a
    uniformly random move (the same for every opponent, which also varies the games of
    deterministic ones)."""
    fresh = init_batch(rules, learner_black.shape[0])
    keys = jax.random.split(key, learner_black.shape[0])
    openings = jax.vmap(random_action, in_axes=(None, 0, 0))(rules, keys, fresh)
    opened = jax.vmap(step, in_axes=(None, 0, 0))(rules, fresh, openings)
    return where_games(learner_black, fresh, opened)


def _play_step(settings: DQNSettings, opponent: Policy, carry, key: jax.Array):
    """One learner move in every game and the opponent's reply: the transitions, then finished games
    restart (``new_games``) with colours swapped."""
    rules = settings.rules_preset
    games, learner_black, buffer, network, epsilon, opponent_params = carry
    move_key, reply_key, restart_key = jax.random.split(key, 3)
    keys = jax.random.split(move_key, learner_black.shape[0])
    policy = learner_policy(rules, settings.spec)
    actions = jax.vmap(policy, in_axes=(None, 0, 0))((network, epsilon), games, keys)
    after = jax.vmap(step, in_axes=(None, 0, 0))(rules, games, actions)
    reply, reply_plies = _opponent_moves(rules, opponent, opponent_params, after, learner_black, reply_key)
    done = reply.terminated
    transitions = Transition(
        afterstate=jax.vmap(encode, in_axes=(None, 0))(rules, after).astype(jnp.int8),
        same_mover=after.color == games.color,
        reward=reward(settings, games, after, reply, learner_black),
        done=done,
        next_state=reply,
    )
    points = points_for(reply.result, learner_black)
    stats = {
        "games_finished": jnp.sum(done, dtype=jnp.int32),
        "wins": jnp.sum(done & (points == 1.0), dtype=jnp.int32),
        "draws": jnp.sum(done & (points == 0.5), dtype=jnp.int32),
        # Learner moves, replies, and the opening moves of the restarted games where it is White.
        "plies": learner_black.shape[0] + reply_plies + jnp.sum(done & learner_black, dtype=jnp.int32),
    }
    learner_black = jnp.where(done, ~learner_black, learner_black)
    games = where_games(done, new_games(rules, learner_black, restart_key), reply)
    buffer = replay.add(buffer, transitions)
    return (games, learner_black, buffer, network, epsilon, opponent_params), stats


# --- learning -------------------------------------------------------------------------------------


def optimizer(settings: DQNSettings) -> optax.GradientTransformation:
    """Adam with the settings' learning rate."""
    return optax.adam(settings.learning_rate)


def _update(settings: DQNSettings, carry, key: jax.Array):
    """One Adam step on a sampled batch, taken only once the buffer holds a batch; the target copy
    every ``target_update_every`` updates."""
    params, target_params, opt_state, updates, buffer = carry
    batch = replay.sample(buffer, key, settings.batch_size)
    y = targets(settings, target_params, batch)
    batch_loss_fn = lambda p, batch_y: loss(settings.spec, p, *batch_y)  # noqa: E731
    stepped, new_opt_state, batch_loss = adam_step(
        optimizer(settings), batch_loss_fn, params, opt_state, (batch, y)
    )
    ready = buffer.size >= settings.batch_size
    params = jax.tree.map(lambda n, o: jnp.where(ready, n, o), stepped, params)
    opt_state = jax.tree.map(lambda n, o: jnp.where(ready, n, o), new_opt_state, opt_state)
    updates = updates + ready.astype(jnp.int32)
    copy = ready & (updates % settings.target_update_every == 0)
    target_params = jax.tree.map(lambda n, o: jnp.where(copy, n, o), params, target_params)
    return (params, target_params, opt_state, updates, buffer), (batch_loss, ready, jnp.mean(y))


@functools.partial(jax.jit, static_argnums=(0, 1))
def _epoch(
    settings: DQNSettings, opponent: Policy, state: DQNState, key: jax.Array, opponent_params: Any
) -> tuple[DQNState, dict[str, jax.Array]]:
    play_key, learn_key = jax.random.split(key)
    epsilon = epsilon_at(settings, state.epoch)
    if settings.opponent == "self":  # a static setting: the learner's current network, same epsilon
        opponent_params = (state.params, epsilon)
    carry = (state.games, state.learner_black, state.buffer, state.params, epsilon, opponent_params)
    carry, stats = jax.lax.scan(
        functools.partial(_play_step, settings, opponent),
        carry,
        jax.random.split(play_key, settings.steps_per_epoch),
    )
    games, learner_black, buffer = carry[:3]
    carry = (state.params, state.target_params, state.opt_state, state.updates, buffer)
    carry, (losses, ready, mean_targets) = jax.lax.scan(
        functools.partial(_update, settings), carry, jax.random.split(learn_key, settings.updates_per_epoch)
    )
    params, target_params, opt_state, updates, _ = carry
    new_state = DQNState(
        params=params,
        target_params=target_params,
        opt_state=opt_state,
        buffer=buffer,
        games=games,
        learner_black=learner_black,
        epoch=state.epoch + 1,
        updates=updates,
    )
    return new_state, _metrics(stats, losses, ready, mean_targets, epsilon, buffer)


def _metrics(stats, losses, ready, mean_targets, epsilon, buffer) -> dict[str, jax.Array]:
    finished = jnp.sum(stats["games_finished"])
    wins, draws = jnp.sum(stats["wins"]), jnp.sum(stats["draws"])
    taken = jnp.sum(ready)
    per_game = jnp.maximum(finished, 1).astype(jnp.float32)
    return {
        "loss": jnp.sum(jnp.where(ready, losses, 0.0)) / jnp.maximum(taken, 1),
        "mean_target": jnp.sum(jnp.where(ready, mean_targets, 0.0)) / jnp.maximum(taken, 1),
        "epsilon": epsilon,
        "games_finished": finished,
        "wins": wins,
        "draws": draws,
        "losses": finished - wins - draws,
        "win_rate_vs_opponent": wins / per_game,
        "score_vs_opponent": (wins + 0.5 * draws) / per_game,
        "plies": jnp.sum(stats["plies"]),
        "updates_taken": taken,
        "buffer_size": buffer.size,
    }


def _compiled_as(settings: DQNSettings) -> DQNSettings:
    """``settings`` as a static jit argument: once the opponent's policy is resolved its name only
    matters as "self", so other names share one compiled epoch per policy."""
    return dataclasses.replace(settings, opponent="self" if settings.opponent == "self" else "policy")


# --- the public API -------------------------------------------------------------------------------


def init(settings: DQNSettings, key: jax.Array, opponent: tuple[Policy, Any] | None = None) -> DQNState:
    """A fresh network (online = target), an empty buffer and ``envs`` new games, the learner Black in
    the even-numbered ones (``new_games``). ``opponent`` is checked against ``settings.opponent``
    (see ``epoch``)."""
    _opponent(settings, opponent)
    return _init(_compiled_as(settings), key)


@functools.partial(jax.jit, static_argnums=0)
def _init(settings: DQNSettings, key: jax.Array) -> DQNState:
    rules, spec = settings.rules_preset, settings.spec
    params_key, games_key = jax.random.split(key)
    params = init_params(params_key, spec)
    learner_black = jnp.arange(settings.envs) % 2 == 0
    games = new_games(rules, learner_black, games_key)
    example = Transition(
        afterstate=jnp.zeros((spec.input_size,), jnp.int8),
        same_mover=jnp.bool_(False),
        reward=jnp.float32(0),
        done=jnp.bool_(False),
        next_state=jax.tree.map(lambda x: x[0], games),
    )
    return DQNState(
        params=params,
        target_params=params,
        opt_state=optimizer(settings).init(params),
        buffer=replay.init(example, settings.buffer_size),
        games=games,
        learner_black=learner_black,
        epoch=jnp.int32(0),
        updates=jnp.int32(0),
    )


def epoch(
    settings: DQNSettings, state: DQNState, key: jax.Array, opponent: tuple[Policy, Any] | None = None
) -> tuple[DQNState, dict[str, jax.Array]]:
    """One epoch (one compiled function per settings and opponent policy): the moves, then the
    updates. Returns the new state and [] metrics: loss, mean_target, epsilon, games_finished, wins,
    draws, losses, win_rate_vs_opponent, score_vs_opponent (over the games finished this epoch,
    exploration moves included), plies (both sides), updates_taken, buffer_size.

    ``opponent`` is the ``(policy, params)`` pair of a player-spec opponent (``settings.opponent``
    neither random nor self), e.g. ``players.parse_player``'s ``(player.policy, player.params)``;
    ``ValueError`` when it is missing for a spec or given for random / self.
    """
    policy, params = _opponent(settings, opponent)
    return _epoch(_compiled_as(settings), policy, state, key, params)
