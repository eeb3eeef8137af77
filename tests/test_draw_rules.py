"""American8's own draw rule (issue 31): the 40-move rule in the JAX engine and on the host, a man's
move resetting the quiet counter, threefold repetition on the host, and OpenSpiel's preset."""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest

from neurocheckers.compiled.board import Position, SearchRules, game_rule
from neurocheckers.compiled.game import Game
from neurocheckers.players.protocol import HostPlayer
from neurocheckers.rules import AMERICAN8, AMERICAN8_OPENSPIEL, PRESETS, get_rules, step
from neurocheckers.rules.notation import apply_move, parse_fen, parse_move
from neurocheckers.rules.playout import default_max_plies
from neurocheckers.rules.repetition import REASON, RepetitionWatch

KINGS = "B:WK32:BK1,9"
"""Black: a king on 1 and a man on 9; White: a king on 32. The kings can shuffle back and forth."""
SHUFFLE = ("1-6", "32-27", "6-1", "27-32")
AFTER_MAN = ("32-27", "1-6", "27-32", "6-1")
"""The shuffle with White first (after Black's man moved 9-13)."""


@functools.cache
def _step(rules):
    return jax.jit(functools.partial(step, rules))


def _play(rules, state, text):
    return _step(rules)(state, parse_move(rules, state, text).actions[0])


def test_presets():
    assert AMERICAN8.max_plies_without_capture == 80 and AMERICAN8.man_moves_reset_quiet_count
    assert AMERICAN8.threefold_repetition
    assert get_rules("american8-openspiel") is AMERICAN8_OPENSPIEL
    assert AMERICAN8_OPENSPIEL.max_plies_without_capture == 40
    assert not AMERICAN8_OPENSPIEL.man_moves_reset_quiet_count
    assert AMERICAN8.same_moves(AMERICAN8_OPENSPIEL) and not AMERICAN8.same_moves(PRESETS["american6"])
    assert AMERICAN8_OPENSPIEL.base_name == "american8" and "american8-openspiel" not in PRESETS
    with pytest.raises(ValueError, match="'american9'.*american8-openspiel"):
        get_rules("american9")


def test_a_mans_move_resets_the_quiet_count_under_american8_only():
    for rules, after_man in ((AMERICAN8, 0), (AMERICAN8_OPENSPIEL, 31)):
        state = parse_fen(rules, KINGS, plies_without_capture=30)
        assert int(apply_move(rules, state, "1-6").plies_without_capture) == 31  # a king's move
        assert int(apply_move(rules, state, "9-13").plies_without_capture) == after_man


def test_forty_move_rule_in_the_jax_engine():
    """Kings shuffle from a man's move: the game is drawn at the 80th quiet ply, not before."""
    state = apply_move(AMERICAN8, parse_fen(AMERICAN8, KINGS, plies_without_capture=70), "9-13")
    assert int(state.plies_without_capture) == 0
    start = int(state.ply)
    for k in range(80):
        assert not bool(state.terminated), k
        state = _play(AMERICAN8, state, AFTER_MAN[k % 4])
    assert bool(state.terminated) and int(state.result) == 0 and int(state.ply) - start == 80
    assert int(state.plies_without_capture) == 80


def test_openspiel_preset_draws_after_40_plies_without_a_capture():
    state = apply_move(
        AMERICAN8_OPENSPIEL, parse_fen(AMERICAN8_OPENSPIEL, KINGS, plies_without_capture=30), "9-13"
    )
    assert int(state.plies_without_capture) == 31
    for k in range(9):
        state = _play(AMERICAN8_OPENSPIEL, state, AFTER_MAN[k % 4])
    assert bool(state.terminated) and int(state.result) == 0 and int(state.plies_without_capture) == 40


def _row(game: Game, source: int, dest: int):
    (row,) = [r for r in game.legal() if r[0] == source - 1 and r[1] == dest - 1]
    return row


def test_forty_move_rule_on_the_host():
    """``compiled.game.Game`` (whole turns) under the preset: 80 quiet plies, a man's move resets."""
    start = Position(1 << 8, 1 << 0, 0, 1 << 31, 0)  # the KINGS position
    game = Game(SearchRules(AMERICAN8), start)
    game.play(_row(game, 9, 13))
    assert game.quiet == 0
    moves = [tuple(int(s) for s in m.split("-")) for m in AFTER_MAN]
    for k in range(80):
        assert game.result is None, k
        game.play(_row(game, *moves[k % 4]))
    assert game.result == 0 and "80 plies" in game.reason


def test_threefold_repetition_on_the_host():
    """Kings going back and forth repeat the start after 4 plies and again after 8: a draw then."""
    state = parse_fen(AMERICAN8, KINGS)
    watch = RepetitionWatch(AMERICAN8)
    state = watch.observe(state)
    for k in range(8):
        assert not bool(state.terminated), k
        state = watch.observe(_play(AMERICAN8, state, SHUFFLE[k % 4]))
    assert bool(state.terminated) and int(state.result) == 0 and int(state.ply) == 8
    assert not np.asarray(state.legal_bits).any() and watch.reason() == REASON
    # Whole turns (compiled.game.Game) under the game's rule end at the same ply.
    game = Game(game_rule(AMERICAN8), Position(1 << 8, 1 << 0, 0, 1 << 31, 0))
    moves = [tuple(int(s) for s in m.split("-")) for m in SHUFFLE]
    for k in range(8):
        game.play(_row(game, *moves[k % 4]))
    assert game.result == 0 and game.reason == "threefold repetition"


def test_a_mans_move_clears_the_repetition_count_and_openspiel_has_none():
    watch = RepetitionWatch(AMERICAN8)
    state = watch.observe(parse_fen(AMERICAN8, KINGS))
    for move in [*SHUFFLE, "9-13", *AFTER_MAN, *AFTER_MAN[:3]]:
        state = watch.observe(_play(AMERICAN8, state, move))
    assert not bool(state.terminated) and watch.reason() is None  # no position occurred three times
    state = watch.observe(_play(AMERICAN8, state, AFTER_MAN[3]))
    assert bool(state.terminated) and watch.reason() == REASON
    other = RepetitionWatch(AMERICAN8_OPENSPIEL)
    state = other.observe(parse_fen(AMERICAN8_OPENSPIEL, KINGS))
    for k in range(12):
        state = other.observe(_play(AMERICAN8_OPENSPIEL, state, SHUFFLE[k % 4]))
    assert not bool(state.terminated)


def test_repetition_watch_over_a_batch():
    """Two games side by side: game 1 moves a man first, so its repetition comes a ply later."""
    lines = ([*SHUFFLE, *SHUFFLE], ["9-13", "32-27", "1-6", "27-32", "6-1", "32-27", "1-6", "27-32", "6-1"])
    games = [parse_fen(AMERICAN8, KINGS)] * 2
    watch = RepetitionWatch(AMERICAN8)
    states = watch.observe(jax.tree.map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *games))
    for k in range(9):
        games = [
            g if k >= len(line) else _play(AMERICAN8, g, line[k])
            for g, line in zip(games, lines, strict=True)
        ]
        batch = jax.tree.map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *games)
        batch = batch.replace(terminated=batch.terminated | states.terminated)
        states = watch.observe(batch)
        assert watch.drawn == ({0} if k == 7 else {0, 1} if k == 8 else set()), k
    assert np.asarray(states.terminated).all() and (np.asarray(states.result) == 0).all()


def test_default_cap_counts_mans_moves():
    assert default_max_plies(AMERICAN8_OPENSPIEL) == 25 * 40
    # 24 captures and 2 x 4 x (7 + 6 + 5) men's moves reset the count: 169 stretches of 80 plies.
    assert default_max_plies(AMERICAN8) == 169 * 80


def test_match_summary_counts_decisive_games_and_lopsided_draws():
    from neurocheckers.analysis.match_report import format_table, summarize

    score = np.array([1.0, 0.5, 0.5, 0.0, 0.5, 0.5])
    material = np.array([2.0, 1.5, -3.0, -1.0, 0.0, 1.0])
    summary = summarize(score, np.full(6, 10), material, np.array([1, 1, 1, 1, 0, 1], bool))
    assert (summary["decisive"], summary["draws_a_ahead"], summary["draws_b_ahead"]) == (2, 1, 1)
    assert "decisive        2  (draws with A a king or more ahead: 1, with B: 1)" in format_table(
        "a", "b", "american8", summary
    )
    assert "draws_repetition" not in summary  # batched JAX games cannot tell
    repetition = np.array([0, 1, 0, 0, 1, 1], bool)  # the unfinished game is no draw
    split = summarize(score, np.full(6, 10), material, np.array([1, 1, 1, 1, 0, 1], bool), repetition)
    assert (split["draws_repetition"], split["draws_rule"]) == (2, 1)
    assert "draws by repetition 2, by the other end rules 1" in format_table("a", "b", "american8", split)


class Shuffler(HostPlayer):
    """A host player that moves its king back to where it came from whenever it can."""

    name = "shuffler"

    def __init__(self, rules):
        self.rules = rules

    def new_game(self, seed):
        previous = {}

        def move(state, seconds):
            side = int(state.color)

            def kings(s):
                return int(s.black_kings if side == 0 else s.white_kings)

            legal = np.flatnonzero(np.asarray(state.legal_action_mask))
            back = [a for a in legal if kings(_step(self.rules)(state, a)) == previous.get(side)]
            previous[side] = kings(state)
            return int(back[0] if back else legal[0])

        return move


def test_the_host_match_loop_draws_a_threefold_repetition_under_american8_only():
    from neurocheckers.analysis.match_report import summarize
    from neurocheckers.match.arena import MatchOptions
    from neurocheckers.match.clock import MoveClock
    from neurocheckers.match.host import play_engine_games
    from neurocheckers.rules.engine import from_position

    start = from_position(AMERICAN8, 0, 1 << 0, 0, 1 << 31)  # a king each, on 1 and on 32
    openings = jax.tree.map(lambda x: x[None], start)
    options = MatchOptions(games=2, batch=2, openings=openings, keep_actions=2)
    ended = {}
    for rules in (AMERICAN8, AMERICAN8_OPENSPIEL):
        player = Shuffler(rules)
        records = play_engine_games(rules, player, player, np.arange(2), options, clock=MoveClock())
        assert records.finished.all() and (records.result == 0).all()
        ended[rules.name] = records.length.tolist()
        repeated = rules is AMERICAN8
        assert records.repetition.tolist() == [repeated] * 2
        summary = summarize(records.score, records.length, records.material_diff, records.finished,
                            records.repetition)  # fmt: skip
        assert (summary["draws_repetition"], summary["draws_rule"]) == ((2, 0) if repeated else (0, 2))
        # Saved, the games keep the loop's result though the batched replay knows no repetition.
        from neurocheckers.analysis.games import games_from_actions

        starts = jax.tree.map(lambda x: np.broadcast_to(x, (2, *np.shape(x))), start)
        saved = games_from_actions(rules, records.actions, "a", "b", starts, [0, 0])
        unmarked = games_from_actions(rules, records.actions, "a", "b", starts)
        assert [g["result"] for g in saved] == ["1/2-1/2"] * 2
        replay_ends = "*" if rules is AMERICAN8 else "1/2-1/2"
        assert [g["result"] for g in unmarked] == [replay_ends] * 2
    # The start position stands for the third time after 8 plies (two shuffles); OpenSpiel's rule
    # knows no repetition and draws at its 40-ply limit.
    assert ended == {"american8": [8, 8], "american8-openspiel": [40, 40]}
