"""How far can a hand-written evaluator get against material at equal depth? A yardstick for the
strength targets: the material count plus a few classic positional terms, at the leaves of the same
alpha-beta as the material count, over the gauntlet's paired openings.

    python scripts/handcrafted_ceiling.py [--rules simple6] [--openings 100] [--depths 1,2,3]

Each row plays ``2 x openings`` games (every opening with both colours) of the hand-written evaluator
at depth d against material at depth d, and prints the score with its paired 95% interval and the
wins, draws and losses. The terms (each Black minus White, signed for the side to move):

- ``advance``: rows advanced by men (toward crowning);
- ``back``: men still on their own back row (guarding it against crowning);
- ``centre``: pieces on the middle squares of the inner rows;
- ``trade``: ``balance / pieces on board`` (trading down when ahead);
- ``king``: the value of a king, in men.

The first row, all terms 0 and king 1.5, is the material count against itself (different only by
random tie-breaks): a score away from 0.5 there is the noise of the row.
"""

from __future__ import annotations

import argparse
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from neurocheckers.match.arena import MatchOptions, run_match
from neurocheckers.rules.engine import material_balance
from neurocheckers.rules.openings import load_openings, opening_states
from neurocheckers.rules.presets import PRESETS, get_rules
from neurocheckers.search.baselines import alphabeta_policy, outcome_for
from neurocheckers.stats import paired_interval

# (advance, back, centre, trade, king): the material count, then each term alone, then together.
SETTINGS = (
    (0.0, 0.0, 0.0, 0.0, 1.5),
    (0.1, 0.0, 0.0, 0.0, 1.5),
    (0.0, 0.3, 0.0, 0.0, 1.5),
    (0.0, 0.0, 0.2, 0.0, 1.5),
    (0.0, 0.0, 0.0, 3.0, 1.5),
    (0.0, 0.0, 0.0, 0.0, 2.0),
    (0.05, 0.3, 0.1, 3.0, 2.0),
)


def row_masks(rules) -> list[int]:
    """Bitboards of each board row, Black's back row first (bit i is square i + 1)."""
    per_row = rules.board_size // 2
    squares = range(rules.num_squares)
    return [sum(1 << i for i in squares if i // per_row == r) for r in range(rules.board_size)]


def centre_mask(rules) -> int:
    """The middle squares of each row but the two back rows (by index within the row)."""
    per_row, rows = rules.board_size // 2, rules.board_size
    middle = {(per_row - 1) // 2, per_row // 2}
    return sum(1 << (r * per_row + c) for r in range(1, rows - 1) for c in middle)


def handcrafted_value(rules):
    """``sigmoid(0.5 x (material + positional terms))`` for the side to move; exact at game ends. Its
    ``params`` are the terms' weights ``[advance, back, centre, trade, king]`` (a row of ``SETTINGS``):
    traced, so every setting shares one compiled match a depth."""
    rows = row_masks(rules)
    last = len(rows) - 1
    centre_bits = centre_mask(rules)

    def count(bits, mask):
        return jax.lax.population_count(bits & jnp.uint32(mask)).astype(jnp.float32)

    def value_fn(params, state, key):
        del key
        advance, back, centre, trade, king = (params[i] for i in range(5))
        black_pieces = state.black_men | state.black_kings
        white_pieces = state.white_men | state.white_kings
        black_advance = sum(r * count(state.black_men, m) for r, m in enumerate(rows))
        white_advance = sum((last - r) * count(state.white_men, m) for r, m in enumerate(rows))
        balance = material_balance(state, king)
        pieces = count(black_pieces | white_pieces, (1 << rules.num_squares) - 1)
        black_view = (
            balance
            + trade * balance / jnp.maximum(pieces, 1.0)
            + advance * (black_advance - white_advance)
            + back * (count(state.black_men, rows[0]) - count(state.white_men, rows[last]))
            + centre * (count(black_pieces, centre_bits) - count(white_pieces, centre_bits))
        )
        mover_view = jnp.where(state.color == 0, black_view, -black_view)
        v = jax.nn.sigmoid(0.5 * mover_view)
        return jnp.where(state.terminated, outcome_for(state, state.color), v).astype(jnp.float32)

    return value_fn


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="simple6", choices=sorted(PRESETS))
    parser.add_argument("--openings", type=int, default=100)
    parser.add_argument("--depths", default="1,2,3")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rules = get_rules(args.rules)
    starts = opening_states(rules, load_openings(rules, args.openings))
    games = 2 * args.openings
    depths = [int(d) for d in args.depths.split(",")]
    print(f"{args.rules}: hand-written evaluator vs material at equal depth, {games} games a row")
    print("advance back centre trade king | depth  score (95% interval)   W   D   L")
    value_fn = handcrafted_value(rules)
    policies = {
        depth: (alphabeta_policy(rules, depth, value_fn), alphabeta_policy(rules, depth)) for depth in depths
    }
    for setting in SETTINGS:
        for depth in depths:
            start = time.perf_counter()
            handcrafted, material = policies[depth]
            records = run_match(
                rules, handcrafted, jnp.asarray(setting, jnp.float32), material, None,
                MatchOptions(games, seed=args.seed, batch=games, openings=starts),
            )  # fmt: skip
            score = np.asarray(records.score)
            mean, low, high = paired_interval(score)
            print(
                "{:7.2f} {:4.1f} {:6.1f} {:5.1f} {:4.1f} | ".format(*setting)
                + f"{depth:5d}  {mean:.3f} ({low:.3f}-{high:.3f})  {(score == 1).sum():3d} "
                f"{(score == 0.5).sum():3d} {(score == 0).sum():3d}   [{time.perf_counter() - start:.1f} s]",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
