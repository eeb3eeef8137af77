"""A hand-written checkers evaluation in JAX: the classic engine terms as bitboard counts.

``heuristic_score(rules, state)`` is a Black's-view score in men, for the unfinished leaves of the
alpha-beta search (``baselines.alphabeta_search``); ``heuristic_value_fn`` turns it into a value
function (the chance that the side to move wins) and ``heuristic_alphabeta_policy`` into a player.

Most terms and weights are those of Martin Fierz's *Simple Checkers* (``simplech.c`` 1.14/1.15, the
sample engine shipped with CheckerBoard, 1997-2011), whose evaluation is in hundredths of a man:
man 100, king 130, an exchange bonus ``250 (v1 - v2) / (v1 + v2)``, the side to move +2, a back-rank
guard table x3, centre men +1 and kings +5, edge men -1 and kings -5, tempo x-2 / -1 / 0 / +2 by
phase, an intact double corner +3, a cramp +5, the weaker side's kings in a double corner +15. They
are divided by 100 here. Mobility, runaway men and a pending capture are not in Simple Checkers;
those weights were chosen here and checked by equal-depth matches against the material count
(``neurocheckers match alphabeta:D:heuristic alphabeta:D --rules american8 --openings 100``).

Symmetry: every term of a side is computed by one function on that side's pieces seen with its men
moving down the board (Black as it is; White turned half a turn, bit ``i`` <-> bit ``N - 1 - i``,
``mirror``), and the score is Black's terms minus White's plus the side-to-move terms with a sign.
So flipping the colours (and the board) negates the score exactly, bit for bit. The score is rounded
to ``QUANTUM`` (a hundredth of a man, like Simple Checkers' integers), so equal scores are exactly
equal, which the alpha-beta's random tie-break among the best root moves needs (``search_value_fn``).

Square numbers below are American notation (bit ``s - 1``); Black's men start on 1-12 and crown on
29-32. The named patterns (back-rank table, double corner, cramp, safe corners) are 8x8 ones and are
left out on smaller boards, where the general terms (material, centre, edges, tempo, mobility,
runaway men, capture) still apply.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from neurocheckers.rules.bits import neighbors
from neurocheckers.rules.outcome import points_for
from neurocheckers.rules.presets import Rules
from neurocheckers.rules.state import BLACK, State
from neurocheckers.rules.tables import Tables, tables
from neurocheckers.search.baselines import alphabeta_policy
from neurocheckers.search.types import Policy, ValueFn

# ---------------------------------------------------------------------------
# Weights, in men
# ---------------------------------------------------------------------------

KING_WEIGHT = 1.3
"""A king in men: Simple Checkers' 130 against a man's 100, within the 1.3-1.5 men usually given to a
king (this project's plain material count, ``outcome.KING_VALUE``, uses 1.5)."""
TRADE_WEIGHT = 2.5
"""Exchange bonus ``TRADE_WEIGHT * (own - opponent) / (own + opponent)`` over material (men 1, kings
``KING_WEIGHT``): the side ahead gains by trading down. Simple Checkers' ``250 (v1 - v2) / (v1 + v2)``."""
TURN_WEIGHT = 0.02
"""Bonus of the side to move: Simple Checkers' ``turn = 2``."""
BACK_RANK_WEIGHT = 0.03
"""Multiplier of ``BACK_RANK_TABLE``: Simple Checkers' ``brv = 3``."""
BACK_RANK_TABLE = (0, -1, 1, 0, 1, 1, 2, 1, 1, 0, 7, 4, 2, 2, 9, 8)
"""Back-rank guard value of own men on the own back rank, indexed by ``8 [sq1] + 4 [sq2] + 2 [sq3] +
[sq4]`` for Black (30 and 32 for White's bridge, by symmetry): Simple Checkers' table. The "bridge"
(men on 1 and 3, code 10) is worth 7, the full row 8, a lone man on 4 (the single corner) -1."""
CENTRE_MAN_WEIGHT = 0.01
"""A man on a central square (10, 11, 14, 15, 18, 19, 22, 23): Simple Checkers' ``mcv = 1``."""
CENTRE_KING_WEIGHT = 0.05
"""A king on a central square: Simple Checkers' ``kcv = 5``."""
EDGE_MAN_WEIGHT = -0.01
"""A man on an edge square (first or last row, first or last column): Simple Checkers' ``mev = 1``."""
EDGE_KING_WEIGHT = -0.05
"""A king on an edge square: Simple Checkers' ``kev = 5``."""
TEMPO_WEIGHTS = ((16, -0.02), (12, -0.01), (9, 0.0), (0, 0.02))
"""``(fewest men on the board, weight per rank)``: the tempo (sum of own men's ranks, 0 on the own
back row) times the weight of the first phase whose threshold the men on the board reach. Holding
back pays in the opening, advancing in the endgame: Simple Checkers' ``opening = -2`` (16+ men),
``midgame = -1`` (12-15), 0 (9-11), ``endgame = +2`` (under 9); Samuel's "tempo" idea."""
DOUBLE_CORNER_WEIGHT = 0.03
"""A man on 1 with a man on 5 or 6 (the intact double corner): Simple Checkers' ``intactdoublecorner``."""
CRAMP_WEIGHT = 0.05
"""An own man on 20 facing an opponent man on 24 (Black's view): Simple Checkers' ``cramp = 5``."""
SAFE_CORNER_WEIGHT = 0.15
"""Each king of the side with fewer pieces and fewer than 3 kings in a double corner (1, 5, 28, 32),
where a weaker side holds a draw: Simple Checkers' ``safeedge`` bonus 15."""
MOBILITY_WEIGHT = 0.01
"""Each non-capturing move (piece and direction onto an empty square, jumps ignored) of a side.
Chosen here and checked by the equal-depth matches (0 and 0.02 did no better at depth 2; 0.03 lost
ground at depth 1); the same count as the mobility term of Samuel's program."""
RUNAWAY_WEIGHT = 0.2
"""A man with nothing at all in its forward cone up to the crowning row (no opponent man can then
stop it; a king still may): about a king's worth over a man plus the tempo it saves. Chosen here and
checked by the matches (0 and 0.4 did no better at depth 2)."""
CAPTURE_WEIGHT = 0.3
"""Bonus of the side to move when one of its legal moves is a capture (the leaf is not quiet): a
static stand-in for a quiescence search, since the alpha-beta scores its leaves as they come. Chosen
here and checked by the matches: against the material count on 40 paired openings, 0 scored 0.65
(depth 1) and 0.66 (depth 2), 0.3 and 0.6 scored 1.0 and 0.85, 0.15 and 1.0 0.82 at depth 2."""

QUANTUM = 0.01
"""Scores are rounded to this (a hundredth of a man), so ties are exact."""
SCORE_BOUND = 99.0
"""Scores are clipped to +-this, far below ``baselines.WIN_SCORE``."""
VALUE_SCALE = 0.5
"""``heuristic_value_fn``'s slope: ``sigmoid(0.5 * score)`` like ``baselines.material_value_fn``."""

# ---------------------------------------------------------------------------
# Board masks (Python ints, from each side's own view: its men move down, to higher rows)
# ---------------------------------------------------------------------------


def _bits(squares) -> int:
    return sum(1 << (s - 1) for s in squares)


@functools.cache
def board_masks(board_size: int) -> dict[str, Any]:
    """The square sets of a board size as Python ints: ``rows`` (per row, top first), ``centre``,
    ``edge``, ``first_row`` (own back row) and the 8x8 patterns (``None`` elsewhere)."""
    t = tables(board_size)
    rows = [0] * board_size
    centre = edge = 0
    lo, hi = board_size // 2 - 2, board_size // 2 + 1
    for s, (r, c) in enumerate(t.coords):
        bit = 1 << s
        rows[r] |= bit
        if lo <= r <= hi and 2 <= c <= board_size - 3:
            centre |= bit
        if r in (0, board_size - 1) or c in (0, board_size - 1):
            edge |= bit
    eight = board_size == 8
    return {
        "rows": tuple(rows),
        "centre": centre,
        "edge": edge,
        "first_row": t.first_row,
        "back_squares": (0, 1, 2, 3) if eight else None,
        "double_corner": (_bits([1]), _bits([5, 6])) if eight else None,
        "cramp": (_bits([20]), _bits([24])) if eight else None,
        "safe_corners": _bits([1, 5, 28, 32]) if eight else None,
    }


def mirror(bits: jax.Array, num_squares: int) -> jax.Array:
    """The bitboard turned half a turn: bit ``i`` <-> bit ``num_squares - 1 - i`` (square ``s`` <->
    ``N + 1 - s``), which swaps the two sides' views of the board."""
    x = jnp.asarray(bits).astype(jnp.uint32)
    for shift, mask in ((1, 0x55555555), (2, 0x33333333), (4, 0x0F0F0F0F), (8, 0x00FF00FF)):
        m, s = np.uint32(mask), np.uint32(shift)
        x = ((x >> s) & m) | ((x & m) << s)
    x = (x >> np.uint32(16)) | (x << np.uint32(16))
    return x >> np.uint32(32 - num_squares)


def _count(bits: jax.Array) -> jax.Array:
    return jax.lax.population_count(bits).astype(jnp.float32)


# ---------------------------------------------------------------------------
# Terms
# ---------------------------------------------------------------------------


def _step_moves(t: Tables, men: jax.Array, kings: jax.Array, empty: jax.Array) -> jax.Array:
    """Non-capturing moves of a side whose men move down (directions 0 and 1): pieces times
    directions with an empty neighbour."""
    total = jnp.float32(0.0)
    for d in range(4):
        movers = kings | men if d < 2 else kings
        total = total + _count(movers & neighbors(t, 3 - d, empty))
    return total


def _runaways(t: Tables, men: jax.Array, occupied: jax.Array, size: int) -> jax.Array:
    """The men (moving down) with no piece of either side anywhere in their forward cone."""
    blocked, frontier = jnp.uint32(0), occupied
    for _ in range(size - 1):
        # The squares just behind the frontier (up, directions 2 and 3) see it in their cone.
        frontier = neighbors(t, 2, frontier) | neighbors(t, 3, frontier)
        blocked = blocked | frontier
    return men & ~blocked


def _back_rank(masks: dict[str, Any], men: jax.Array) -> jax.Array:
    """Simple Checkers' back-rank guard value of ``men`` (8x8), else the men left on the back row."""
    if masks["back_squares"] is None:
        return _count(men & np.uint32(masks["first_row"]))
    code = jnp.int32(0)
    for weight, square in zip((8, 4, 2, 1), masks["back_squares"], strict=True):
        code = code + weight * ((men >> np.uint32(square)) & np.uint32(1)).astype(jnp.int32)
    return jnp.asarray(BACK_RANK_TABLE, jnp.float32)[code]


def _tempo_weight(men_on_board: jax.Array) -> jax.Array:
    weight = jnp.float32(TEMPO_WEIGHTS[-1][1])
    for threshold, w in reversed(TEMPO_WEIGHTS[:-1]):
        weight = jnp.where(men_on_board >= threshold, jnp.float32(w), weight)
    return weight


def _patterns(masks: dict[str, Any], men, kings, opp_men, behind: jax.Array) -> jax.Array:
    """The 8x8 patterns of one side: intact double corner, cramp, kings in a safe double corner
    (``behind``: the side has fewer pieces and fewer than 3 kings)."""
    if masks["double_corner"] is None:
        return jnp.float32(0.0)
    corner, support = (np.uint32(b) for b in masks["double_corner"])
    own_cramp, opp_cramp = (np.uint32(b) for b in masks["cramp"])
    intact = ((men & corner) != 0) & ((men & support) != 0)
    cramp = ((men & own_cramp) != 0) & ((opp_men & opp_cramp) != 0)
    safe = jnp.where(behind, _count(kings & np.uint32(masks["safe_corners"])), 0.0)
    return DOUBLE_CORNER_WEIGHT * intact + CRAMP_WEIGHT * cramp + SAFE_CORNER_WEIGHT * safe


def side_terms(rules: Rules, men, kings, opp_men, opp_kings, men_on_board: jax.Array) -> jax.Array:
    """[] float32: the positional terms of one side, seen with its men moving down (to higher rows):
    back rank, centre, edges, tempo, patterns, mobility, runaway men. Material is scored apart."""
    t = tables(rules.board_size)
    masks = board_masks(rules.board_size)
    centre, edge = np.uint32(masks["centre"]), np.uint32(masks["edge"])
    occupied = men | kings | opp_men | opp_kings
    empty = ~occupied & np.uint32(t.all_squares)
    tempo = sum(r * _count(men & np.uint32(row)) for r, row in enumerate(masks["rows"]))
    own, opp = _count(men | kings), _count(opp_men | opp_kings)
    behind = (own < opp) & (_count(kings) < 3)
    return (
        BACK_RANK_WEIGHT * _back_rank(masks, men)
        + CENTRE_MAN_WEIGHT * _count(men & centre)
        + CENTRE_KING_WEIGHT * _count(kings & centre)
        + EDGE_MAN_WEIGHT * _count(men & edge)
        + EDGE_KING_WEIGHT * _count(kings & edge)
        + _tempo_weight(men_on_board) * tempo
        + _patterns(masks, men, kings, opp_men, behind)
        + MOBILITY_WEIGHT * _step_moves(t, men, kings, empty)
        + RUNAWAY_WEIGHT * _count(_runaways(t, men, occupied, rules.board_size))
    )


def _mover_can_capture(rules: Rules, state: State) -> jax.Array:
    """Whether one of the side to move's legal moves is a capture."""
    t = tables(rules.board_size)
    black = state.color == BLACK
    opponents = jnp.where(black, state.white_men | state.white_kings, state.black_men | state.black_kings)
    captures = [state.legal_bits[d] & neighbors(t, 3 - d, opponents) for d in range(4)]
    return functools.reduce(jnp.bitwise_or, captures) != 0


def heuristic_score(rules: Rules, state: State) -> jax.Array:
    """[] float32: Black's-view score of ``state`` in men (positive: good for Black), |score| < 100,
    a multiple of ``QUANTUM``. Pure ``jnp`` on one position (``jax.vmap`` for a batch); meaningful for
    an unfinished game (a finished one is scored by the search itself). See the module docstring."""
    n = rules.num_squares
    bm, bk, wm, wk = state.black_men, state.black_kings, state.white_men, state.white_kings
    black_material = _count(bm) + KING_WEIGHT * _count(bk)
    white_material = _count(wm) + KING_WEIGHT * _count(wk)
    material = black_material - white_material
    trade = TRADE_WEIGHT * material / jnp.maximum(black_material + white_material, 1.0)
    men_on_board = _count(bm | wm)
    black_terms = side_terms(rules, bm, bk, wm, wk, men_on_board)
    white_terms = side_terms(rules, mirror(wm, n), mirror(wk, n), mirror(bm, n), mirror(bk, n), men_on_board)
    sign = jnp.where(state.color == BLACK, 1.0, -1.0).astype(jnp.float32)
    mover = TURN_WEIGHT + CAPTURE_WEIGHT * _mover_can_capture(rules, state)
    score = material + trade + (black_terms - white_terms) + sign * mover
    score = jnp.round(score / QUANTUM) * QUANTUM
    return jnp.clip(score, -SCORE_BOUND, SCORE_BOUND).astype(jnp.float32)


# ---------------------------------------------------------------------------
# Value function and player
# ---------------------------------------------------------------------------


def heuristic_value_fn(rules: Rules, scale: float = VALUE_SCALE) -> ValueFn:
    """``(params, state, key) -> v``: ``sigmoid(scale * score)`` with the score from the side to move's
    view, the exact outcome (1 / 1/2 / 0) at a finished state. ``params`` and ``key`` are ignored."""

    def value_fn(params: Any, state: State, key: jax.Array) -> jax.Array:
        del params, key
        sign = jnp.where(state.color == BLACK, 1.0, -1.0)
        v = jax.nn.sigmoid(scale * sign * heuristic_score(rules, state))
        exact = points_for(state.result, state.color == BLACK)
        return jnp.where(state.terminated, exact, v).astype(jnp.float32)

    return value_fn


def search_value_fn(rules: Rules) -> ValueFn:
    """The leaf value ``heuristic_alphabeta_policy`` gives ``alphabeta_policy``: ``1/2 + k 2^-16`` for
    the side to move, ``k`` its score in ``QUANTUM`` steps (|k| < 2^15), the exact outcome at a
    finished state.

    ``baselines.value_heuristic`` turns it back into the Black's-view leaf score ``2 v - 1``, which is
    then Black's ``k 2^-15``: every step is exact in float32 (dyadic numbers of at most 17 bits), so
    the search ranks leaves as ``heuristic_score`` does, equal scores stay exactly equal (the random
    tie-break sees every tie) and different ones stay ``2^-15`` apart, far above the root margin
    (``NETWORK_ROOT_MARGIN``, 1e-6) that ``alphabeta_policy`` uses with a value function."""

    def value_fn(params: Any, state: State, key: jax.Array) -> jax.Array:
        del params, key
        sign = jnp.where(state.color == BLACK, 1.0, -1.0)
        steps = jnp.round(heuristic_score(rules, state) / QUANTUM)
        v = 0.5 + sign * steps * 2.0**-16
        exact = points_for(state.result, state.color == BLACK)
        return jnp.where(state.terminated, exact, v).astype(jnp.float32)

    return value_fn


def heuristic_alphabeta_policy(rules: Rules, depth: int) -> Policy:
    """A depth-``depth`` alpha-beta player scoring its unfinished leaves with ``heuristic_score``
    (through ``search_value_fn``; ``params`` ignored); ties among the best root moves are broken at
    random."""
    return alphabeta_policy(rules, depth, search_value_fn(rules))
