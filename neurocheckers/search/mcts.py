"""A compact, value-only Monte-Carlo tree search over legal-move slots, for one game.

Why not mctx: mctx keeps its tree over the full action space (4N actions) and does general
bookkeeping (embeddings, rewards, discounts, priors) per node. The design note measured that, on
a batch of 2048 games x 16 simulations, over 95% of an mctx search was tree bookkeeping, several
times slower than a compact search. This search keeps per node only K = ``rules.max_legal_moves``
child slots (the legal actions in increasing order, as ``legal_action_slots`` lists them), a
uniform prior, and no rewards: values live in [0, 1] as the chance that a player wins.

The tree of one search has ``S + 1`` nodes (S = ``num_simulations``; node 0 is the root and
simulation ``s`` creates node ``s + 1``), each with K child slots. Each simulation:

1. descends from the root with PUCT, ``q + c_puct * prior * sqrt(N(node)) / (1 + N(child))``,
   where an unexpanded child has ``q = first_play_value`` (so, by default, every move is tried once
   before any is tried twice); ties fall at random (seeded by the key);
2. stops at the first unexpanded slot, or at an existing terminal node (a finished game is
   revisited with its exact value, never expanded further);
3. expands one node with ``step`` and evaluates it: a terminal node by its exact result (win 1,
   draw 1/2, loss 0 for the side to move), any other with the injected ``value_fn``;
4. backs the value up along the path.

Two-player care: a node stores values from the perspective of the player to move at its parent
(the player who chose the move into it). The player changes from parent to child only when
``child.color != parent.color``; during a multi-jump the same player moves again. So the leaf value
``v`` (for the side to move at the leaf) is flipped to ``1 - v`` only across colour-changing edges:
a node on the path receives ``v`` if its parent's side to move is the leaf's, else ``1 - v``.

Cost: descents run inside one ``lax.while_loop``, as deep as the deepest game of a vmapped batch.
The path is kept as a bitmask over nodes, so the backup is elementwise over the S + 1 nodes rather
than a scatter; each descent step gathers the K children's numbers with one gather.

Everything is written for one game without Python branching on traced values; ``jax.vmap`` over
states and keys gives a batch of games, and over params too for a population.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from neurocheckers.rules.bits import hash32, lowbias32, nth_legal_action
from neurocheckers.rules.engine import legal_action_slots, step
from neurocheckers.rules.outcome import points_for
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State
from neurocheckers.search.types import ValueFn


@dataclasses.dataclass(frozen=True)
class MCTSConfig:
    """Static settings of the search (hashable: a static jit argument)."""

    num_simulations: int = 16
    """Simulations per search; each adds one node to the tree (or revisits a terminal one)."""
    c_puct: float = 1.25
    """Exploration weight of PUCT (the prior is uniform over legal moves, noised at the root)."""
    first_play_value: float = 1.0
    """Value assumed for a move never tried (first-play urgency); 1.0 tries every move once first."""
    random_ties: bool = True
    """Whether ties between selection scores, and between the visit counts of the final choice, are
    broken at random (seeded by the search key) rather than towards the lowest slot."""
    root_dirichlet_alpha: float = 0.0
    """Concentration of the Dirichlet noise mixed into the root prior; 0 switches it off."""
    root_dirichlet_fraction: float = 0.25
    """Weight of the Dirichlet noise in the root prior (when ``root_dirichlet_alpha > 0``)."""

    def __post_init__(self) -> None:
        if not isinstance(self.num_simulations, int) or self.num_simulations < 1:
            raise ValueError(f"num_simulations must be an int >= 1, got {self.num_simulations!r}")
        if not self.c_puct >= 0:
            raise ValueError(f"c_puct must be >= 0, got {self.c_puct!r}")
        if not self.root_dirichlet_alpha >= 0:
            raise ValueError(f"root_dirichlet_alpha must be >= 0, got {self.root_dirichlet_alpha!r}")
        if not 0 <= self.root_dirichlet_fraction <= 1:
            raise ValueError(
                f"root_dirichlet_fraction must be in [0, 1], got {self.root_dirichlet_fraction!r}"
            )


@struct.dataclass
class SearchOutput:
    """The result of one search (``jax.vmap`` adds leading batch axes).

    Fields:
      action: [] int32, the chosen action (most visits, ties at random); 0 when the root is terminal
        (like ``random_action`` and the baseline policies; ``step`` ignores it on a finished game).
      visit_counts: [K] int32, visits of each root slot; they sum to ``num_simulations`` unless the
        root is terminal (then all 0).
      root_value: [] float32, the chance that the side to move at the root wins: the visit-weighted
        mean of the backed-up values (the exact result for a terminal root).
      child_values: [K] float32, mean backed-up value of each root slot for the side to move at the
        root (0 for unvisited or illegal slots).
      legal_slots: [K] int32, the root's legal actions in increasing order, padded with -1 (all -1
        at a terminal root); slot ``k`` of ``visit_counts`` and ``child_values`` is action
        ``legal_slots[k]``.
    """

    action: jax.Array
    visit_counts: jax.Array
    root_value: jax.Array
    child_values: jax.Array
    legal_slots: jax.Array


_VISITS, _VALUE_SUM = range(2)
"""Rows of ``_Tree.stats``: packed in one array so that the descent reads the numbers of a node's
children with one gather."""


@struct.dataclass
class _Tree:
    """The search tree of one game: S + 1 nodes (node 0 is the root), K child slots per node.

    Fields:
      nodes: State with a leading [S + 1] axis.
      stats: [2, S + 1] float32, per node: visits (simulations whose path went through it) and value
        sum (backed-up values for the player who moved into it: its parent's side to move).
      num_legal: [S + 1] int32, legal moves at each node (its valid slots are 0 .. num_legal - 1).
      mover: [S + 1] int32, the colour that moved into each node (the parent's ``color``).
      children: [S + 1, K] int32, the node reached by each slot, -1 while unexpanded.
    """

    nodes: State
    stats: jax.Array
    num_legal: jax.Array
    mover: jax.Array
    children: jax.Array


def argmax_random_ties(scores: jax.Array, salt: jax.Array) -> jax.Array:
    """[] int32: the slot of the highest of f32[K] ``scores`` (K <= 64); ties go to a random slot.

    XLA on CPU runs ``argmax`` (a reduce over value and index pairs) as scalar code. Here each score
    becomes an order-preserving int32 whose 6 lowest bits are replaced by a code of its slot, so a
    plain (vectorised) ``max`` finds the best slot, about 3x faster. Codes are a permutation of the
    slots drawn from ``salt`` (``a * slot + b mod 64`` with odd ``a``), so among scores that tie (equal
    to a relative 2^-17, the precision the 6 bits cost) the winner is random; salt 0 picks the lowest.
    """
    k = scores.shape[-1]
    slots = jnp.arange(k, dtype=jnp.int32)
    salt = salt.astype(jnp.int32)
    a = (salt | 1) & 63
    b = (salt >> 8) & 63
    a_inverse = (a * (2 - a * a)) & 63  # odd a is its own inverse mod 8; one Newton step gives mod 64
    codes = jnp.where(salt == 0, 63 - slots, (a * slots + b) & 63)
    bits = jax.lax.bitcast_convert_type(scores, jnp.int32)
    ordered = jnp.where(bits >= 0, bits, bits ^ jnp.int32(0x7FFFFFFF))
    code = jnp.max((ordered & jnp.int32(~63)) | codes, axis=-1) & 63
    return jnp.where(salt == 0, 63 - code, ((code - b) * a_inverse) & 63)


def _exact_value(state: State) -> jax.Array:
    """[] float32: a finished game's result for its side to move (win 1, draw 1/2, loss 0)."""
    return points_for(state.result, state.color == BLACK)


def _node(tree: _Tree, index: jax.Array) -> State:
    return jax.tree.map(lambda x: x[index], tree.nodes)


def _child_stats(tree: _Tree, node: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The child row of ``node`` ([K] node numbers, -1 unexpanded) and its children's [2, K] stats."""
    row = tree.children[node]
    return row, jnp.where(row >= 0, tree.stats[:, jnp.maximum(row, 0)], 0.0)


@struct.dataclass
class _Context:
    """What every simulation of one search shares (built once per search by ``_context``).

    Fields:
      root_prior: [K] float32, the prior over the root's slots (uniform over legal ones, maybe noised).
      noise_seed: [] uint32, the seed of the per-node tie-break salts.
      value_key: the key each simulation folds its number into for ``value_fn``.
      zero: [] int32, a zero that depends on the game. Under ``shard_map`` a loop carry must vary over
        the same mesh axes as the values the loop puts into it, so constants that start a carry get
        this zero added.
    """

    root_prior: jax.Array
    noise_seed: jax.Array
    value_key: jax.Array
    zero: jax.Array


def _context(rules: Rules, config: MCTSConfig, state: State, key: jax.Array) -> tuple[_Context, jax.Array]:
    """The shared context of a search from ``state``, and the key of the final choice."""
    k = rules.max_legal_moves
    noise_key, choice_key, dirichlet_key, value_key = jax.random.split(key, 4)
    root_legal_count = state.num_legal_actions
    root_legal = jnp.arange(k, dtype=jnp.int32) < root_legal_count
    uniform_root = 1.0 / jnp.maximum(root_legal_count, 1).astype(jnp.float32)
    root_prior = jnp.where(root_legal, uniform_root, 0.0)
    if config.root_dirichlet_alpha > 0:
        gamma = jax.random.gamma(dirichlet_key, config.root_dirichlet_alpha, (k,))
        gamma = jnp.where(root_legal, gamma, 0.0)
        dirichlet = gamma / jnp.maximum(jnp.sum(gamma), 1e-30)
        frac = config.root_dirichlet_fraction
        root_prior = (1.0 - frac) * root_prior + frac * dirichlet
    context = _Context(
        root_prior=root_prior,
        noise_seed=jax.random.bits(noise_key, (), jnp.uint32),
        value_key=value_key,
        zero=state.ply * 0,
    )
    return context, choice_key


def _new_tree(rules: Rules, config: MCTSConfig, state: State, zero: jax.Array) -> _Tree:
    """A tree holding only the root ``state``."""
    num_nodes = config.num_simulations + 1
    empty_nodes = jax.tree.map(lambda x: jnp.zeros((num_nodes,) + x.shape, x.dtype), state)
    return _Tree(
        nodes=jax.tree.map(lambda arr, x: arr.at[0].set(x), empty_nodes, state),
        stats=jnp.zeros((2, num_nodes), jnp.float32) + zero.astype(jnp.float32),
        num_legal=jnp.zeros((num_nodes,), jnp.int32).at[0].set(state.num_legal_actions),
        mover=jnp.zeros((num_nodes,), jnp.int32).at[0].set(1 - state.color),
        children=jnp.full((num_nodes, rules.max_legal_moves), -1, jnp.int32) + zero,
    )


def _select_slot(
    config: MCTSConfig,
    context: _Context,
    node: jax.Array,
    node_visits: jax.Array,
    num_legal: jax.Array,
    child_stats: jax.Array,
) -> jax.Array:
    """PUCT choice among the legal slots of ``node``; ``child_stats`` [2, K] (zeros if unexpanded)."""
    visits = child_stats[_VISITS]
    legal = jnp.arange(visits.shape[-1], dtype=jnp.int32) < num_legal
    prior = jnp.where(node == 0, context.root_prior, 1.0 / jnp.maximum(num_legal, 1).astype(jnp.float32))
    q = jnp.where(visits > 0, child_stats[_VALUE_SUM] / jnp.maximum(visits, 1.0), config.first_play_value)
    explore = config.c_puct * prior * jnp.sqrt(node_visits) / (1.0 + visits)
    salt = hash32(context.noise_seed, node, lowbias32) | 1 if config.random_ties else jnp.uint32(0)
    return argmax_random_ties(jnp.where(legal, q + explore, -jnp.inf), salt)


def _descend(
    config: MCTSConfig, context: _Context, tree: _Tree, sim: jax.Array
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Walk down from the root with PUCT to the first unexpanded slot or a finished game.

    Returns ``(node, slot, path)``: the node whose ``slot`` is new (or a finished game, revisited and
    not expanded) and the path as a bitmask over nodes (``ceil((S + 1) / 32)`` uint32): a tiny loop
    carry, so the backup is elementwise over nodes instead of a scatter.
    """
    zero = context.zero
    num_words = (config.num_simulations + 1 + 31) // 32
    word_ids = jnp.arange(num_words, dtype=jnp.int32)

    def keep_going(carry):
        return carry[3]

    def down(carry):
        node, node_visits, _, _, path = carry
        row, child_stats = _child_stats(tree, node)
        slot = _select_slot(config, context, node, node_visits, tree.num_legal[node], child_stats)
        child = row[slot]
        expanded = child >= 0
        # Go on through expanded, unfinished children; stop at a new slot or a finished game.
        descending = expanded & ~tree.nodes.terminated[jnp.maximum(child, 0)]
        bit = jnp.left_shift(jnp.uint32(1), (child & 31).astype(jnp.uint32))
        path = jnp.where(word_ids == (child >> 5), path | bit, path)  # child -1 matches no word
        return (
            jnp.where(expanded, child, node),
            jnp.where(expanded, child_stats[_VISITS, slot], node_visits),
            slot,
            descending,
            path,
        )

    root_path = jnp.zeros((num_words,), jnp.uint32).at[0].set(1) + zero.astype(jnp.uint32)
    root_visits = (sim + zero).astype(jnp.float32)
    start = (zero, root_visits, zero, ~tree.nodes.terminated[0], root_path)
    node, _, slot, _, path = jax.lax.while_loop(keep_going, down, start)
    return node, slot, path


def _backup(
    tree: _Tree,
    nodes: State,
    path: jax.Array,
    parent: jax.Array,
    slot: jax.Array,
    new_index: jax.Array,
    parent_state: State,
    leaf: State,
    leaf_value: jax.Array,
) -> _Tree:
    """Add the leaf's value along the path and record the new node ``new_index`` (child ``slot`` of
    ``parent``; not linked when ``parent`` is a finished game, which is revisited, not expanded).

    A node gets ``v`` if its mover is the leaf's side to move, else ``1 - v``: the value flips only
    across edges where the player changes, not inside a multi-jump.
    """
    num_nodes = tree.mover.shape[0]
    node_ids = jnp.arange(num_nodes, dtype=jnp.int32)
    on_path = ((path[node_ids >> 5] >> (node_ids & 31).astype(jnp.uint32)) & 1).astype(jnp.float32)
    gain = jnp.where(tree.mover == leaf.color, leaf_value, 1.0 - leaf_value)
    stats = tree.stats + jnp.stack([on_path, on_path * gain])
    # The new node: one visit with its own value, for the player who moved into it.
    expand = ~parent_state.terminated
    new_gain = jnp.where(parent_state.color == leaf.color, leaf_value, 1.0 - leaf_value)
    visited = expand.astype(jnp.float32)
    return _Tree(
        nodes=nodes,
        stats=stats.at[:, new_index].set(jnp.stack([visited, visited * new_gain])),
        num_legal=tree.num_legal.at[new_index].set(leaf.num_legal_actions),
        mover=tree.mover.at[new_index].set(parent_state.color),
        children=tree.children.at[jnp.where(expand, parent, num_nodes), slot].set(new_index, mode="drop"),
    )


def _simulate(
    rules: Rules,
    config: MCTSConfig,
    value_fn: ValueFn,
    params: Any,
    context: _Context,
    sim: jax.Array,
    tree: _Tree,
) -> _Tree:
    """One simulation: descend, expand one node with ``step``, evaluate it, back the value up."""
    parent, slot, path = _descend(config, context, tree, sim)
    parent_state = _node(tree, parent)
    new_index = sim + 1
    # A finished parent passes through ``step`` unchanged (and is not linked as a child).
    new_state = step(rules, parent_state, nth_legal_action(rules, parent_state.legal_bits, slot))
    # Store the new node, then read it back for the evaluation: the stored copy is a fusion
    # boundary, so XLA does not recompute the whole step for each input unit of the network.
    nodes = jax.tree.map(lambda arr, x: arr.at[new_index].set(x), tree.nodes, new_state)
    leaf = _node(tree.replace(nodes=nodes), new_index)
    leaf_value = jnp.where(
        leaf.terminated,
        _exact_value(leaf),
        value_fn(params, leaf, jax.random.fold_in(context.value_key, sim)),
    )
    return _backup(tree, nodes, path, parent, slot, new_index, parent_state, leaf, leaf_value)


def _root_output(
    rules: Rules, config: MCTSConfig, tree: _Tree, state: State, choice_key: jax.Array
) -> SearchOutput:
    """The move with the most root visits (ties at random) and the root statistics."""
    k = rules.max_legal_moves
    root_legal_count = state.num_legal_actions
    root_legal = jnp.arange(k, dtype=jnp.int32) < root_legal_count
    _, root_child_stats = _child_stats(tree, 0)
    visits = root_child_stats[_VISITS]
    value_sum = root_child_stats[_VALUE_SUM]
    choice_salt = jax.random.bits(choice_key, (), jnp.uint32) | 1 if config.random_ties else jnp.uint32(0)
    best = argmax_random_ties(jnp.where(root_legal, visits, -jnp.inf), choice_salt)
    slots = legal_action_slots(rules, state, k)
    total = jnp.sum(visits)
    root_value = jnp.where(
        state.terminated, _exact_value(state), jnp.sum(value_sum) / jnp.maximum(total, 1.0)
    )
    return SearchOutput(
        action=jnp.where(root_legal_count > 0, slots[best], 0).astype(jnp.int32),
        visit_counts=visits.astype(jnp.int32),
        root_value=root_value,
        child_values=jnp.where(visits > 0, value_sum / jnp.maximum(visits, 1.0), 0.0),
        legal_slots=slots,
    )


def search(
    rules: Rules,
    config: MCTSConfig,
    value_fn: ValueFn,
    params: Any,
    state: State,
    key: jax.Array,
) -> SearchOutput:
    """Search from ``state`` for ``config.num_simulations`` simulations and choose a move.

    ``value_fn(params, state, key)`` evaluates non-terminal leaves. ``rules``, ``config`` and
    ``value_fn`` are static; jit with them bound (e.g. ``functools.partial``) and vmap over
    ``state`` and ``key`` (and ``params`` for a population). A terminated ``state`` (no legal
    action) gives action 0, no visits and its exact value.
    """
    if rules.max_legal_moves > 64:
        raise ValueError(
            f"at most 64 move slots are supported, rules {rules.name!r} need {rules.max_legal_moves}"
        )
    context, choice_key = _context(rules, config, state, key)
    simulate = functools.partial(_simulate, rules, config, value_fn, params, context)
    tree = _new_tree(rules, config, state, context.zero)
    tree = jax.lax.fori_loop(0, config.num_simulations, simulate, tree)
    return _root_output(rules, config, tree, state, choice_key)


# ---------------------------------------------------------------------------
# Batched search, budgets
# ---------------------------------------------------------------------------


@functools.cache
def batched_search(
    rules: Rules, config: MCTSConfig, value_fn: ValueFn, population: bool = False
) -> Callable[[Any, State, jax.Array], SearchOutput]:
    """A jitted ``(params, states [B], keys [B]) -> SearchOutput [B]``, cached per static settings.

    With ``population=True`` params carry the same leading ``[B]`` axis (one member per game).
    """
    one = functools.partial(search, rules, config, value_fn)
    return jax.jit(jax.vmap(one, in_axes=(0 if population else None, 0, 0)))
