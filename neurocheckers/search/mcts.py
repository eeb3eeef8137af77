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
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from neurocheckers.rules.engine import legal_action_slots, step
from neurocheckers.rules.outcome import points_for
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State

ValueFn = Callable[[Any, State, jax.Array], jax.Array]
"""``(params, state, key) -> f32[]``: the chance in [0, 1] that the side to move in ``state`` wins."""


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
      legal_slots: [K] int32, the root's legal actions in increasing order, padded with -1; slot ``k``
        of ``visit_counts`` and ``child_values`` is action ``legal_slots[k]``.
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
      nodes: State with a leading [S + 1] axis; ``legal_action_mask`` is dropped (shape [S + 1, 0])
        because slots are derived from ``legal_bits`` and ``step`` recomputes the mask.
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


def _hash32(seed: jax.Array, counter: jax.Array) -> jax.Array:
    """A seeded uint32 hash of uint32 counters (lowbias32): cheap noise, no threefry per node."""
    x = seed ^ (counter.astype(jnp.uint32) * jnp.uint32(0x9E3779B9))
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * jnp.uint32(0x846CA68B)
    return x ^ (x >> 16)


def _argmax_random_ties(scores: jax.Array, salt: jax.Array) -> jax.Array:
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


def _select_bit(bits: jax.Array, rank: jax.Array) -> jax.Array:
    """Index of the ``rank``-th (0-based) set bit of a uint32, by binary search over popcounts."""
    pos = jnp.uint32(0)
    rank = rank.astype(jnp.uint32)
    for width in (16, 8, 4, 2, 1):
        count = jax.lax.population_count((bits >> pos) & jnp.uint32((1 << width) - 1))
        go_up = rank >= count
        rank = jnp.where(go_up, rank - count, rank)
        pos = jnp.where(go_up, pos + jnp.uint32(width), pos)
    return pos.astype(jnp.int32)


def _slot_action(rules: Rules, legal_bits: jax.Array, slot: jax.Array) -> jax.Array:
    """The action in slot ``slot`` (the slot-th legal action in increasing order), from [4] legal_bits.

    Actions are ``direction * N + square``, so increasing order is direction-major: find the
    direction holding the slot, then the square among that direction's set bits. Same order as
    ``legal_action_slots``, without building the [4N] mask.
    """
    counts = jax.lax.population_count(legal_bits).astype(jnp.int32)
    ends = jnp.cumsum(counts)
    direction = jnp.minimum(jnp.sum(ends <= slot), 3)
    rank = slot - (ends[direction] - counts[direction])
    return direction * rules.num_squares + _select_bit(legal_bits[direction], rank)


def _num_legal(state: State) -> jax.Array:
    return jnp.sum(jax.lax.population_count(state.legal_bits)).astype(jnp.int32)


def _exact_value(state: State) -> jax.Array:
    """[] float32: a finished game's result for its side to move (win 1, draw 1/2, loss 0)."""
    return points_for(state.result, state.color == BLACK)


def _compact(state: State) -> State:
    return state.replace(legal_action_mask=jnp.zeros(state.legal_action_mask.shape[:-1] + (0,), jnp.bool_))


def _node_state(rules: Rules, tree: _Tree, index: jax.Array) -> State:
    """The full State of node ``index`` (with a placeholder ``legal_action_mask``, which ``step`` ignores)."""
    node = jax.tree.map(lambda x: x[index], tree.nodes)
    return node.replace(legal_action_mask=jnp.zeros((rules.num_actions,), jnp.bool_))


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
    ``state`` and ``key`` (and ``params`` for a population).
    """
    num_sims = config.num_simulations
    num_nodes = num_sims + 1
    k = rules.max_legal_moves
    slot_ids = jnp.arange(k, dtype=jnp.int32)
    node_ids = jnp.arange(num_nodes, dtype=jnp.int32)
    if k > 64:
        raise ValueError(f"at most 64 move slots are supported, rules {rules.name!r} need {k}")
    noise_key, choice_key, dirichlet_key, value_key = jax.random.split(key, 4)
    noise_seed = jax.random.bits(noise_key, (), jnp.uint32)

    root_legal_count = _num_legal(state)
    root_legal = slot_ids < root_legal_count
    uniform_root = 1.0 / jnp.maximum(root_legal_count, 1).astype(jnp.float32)
    root_prior = jnp.where(root_legal, uniform_root, 0.0)
    if config.root_dirichlet_alpha > 0:
        gamma = jax.random.gamma(dirichlet_key, config.root_dirichlet_alpha, (k,))
        gamma = jnp.where(root_legal, gamma, 0.0)
        dirichlet = gamma / jnp.maximum(jnp.sum(gamma), 1e-30)
        frac = config.root_dirichlet_fraction
        root_prior = (1.0 - frac) * root_prior + frac * dirichlet

    # A zero that depends on the game. Under ``shard_map`` a loop carry must vary over the same mesh
    # axes as the values the loop puts into it, so constants that start a carry get this zero added.
    zero = state.ply * 0
    num_words = (num_nodes + 31) // 32
    word_ids = jnp.arange(num_words, dtype=jnp.int32)
    empty_nodes = jax.tree.map(lambda x: jnp.zeros((num_nodes,) + x.shape, x.dtype), _compact(state))
    tree = _Tree(
        nodes=jax.tree.map(lambda arr, x: arr.at[0].set(x), empty_nodes, _compact(state)),
        stats=jnp.zeros((2, num_nodes), jnp.float32) + zero.astype(jnp.float32),
        num_legal=jnp.zeros((num_nodes,), jnp.int32).at[0].set(root_legal_count),
        mover=jnp.zeros((num_nodes,), jnp.int32).at[0].set(1 - state.color),
        children=jnp.full((num_nodes, k), -1, jnp.int32) + zero,
    )

    def select_slot(
        node: jax.Array, node_visits: jax.Array, num_legal: jax.Array, child_stats: jax.Array
    ) -> jax.Array:
        """PUCT choice among the legal slots of ``node``; ``child_stats`` [2, K] (zeros if unexpanded)."""
        visits = child_stats[_VISITS]
        legal = slot_ids < num_legal
        prior = jnp.where(node == 0, root_prior, 1.0 / jnp.maximum(num_legal, 1).astype(jnp.float32))
        q = jnp.where(visits > 0, child_stats[_VALUE_SUM] / jnp.maximum(visits, 1.0), config.first_play_value)
        explore = config.c_puct * prior * jnp.sqrt(node_visits) / (1.0 + visits)
        salt = _hash32(noise_seed, node) | 1 if config.random_ties else jnp.uint32(0)
        return _argmax_random_ties(jnp.where(legal, q + explore, -jnp.inf), salt)

    def simulate(sim: jax.Array, tree: _Tree) -> _Tree:
        # Descent. The path is a bitmask over nodes (``num_words`` uint32): a tiny loop carry, and the
        # backup below is elementwise over nodes instead of a scatter.
        def keep_going(carry):
            return carry[3]

        def descend(carry):
            node, node_visits, _, _, path = carry
            row = tree.children[node]
            child_stats = jnp.where(row >= 0, tree.stats[:, jnp.maximum(row, 0)], 0.0)
            slot = select_slot(node, node_visits, tree.num_legal[node], child_stats)
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
        node, _, slot, _, path = jax.lax.while_loop(keep_going, descend, start)
        # ``node`` is now the parent of a new slot, or a finished game (revisited, not expanded).
        parent_state = _node_state(rules, tree, node)
        expand = ~parent_state.terminated
        new_index = sim + 1
        new_state = step(rules, parent_state, _slot_action(rules, parent_state.legal_bits, slot))
        # Store the new node, then read it back for the evaluation: the stored copy is a fusion
        # boundary, so XLA does not recompute the whole step for each input unit of the network.
        nodes = jax.tree.map(lambda arr, x: arr.at[new_index].set(x), tree.nodes, _compact(new_state))
        stored = _node_state(rules, tree.replace(nodes=nodes), new_index)
        new_state = stored.replace(legal_action_mask=new_state.legal_action_mask)  # for value_fn only

        sim_key = jax.random.fold_in(value_key, sim)
        leaf_value = jnp.where(
            new_state.terminated,  # a terminated parent_state passes through step unchanged
            _exact_value(new_state),
            value_fn(params, new_state, sim_key),
        )

        # Backup over the path: a node gets v if its mover is the leaf's side to move, else 1 - v (the
        # value flips only across edges where the player changes, not inside a multi-jump).
        on_path = ((path[node_ids >> 5] >> (node_ids & 31).astype(jnp.uint32)) & 1).astype(jnp.float32)
        gain = jnp.where(tree.mover == new_state.color, leaf_value, 1.0 - leaf_value)
        stats = tree.stats + jnp.stack([on_path, on_path * gain])
        # The new node: one visit with its own value, for the player who moved into it.
        new_gain = jnp.where(parent_state.color == new_state.color, leaf_value, 1.0 - leaf_value)
        visited = expand.astype(jnp.float32)
        return _Tree(
            nodes=nodes,
            stats=stats.at[:, new_index].set(jnp.stack([visited, visited * new_gain])),
            num_legal=tree.num_legal.at[new_index].set(_num_legal(new_state)),
            mover=tree.mover.at[new_index].set(parent_state.color),
            children=tree.children.at[jnp.where(expand, node, num_nodes), slot].set(new_index, mode="drop"),
        )

    tree = jax.lax.fori_loop(0, num_sims, simulate, tree)

    root_children = tree.children[0]
    root_child_stats = jnp.where(root_children >= 0, tree.stats[:, jnp.maximum(root_children, 0)], 0.0)
    visits = root_child_stats[_VISITS]
    value_sum = root_child_stats[_VALUE_SUM]
    # Most visits, ties at random.
    choice_salt = jax.random.bits(choice_key, (), jnp.uint32) | 1 if config.random_ties else jnp.uint32(0)
    best = _argmax_random_ties(jnp.where(root_legal, visits, -jnp.inf), choice_salt)
    slots = legal_action_slots(rules, state, k)
    total = jnp.sum(visits)
    root_value = jnp.where(
        state.terminated, _exact_value(state), jnp.sum(value_sum) / jnp.maximum(total, 1.0)
    )
    return SearchOutput(
        action=jnp.where(state.terminated, 0, slots[best]).astype(jnp.int32),
        visit_counts=visits.astype(jnp.int32),
        root_value=root_value,
        child_values=jnp.where(visits > 0, value_sum / jnp.maximum(visits, 1.0), 0.0),
        legal_slots=slots,
    )


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


def calibrate_simulations(
    rules: Rules,
    config: MCTSConfig,
    value_fn: ValueFn,
    params: Any,
    seconds_per_move: float,
    batch_size: int,
    states: State | None = None,
    repeats: int = 3,
) -> int:
    """The simulation count whose batched search of ``batch_size`` games takes ``seconds_per_move``.

    Times the jitted, vmapped search on this machine (median of ``repeats`` after a compile run) at
    ``config.num_simulations``, then once more at the estimate when it is far off, since the cost per
    simulation grows with the tree. ``states`` ([batch_size] positions) default to the initial
    position. Returns at least 1. Record the count, not the time budget, so runs are reproducible.
    """
    if seconds_per_move <= 0:
        raise ValueError(f"seconds_per_move must be > 0, got {seconds_per_move!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
    if states is None:
        from neurocheckers.rules.engine import init

        states = jax.tree.map(lambda x: jnp.broadcast_to(x, (batch_size,) + x.shape), init(rules))
    keys = jax.random.split(jax.random.key(0), batch_size)

    def seconds_per_sim(num_sims: int) -> float:
        run = batched_search(rules, dataclasses.replace(config, num_simulations=num_sims), value_fn)
        jax.block_until_ready(run(params, states, keys))  # compile
        times = []
        for _ in range(max(repeats, 1)):
            start = time.perf_counter()
            jax.block_until_ready(run(params, states, keys))
            times.append(time.perf_counter() - start)
        return sorted(times)[len(times) // 2] / num_sims

    probe = config.num_simulations
    estimate = max(1, int(seconds_per_move / seconds_per_sim(probe)))
    if not probe / 2 <= estimate <= probe * 2:
        estimate = max(1, int(seconds_per_move / seconds_per_sim(estimate)))
    return estimate


def anytime_search(
    rules: Rules,
    config: MCTSConfig,
    value_fn: ValueFn,
    params: Any,
    state: State,
    key: jax.Array,
    seconds: float,
    max_simulations: int = 1 << 16,
) -> SearchOutput:
    """Search one game until a wall-clock deadline of ``seconds``, for interactive play.

    Runs the jitted ``search`` with ``config.num_simulations``, then doubles the count while the next
    run is predicted to end before the deadline (2.2x the last run, plus the last compile time when
    the next size is not compiled yet), and returns the last completed result. The first run always
    completes. Compiled sizes are kept for the process, so later moves only pay for running. A
    position with a single legal move returns after the first run.
    """
    deadline = time.perf_counter() + seconds
    num_sims = config.num_simulations
    while True:
        sized = dataclasses.replace(config, num_simulations=num_sims)
        compiled, compile_seconds = _compiled_search(rules, sized, value_fn, params, state, key)
        started = time.perf_counter()
        result = jax.block_until_ready(compiled(params, state, key))
        took = time.perf_counter() - started
        if int(state.num_legal_actions) <= 1 or num_sims * 2 > max_simulations:
            return result
        bigger = dataclasses.replace(config, num_simulations=num_sims * 2)
        compiled_already = _search_signature(rules, bigger, value_fn, params, state) in _COMPILED_SEARCHES
        predicted = 2.2 * took + (0.0 if compiled_already else compile_seconds)
        if time.perf_counter() + predicted > deadline:
            return result
        num_sims *= 2


_COMPILED_SEARCHES: dict[tuple, tuple[Any, float]] = {}
"""Compiled one-game searches of ``anytime_search`` with the seconds their compilation took."""


def _search_signature(
    rules: Rules, config: MCTSConfig, value_fn: ValueFn, params: Any, state: State
) -> tuple:
    shapes = tuple((x.shape, x.dtype) for x in jax.tree.leaves((params, state)))
    return rules, config, value_fn, jax.tree.structure((params, state)), shapes


def _compiled_search(
    rules: Rules, config: MCTSConfig, value_fn: ValueFn, params: Any, state: State, key: jax.Array
) -> tuple[Any, float]:
    """The compiled one-game search for these settings and argument shapes, and its compile seconds."""
    signature = _search_signature(rules, config, value_fn, params, state)
    if signature not in _COMPILED_SEARCHES:
        started = time.perf_counter()
        compiled = (
            jax.jit(functools.partial(search, rules, config, value_fn)).lower(params, state, key).compile()
        )
        _COMPILED_SEARCHES[signature] = (compiled, time.perf_counter() - started)
    return _COMPILED_SEARCHES[signature]
