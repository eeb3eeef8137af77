"""Alpha-beta over the rules engine as one ``lax.while_loop`` over an explicit stack (so it vmaps and
jits), with what a play-time search needs: a nominal depth that may be traced (one compiled program
serves every iteration of iterative deepening), capture extensions to quiet positions, a node limit,
and a first root move (the previous iteration's best) searched before the others.

Scores are from Black's view (Black maximises): a won game is ``WIN_SCORE`` minus its distance in
plies from the root, a draw 0, an unfinished leaf the ``Heuristic`` (default: material, men 1, kings
1.5). One level of depth is one action, so each jump of a multi-jump uses a level.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from neurocheckers.rules.bits import lowest_bit, neighbors
from neurocheckers.rules.engine import material_balance, step_unchecked
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State
from neurocheckers.rules.tables import tables
from neurocheckers.search.transposition import TranspositionTable, position_key, probe, store
from neurocheckers.search.types import ValueFn

WIN_SCORE = 1000.0
"""Alpha-beta score of a won game (minus its distance in plies from the root); far above any material."""
ROOT_MARGIN = 0.25
"""Material scores are multiples of 1/2 (men 1, kings 1.5, integer win scores), so a root window
lowered by 1/4 keeps every move tied with the best one exact, which the random tie-break needs."""
NETWORK_ROOT_MARGIN = 1e-6
"""The root margin for network scores, which are continuous (in (-1, 1)): exact ties only."""
NO_LIMIT = 2**31 - 1
"""``node_limit`` meaning none."""

Heuristic = Callable[[State], jax.Array]
"""``state -> score`` ([] float32): Black's-view score of an unfinished leaf, far below ``WIN_SCORE``."""


def color_sign(color: jax.Array) -> jax.Array:
    """+1 for Black, -1 for White: turns Black's-view scores into the view of ``color``."""
    return jnp.where(color == BLACK, 1.0, -1.0).astype(jnp.float32)


@struct.dataclass
class SearchStack:
    """The explicit depth-first stack of one alpha-beta search with L levels (``max_levels``).

    Levels 0..L-1 hold the interior nodes on the current path (level 0 is the root); a child is a
    leaf, scored when generated and never pushed, when its game is over, when it lies at level L, or
    when it lies at the nominal depth or deeper and is quiet (with ``quiescence``: no capture to
    make; without it every child at the nominal depth is a leaf). Scores are from Black's view:
    Black's nodes maximise, White's minimise (a multi-jump continuation keeps the mover, so its
    child has the same role and nothing is negated).

    Moves are enumerated from the node's ``legal_bits`` as 8 rows of 32 bits, captures first (better
    pruning): slot ``v * 32 + i`` is the move of square ``i`` in direction ``v % 4``, in the first
    pass (``v < 4``) if it is a capture and in the second otherwise. At the root a ``first`` slot
    may be searched before all the others (and is then skipped in the enumeration).

    Fields:
      states: State with [L] leading axes, the node at each level of the current path.
      cursor: [L] int32, the lowest slot (in 0..256) not yet searched at each level.
      alpha, beta: [L] float32, the search window at each level.
      best: [L] float32, the best child score found so far at each level (fail-soft).
      root_scores: [A] float32, the Black's-view score of each searched root action (exact for every
        action tied with the best; a bound on the worse side for the others; 0 when unsearched).
      root_done: [A] bool, the root actions whose score in ``root_scores`` is final.
      root_action: [] int32, the root action whose subtree is being searched.
      first_done: [] bool, whether the root's first slot has been searched (True when there is none).
      level: [] int32, the level of the node being expanded.
      iterations: [] int32, loop iterations so far (children searched plus nodes finished).
      done: [] bool, whether the search has stopped (finished, or out of nodes).
      complete: [] bool, whether it finished within its node limit (else ``root_scores`` is partial).
      cut: [] bool, whether a leaf was cut by the depth (scored by the heuristic or the table, not by
        the game's end): when False a complete search saw the whole game tree below the root.
      table: the ``TranspositionTable`` read and written by the search, or None (no table).
      entry_alpha, entry_beta: [L] float32, the window each level's node was entered with (what its
        score is classified against when it is stored in the table).
      keys: [L, 2] uint32, each level's node's ``position_key`` (with a table).
    """

    states: State
    cursor: jax.Array
    alpha: jax.Array
    beta: jax.Array
    best: jax.Array
    root_scores: jax.Array
    root_done: jax.Array
    root_action: jax.Array
    first_done: jax.Array
    level: jax.Array
    iterations: jax.Array
    done: jax.Array
    complete: jax.Array
    cut: jax.Array
    table: TranspositionTable | None
    entry_alpha: jax.Array
    entry_beta: jax.Array
    keys: jax.Array


def terminal_score(state: State, distance: jax.Array) -> jax.Array:
    """Black's-view score of a finished game ``distance`` plies from the root: +-(WIN_SCORE -
    distance), 0 for a draw (meaningless for an unfinished one)."""
    return state.result.astype(jnp.float32) * (WIN_SCORE - distance.astype(jnp.float32))


def leaf_score(state: State, distance: jax.Array, heuristic: Heuristic, needed: jax.Array | None = None):
    """Black's-view score of a leaf: +-(WIN_SCORE - distance) when the game is over (0 for a draw),
    ``heuristic(state)`` otherwise. With ``needed`` ([] bool) the heuristic is only evaluated when it
    is True (0 otherwise): a real branch for one search, which skips a network's cost at the nodes
    that are not leaves. Never pass ``needed`` under ``vmap``: a ``lax.cond`` with a batched
    predicate runs both branches with every operand batched, so a network's weights closed over by
    ``heuristic`` are copied per search and each layer becomes N matrix-vector products (an 8x8
    depth-1 search of 1,024 positions took 20x longer than one batched evaluation)."""
    won = terminal_score(state, distance)
    if needed is None:
        value = heuristic(state)
    else:
        value = jax.lax.cond(needed & ~state.terminated, heuristic, lambda s: jnp.float32(0.0), state)
    return jnp.where(state.terminated, won, value)


def value_heuristic(value_fn: ValueFn, params: Any, key: jax.Array) -> Heuristic:
    """A leaf score from a value function: ``2 v - 1`` for the side to move (``v`` its chance of
    winning), turned to Black's view. Any strictly increasing function of the material balance gives
    the same moves as the material count."""

    def heuristic(state: State) -> jax.Array:
        v = value_fn(params, state, key)
        return color_sign(state.color) * (2.0 * v - 1.0)

    return heuristic


def ordered_moves(rules: Rules, state: State) -> jax.Array:
    """[8] uint32: the legal moves as rows of source bits, captures first (rows 0-3 by direction),
    then the other moves (rows 4-7)."""
    t = tables(rules.board_size)
    black = state.color == BLACK
    opponents = jnp.where(black, state.white_men | state.white_kings, state.black_men | state.black_kings)
    # The squares whose neighbour in direction d holds an opponent: opponents shifted back (3 - d).
    captures = jnp.stack([neighbors(t, 3 - d, opponents) for d in range(4)])
    return jnp.concatenate([state.legal_bits & captures, state.legal_bits & ~captures])


def has_capture(rules: Rules, state: State) -> jax.Array:
    """[] bool: whether the side to move must capture (captures are compulsory, so a legal move onto
    an opponent's neighbour is a jump, and a quiet move never is)."""
    return jnp.any(ordered_moves(rules, state)[:4] != 0)


def _maximising(color: jax.Array) -> jax.Array:
    return color == BLACK


def _slot_to_action(rules: Rules, slot: jax.Array) -> jax.Array:
    """The action of move slot ``v * 32 + i`` (row ``v`` of ``ordered_moves``, square ``i``)."""
    return (slot // 32) % 4 * rules.num_squares + slot % 32


def action_slot(rules: Rules, state: State, action: jax.Array) -> jax.Array:
    """[] int32: the slot of ``action`` in ``state``'s move rows (-1 when ``action`` is -1)."""
    direction, square = action // rules.num_squares, action % rules.num_squares
    is_capture = (ordered_moves(rules, state)[direction] >> square.astype(jnp.uint32)) & 1
    row = jnp.where(is_capture == 1, direction, direction + 4)
    return jnp.where(action >= 0, row * 32 + square, -1).astype(jnp.int32)


def _initial_stack(
    rules: Rules, state: State, levels: int, first_slot: jax.Array, table: TranspositionTable | None
) -> SearchStack:
    """The stack before the search: the root at level 0 with a full window."""
    inf = jnp.float32(jnp.inf)
    finished = ~jnp.any(state.legal_bits != 0)  # a finished game has no legal move
    return SearchStack(
        states=jax.tree.map(lambda x: jnp.broadcast_to(x, (levels, *x.shape)), state),
        cursor=jnp.zeros(levels, jnp.int32),
        alpha=jnp.full(levels, -inf),
        beta=jnp.full(levels, inf),
        best=jnp.full(levels, -inf).at[0].set(jnp.where(_maximising(state.color), -inf, inf)),
        root_scores=jnp.zeros(rules.num_actions, jnp.float32),
        root_done=jnp.zeros(rules.num_actions, bool),
        root_action=jnp.int32(0),
        first_done=first_slot < 0,
        level=jnp.int32(0),
        iterations=jnp.int32(0),
        done=finished,
        complete=finished,
        cut=jnp.bool_(False),
        table=table,
        entry_alpha=jnp.full(levels, -inf),
        entry_beta=jnp.full(levels, inf),
        keys=jnp.zeros((levels, 2), jnp.uint32),
    )


def _next_move(
    rules: Rules, st: SearchStack, node: State, first_slot: jax.Array
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(slot, expand, first)``: the next move slot of ``node`` (the root's first slot when it is
    due, else the first at or after the cursor), whether it is to be searched (there is one, and the
    window is still open), and whether it is the root's first slot."""
    lv = st.level
    rows = jnp.arange(8, dtype=jnp.int32)
    # The moves at or after the cursor: whole rows after its row, the bits from its bit on in it.
    cursor_row, cursor_bit = st.cursor[lv] // 32, (st.cursor[lv] % 32).astype(jnp.uint32)
    from_bit = jnp.where(rows == cursor_row, jnp.uint32(0xFFFFFFFF) << cursor_bit, jnp.uint32(0))
    keep = jnp.where(rows > cursor_row, jnp.uint32(0xFFFFFFFF), from_bit)
    # At the root, the first slot is searched once, before the enumeration, which then skips it.
    first_bit = jnp.uint32(1) << (jnp.maximum(first_slot, 0) % 32).astype(jnp.uint32)
    skip = jnp.where((lv == 0) & (first_slot >= 0) & (rows == first_slot // 32), first_bit, jnp.uint32(0))
    remaining = ordered_moves(rules, node) & keep & ~skip
    row = jnp.argmax(remaining != 0).astype(jnp.int32)
    first = (lv == 0) & ~st.first_done
    slot = jnp.where(first, first_slot, row * 32 + lowest_bit(remaining[row]))
    expand = (first | jnp.any(remaining != 0)) & (st.alpha[lv] < st.beta[lv])
    return slot, expand, first


def _report(
    st: SearchStack,
    target: jax.Array,
    score: jax.Array,
    report: jax.Array,
    root_action: jax.Array,
    root_margin: float,
) -> SearchStack:
    """Fold ``score`` into the best score and window of level ``target`` (when ``report``), and into
    ``root_scores[root_action]`` when that level is the root (which makes it final)."""
    t = jnp.maximum(target, 0)
    t_max = _maximising(st.states.color[t])
    new_best = jnp.where(t_max, jnp.maximum(st.best[t], score), jnp.minimum(st.best[t], score))
    # At the root the window stays below the best score so moves tied with it are scored exactly,
    # and strictly below it where the margin is under float32's spacing (1e-6 at a win score near
    # WIN_SCORE): else a worse move's fail-low bound could equal a won best score and tie with it.
    lowered = jnp.minimum(score - root_margin, jnp.nextafter(score, -jnp.inf))
    raised = jnp.maximum(score + root_margin, jnp.nextafter(score, jnp.inf))
    new_alpha = jnp.where(t_max, jnp.maximum(st.alpha[t], jnp.where(t == 0, lowered, score)), st.alpha[t])
    new_beta = jnp.where(t_max, st.beta[t], jnp.minimum(st.beta[t], jnp.where(t == 0, raised, score)))
    return st.replace(
        best=st.best.at[t].set(jnp.where(report, new_best, st.best[t])),
        alpha=st.alpha.at[t].set(jnp.where(report, new_alpha, st.alpha[t])),
        beta=st.beta.at[t].set(jnp.where(report, new_beta, st.beta[t])),
        root_scores=st.root_scores.at[root_action].set(
            jnp.where(report & (target == 0), score, st.root_scores[root_action])
        ),
        root_done=st.root_done.at[root_action].set(st.root_done[root_action] | (report & (target == 0))),
    )


def _push(st: SearchStack, child: State, push: jax.Array, levels: int, key: jax.Array) -> SearchStack:
    """Put ``child`` (when ``push``) on the level above the current one, with the current window."""
    lv = st.level
    inf = jnp.float32(jnp.inf)
    # At most levels - 1, since children at `levels` are leaves.
    c = jnp.minimum(lv + 1, levels - 1)
    states = jax.tree.map(
        lambda stacked, x: stacked.at[c].set(jnp.where(push, x, stacked[c])), st.states, child
    )
    best = jnp.where(_maximising(child.color), -inf, inf)
    st = st.replace(
        states=states,
        cursor=st.cursor.at[c].set(jnp.where(push, 0, st.cursor[c])),
        alpha=st.alpha.at[c].set(jnp.where(push, st.alpha[lv], st.alpha[c])),
        beta=st.beta.at[c].set(jnp.where(push, st.beta[lv], st.beta[c])),
        best=st.best.at[c].set(jnp.where(push, best, st.best[c])),
    )
    if st.table is None:  # the entry windows and keys serve the table alone: no work without one
        return st
    return st.replace(
        entry_alpha=st.entry_alpha.at[c].set(jnp.where(push, st.alpha[lv], st.entry_alpha[c])),
        entry_beta=st.entry_beta.at[c].set(jnp.where(push, st.beta[lv], st.entry_beta[c])),
        keys=st.keys.at[c].set(jnp.where(push, key, st.keys[c])),
    )


@struct.dataclass
class StackLimits:
    """The traced limits of one search (static ones are arguments of ``alphabeta_stack``).

    Fields:
      depth: [] int32, the nominal depth: children at this level or deeper are leaves (when quiet).
      node_limit: [] int32, iterations after which the search stops unfinished.
      first_slot: [] int32, the root slot searched first (-1: none).
    """

    depth: jax.Array
    node_limit: jax.Array
    first_slot: jax.Array


def _stack_step(
    rules: Rules,
    levels: int,
    quiescence: bool,
    lazy_leaves: bool,
    heuristic: Heuristic,
    root_margin: float,
    limits: StackLimits,
    st: SearchStack,
) -> SearchStack:
    """One iteration: search the next child of the current node (score a leaf, push any other), or
    return from the node to its parent when it has no move left or its window closed."""
    lv = st.level
    node = jax.tree.map(lambda x: x[lv], st.states)
    slot, expand, first = _next_move(rules, st, node, limits.first_slot)
    action = _slot_to_action(rules, slot)
    # Expanded actions come from legal_bits; the child of an unexpanded one is dropped unused.
    child = step_unchecked(rules, node, action)
    child_depth = lv + 1
    horizon = child_depth >= limits.depth
    if quiescence:  # a capture to make is searched on, up to the last level
        horizon = horizon & ~has_capture(rules, child)
    is_leaf = child.terminated | horizon | (child_depth >= levels)
    # A child the table settles is scored from it like a leaf instead of being searched.
    settled, stored, key = jnp.bool_(False), jnp.float32(0.0), None
    if st.table is not None:
        # A finished node below the root goes into the table first: an iteration either finishes a
        # node or searches a child, never both, and XLA updates the table in place only when it is
        # read after the write (a value read before it and carried on made it copy the whole table).
        table = store(
            st.table, st.keys[lv], lv, limits.depth - lv, st.best[lv], st.entry_alpha[lv],
            st.entry_beta[lv], ~expand & (lv > 0),
        )  # fmt: skip
        st = st.replace(table=table)
        key = position_key(child)
        remaining = limits.depth - child_depth
        settled, stored = probe(st.table, key, child_depth, remaining, st.alpha[lv], st.beta[lv])
        settled = settled & ~is_leaf
        is_leaf = is_leaf | settled
    push = expand & ~is_leaf
    # The score reported to a parent: a leaf child's score to this level, or this finished node's
    # best score to the level above. It belongs to the root action just expanded or last pushed.
    target = jnp.where(expand, lv, lv - 1)
    needed = (expand & is_leaf & ~settled) if lazy_leaves else None
    leaf = jnp.where(settled, stored, leaf_score(child, child_depth, heuristic, needed))
    score = jnp.where(expand, leaf, st.best[lv])

    report = (expand & is_leaf) | (~expand & (lv > 0))
    root_action = jnp.where(expand & (lv == 0), action, st.root_action)
    st = _report(st, target, score, report, root_action, root_margin)
    searched = expand & ~first  # the root's first slot leaves the cursor where it is
    st = st.replace(
        cursor=st.cursor.at[lv].set(jnp.where(searched, slot + 1, st.cursor[lv])),
        root_action=root_action,
        first_done=st.first_done | (expand & first),
    )
    st = _push(st, child, push, levels, key)
    finished = ~expand & (lv == 0)
    iterations = st.iterations + 1
    return st.replace(
        level=jnp.where(push, child_depth, jnp.where(expand, lv, lv - 1)),
        iterations=iterations,
        done=finished | (iterations >= limits.node_limit),
        complete=finished,
        cut=st.cut | (expand & is_leaf & ~child.terminated),
    )


def alphabeta_stack(
    rules: Rules,
    state: State,
    depth: int | jax.Array,
    heuristic: Heuristic | None = None,
    root_margin: float = ROOT_MARGIN,
    *,
    max_levels: int | None = None,
    quiescence: bool = False,
    node_limit: int | jax.Array = NO_LIMIT,
    first_action: int | jax.Array = -1,
    lazy_leaves: bool = False,
    table: TranspositionTable | None = None,
) -> SearchStack:
    """Run an alpha-beta search from ``state`` and return its final stack (for ``root_scores`` and
    the ``iterations`` statistic); ``alphabeta_search`` is the usual entry point.

    ``depth`` is the nominal depth (static unless ``max_levels`` is given, then it may be traced);
    ``max_levels`` (static, default ``depth``) bounds the stack, so capture extensions
    (``quiescence``) reach at most that deep. Unfinished leaves are scored by ``heuristic`` (default:
    the material balance); ``root_margin`` lowers the root window so moves tied with the best are
    scored exactly (it must be below the smallest gap between two different scores). The search
    stops after ``node_limit`` iterations (``complete`` False); ``first_action`` (-1: none), a legal
    root action, is searched first. ``lazy_leaves`` (static) evaluates ``heuristic`` only at the
    iterations that score an unfinished leaf, with a ``lax.cond``: for one search (not under
    ``vmap``, see ``leaf_score``), where it skips a network's cost at the other iterations. A
    ``table`` (``transposition``) settles the nodes it holds deep enough, and gets every finished
    node below the root; the final stack's ``table`` is the updated one.

    The depth-first recursion is unrolled into a ``lax.while_loop`` over an explicit stack, each
    iteration searching one child (scoring it if it is a leaf, pushing it otherwise) or returning from
    a finished node, so ``jax.vmap`` over positions works (the batched loop runs until every search is
    done, so a batch costs as many iterations as its largest search).
    """
    levels = depth if max_levels is None else max_levels
    if not isinstance(levels, int) or levels < 1:
        raise ValueError(f"depth (or max_levels) must be a static int >= 1, got {levels!r}")
    heuristic = material_balance if heuristic is None else heuristic
    first_slot = action_slot(rules, state, jnp.asarray(first_action, jnp.int32))
    limits = StackLimits(jnp.asarray(depth, jnp.int32), jnp.asarray(node_limit, jnp.int32), first_slot)
    static = (rules, levels, quiescence, lazy_leaves, heuristic, root_margin)
    body = functools.partial(_stack_step, *static, limits)
    initial = _initial_stack(rules, state, levels, first_slot, table)
    return jax.lax.while_loop(lambda st: ~st.done, body, initial)


def alphabeta_search(
    rules: Rules,
    state: State,
    depth: int,
    heuristic: Heuristic | None = None,
    root_margin: float = ROOT_MARGIN,
) -> tuple[jax.Array, jax.Array]:
    """Depth-``depth`` alpha-beta from ``state``; one level of depth is one action (a jump of a
    multi-jump included). Leaves are scored as in ``alphabeta_stack``.

    Returns ``(root_scores, legal)``: [A] float32 scores of the root actions from the view of the side
    to move (exact for every action whose score equals the best; an upper bound below the best for
    the others) and the [A] bool mask of searched root actions (the legal actions, none when the root
    is terminated; scores elsewhere are meaningless).
    """
    final = alphabeta_stack(rules, state, depth, heuristic, root_margin)
    return color_sign(state.color) * final.root_scores, state.legal_action_mask
