"""Checkers rules as pure JAX functions: ``init``, ``step``, ``from_position`` and helpers.

Action encoding: ``action = direction * N + square`` with N dark squares (``rules.num_actions`` =
4N actions; directions as in ``tables.DIRECTIONS``; squares 0-based, bit order). An action is a step
when the adjacent square that way is empty and a jump when it holds an opponent piece, so the two can
never be confused. A multi-jump is a sequence of jump actions by the same player: after a jump that
can be continued, ``State.continuing`` holds the piece that must move and only its jumps are legal.

Every function works on one game without Python branching on traced values: batch with ``jax.vmap``.
``Rules`` is static (hashable) and selects code paths at trace time.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from neurocheckers.rules.bits import is_legal_action, neighbors, nth_legal_action
from neurocheckers.rules.fen import check_position
from neurocheckers.rules.outcome import KING_VALUE
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, WHITE, State
from neurocheckers.rules.tables import Tables, tables

_ZERO = np.uint32(0)


def _u32(x: int) -> jax.Array:
    return jnp.uint32(x)


def _movers(color: jax.Array, men: jax.Array, kings: jax.Array, direction: int) -> jax.Array:
    """The pieces of ``color`` that may move in ``direction``: kings, and men going forward."""
    forward_color = BLACK if direction < 2 else WHITE
    return kings | jnp.where(color == forward_color, men, _ZERO)


def _generate(
    t: Tables,
    color: jax.Array,
    men: jax.Array,
    kings: jax.Array,
    opponents: jax.Array,
    only: jax.Array | None = None,
) -> tuple[jax.Array, jax.Array]:
    """[4] step sources and [4] jump sources per direction for the pieces ``men | kings`` of
    ``color`` (restricted to the squares ``only`` when given)."""
    empty = ~(men | kings | opponents) & _u32(t.all_squares)
    steps, jumps = [], []
    for d in range(4):
        movers = _movers(color, men, kings, d)
        if only is not None:
            movers = movers & only
        # A square whose neighbour in d is empty is a neighbour of an empty square in 3 - d.
        empty_ahead = neighbors(t, 3 - d, empty)
        steps.append(movers & empty_ahead)
        jumps.append(movers & neighbors(t, 3 - d, opponents & empty_ahead))
    return jnp.stack(steps), jnp.stack(jumps)


def _legal_bits(rules: Rules, steps: jax.Array, jumps: jax.Array) -> jax.Array:
    if rules.forced_capture:
        steps = jnp.where(jnp.any(jumps != 0), jnp.zeros_like(steps), steps)
    return steps | jumps


def _conclude(rules: Rules, state: State) -> State:
    """Fill in ``terminated`` and ``result`` after a turn has passed, and clear ``legal_bits`` if the
    game is over (a draw by a limit leaves moves on the board, but none is legal any more)."""
    no_move = jnp.all(state.legal_bits == 0)
    to_move_is_black = state.color == BLACK
    own = jnp.where(
        to_move_is_black,
        state.black_men | state.black_kings,
        state.white_men | state.white_kings,
    )
    loses = no_move if rules.stuck_loses else no_move & (own == 0)
    if rules.max_plies_without_capture:
        # The quiet limit draws even a side left without a move (OpenSpiel's order); a capture
        # resets the count, so this never turns a capture of the last piece into a draw.
        quiet_draw = state.plies_without_capture >= rules.max_plies_without_capture
        loses = loses & ~quiet_draw
    else:
        quiet_draw = jnp.bool_(False)
    draw = (no_move & ~loses) | quiet_draw
    if rules.max_plies:
        draw = draw | ((state.ply >= rules.max_plies) & ~loses)
    draw = draw & (state.continuing == 0)
    terminated = loses | draw
    result = jnp.where(loses, jnp.where(to_move_is_black, -1, 1), 0).astype(jnp.int32)
    return state.replace(
        legal_bits=jnp.where(terminated, jnp.zeros_like(state.legal_bits), state.legal_bits),
        terminated=terminated,
        result=result,
    )


def _as_int(value: int | np.ndarray | jax.Array, what: str) -> int | None:
    """``value`` as a Python int when it is concrete (not traced under jit or vmap), else None."""
    try:
        array = np.asarray(value)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return None
    if array.ndim != 0:
        raise ValueError(f"{what} must be a scalar (one game; vmap for a batch), got shape {array.shape}")
    return int(array)


_POSITION_ARGS = (
    "black_men",
    "black_kings",
    "white_men",
    "white_kings",
    "color",
    "ply",
    "plies_without_capture",
)


def _check_concrete_position(rules: Rules, *args) -> None:
    """Raise ``ValueError`` for an impossible position given concrete values (see ``from_position``);
    ``args`` are ``from_position``'s, in its order."""
    values = [_as_int(value, name) for value, name in zip(args, _POSITION_ARGS, strict=True)]
    if any(v is None for v in values):
        return
    bm, bk, wm, wk, color, ply, quiet = values
    if color not in (BLACK, WHITE):
        raise ValueError(f"color must be {BLACK} (Black) or {WHITE} (White), got {color}")
    if ply < 0 or quiet < 0:
        raise ValueError(f"ply and plies_without_capture must be >= 0, got {ply} and {quiet}")
    check_position(rules.board_size, rules.men_per_side, bm, bk, wm, wk)


def from_position(
    rules: Rules,
    black_men: int | jax.Array,
    black_kings: int | jax.Array,
    white_men: int | jax.Array,
    white_kings: int | jax.Array,
    color: int | jax.Array = BLACK,
    ply: int | jax.Array = 0,
    plies_without_capture: int | jax.Array = 0,
) -> State:
    """The state of a position given as bitboards (bit ``i`` = square ``i + 1``), side ``color`` to move.

    Given concrete values (Python or NumPy ints, or JAX arrays outside a trace) the position is
    checked first: ``ValueError`` for a square off the board or given twice, a man on its crowning
    row, more pieces than a side starts with, a colour other than 0 or 1, or a negative counter.
    Traced values (under ``jit`` or ``vmap``) cannot be inspected and are taken as they are.
    """
    _check_concrete_position(
        rules, black_men, black_kings, white_men, white_kings, color, ply, plies_without_capture
    )
    t = tables(rules.board_size)
    bm, bk, wm, wk = (
        jnp.asarray(x, dtype=jnp.uint32) for x in (black_men, black_kings, white_men, white_kings)
    )
    color = jnp.asarray(color, dtype=jnp.int32)
    black = color == BLACK
    steps, jumps = _generate(
        t,
        color,
        jnp.where(black, bm, wm),
        jnp.where(black, bk, wk),
        jnp.where(black, wm | wk, bm | bk),
    )
    state = State(
        black_men=bm,
        black_kings=bk,
        white_men=wm,
        white_kings=wk,
        color=color,
        continuing=jnp.uint32(0),
        ply=jnp.asarray(ply, dtype=jnp.int32),
        plies_without_capture=jnp.asarray(plies_without_capture, dtype=jnp.int32),
        legal_bits=_legal_bits(rules, steps, jumps),
        terminated=jnp.bool_(False),
        result=jnp.int32(0),
        num_squares=rules.num_squares,
    )
    return _conclude(rules, state)


def init(rules: Rules) -> State:
    """The opening: Black's men on the first ``men_rows`` rows, White's on the last, Black to move."""
    n, men = rules.num_squares, rules.men_per_side
    return from_position(rules, (1 << men) - 1, 0, ((1 << men) - 1) << (n - men), 0, BLACK)


def init_batch(rules: Rules, shape: int | tuple[int, ...]) -> State:
    """``init(rules)`` broadcast to a batch of leading ``shape`` (e.g. ``(B,)`` or ``(P, G)``)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return jax.tree.map(lambda x: jnp.broadcast_to(x, shape + x.shape), init(rules))


def _successor(rules: Rules, state: State, action: jax.Array) -> State:
    """The state after ``action`` (an int32 in ``0 .. A - 1``), taken to be legal in ``state``."""
    t = tables(rules.board_size)
    black = state.color == BLACK
    own_men = jnp.where(black, state.black_men, state.white_men)
    own_kings = jnp.where(black, state.black_kings, state.white_kings)
    opp_men = jnp.where(black, state.white_men, state.black_men)
    opp_kings = jnp.where(black, state.white_kings, state.black_kings)

    source = jnp.left_shift(jnp.uint32(1), (action % rules.num_squares).astype(jnp.uint32))
    adjacent = jnp.asarray(t.step_bit)[action]
    is_jump = ((opp_men | opp_kings) & adjacent) != 0
    target = jnp.where(is_jump, jnp.asarray(t.landing_bit)[action], adjacent)
    was_king = (own_kings & source) != 0
    crown_row = jnp.where(black, _u32(t.last_row), _u32(t.first_row))
    crowned = ~was_king & ((target & crown_row) != 0)
    becomes_king = was_king | crowned
    own_men = (own_men & ~source) | jnp.where(becomes_king, _ZERO, target)
    own_kings = (own_kings & ~source) | jnp.where(becomes_king, target, _ZERO)
    captured = jnp.where(is_jump, adjacent, _ZERO)
    opp_men = opp_men & ~captured
    opp_kings = opp_kings & ~captured

    # The next mover is the opponent, unless the piece that just jumped can and must jump again.
    other = 1 - state.color
    opp_steps, opp_jumps = _generate(t, other, opp_men, opp_kings, own_men | own_kings)
    legal_bits = _legal_bits(rules, opp_steps, opp_jumps)
    continuing = jnp.bool_(False)
    if rules.multi_jump:
        _, own_jumps = _generate(t, state.color, own_men, own_kings, opp_men | opp_kings, only=target)
        continuing = is_jump & ~crowned & jnp.any(own_jumps != 0)
        legal_bits = jnp.where(continuing, own_jumps, legal_bits)

    # A capture resets the quiet counter, and a man's move too under the game's own 40-move rule.
    resets_quiet = (is_jump | ~was_king) if rules.man_moves_reset_quiet_count else is_jump
    new_black_side = (own_men, own_kings)
    new_white_side = (opp_men, opp_kings)
    bm, bk = (jnp.where(black, a, b) for a, b in zip(new_black_side, new_white_side, strict=True))
    wm, wk = (jnp.where(black, b, a) for a, b in zip(new_black_side, new_white_side, strict=True))
    new_state = state.replace(
        black_men=bm,
        black_kings=bk,
        white_men=wm,
        white_kings=wk,
        color=jnp.where(continuing, state.color, other).astype(jnp.int32),
        continuing=jnp.where(continuing, target, _ZERO),
        ply=state.ply + 1,
        plies_without_capture=jnp.where(resets_quiet, 0, state.plies_without_capture + 1),
        legal_bits=legal_bits,
    )
    return _conclude(rules, new_state)


def step(rules: Rules, state: State, action: jax.Array) -> State:
    """Play ``action`` and return the next state.

    - A terminated state is returned unchanged, whatever the action.
    - An illegal action (not in ``state.legal_action_mask``, or outside ``0 .. A - 1``) forfeits the
      game, as in Pgx: the position stays as it was, ``terminated`` becomes True, ``result`` is a loss
      for the side that played it, and no action is legal any more.

    Both cases cost a few selects, with no Python branching on traced values. A loop that only ever
    plays legal actions can use :func:`step_unchecked`, which skips the check.
    """
    action = jnp.asarray(action, dtype=jnp.int32)
    legal = is_legal_action(rules, state.legal_bits, action) & ~state.terminated
    # Clipped, so that the table lookups of an illegal action stay in range (its result is dropped).
    new_state = _successor(rules, state, jnp.clip(action, 0, rules.num_actions - 1))
    kept = jax.tree.map(lambda old, new: jnp.where(legal, new, old), state, new_state)
    forfeit = ~legal & ~state.terminated
    return kept.replace(
        legal_bits=jnp.where(forfeit, jnp.zeros_like(kept.legal_bits), kept.legal_bits),
        terminated=kept.terminated | forfeit,
        result=jnp.where(forfeit, jnp.where(state.color == BLACK, -1, 1), kept.result).astype(jnp.int32),
    )


def step_unchecked(rules: Rules, state: State, action: jax.Array) -> State:
    """``step`` for a caller that only plays legal actions (a terminated state is still returned
    unchanged): the legality check is skipped, and an illegal action gives an unspecified state.

    For the loops that take every action from ``legal_bits``: the random playouts and the alpha-beta
    stack. There XLA on CPU repeats the check in every fused output of the step, which made a
    playout ply about 1.5x and an alpha-beta search up to 1.6x slower (measured on 2 CPU cores).
    """
    action = jnp.asarray(action, dtype=jnp.int32)
    new_state = _successor(rules, state, action)
    return jax.tree.map(lambda old, new: jnp.where(state.terminated, old, new), state, new_state)


def random_action(rules: Rules, key: jax.Array, state: State) -> jax.Array:
    """A uniformly random legal action ([] int32); 0 when there is none (a terminated game)."""
    total = state.num_legal_actions
    rank = jnp.floor(jax.random.uniform(key) * total).astype(jnp.int32)
    rank = jnp.minimum(rank, jnp.maximum(total - 1, 0))
    return jnp.where(total > 0, nth_legal_action(rules, state.legal_bits, rank), 0)


def legal_action_slots(rules: Rules, state: State, size: int | None = None) -> jax.Array:
    """[K] int32: the legal actions in increasing order, padded with -1 (all -1 when the game is over).

    ``K`` defaults to ``rules.max_legal_moves``, a bound no position reaches past: an action is a
    piece of the side to move and a direction, and a side has at most ``men_per_side`` pieces. A
    smaller ``size`` could cut legal actions off, so it is refused with ``ValueError``.
    """
    bound = rules.max_legal_moves
    size = bound if size is None else size
    if size < bound:
        raise ValueError(
            f"size {size} is below rules.max_legal_moves = {bound}: legal actions could be cut off"
        )
    (slots,) = jnp.nonzero(state.legal_action_mask, size=size, fill_value=-1)
    return slots.astype(jnp.int32)


def piece_counts(state: State) -> jax.Array:
    """[4] int32: Black men, Black kings, White men, White kings on the board."""
    boards = jnp.stack([state.black_men, state.black_kings, state.white_men, state.white_kings], axis=-1)
    return jax.lax.population_count(boards).astype(jnp.int32)


def material_balance(state: State, king_value: float = KING_VALUE) -> jax.Array:
    """[] float32: Black's material minus White's (men 1, kings ``king_value``)."""
    c = piece_counts(state).astype(jnp.float32)
    return (c[..., 0] + king_value * c[..., 1]) - (c[..., 2] + king_value * c[..., 3])
