"""The match arena (``arena.run_match`` over ``arena.play_match``): colour balance across chunks,
reproducibility, chunk-size independence, progress and early stops.

Shapes are tiny (simple6, short ply caps); each (batch, cap) pair compiles once for the file.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neurocheckers.analysis.match_report import format_table, pool_summaries, summarize
from neurocheckers.match.arena import MatchOptions, a_is_black_in_game, play_match, play_plies, run_match
from neurocheckers.players.jax_players import parse_player
from neurocheckers.rules import AMERICAN6, SIMPLE6
from neurocheckers.rules.engine import init_batch, random_action, step
from neurocheckers.rules.outcome import KING_VALUE, points_for
from neurocheckers.sharding import MemoryLimitError

CAP = 12


@pytest.fixture(scope="module")
def players():
    return parse_player("random", SIMPLE6), parse_player("greedy-material", SIMPLE6)


def _match(players, games: int, batch: int, seed: int = 0, keep_actions: int = 0, **progress):
    a, b = players
    options = MatchOptions(games, seed, batch, CAP, keep_actions=keep_actions)
    return run_match(SIMPLE6, a.policy, a.params, b.policy, b.params, options, **progress)


@pytest.mark.parametrize("batch", [2, 3, 4])
@pytest.mark.parametrize("games", [1, 2, 3, 5, 7, 9])
def test_colours_alternate_and_differ_by_at_most_one(players, games, batch):
    records = _match(players, games, batch)
    assert records.a_is_black.shape == (games,)
    black = int(records.a_is_black.sum())
    assert abs(black - (games - black)) <= 1, (games, batch, black)
    # Game i has A as Black iff i is even, counted over the whole match, not per chunk.
    assert records.a_is_black.tolist() == [i % 2 == 0 for i in range(games)]


def test_the_same_seed_plays_the_same_games_whatever_the_batch(players):
    fields = ("score", "result", "a_is_black", "length", "finished", "material_diff")
    reference = _match(players, 9, 4, seed=5, keep_actions=9)
    for batch in (3, 9):
        other = _match(players, 9, batch, seed=5, keep_actions=9)
        for name in fields + ("actions",):
            np.testing.assert_array_equal(getattr(other, name), getattr(reference, name), err_msg=name)
    different = _match(players, 9, 4, seed=6, keep_actions=9)
    assert not np.array_equal(different.actions, reference.actions)


def test_chunks_are_the_games_of_one_call(players):
    """``play_match`` with ``first_game`` plays exactly the games of one call over the whole match."""
    a, b = players
    key = jax.random.key(1)
    whole = jax.device_get(
        play_match(SIMPLE6, a.policy, None, b.policy, None, key, 6, CAP, record_actions=True)
    )
    tail = jax.device_get(
        play_match(SIMPLE6, a.policy, None, b.policy, None, key, 3, CAP, record_actions=True, first_game=3)
    )
    np.testing.assert_array_equal(tail.actions, whole.actions[3:])
    np.testing.assert_array_equal(tail.a_is_black, [False, True, False])
    np.testing.assert_array_equal(a_is_black_in_game(np.arange(4)), [True, False, True, False])


def test_actions_are_kept_for_the_first_games_only(players):
    records = _match(players, 7, 3, keep_actions=4)
    assert records.actions.shape == (4, CAP)
    assert records.positions.shape[0] == 7
    # A kept game's actions end with its length: -1 after it.
    for i in range(4):
        assert np.all(records.actions[i, : records.length[i]] >= 0)
        assert np.all(records.actions[i, records.length[i] :] == -1)
    assert len(_match(players, 7, 3).actions) == 0
    assert _match(players, 2, 3, keep_actions=5).actions.shape == (2, CAP)


def test_progress_and_early_stop(players):
    seen = []
    records = _match(players, 7, 3, on_progress=lambda done, total: seen.append((done, total)))
    assert seen == [(3, 7), (6, 7), (7, 7)] and len(records.score) == 7

    asked = []

    def stop_after_two_chunks() -> bool:
        asked.append(True)
        return len(asked) > 2

    stopped = _match(players, 9, 3, should_stop=stop_after_two_chunks)
    assert len(stopped.score) == 6 and len(asked) == 3
    full = _match(players, 9, 3)
    np.testing.assert_array_equal(stopped.score, full.score[:6])
    nothing = _match(players, 9, 3, should_stop=lambda: True)
    assert nothing.score.shape == (0,) and nothing.a_is_black.shape == (0,)


def test_run_match_refuses_bad_sizes(players):
    for games, batch in ((0, 2), (2, 0)):
        with pytest.raises(ValueError, match="must be >= 1"):
            _match(players, games, batch)


LAZY6 = dataclasses.replace(AMERICAN6, name="lazy6", forced_capture=False)
"""American 6x6 with optional captures, so a player can make games long (no total-ply limit)."""


def lazy_policy(params, state, key):
    """Quiet moves while it can, a capture only just before the no-capture limit would draw."""
    actions = jnp.arange(LAZY6.num_actions, dtype=jnp.int32)
    children = jax.vmap(step, in_axes=(None, None, 0))(LAZY6, state, actions)
    legal = state.legal_action_mask
    capture = legal & (children.plies_without_capture == 0)
    quiet = legal & ~capture
    late = state.plies_without_capture >= LAZY6.max_plies_without_capture - 4
    prefer = jnp.where(late & jnp.any(capture), capture, jnp.where(jnp.any(quiet), quiet, legal))
    return jax.random.categorical(key, jnp.where(prefer, 0.0, -jnp.inf)).astype(jnp.int32)


def test_the_default_cap_lets_long_games_end_by_the_rules():
    """Without a total-ply limit (American rules) no game is cut before the rules' own draw limits."""
    records = run_match(LAZY6, lazy_policy, None, lazy_policy, None, MatchOptions(4, seed=0, batch=4))
    assert records.finished.all()
    assert records.length.max() > 200  # the arena's old cap would have cut (and drawn) these games
    cut = run_match(
        LAZY6, lazy_policy, None, lazy_policy, None, MatchOptions(4, seed=0, batch=4, max_plies=200)
    )
    long = records.length > 200
    assert not cut.finished[long].any() and np.all(cut.length[long] == 200)
    assert np.all(cut.score[long] == 0.5)
    np.testing.assert_array_equal(cut.score[~long], records.score[~long])


def test_summaries_count_unfinished_games_apart_from_draws():
    score = np.array([1.0, 0.5, 0.5, 0.0, 0.5])
    finished = np.array([True, True, False, True, False])
    summary = summarize(score, np.full(5, 10), np.zeros(5), finished)
    assert (summary["wins"], summary["draws"], summary["losses"], summary["unfinished"]) == (1, 1, 1, 2)
    assert summary["score"] == pytest.approx(0.5)
    assert "unfinished      2" in format_table("a", "b", "simple6", summary)


def test_parts_of_a_match_pool_into_the_summary_of_the_whole():
    rng = np.random.default_rng(0)
    score = rng.choice([0.0, 0.5, 1.0], size=30)
    finished, length, material = (
        rng.random(30) > 0.1,
        rng.integers(20, 200, 30),
        rng.integers(-4, 5, 30) * 0.5,
    )
    score[~finished] = 0.5  # a game cut by the ply cap scores 1/2
    repetition = rng.random(30) > 0.5
    whole = summarize(score, length, material, finished, repetition)
    parts = []
    for first, end in ((0, 12), (12, 30)):  # games 2i, 2i+1 from opening i
        games = slice(first, end)
        part = summarize(score[games], length[games], material[games], finished[games], repetition[games])
        part.update(
            player_a="a",
            player_b="b",
            rules="american8",
            first_opening=first // 2,
            openings=(end - first) // 2,
        )
        part.update(seconds_per_move_a=0.1 * (1 + first), depth_per_move_b=None)
        parts.append(part)
    pooled = pool_summaries(parts)
    for key in (
        "games",
        "wins",
        "draws",
        "losses",
        "unfinished",
        "decisive",
        "draws_a_ahead",
        "draws_b_ahead",
        "draws_repetition",
        "draws_rule",
    ):
        assert pooled[key] == whole[key], key
    assert pooled["score"] == pytest.approx(whole["score"])
    np.testing.assert_allclose(pooled["score_ci95"], whole["score_ci95"])
    assert pooled["mean_length"] == pytest.approx(whole["mean_length"])
    assert pooled["material_diff_histogram"] == whole["material_diff_histogram"]
    assert pooled["openings"] == 15 and "depth_per_move_b" not in pooled
    assert 0.1 < pooled["seconds_per_move_a"] < 1.3  # weighted by the parts' plies
    with pytest.raises(ValueError, match="overlap"):
        pool_summaries([parts[0], {**parts[1], "first_opening": 5}])
    with pytest.raises(ValueError, match="player_b"):
        pool_summaries([parts[0], {**parts[1], "player_b": "c"}])


def test_points_for_a_side():
    result = np.array([1, 1, -1, -1, 0, 0])
    black = np.array([True, False, True, False, True, False])
    np.testing.assert_array_equal(points_for(result, black), [1.0, 0.0, 0.0, 1.0, 0.5, 0.5])
    assert points_for(np.array([1, -1]), True).dtype == np.float32


def test_records_score_and_material_from_each_side(players):
    records = _match(players, 6, 3)
    np.testing.assert_array_equal(records.score, points_for(records.result, records.a_is_black))
    black_men, black_kings, white_men, white_kings = records.pieces.T
    black_minus_white = black_men + KING_VALUE * black_kings - (white_men + KING_VALUE * white_kings)
    sign = np.where(records.a_is_black, 1.0, -1.0)
    np.testing.assert_allclose(records.material_diff, sign * black_minus_white)


def test_a_batch_too_large_for_memory_is_refused_before_it_runs(players):
    a, b = players
    # Recorded actions alone: 10**6 games x 10**7 plies x 4 bytes = 40 TB.
    games, plies = 10**6, 10**7
    with pytest.raises(MemoryLimitError, match=r"a batch of 1000000 games needs about .* GiB of memory"):
        run_match(
            SIMPLE6, a.policy, None, b.policy, None, MatchOptions(games, 0, games, plies, keep_actions=1)
        )


def _random_choice(keys):
    def choose(states, ply):
        ply_keys = jax.vmap(jax.random.fold_in, in_axes=(0, None))(keys, ply)
        return jax.vmap(random_action, in_axes=(None, 0, 0))(SIMPLE6, ply_keys, states)

    return choose


def test_the_game_loop_moves_only_the_games_it_is_told_and_records_each_ply():
    """``play_plies``: game i moves for its first i plies only, the records see every ply with the
    games that moved, and the result is the games stepped one by one with the same actions."""
    n = 5
    keys = jax.random.split(jax.random.key(3), n)
    choose = _random_choice(keys)
    plies = jnp.arange(n)

    def moving(states, ply):
        return (ply < plies) & ~states.terminated

    def record(moves, states, actions, ply, live):
        return moves.at[:, ply].set(jnp.where(live, actions, -1))

    start = init_batch(SIMPLE6, (n,))
    final, ply, moves = play_plies(
        SIMPLE6, start, choose, record=record, records=jnp.full((n, n), -1), moving=moving
    )
    assert int(ply) == n - 1  # the last game's n - 1 plies, then nothing moves
    for game in range(n):
        played = [int(a) for a in moves[game] if a >= 0]
        assert len(played) == game
        state = jax.tree.map(lambda x, game=game: x[game], start)
        for action in played:
            state = step(SIMPLE6, state, action)
        for got, want in zip(jax.tree.leaves(final), jax.tree.leaves(state), strict=True):
            np.testing.assert_array_equal(got[game], want)


def test_the_game_loop_stops_at_its_cap_or_when_few_enough_games_go_on():
    n = 4
    choose = _random_choice(jax.random.split(jax.random.key(4), n))
    start = init_batch(SIMPLE6, (n,))
    _, ply, _ = play_plies(SIMPLE6, start, choose, max_plies=7)
    assert int(ply) == 7
    # stop_at = n: no more than n games are ever live, so no ply is played.
    final, ply, _ = play_plies(SIMPLE6, start, choose, max_plies=7, stop_at=n)
    assert int(ply) == 0
    for got, want in zip(jax.tree.leaves(final), jax.tree.leaves(start), strict=True):
        np.testing.assert_array_equal(got, want)
    # first_ply starts the count (and the cap) where an earlier call left off.
    _, ply, _ = play_plies(SIMPLE6, start, choose, max_plies=7, first_ply=5)
    assert int(ply) == 7
