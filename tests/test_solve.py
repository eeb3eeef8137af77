"""The proof of a game's value: the proof-number search and the alpha-beta give the database's values
of positions beyond their own leaves, a proof passes the independent checker, and the checker rejects
a proof with a wrong move, a wrong leaf value or a wrong claim."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from neurocheckers.compiled import endgame as compiled_endgame
from neurocheckers.compiled import exact, proof
from neurocheckers.compiled.board import Position, game_rule, geometry
from neurocheckers.endgame.database import DRAW, LOSS, WIN, EndgameDB
from neurocheckers.endgame.index import to_mover_view
from neurocheckers.rules import AMERICAN6
from neurocheckers.solve import (
    Claim,
    ProofError,
    Prover,
    ProverSettings,
    Solution,
    check_solution,
    load_solution,
    save_solution,
)
from neurocheckers.solve.keys import decode, encode
from neurocheckers.solve.oracle import PerfectPlay

N = AMERICAN6.num_squares


@pytest.fixture(scope="module")
def four_pieces(four_piece_db):
    """The truth for 4-piece positions: a database of at most 4 pieces."""
    return EndgameDB(four_piece_db, AMERICAN6)


@pytest.fixture(scope="module")
def leaves(small_db):
    """The proofs' leaves: the 3-piece database, packed for the compiled searches."""
    return compiled_endgame.load(small_db, AMERICAN6)


def random_positions(count: int, pieces: int, seed: int) -> list[Position]:
    """Legal-looking positions (men off their crowning rows, both sides present), either side to move."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        squares, kinds = rng.choice(N, size=pieces, replace=False), rng.integers(0, 4, size=pieces)
        boards = [0, 0, 0, 0]
        for square, kind in zip(squares, kinds, strict=True):
            boards[kind] |= 1 << int(square)
        if (
            boards[0] & (0b111 << (N - 3))
            or boards[2] & 0b111
            or not boards[0] | boards[1]
            or not boards[2] | boards[3]
        ):
            continue
        out.append(Position(*boards, int(rng.integers(0, 2))))
    return out


def truth(db: EndgameDB, position: Position) -> int:
    boards = np.array([[position.black_men, position.black_kings, position.white_men, position.white_kings]])
    return int(db.lookup(to_mover_view(boards, np.array([position.color == 0]), N))[0][0])


def test_keys_are_the_same_in_numpy_and_in_the_compiled_search():
    geo = geometry(game_rule(AMERICAN6))
    for position in random_positions(20, 6, seed=3):
        boards = np.array(
            [[position.black_men, position.black_kings, position.white_men, position.white_kings]]
        )
        view = to_mover_view(boards, np.array([position.color == 0]), N)
        key = int(proof.position_key(geo, *position.relative(), np.int64(position.color)))
        assert encode(view, N)[0] == key
        assert (decode(np.array([key]), N) == view).all()


def test_both_searches_give_the_database_value_of_positions_beyond_their_leaves(leaves, four_pieces):
    """Four pieces, searched down to the 3-piece database, against the 4-piece database."""
    sound = PerfectPlay(AMERICAN6, leaves, table_bits=18, node_limit=200_000)
    fast = PerfectPlay(AMERICAN6, leaves, table_bits=18, keep_line_results=True)
    geo = geometry(game_rule(AMERICAN6))
    table, moves = exact.new_table(18), exact.move_buffer()
    proven, sound_answers, decided = set(), 0, set()
    for position in random_positions(60, 4, seed=0):
        expected = truth(four_pieces, position)
        assert fast.value(position) == expected, position
        proven.add(expected)
        try:
            assert sound.value(position) == expected, position
            sound_answers += 1
        except RuntimeError:  # kings' draws beyond the leaves: the sound table cannot keep their values
            pass
        state = (*position.relative(), position.color)
        found = exact.exact_value(geo, leaves.array, table, moves, exact.new_aux(), state, node_limit=100_000)
        if found is not None:  # alpha-beta cannot decide a draw that kings stretch past every depth
            assert found == expected - 1, position
            decided.add(expected)
    assert proven == {LOSS, DRAW, WIN} and decided == {LOSS, DRAW, WIN} and sound_answers >= 30


def small_solution(leaves, four_pieces) -> tuple[Solution, Prover]:
    """Proofs of a win, a draw and a loss of 4-piece positions, written out by the prover."""
    prover = Prover(AMERICAN6, leaves, ProverSettings(table_bits=18, proof_bits=18, keep_line_results=True))
    claims, wanted = [], {WIN, DRAW, LOSS}
    for position in random_positions(200, 4, seed=1):
        value = truth(four_pieces, position)
        if value in wanted and truth(four_pieces, position) >= 0:
            assert prover.value(position) == value
            claims.append(Claim(prover.key(position), value, f"position {len(claims)}"))
            wanted.discard(value)
        if not wanted:
            break
    return Solution(AMERICAN6.name, tuple(claims), prover.tables()), prover


@pytest.fixture(scope="module")
def solution(leaves, four_pieces, tmp_path_factory) -> tuple[Solution, EndgameDB]:
    found, _ = small_solution(leaves, four_pieces)
    path = tmp_path_factory.mktemp("solution") / "solution.npz"
    save_solution(found, path)
    return load_solution(path), EndgameDB(leaves.name, AMERICAN6)


def test_a_proof_passes_the_checker(solution):
    found, db = solution
    assert {c.value for c in found.claims} == {WIN, DRAW, LOSS}
    assert all(len(nodes) > 0 for nodes, _ in found.tables.values())
    report = check_solution(found, db, progress=lambda _: None)
    assert len(report.claims) == 3 and report.records["win"] == len(found.tables["win"][0])


def with_table(found: Solution, name: str, nodes, after) -> Solution:
    return dataclasses.replace(found, tables={**found.tables, name: (nodes, after)})


def test_the_checker_rejects_a_wrong_move(solution, leaves):
    """One proving move replaced by another legal move of the same position that loses the goal."""
    found, db = solution
    oracle = PerfectPlay(AMERICAN6, leaves, table_bits=18, keep_line_results=True)
    nodes, after = (a.copy() for a in found.tables["win"])
    for row, key in enumerate(nodes):
        boards = decode(np.array([key]), N)[0]  # the mover plays Black's part in its own view
        position = Position(int(boards[0]), int(boards[1]), int(boards[2]), int(boards[3]), 0)
        losing = [p for p in oracle.successors(position) if oracle.value_after(p) != WIN]
        if losing:
            bad = losing[0]
            view = to_mover_view(np.array([[bad.black_men, bad.black_kings, bad.white_men, bad.white_kings]]),
                                 np.array([False]), N)  # fmt: skip
            after[row] = encode(view, N)[0]
            break
    else:
        pytest.fail("no proving move with a losing alternative")
    with pytest.raises(ProofError, match="win table"):
        check_solution(with_table(found, "win", nodes, after), db, progress=lambda _: None)
    after[row] = nodes[row]  # not a move at all
    with pytest.raises(ProofError, match="not legal"):
        check_solution(with_table(found, "win", nodes, after), db, progress=lambda _: None)


def test_the_checker_rejects_a_wrong_leaf_value(solution, monkeypatch):
    """The database's value of one leaf the proof rests on turned around: the proof no longer holds."""
    found, db = solution
    original = EndgameDB.lookup
    flipped = {}

    def lookup(self, boards):
        values, distances = original(self, boards)
        values = values.copy()
        for i in np.flatnonzero(values >= 0):
            if not flipped or flipped.get("at") == tuple(boards[i]):
                flipped["at"] = tuple(boards[i])
                values[i] = 2 - values[i] if values[i] != DRAW else LOSS
        return values, distances

    monkeypatch.setattr(EndgameDB, "lookup", lookup)
    with pytest.raises(ProofError):
        check_solution(found, db, progress=lambda _: None)
    assert flipped


def test_the_checker_rejects_a_wrong_claim(solution):
    found, db = solution
    wrong = tuple(dataclasses.replace(c, value=DRAW if c.value == WIN else c.value) for c in found.claims)
    with pytest.raises(ProofError, match="does not follow"):
        check_solution(dataclasses.replace(found, claims=wrong), db, progress=lambda _: None)


def test_a_win_that_goes_round_in_a_cycle_is_rejected(solution):
    """The graph check on its own: a win table whose two nodes lead to each other."""
    from neurocheckers.solve.checker import check_acyclic

    with pytest.raises(ProofError, match="cycle"):
        check_acyclic("win", AMERICAN6, np.array([1, 2]), np.array([0, 1]), np.array([1, 0]))
    check_acyclic("win", AMERICAN6, np.array([1, 2, 3]), np.array([0, 1]), np.array([1, 2]))


def test_solve_commands_check_a_file_and_refuse_bad_input(solution, tmp_path, capsys):
    from neurocheckers.cli.main import main

    found, db = solution
    path = tmp_path / "proof.npz"
    save_solution(found, path)
    assert main(["solve", "check", str(path), "--db", str(db.folder)]) == 0
    assert "position 0:" in capsys.readouterr().out
    wrong = tuple(dataclasses.replace(c, value=LOSS if c.value == WIN else c.value) for c in found.claims)
    save_solution(dataclasses.replace(found, claims=wrong), path)
    assert main(["solve", "check", str(path), "--db", str(db.folder)]) == 1
    assert "REJECTED: claim" in capsys.readouterr().out
    (tmp_path / "junk.npz").write_bytes(b"not a file")
    assert main(["solve", "check", str(tmp_path / "junk.npz"), "--db", str(db.folder)]) == 2
    assert "is not a solution file" in capsys.readouterr().err
    assert main(["solve", "prove", "--rules", "simple6", "--db", str(db.folder)]) == 2
    assert "--rules 'simple6'" in capsys.readouterr().err
    assert main(["solve", "prove", "--table-bits", "40", "--db", str(db.folder)]) == 2
    assert "--table-bits must be in 16..30, got 40" in capsys.readouterr().err


def naive_value(rules, state, plies: int) -> int:
    """Minimax over the JAX rules (``rules.notation``) with ``plies`` left: 1 win, 0 draw, -1 loss
    for the side to move; no pieces loses, no move draws (``simple6``), the cap draws."""
    from neurocheckers.rules.notation import apply_move, legal_moves

    own = (
        (state.black_men | state.black_kings)
        if int(state.color) == 0
        else (state.white_men | state.white_kings)
    )
    if int(own) == 0:
        return -1
    moves = legal_moves(rules, state)
    if not moves or plies == 0:
        return 0
    return max(-naive_value(rules, apply_move(rules, state, m), plies - 1) for m in moves)


def test_the_ply_cap_gives_the_values_of_a_plain_minimax_over_the_jax_rules():
    """``simple6`` positions of 3 pieces under caps of 1-4 plies (the cap part of the position)."""
    from neurocheckers.rules import get_rules
    from neurocheckers.rules.engine import from_position
    from neurocheckers.solve.horizon import capped_value

    simple6 = get_rules("simple6")
    values = set()
    for position in random_positions(40, 3, seed=5):
        if values == {LOSS, DRAW, WIN}:
            break
        state = from_position(simple6, position.black_men, position.black_kings, position.white_men,
                              position.white_kings, position.color)  # fmt: skip
        for plies in (1, 2, 3, 4):
            found = capped_value(simple6, position, plies, table_bits=16).value
            expected = naive_value(simple6, state, plies) + 1
            assert found == expected, (position, plies)
            values.add(expected)
    assert values == {LOSS, DRAW, WIN}
