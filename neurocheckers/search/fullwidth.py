"""Full-width minimax over a whole batch of positions, its leaves scored in large batches: the batched
counterpart of ``alphabeta_search`` for a caller that holds every game at once (the self-play loop).

``alphabeta_search`` under ``vmap`` runs one ``lax.while_loop`` iteration per child searched, for all
the games at once, so a batch costs as many iterations as its largest search, and a network leaf is
evaluated on one position per game per iteration. Here the trees below all the roots are generated
level by level without pruning, the nodes of every game packed together (the children of a level are
numbered through the running count of its nodes' legal moves, so no [nodes, max_legal_moves] array is
built), and the leaves are generated and scored in chunks of ``chunk`` positions (the last few in
smaller ones): the cost follows the number of nodes of the whole batch, not its largest tree.

The scores are those of ``alphabeta_search`` wherever alpha-beta's are exact: every root move at depth
1, and the best root moves (all those tied with the best) at any depth. Alpha-beta's scores of the
other moves are bounds below the best; these are exact minimax values, also below the best. So
``pick_best`` with the same key picks the same move, given the same leaf values (a network evaluated
in a batch of another size may round the last bit of a value differently: see ``tests/test_fullwidth.py``).

Not for ``vmap``: the packing is over the whole batch, and the fallback below is a ``lax.cond``.
Several networks' games are searched in one batch instead (``Grouped``: PBT's members): each game
names its network, and the leaves, numbered in root order, are scored in chunks that each hold one
network's leaves alone, so every chunk is one network's dense batch (8x8 depth 2, 8 networks x 128
games: as fast as one network's 1,024, against 1.9x for the 8 networks' searches vmapped).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
from flax import struct

from neurocheckers.rules.bits import nth_legal_action
from neurocheckers.rules.engine import step_unchecked
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State
from neurocheckers.search.alphabeta import Heuristic, alphabeta_search, color_sign, leaf_score, terminal_score
from neurocheckers.sharding import any_lane, lane_max

CHUNK = 2048
"""Positions generated and scored at once."""
NODES_PER_ROOT = 128
"""Room per root for each level kept between the root and the leaves (depth 3 or more: depth-2 trees
had 26 nodes per root on average on 8x8, 106 at most, in positions after random plies); a batch with
more falls back to the vmapped alpha-beta (the same moves, slower)."""


@struct.dataclass
class Grouped:
    """The leaf scores of a batch whose games belong to ``count`` groups, each scored by its own
    heuristic (a network each: PBT's members).

    Fields:
      heuristic_of: ``heuristic_of(g)`` ([] int32 group, traced) -> the group's ``Heuristic``.
      group: [N] int32, each game's group, in 0 .. count - 1; the games that still have moves must be
        in group order (a finished game's group is free: it has no leaves).
      count: static, the number of groups.
    """

    heuristic_of: Callable[[jax.Array], Heuristic] = struct.field(pytree_node=False)
    group: jax.Array
    count: int = struct.field(pytree_node=False)

    def for_game(self, game: jax.Array) -> Heuristic:
        """The heuristic of game ``game``'s group."""
        return self.heuristic_of(self.group[game])


@struct.dataclass
class Nodes:
    """One level of the trees of a batch, packed: the first ``count`` of C slots are nodes.

    Fields:
      states: State with a leading [C] axis.
      parent: [C] int32, each node's parent in the level below (at the roots: the root's own index).
      action: [C] int32, the action that leads from the parent to the node.
      count: [] int32, the nodes in use.
    """

    states: State
    parent: jax.Array
    action: jax.Array
    count: jax.Array


def _child_ends(nodes: Nodes) -> tuple[jax.Array, jax.Array]:
    """([C] legal moves of each node in use (0 for a finished game), [C] their running sum)."""
    in_use = jnp.arange(nodes.parent.shape[0]) < nodes.count
    counts = jnp.where(in_use & ~nodes.states.terminated, nodes.states.num_legal_actions, 0)
    return counts, jnp.cumsum(counts)


def _children(rules: Rules, nodes: Nodes, counts: jax.Array, ends: jax.Array, first: jax.Array, size: int):
    """(parent [size], action [size], State [size]): the children numbered ``first`` .. ``first +
    size - 1`` of the packed ``nodes`` (child ``j`` is the ``r``-th legal move of node ``p`` with
    ``ends[p - 1] <= j = ends[p - 1] + r < ends[p]``). Those past the last are meaningless."""
    j = first + jnp.arange(size, dtype=jnp.int32)
    parent = jnp.minimum(jnp.searchsorted(ends, j, side="right"), ends.shape[0] - 1).astype(jnp.int32)
    rank = j - (ends[parent] - counts[parent])
    node = jax.tree.map(lambda x: x[parent], nodes.states)
    action = jax.vmap(nth_legal_action, in_axes=(None, 0, 0))(rules, node.legal_bits, rank)
    action = jnp.where(j < ends[-1], action, 0).astype(jnp.int32)
    return parent, action, jax.vmap(step_unchecked, in_axes=(None, 0, 0))(rules, node, action)


def _over_chunks(total: jax.Array, chunk: int, body, init):
    """``body(first, carry)`` for ``first`` = 0, chunk, 2 chunk, ... below ``total``."""

    def step(carry):
        first, inner = carry
        return first + chunk, body(first, inner)

    # Every lane of a lockstep vmap walks as many chunks (a lane's chunks past its total are masked).
    total = lane_max(total)
    return jax.lax.while_loop(lambda carry: carry[0] < total, step, (jnp.int32(0), init))[1]


def _expand(rules: Rules, nodes: Nodes, capacity: int, chunk: int) -> tuple[Nodes, jax.Array]:
    """(the children of ``nodes`` packed in ``capacity`` slots, whether they all fit)."""
    counts, ends = _child_ends(nodes)
    total = ends[-1]
    kept = jnp.minimum(total, capacity)
    empty = Nodes(
        states=jax.tree.map(lambda x: jnp.zeros((capacity, *x.shape[1:]), x.dtype), nodes.states),
        parent=jnp.zeros(capacity, jnp.int32),
        action=jnp.zeros(capacity, jnp.int32),
        count=kept,
    )

    def body(first, level):
        parent, action, states = _children(rules, nodes, counts, ends, first, chunk)
        put = lambda old, new: jax.lax.dynamic_update_slice_in_dim(old, new, first, axis=0)  # noqa: E731
        return level.replace(
            states=jax.tree.map(put, level.states, states),
            parent=put(level.parent, parent),
            action=put(level.action, action),
        )

    return _over_chunks(kept, chunk, body, empty), total <= capacity


def _fold(into, parent: jax.Array, action: jax.Array, score: jax.Array, valid: jax.Array):
    """Fold children's Black's-view scores into their parents' accumulators: the roots' [N, A] table
    of action scores, or a (max, min) pair of [M] arrays for the other levels."""
    if isinstance(into, tuple):
        hi, lo = into
        index = jnp.where(valid, parent, hi.shape[0])
        return hi.at[index].max(score, mode="drop"), lo.at[index].min(score, mode="drop")
    index = jnp.where(valid, parent, into.shape[0])
    return into.at[index, action].set(score, mode="drop")


def _accumulator(nodes: Nodes, rules: Rules, is_root: bool):
    size = nodes.parent.shape[0]
    if is_root:
        return jnp.zeros((size, rules.num_actions), jnp.float32)
    return jnp.full(size, -jnp.inf, jnp.float32), jnp.full(size, jnp.inf, jnp.float32)


def _node_scores(nodes: Nodes, folded: tuple[jax.Array, jax.Array], distance: int) -> jax.Array:
    """[C] Black's-view scores of a level's nodes: a finished game's result, else the best child's
    score for the side to move (Black maximises)."""
    hi, lo = folded
    best = jnp.where(nodes.states.color == BLACK, hi, lo)
    return jnp.where(nodes.states.terminated, terminal_score(nodes.states, jnp.int32(distance)), best)


GROUP_REMAINDER_CHUNK = CHUNK // 8
"""Leaves scored at once in each group's last, partial chunks (one network's batch is one group):
late in self-play a group may have a few hundred leaves, which a whole ``CHUNK`` would pad many
times over (8 PBT members x 128 games, 8x8: self-play 1.5x faster than with whole chunks alone)."""


def _grouped_leaves(
    rules: Rules, parents: Nodes, groups: jax.Array, depth: int, grouped: Grouped, chunk: int, acc
):
    """``acc`` with the depth-``depth`` leaves below ``parents`` folded in, scored by their games'
    groups' heuristics (``groups``: [C] each parent's group): a group's leaves are contiguous (the
    parents with moves are in group order), so each chunk takes one group's leaves alone: whole
    chunks of ``chunk`` first, then the rest in chunks of ``GROUP_REMAINDER_CHUNK``."""
    counts, ends = _child_ends(parents)
    in_group = jax.ops.segment_sum(counts, groups, num_segments=grouped.count)
    first_leaf = jnp.cumsum(in_group) - in_group
    whole = first_leaf + in_group // chunk * chunk
    scan = functools.partial(_fold_group_ranges, rules, parents, counts, ends, depth, grouped)
    acc = scan(first_leaf, whole, chunk, acc)
    return scan(whole, first_leaf + in_group, min(chunk, GROUP_REMAINDER_CHUNK), acc)


def _fold_group_ranges(rules, parents, counts, ends, depth, grouped, starts, stops, chunk, acc):
    """``acc`` with the leaves ``starts[g]`` .. ``stops[g] - 1`` of each group ``g`` folded in, in
    chunks of ``chunk`` (the last of a group's partly masked), an empty range costing no chunk."""
    indices = jnp.arange(grouped.count)

    def next_group(after: jax.Array) -> tuple[jax.Array, jax.Array]:
        """(the first group past ``after`` with leaves left, or ``count``; its first leaf)."""
        later = (indices > after) & (stops > starts)
        group = jnp.where(jnp.any(later), jnp.argmax(later), grouped.count).astype(jnp.int32)
        return group, starts[jnp.minimum(group, grouped.count - 1)]

    def body(carry):
        group, first, acc = carry
        g = jnp.minimum(group, grouped.count - 1)  # a lockstep lane past its last group: nothing valid
        parent, action, children = _children(rules, parents, counts, ends, first, chunk)
        heuristic = grouped.heuristic_of(g)
        score = jax.vmap(lambda child: leaf_score(child, jnp.int32(depth), heuristic))(children)
        valid = (first + jnp.arange(chunk) < stops[g]) & (group < grouped.count)
        following = next_group(group)
        done = first + chunk >= stops[g]
        group, first = jnp.where(done, following[0], group), jnp.where(done, following[1], first + chunk)
        return group, first, _fold(acc, parent, action, score, valid)

    # A (group, first) loop: searchsorted over a chunk counter to find the group measured 3x slower.
    more = lambda carry: any_lane(carry[0] < grouped.count)  # noqa: E731
    return jax.lax.while_loop(more, body, (*next_group(jnp.int32(-1)), acc))[2]


def minimax_levels(
    rules: Rules, states: State, depth: int, heuristic: Heuristic | Grouped, chunk: int, room: int
) -> tuple[jax.Array, jax.Array]:
    """([N, A] Black's-view minimax scores of the root actions (0 where illegal), whether every kept
    level fit in ``room`` nodes) of depth-``depth`` full-width searches from ``states`` [N], their
    leaves scored by ``heuristic`` or by each game's group's (``Grouped``)."""
    n = states.color.shape[0]
    levels = [Nodes(states, jnp.arange(n, dtype=jnp.int32), jnp.zeros(n, jnp.int32), jnp.int32(n))]
    groups = heuristic.group if isinstance(heuristic, Grouped) else None
    fits = jnp.bool_(True)
    for _ in range(1, depth):
        level, fit = _expand(rules, levels[-1], room, chunk)
        levels.append(level)
        fits = fits & fit
        groups = None if groups is None else groups[level.parent]
    parents = levels[-1]
    accumulator = _accumulator(parents, rules, depth == 1)
    if not isinstance(heuristic, Grouped):  # one group, the same chunks
        groups = jnp.zeros(parents.parent.shape, jnp.int32)
        heuristic = Grouped(lambda _, single=heuristic: single, groups, 1)
    folded = _grouped_leaves(rules, parents, groups, depth, heuristic, chunk, accumulator)
    for distance in range(depth - 1, 0, -1):
        nodes = levels[distance]
        score = _node_scores(nodes, folded, distance)
        valid = jnp.arange(nodes.parent.shape[0]) < nodes.count
        below = _accumulator(levels[distance - 1], rules, distance == 1)
        folded = _fold(below, nodes.parent, nodes.action, score, valid)
    return folded, fits


def fullwidth_search(
    rules: Rules,
    states: State,
    depth: int,
    heuristic: Heuristic | Grouped,
    root_margin: float,
    *,
    chunk: int = CHUNK,
    nodes_per_root: int = NODES_PER_ROOT,
) -> tuple[jax.Array, jax.Array]:
    """``(root_scores [N, A], legal [N, A])`` of depth-``depth`` searches from the N positions
    ``states`` (one batch, not under ``vmap``), from each side to move's view: minimax scores that
    equal ``jax.vmap(alphabeta_search)``'s on every move at depth 1 and on the best moves at any depth
    (module docstring). ``heuristic`` scores unfinished leaves (Black's view, one position: it is
    vmapped over chunks of ``chunk`` leaves); a ``Grouped`` one scores each game's leaves by its
    group's heuristic (several networks' games in one batch).

    Each level kept between the roots and the leaves (depth 2 or more) has room for
    ``nodes_per_root`` x N nodes; a batch whose trees are larger is searched by the vmapped
    alpha-beta instead (with ``root_margin``), which picks the same moves.
    """
    if not isinstance(depth, int) or depth < 1:
        raise ValueError(f"depth must be a static int >= 1, got {depth!r}")
    n = states.color.shape[0]
    room = -(-nodes_per_root * n // chunk) * chunk  # a whole number of chunks
    black_view, fits = minimax_levels(rules, states, depth, heuristic, chunk, room)

    def packed():
        return color_sign(states.color)[:, None] * black_view, states.legal_action_mask

    def fallback():
        if isinstance(heuristic, Grouped):
            search = lambda s, g: alphabeta_search(rules, s, depth, heuristic.for_game(g), root_margin)  # noqa: E731
            return jax.vmap(search)(states, jnp.arange(n))
        search = lambda s: alphabeta_search(rules, s, depth, heuristic, root_margin)  # noqa: E731
        return jax.vmap(search)(states)

    if depth == 1:  # nothing is kept between the roots and the leaves: it always fits
        return packed()
    # Under a lockstep vmap (PBT's members) every lane falls back when one does: the same moves.
    return jax.lax.cond(any_lane(~fits), fallback, packed)
