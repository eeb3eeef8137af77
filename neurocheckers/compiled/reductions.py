"""Late-move reductions of the compiled search (``search.negamax``), read from its tuned parameters:
``aux[base + T_*]`` holds ``driver.SearchOptions``' numbers (``search.A_TUNED`` is ``base``)."""

from __future__ import annotations

import numpy as np
from numba import njit

T_LMR_DEPTH, T_LMR_MOVE, T_LMR_DEEP_DEPTH, T_LMR_DEEP_MOVE, T_LMR_DEEP_REDUCTION, T_IIR_DEPTH = range(6)
N_TUNED = 6
"""The tuned parameters' slots (``driver.SearchOptions.tuned`` in this order)."""
OPT_LMR, OPT_LMR_DEEP, OPT_LMR_LOG = 32, 64, 128
"""The search's switches of the reductions (bits of ``aux[search.A_OPTIONS]``; the others are there)."""
KILLER_ORDER = 1 << 36
"""Move-order keys from this up are the table's move, captures and killers (``search``'s ordering)."""


@njit(cache=True, _nrt=False, inline="always")
def log_reduction(depth, k):
    """A late quiet move's reduction growing with the depth and its place in the order (as in
    chess engines: ``ln(depth) ln(k) / 2``), at least 1 and leaving at least a move to search."""
    r = np.int64(0.5 + np.log(depth) * np.log(k + 1) / 2.0)
    return max(1, min(r, depth - 2))


@njit(cache=True, _nrt=False, inline="always")
def late_move_reduction(aux, base, options, depth, k, order):
    """How much shallower the ``k``-th move (``order`` its ordering key) is searched first: quiet
    moves late in the order (from the ``T_LMR_*`` depth and place on), with ``OPT_LMR`` (and
    ``OPT_LMR_DEEP`` or ``OPT_LMR_LOG``); else 0. At least a move is left to search."""
    late = depth >= aux[base + T_LMR_DEPTH] and k >= aux[base + T_LMR_MOVE]
    if not (options & OPT_LMR and late and order < KILLER_ORDER):
        return 0
    deep = depth >= aux[base + T_LMR_DEEP_DEPTH] and k >= aux[base + T_LMR_DEEP_MOVE]
    if options & OPT_LMR_DEEP and deep:
        return max(1, min(aux[base + T_LMR_DEEP_REDUCTION], depth - 1))
    return log_reduction(depth, k) if options & OPT_LMR_LOG else 1
