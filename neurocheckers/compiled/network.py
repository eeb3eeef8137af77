"""Network leaves for the compiled search: an agent's network (the MLP or the NNUE-style network,
``architectures``) packed into one float32 array, its first layer kept incrementally as moves are
made, and its value from the mover's view.

Both networks start with a linear layer over the pieces, so its sums are kept as moves are made
(an accumulator a ply, copied and updated, never recomputed): for each perspective (Black's, then
White's) the first layer's pre-activations as that side would see the board if it were to move.
A piece (colour ``c``, king ``k``, square ``s``) adds one row of ``2 A`` floats (both
perspectives), built when the network is packed:

- the MLP (``evaluator.encode``: men then kings, +1 own / -1 opponent, rotated 180 degrees for
  White): perspective ``P`` reads ``+-W0[k N + s']`` (``s' = s`` for Black, ``N - 1 - s`` for
  White; the sign + for ``P``'s own pieces); the mover's half then goes through ReLU and the dense
  layers;
- the NNUE network (``evaluator.NNUE``): perspective ``P`` reads ``W1[(k + 2 [c != P]) N + s']``
  (own men, own kings, the other side's men, its kings); both halves are clipped to [0, 1], the
  mover's first, then the two small dense layers (clipped too) and the output.

The layout (offsets into the array, widths) lives in the search's ``aux`` at ``A_NET``; the
accumulators of the search path sit at the end of the array, ``2 A`` floats a ply. The leaf's score
is the JAX search's ``2 v - 1`` for the mover (``v`` the network's sigmoid), in ``UNIT`` per man.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from numba import njit

from neurocheckers.compiled.bitops import lowest_index, popcount
from neurocheckers.compiled.board import G_CROWN

KIND_MATERIAL, KIND_MLP, KIND_NNUE = 0, 1, 2
# Offsets inside the network block of ``aux`` (``search.A_NET + ...``).
N_KIND, N_WIDTH, N_HIDDEN, N_DENSE, N_BIAS, N_LAYERS, N_OUTPUT, N_SCRATCH, N_ACC, N_MATERIAL = range(10)
N_SIZE = 10
ROWS = 2 * 2 * 32
"""First-layer rows: colour x (man, king) x 32 squares."""
KING_VALUE = 1.5  # ``rules.outcome.KING_VALUE`` (tests/test_compiled_network.py checks it)


@dataclasses.dataclass(frozen=True)
class LeafNetwork:
    """A network packed for the compiled search: ``weights`` (float32, the accumulator stack
    included) and ``header`` (the ``aux`` entries at ``A_NET``)."""

    weights: np.ndarray
    """float32: first-layer rows, biases, dense layers (the MLP's a row an input unit, NNUE's a row an
    output unit), output, scratch, accumulators."""
    header: tuple[int, ...]
    """``N_SIZE`` ints: kind, widths, layer count and offsets into ``weights``."""
    name: str = ""
    """Where it came from (an agent file), for messages."""
    num_squares: int = 0
    """Dark squares of the board the network reads (0: any, material)."""

    @property
    def kind(self) -> int:
        return self.header[N_KIND]

    def fresh(self, plies: int) -> np.ndarray:
        """A copy of ``weights`` with room for ``plies`` accumulators (one search's own array)."""
        acc = self.header[N_ACC]
        out = np.zeros(acc + plies * 2 * self.header[N_WIDTH], np.float32)
        out[:acc] = self.weights[:acc]
        return out


MATERIAL = LeafNetwork(np.zeros(1, np.float32), (KIND_MATERIAL,) + (0,) * (N_SIZE - 1), "material")
"""Material leaves (no network)."""


def _first_rows(num_squares: int, kernel: np.ndarray, nnue: bool) -> np.ndarray:
    """[ROWS, 2 A] float32: the first-layer row each piece adds, Black's perspective then White's."""
    n, width = num_squares, kernel.shape[1]
    rows = np.zeros((2, 2, 32, 2, width), np.float32)
    for c in range(2):
        for k in range(2):
            for s in range(n):
                for p in range(2):
                    sq = s if p == 0 else n - 1 - s
                    if nnue:
                        rows[c, k, s, p] = kernel[(k + 2 * (c != p)) * n + sq]
                    else:
                        rows[c, k, s, p] = kernel[k * n + sq] * (1.0 if c == p else -1.0)
    return rows.reshape(ROWS, 2 * width)


def pack(kind: int, num_squares: int, tensors: dict[str, np.ndarray], name: str = "") -> LeafNetwork:
    """Pack a network's tensors (agent-file names) for the search. ``kind``: KIND_MLP (``layer_0`` ..
    ``layer_L``) or KIND_NNUE (``accumulator``, ``hidden_0``, ``hidden_1``, ``output``)."""
    if kind == KIND_MLP:
        count = sum(1 for key in tensors if key.endswith("/kernel"))
        first, dense, out = "layer_0", [f"layer_{i}" for i in range(1, count - 1)], f"layer_{count - 1}"
    else:
        first, dense, out = "accumulator", ["hidden_0", "hidden_1"], "output"
    kernel = np.asarray(tensors[f"{first}/kernel"], np.float32)
    width = kernel.shape[1]
    hidden = tensors[f"{dense[0]}/kernel"].shape[1] if dense else width
    parts = [_first_rows(num_squares, kernel, kind == KIND_NNUE).reshape(-1)]
    bias = np.asarray(tensors[f"{first}/bias"], np.float32)
    parts.append(np.concatenate([bias, bias]))
    for layer in dense:  # the MLP's input-major ([n_in, n_out], the file's order), NNUE's output-major
        kernel_l = np.asarray(tensors[f"{layer}/kernel"], np.float32)
        parts.append(np.ascontiguousarray(kernel_l.T if kind == KIND_NNUE else kernel_l).reshape(-1))
        parts.append(np.asarray(tensors[f"{layer}/bias"], np.float32))
    material = tensors.get(f"{out}/material_weight", np.zeros(1, np.float32))
    parts.append(np.asarray(tensors[f"{out}/kernel"], np.float32).reshape(-1))
    parts.append(np.asarray([tensors[f"{out}/bias"][0], material[0]], np.float32))
    sizes = [p.size for p in parts]
    offsets = np.cumsum([0, *sizes])
    o_bias, o_layers, o_output = int(offsets[1]), int(offsets[2]), int(offsets[-3])
    scratch = 3 * max(2 * width, hidden) + 16  # inputs, outputs, the MLP's nonzero inputs' indices
    o_scratch = int(offsets[-1])
    o_acc = o_scratch + scratch
    weights = np.zeros(o_acc, np.float32)
    weights[: offsets[-1]] = np.concatenate(parts)
    header = [0] * N_SIZE
    header[N_KIND], header[N_WIDTH], header[N_HIDDEN], header[N_DENSE] = kind, width, hidden, len(dense)
    header[N_BIAS], header[N_LAYERS], header[N_OUTPUT] = o_bias, o_layers, o_output
    header[N_SCRATCH], header[N_ACC] = o_scratch, o_acc
    header[N_MATERIAL] = int(f"{out}/material_weight" in tensors)
    return LeafNetwork(weights, tuple(header), name, num_squares)


def from_agent(agent) -> LeafNetwork:
    """The packed network of a ``numpy_agent.NumpyAgent`` (an MLP or an NNUE network); ``ValueError``
    naming the architecture for the others."""
    spec = agent.spec
    architecture = "mlp" if spec is None else spec.architecture
    name = agent.metadata.get("path", "")
    num_squares = agent.board_size * agent.board_size // 2
    if architecture == "mlp":
        tensors = {}
        for i, (kernel, bias) in enumerate(zip(agent.kernels, agent.biases, strict=True)):
            tensors[f"layer_{i}/kernel"], tensors[f"layer_{i}/bias"] = kernel, bias
        if agent.material_weight is not None:
            tensors[f"layer_{len(agent.kernels) - 1}/material_weight"] = agent.material_weight
        return pack(KIND_MLP, num_squares, tensors, name)
    if architecture == "nnue":
        return pack(KIND_NNUE, num_squares, dict(agent.tensors), name)
    raise ValueError(f"the compiled search evaluates mlp and nnue networks, not {architecture!r}")


def load(path) -> LeafNetwork:
    """The packed network of an agent file (``ValueError`` naming the file when it does not fit)."""
    from neurocheckers.networks.numpy_agent import NumpyAgent

    return dataclasses.replace(from_agent(NumpyAgent.load(path)), name=str(path))


# ---------------------------------------------------------------------------
# Compiled: accumulators and the forward pass
# ---------------------------------------------------------------------------


@njit(cache=True, _nrt=False, inline="always")
def _row(net, width2, row):
    """First-layer row ``row`` (``2 A`` floats); a 1-D slice, no reshape (a runtime call in numba)."""
    return net[row * width2 : (row + 1) * width2]


@njit(cache=True, _nrt=False, inline="always")
def _add_row(acc, row, sign):
    for j in range(acc.size):
        acc[j] += sign * row[j]


@njit(cache=True, _nrt=False)
def refresh(geo, net, head, om, ok, pm, pk, color, ply):
    """Compute the accumulators of ``ply`` afresh from the position (the root's)."""
    width2 = 2 * head[N_WIDTH]
    acc = net[head[N_ACC] + ply * width2 : head[N_ACC] + (ply + 1) * width2]
    bias = net[head[N_BIAS] : head[N_BIAS] + width2]
    for j in range(width2):  # a loop: a slice assignment may copy, which needs numba's runtime
        acc[j] = bias[j]
    boards = (om, ok, pm, pk)
    for b in range(4):
        c = color if b < 2 else 1 - color
        bits = boards[b]
        while bits:
            s = lowest_index(bits)
            bits &= bits - 1
            _add_row(acc, _row(net, width2, 64 * c + 32 * (b % 2) + s), np.float32(1.0))


@njit(cache=True, _nrt=False)
def update(geo, net, head, ok, pk, color, source, dest, captured, ply):
    """The accumulators of ``ply + 1`` from those of ``ply`` after the mover's (``color``) move
    (``ok``, ``pk``: the mover's and the opponent's kings before it)."""
    width2 = 2 * head[N_WIDTH]
    base = head[N_ACC] + ply * width2
    parent = net[base : base + width2]
    acc = net[base + width2 : base + 2 * width2]
    was_king = (ok >> source) & 1
    is_king = was_king | (1 if (np.int64(1) << dest) & geo[G_CROWN + color] else 0)
    r_from = _row(net, width2, 64 * color + 32 * was_king + source)
    r_to = _row(net, width2, 64 * color + 32 * is_king + dest)
    if captured:  # the first captured piece in the same pass (most captures take one)
        b = lowest_index(captured)
        captured &= captured - 1
        r_cap = _row(net, width2, 64 * (1 - color) + 32 * ((pk >> b) & 1) + b)
        for j in range(width2):
            acc[j] = parent[j] - r_from[j] + r_to[j] - r_cap[j]
    else:
        for j in range(width2):
            acc[j] = parent[j] - r_from[j] + r_to[j]
    while captured:
        b = lowest_index(captured)
        captured &= captured - 1
        _add_row(acc, _row(net, width2, 64 * (1 - color) + 32 * ((pk >> b) & 1) + b), np.float32(-1.0))


@njit(cache=True, _nrt=False, fastmath=True, inline="always")
def _act(v, clip):
    v = max(v, np.float32(0.0))
    return min(v, np.float32(1.0)) if clip else v


@njit(cache=True, _nrt=False, fastmath=True, inline="always")
def _dense_rows(w, b, x, y, n_out, n_in, clip):
    """``y = act(W x + b)`` (ReLU, clipped to 1 when ``clip``) with ``W`` output-major ([n_out, n_in]);
    four rows a pass over contiguous slices (four independent dot products): the NNUE network's
    layers, whose wide first input (2 x 128) this suits best."""
    j = 0
    while j + 4 <= n_out:
        r0, r1 = w[j * n_in : (j + 1) * n_in], w[(j + 1) * n_in : (j + 2) * n_in]
        r2, r3 = w[(j + 2) * n_in : (j + 3) * n_in], w[(j + 3) * n_in : (j + 4) * n_in]
        s0 = s1 = s2 = s3 = np.float32(0.0)
        for i in range(n_in):
            xi = x[i]
            s0 += r0[i] * xi
            s1 += r1[i] * xi
            s2 += r2[i] * xi
            s3 += r3[i] * xi
        y[j], y[j + 1] = _act(s0 + b[j], clip), _act(s1 + b[j + 1], clip)
        y[j + 2], y[j + 3] = _act(s2 + b[j + 2], clip), _act(s3 + b[j + 3], clip)
        j += 4
    while j < n_out:
        r = w[j * n_in : (j + 1) * n_in]
        s = np.float32(0.0)
        for i in range(n_in):
            s += r[i] * x[i]
        y[j] = _act(s + b[j], clip)
        j += 1


@njit(cache=True, _nrt=False, inline="always")
def _nonzero(x, n, idx):
    """Write the indices of the nonzero entries of ``x[:n]`` to ``idx`` (branch-free); their count.
    About half the MLP's units after a ReLU are 0: its dense layers skip them."""
    m = 0
    for i in range(n):
        idx[m] = i
        m += np.int64(x[i] != np.float32(0.0))
    return m


@njit(cache=True, _nrt=False, fastmath=True, inline="always")
def _dense_sparse(w, b, x, idx, m, y, n_out):
    """``y = ReLU(W x + b)`` over the ``m`` nonzero inputs ``idx`` of ``x``, ``W`` input-major
    ([n_in, n_out]: a row per input): the MLP's layers. Four inputs' rows a pass over the outputs, a
    contiguous loop the compiler vectorises (2x faster than the dot products on 64 x 64)."""
    for j in range(n_out):
        y[j] = b[j]
    t = 0
    while t + 4 <= m:
        i0, i1, i2, i3 = idx[t], idx[t + 1], idx[t + 2], idx[t + 3]
        x0, x1, x2, x3 = x[i0], x[i1], x[i2], x[i3]
        w0, w1 = w[i0 * n_out : (i0 + 1) * n_out], w[i1 * n_out : (i1 + 1) * n_out]
        w2, w3 = w[i2 * n_out : (i2 + 1) * n_out], w[i3 * n_out : (i3 + 1) * n_out]
        for j in range(n_out):
            y[j] += (x0 * w0[j] + x1 * w1[j]) + (x2 * w2[j] + x3 * w3[j])
        t += 4
    while t < m:
        x0, w0 = x[idx[t]], w[idx[t] * n_out : (idx[t] + 1) * n_out]
        for j in range(n_out):
            y[j] += x0 * w0[j]
        t += 1
    for j in range(n_out):
        y[j] = max(y[j], np.float32(0.0))


@njit(cache=True, _nrt=False, fastmath=True, inline="always")
def _nnue_hidden(net, head, acc, x, y, color):
    """The NNUE network's last hidden layer in ``x`` (returned): both halves of the accumulators
    clipped to [0, 1], the mover's first, then the dense layers (clipped)."""
    width, hidden = head[N_WIDTH], head[N_HIDDEN]
    mine, theirs = acc[color * width : (color + 1) * width], acc[(1 - color) * width : (2 - color) * width]
    for j in range(width):
        x[j] = min(max(mine[j], np.float32(0.0)), np.float32(1.0))
    for j in range(width):
        x[width + j] = min(max(theirs[j], np.float32(0.0)), np.float32(1.0))
    o, n_in = head[N_LAYERS], 2 * width
    for _ in range(head[N_DENSE]):
        w, b = net[o : o + hidden * n_in], net[o + hidden * n_in : o + hidden * n_in + hidden]
        _dense_rows(w, b, x, y, hidden, n_in, True)
        o += hidden * n_in + hidden
        n_in = hidden
        x, y = y, x
    return x


@njit(cache=True, _nrt=False, fastmath=True, inline="always")
def _mlp_hidden(net, head, acc, x, y, idx, color):
    """The MLP's last hidden layer in ``x`` (returned): the mover's half of the accumulators through
    ReLU, then the dense layers over their nonzero inputs."""
    width, hidden = head[N_WIDTH], head[N_HIDDEN]
    mine = acc[color * width : (color + 1) * width]
    for j in range(width):
        x[j] = max(mine[j], np.float32(0.0))
    o, n_in = head[N_LAYERS], width
    for _ in range(head[N_DENSE]):
        m = _nonzero(x, n_in, idx)
        w, b = net[o : o + hidden * n_in], net[o + hidden * n_in : o + hidden * n_in + hidden]
        _dense_sparse(w, b, x, idx, m, y, hidden)
        o += hidden * n_in + hidden
        n_in = hidden
        x, y = y, x
    return x


@njit(cache=True, _nrt=False, fastmath=True)
def logit(geo, net, head, om, ok, pm, pk, color, ply):
    """The network's output logit for the position at ``ply`` (its accumulators up to date)."""
    width, hidden, nnue = head[N_WIDTH], head[N_HIDDEN], head[N_KIND] == KIND_NNUE
    acc = net[head[N_ACC] + ply * 2 * width : head[N_ACC] + (ply + 1) * 2 * width]
    size, scratch = max(2 * width, hidden), head[N_SCRATCH]
    x, y = net[scratch : scratch + size], net[scratch + size : scratch + 2 * size]
    if nnue:
        x = _nnue_hidden(net, head, acc, x, y, color)
        n_in = 2 * width if head[N_DENSE] == 0 else hidden
    else:
        idx = net[scratch + 2 * size : scratch + 3 * size].view(np.int32)
        x = _mlp_hidden(net, head, acc, x, y, idx, color)
        n_in = width if head[N_DENSE] == 0 else hidden
    out = head[N_OUTPUT]
    z = np.float32(0.0)
    for i in range(n_in):
        z += net[out + i] * x[i]
    z += net[out + n_in]
    if head[N_MATERIAL]:
        material = popcount(om) - popcount(pm) + KING_VALUE * (popcount(ok) - popcount(pk))
        z += np.float32(material) * net[out + n_in + 1]
    return z


@njit(cache=True, _nrt=False)
def value(geo, net, head, om, ok, pm, pk, color, ply):
    """The chance that the mover wins (the network's sigmoid), accumulators of ``ply`` up to date."""
    z = logit(geo, net, head, om, ok, pm, pk, color, ply)
    return 1.0 / (1.0 + math.exp(-z))


@njit(cache=True, _nrt=False)
def leaf_score(geo, net, head, om, ok, pm, pk, color, ply, unit):
    """``2 v - 1`` men from the mover's view, in ``unit`` per man (an integer)."""
    z = logit(geo, net, head, om, ok, pm, pk, color, ply)
    return np.int64(round(unit * math.tanh(0.5 * z)))


def position_values(leaves: LeafNetwork, geo: np.ndarray, positions, moves=()) -> np.ndarray:
    """[len(positions)] float64: the network's value (the chance the mover wins) of each position,
    its accumulators computed afresh; with ``moves`` (rows of source, destination, captured, one a
    position but the last) the accumulators of each next position are updated incrementally from
    the first's, as in the search."""
    head = np.zeros(N_SIZE, np.int64)
    head[:] = leaves.header
    net = leaves.fresh(len(positions) + 1)
    out = np.zeros(len(positions))
    for ply, position in enumerate(positions):
        om, ok, pm, pk = position.relative()
        color = np.int64(position.color)
        if ply == 0 or not len(moves):
            refresh(geo, net, head, om, ok, pm, pk, color, np.int64(ply))
        out[ply] = value(geo, net, head, om, ok, pm, pk, color, np.int64(ply))
        if len(moves) and ply < len(moves):
            src, dst, cap = (np.int64(x) for x in moves[ply][:3])
            update(geo, net, head, ok, pk, color, src, dst, cap, np.int64(ply))
    return out
