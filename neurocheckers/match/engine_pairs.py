"""Engine games as fitness: game pairs between two compiled-search players, each with its own network
and search parameters, at a fixed node budget a move, from the committed openings (each opening
played with both colours), counted as fishtest counts them (the pentanomial counts of the pairs:
``stats.pentanomial``). The pairs are played in shares (``match.shares``): in this process, in a pool
of local processes, or as Ray tasks across machines; a share is a plain function of plain values.
A tuner (SPSA, an evolution strategy) asks ``play_pairs`` for the fitness of its candidates."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping

import numpy as np

from neurocheckers.compiled import network
from neurocheckers.compiled.board import Position, SearchRules
from neurocheckers.compiled.driver import CompiledSearch
from neurocheckers.compiled.game import Game
from neurocheckers.match.shares import MapShares, in_process
from neurocheckers.networks.numpy_agent import NumpyAgent
from neurocheckers.players.compiled import CompiledPlayer, parse_compiled
from neurocheckers.rules.fen import read_fen
from neurocheckers.rules.openings import load_openings
from neurocheckers.rules.playout import default_max_plies
from neurocheckers.rules.presets import get_rules
from neurocheckers.stats import pentanomial

PIECES_A_SHARE = 4
"""``play_pairs`` cuts each of its shares into this many pieces (at most one a pair): games differ in
length, and with small pieces a worker that finishes early takes the next one instead of idling."""


@dataclasses.dataclass(frozen=True)
class EngineSide:
    """One side of engine games: the agent file whose network scores its leaves (None: material)
    and the search parameters it plays with, over its file's own (``SearchOptions`` fields by name;
    empty: the file's, or the defaults). ``tensors`` (agent-file tensor name -> float32 array)
    replace those of the file's network: an evolution strategy's candidate networks travel to the
    shares as plain arrays, with no file of their own."""

    agent: str | None = None
    options: Mapping[str, float] = dataclasses.field(default_factory=dict)
    tensors: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)

    def player(self, rules_name: str, nodes: int) -> CompiledPlayer:
        """The compiled player of this side at ``nodes`` a move; ``ValueError`` (one line) naming a
        bad file, tensor or parameter."""
        spec = f"compiled:{nodes}n" + (f":{self.agent}" if self.agent else "")
        player = parse_compiled(spec, get_rules(rules_name))
        if self.tensors:
            player = dataclasses.replace(player, leaves=self._leaves())
        return dataclasses.replace(player, options=dataclasses.replace(player.options, **dict(self.options)))

    def _leaves(self) -> network.LeafNetwork:
        """The agent file's network with ``tensors`` in place of its own, packed for the search."""
        if not self.agent:
            raise ValueError("an engine side's tensors replace its agent file's: it names no file")
        agent = NumpyAgent.load(self.agent)
        own = dict(agent.tensors or {})
        for name, array in self.tensors.items():
            if name not in own or np.shape(array) != own[name].shape:
                raise ValueError(f"{self.agent}: no tensor {name!r} of shape {np.shape(array)} to replace")
        merged = {**own, **{n: np.ascontiguousarray(a, np.float32) for n, a in self.tensors.items()}}
        count = len(agent.kernels)
        if count:  # an MLP: the search reads its kernels and biases
            agent = dataclasses.replace(
                agent,
                kernels=tuple(merged[f"layer_{i}/kernel"] for i in range(count)),
                biases=tuple(merged[f"layer_{i}/bias"] for i in range(count)),
                material_weight=merged.get(f"layer_{count - 1}/material_weight"),
            )
        else:
            agent = dataclasses.replace(agent, material_weight=merged.get("output/material_weight"))
        agent = dataclasses.replace(agent, tensors=merged)
        return dataclasses.replace(network.from_agent(agent), name=f"{self.agent} (tensors replaced)")


@dataclasses.dataclass(frozen=True)
class PairResult:
    """What a batch of pairs gave, from A's side.

    Fields:
      counts: [5] pentanomial counts (A's points in a pair: 0, 0.5, 1, 1.5, 2).
      results: [3] A's losses, draws (unfinished games among them) and wins, game by game.
      plies: plies played in all the games.
      seconds: wall time the shares took, summed (CPU-side work, whichever process did it).
    """

    counts: np.ndarray
    results: np.ndarray
    plies: int
    seconds: float

    @property
    def games(self) -> int:
        return 2 * int(self.counts.sum())

    @property
    def score(self) -> float:
        """A's mean points a game."""
        return float(np.dot(self.counts, np.arange(5)) / 4 / max(1, self.counts.sum()))

    def __add__(self, other: PairResult) -> PairResult:
        return PairResult(self.counts + other.counts, self.results + other.results, self.plies + other.plies,
                          self.seconds + other.seconds)  # fmt: skip


def play_pair_share(
    rules_name: str, a: EngineSide, b: EngineSide, first_opening: int, pairs: int, nodes: int, seed: int,
    max_plies: int | None = None,
) -> PairResult:  # fmt: skip
    """What one share plays (anywhere): ``pairs`` pairs of A against B at ``nodes`` a move from the
    committed openings ``first_opening ..`` (wrapping round the committed set), A Black in the first
    game of each pair. The games run in the compiled engine alone (``compiled.game``: the preset's
    end rules and its threefold repetition, as ``match.host`` judges them), each side's table kept
    between its moves; a game the ply cap (``max_plies``, default ``default_max_plies``) cuts is a
    draw. ``seed`` is unused: a node budget is deterministic."""
    started = time.perf_counter()
    rules = get_rules(rules_name)
    committed = load_openings(rules)
    players = (a.player(rules_name, nodes), b.player(rules_name, nodes))
    searches = [CompiledSearch(p.search_rules, p.options, p.leaves, p.endgame) for p in players]
    cap = default_max_plies(rules) if max_plies is None else max_plies
    scores, plies = [], 0
    for i in range(pairs):
        opening = committed[(first_opening + i) % len(committed)]
        for a_black in (True, False):
            result, length = _engine_game(rules, opening, searches if a_black else searches[::-1], nodes, cap)
            scores.append((1 + (result if a_black else -result)) / 2)
            plies += length
    scores = np.asarray(scores)
    results = np.bincount(np.rint(scores * 2).astype(int), minlength=3)[:3]
    return PairResult(pentanomial(scores), results, plies, time.perf_counter() - started)


def _engine_game(rules, opening, searches, nodes: int, cap: int) -> tuple[int, int]:
    """``(result, plies)`` of one game from ``opening`` (FEN, ply, quiet) between ``searches``
    (Black's, White's; +1 Black won, -1 White, 0 drawn or cut by the cap)."""
    fen = read_fen(opening[0], rules.board_size)
    position = Position(fen.black_men, fen.black_kings, fen.white_men, fen.white_kings,
                        0 if fen.black_to_move else 1)  # fmt: skip
    search_rules = SearchRules(rules, repetition=rules.threefold_repetition)
    game = Game(search_rules, position, ply=opening[1], quiet=opening[2])
    for search in searches:
        search.new_game()
    while game.result is None and game.ply - opening[1] < cap:
        found = searches[game.position.color].search(
            game.position, nodes=nodes, ply=game.ply, quiet=game.quiet, history=game.history
        )
        game.play(found.move)
    return (0 if game.result is None else game.result), game.ply - opening[1]


def play_pairs(
    rules_name: str, a: EngineSide, b: EngineSide, pairs: int, nodes: int, first_opening: int = 0,
    seed: int = 0, shares: int = 1, map_shares: MapShares = in_process, max_plies: int | None = None,
) -> PairResult:  # fmt: skip
    """``pairs`` game pairs of A against B at ``nodes`` a move over consecutive committed openings
    from ``first_opening``, for ``shares`` workers run by ``map_shares`` (in this process, a process
    pool, Ray tasks), in ``PIECES_A_SHARE`` pieces a worker when there are several; the same
    arguments give the same games however they are split (the compiled search at a node budget is
    deterministic)."""
    if pairs < 1 or shares < 1:
        raise ValueError(f"pairs and shares must be >= 1, got {pairs} and {shares}")
    a.player(rules_name, nodes), b.player(rules_name, nodes)  # a bad side fails here, not in a worker
    pieces = min(pairs, shares if shares == 1 else shares * PIECES_A_SHARE)
    sizes = [pairs // pieces + (i < pairs % pieces) for i in range(pieces)]
    starts = np.cumsum([0, *sizes[:-1]])
    work = [(rules_name, a, b, first_opening + int(s), n, nodes, seed + int(s), max_plies)
            for s, n in zip(starts, sizes, strict=True)]  # fmt: skip
    results = map_shares(play_pair_share, work)
    total = results[0]
    for result in results[1:]:
        total = total + result
    return total
