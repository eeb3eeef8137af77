"""A tiny engine of the project's own speaking the external-engine line protocol (docs/engines.md),
for the tests of ``neurocheckers.players.external``: it picks a legal move with our rules.

    python tests/protocol_engine.py [--rules PRESET] [--seed N] [--fail MODE] [--after K] [--short]
                                    [--history]

It plays a uniformly random legal move (``--seed``), writing captures as their whole path (or as
``FROMxTO captured ...`` with ``--short``). ``--fail`` misbehaves after ``K`` good moves: ``crash``
(exits with a message on stderr), ``silent`` (never answers), ``garbage`` (prints nonsense),
``illegal`` (answers a move that is not legal), ``no-ready`` (never says ready). The project is
imported before ``ready``, except by a failing engine (which starts at once). With ``--history`` it
says ``ready fake history``, takes ``go MS FEN history FEN ...`` (each earlier position must be a
FEN, the last one with the other side to move) and answers ``score N``, N the positions it got.
"""

from __future__ import annotations

import argparse
import sys
import time


def move_text(rules, row, short: bool) -> str:
    """The protocol's text of a legal-move row (source, destination, captured, path)."""
    from neurocheckers.rules.tables import tables

    source, dest, captured, path = (int(x) for x in row[:4])
    if not captured:
        return f"{source + 1}-{dest + 1}"
    t = tables(rules.board_size)
    squares, square = [source + 1], source
    for k in range(bin(captured).count("1")):
        square = int(t.jump_landing[(path >> (2 * k)) & 3, square])
        squares.append(square + 1)
    if short:
        taken = ",".join(str(s + 1) for s in range(32) if captured >> s & 1)
        return f"{squares[0]}x{squares[-1]} captured {taken}"
    return "x".join(map(str, squares))


def pick(rules, rng, fen_text: str, short: bool) -> str:
    """A random legal move of a FEN position, as the protocol's ``bestmove`` line."""
    from neurocheckers.compiled.board import Position, geometry
    from neurocheckers.compiled.game import legal_rows
    from neurocheckers.rules.fen import read_fen

    fen = read_fen(fen_text, rules.board_size, rules.men_per_side)
    position = Position(fen.black_men, fen.black_kings, fen.white_men, fen.white_kings,
                        0 if fen.black_to_move else 1)  # fmt: skip
    rows = legal_rows(geometry(rules), position)
    row = rows[rng.integers(len(rows))]
    return f"bestmove {move_text(rules, row, short)} depth 1 nodes {len(rows)}"


def load(args):
    """The rules and the random generator (imports the project)."""
    import numpy as np

    from neurocheckers.rules.presets import get_rules

    return get_rules(args.rules), np.random.default_rng(args.seed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rules", default="american8")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fail", choices=["crash", "silent", "garbage", "illegal", "no-ready"])
    parser.add_argument("--after", type=int, default=0)
    parser.add_argument("--short", action="store_true")
    parser.add_argument("--history", action="store_true")
    args = parser.parse_args()
    if args.fail == "no-ready":
        time.sleep(3600)
    rules = rng = None
    if not args.fail:  # loaded before "ready", as an engine loads its network
        rules, rng = load(args)
        pick(rules, rng, "B:W:B1", args.short)
    print("ready fake history" if args.history else "ready fake", flush=True)
    moves = 0
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            return
        if words[0] == "newgame":
            print("ok", flush=True)
            continue
        history = words[4:] if args.history and len(words) > 4 and words[3] == "history" else []
        if history and history[-1][0] == words[2][0]:
            print(f"error the last history position {history[-1]!r} has the same mover", flush=True)
            continue
        if words[0] != "go" or len(words) != 3 + (len(history) + 1 if history else 0):
            print(f"error unknown command {line.strip()!r}", flush=True)
            continue
        if args.fail and moves >= args.after:
            if args.fail == "crash":
                sys.exit("fake engine: crashed on purpose")
            if args.fail == "silent":
                time.sleep(3600)
            print("garbage!" if args.fail == "garbage" else "bestmove 1-32 depth 1", flush=True)
            continue
        if rules is None:
            rules, rng = load(args)
        print("info thinking", flush=True)
        from neurocheckers.rules.fen import read_fen

        for fen in history:
            read_fen(fen, rules.board_size, rules.men_per_side)  # raises for a bad one
        score = f" score {len(history)}" if args.history else ""
        print(pick(rules, rng, words[2], args.short) + score, flush=True)
        moves += 1


if __name__ == "__main__":
    main()
