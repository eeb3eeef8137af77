"""Ctrl-C during a match keeps the games already played: ``arena.run_match`` and
``engines.run_engine_match`` raise ``MatchInterrupted`` with the records of their finished chunks,
and ``match --save-games`` writes those games before it exits with status 130."""

from __future__ import annotations

import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from neurocheckers.analysis.pdn_games import load_game_file
from neurocheckers.match.arena import MatchInterrupted, MatchOptions, run_match
from neurocheckers.match.host import MoveClock, run_engine_match
from neurocheckers.players.jax_players import parse_player
from neurocheckers.rules import SIMPLE6

sys.path.insert(0, str(Path(__file__).resolve().parent))
from interrupting import child_env, children_hear_ctrl_c, not_interrupted  # noqa: E402

RANDOM = parse_player("random", SIMPLE6)
GREEDY = parse_player("greedy-material", SIMPLE6)


def _ctrl_c_after(games: int):
    """An ``on_progress`` that raises KeyboardInterrupt (as Ctrl-C would) once more than ``games`` ended."""

    def on_progress(done: int, _: int) -> None:
        if done > games:
            raise KeyboardInterrupt

    return on_progress


def _ctrl_c_now() -> bool:
    raise KeyboardInterrupt


def _same_games(a, b) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("score", "length", "actions"))


def test_ctrl_c_keeps_the_chunks_run_match_played():
    options = MatchOptions(games=64, seed=3, batch=8, keep_actions=64)
    args = (SIMPLE6, RANDOM.policy, RANDOM.params, GREEDY.policy, GREEDY.params)
    with pytest.raises(MatchInterrupted) as caught:
        run_match(*args, options, on_progress=_ctrl_c_after(16))
    kept = caught.value.records  # Ctrl-C after the third chunk was appended
    assert len(kept.score) == 24 and kept.actions.shape[0] == 24
    whole = run_match(*args, MatchOptions(games=24, seed=3, batch=24, keep_actions=24))
    assert _same_games(kept, whole)
    with pytest.raises(KeyboardInterrupt) as early:  # no chunk ended: nothing to keep
        run_match(*args, options, should_stop=_ctrl_c_now)  # asked before the first chunk
    assert not isinstance(early.value, MatchInterrupted)


def test_ctrl_c_keeps_the_batches_an_engine_match_played():
    options = MatchOptions(games=64, seed=5, batch=8, keep_actions=64)
    with pytest.raises(MatchInterrupted) as caught:  # Ctrl-C when the first game of batch 3 ends
        run_engine_match(SIMPLE6, RANDOM, GREEDY, options, _ctrl_c_after(16), clock=MoveClock())
    kept = caught.value.records
    assert len(kept.score) == 16 and kept.actions.shape[0] == 16
    whole = run_engine_match(
        SIMPLE6, RANDOM, GREEDY, MatchOptions(16, 5, 8, keep_actions=16), clock=MoveClock()
    )
    assert _same_games(kept, whole)


def _lines_until(stream, start: str, seconds: float) -> list[str]:
    """The lines of ``stream`` up to the first that starts with ``start``; all of them read when none
    does within ``seconds`` (a bound on a hung child, not a timing check)."""
    lines: list[str] = []
    deadline = time.monotonic() + seconds
    while not (lines and lines[-1].startswith(start)):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([stream], [], [], left)[0]:
            break
        lines.append(stream.readline())
        if not lines[-1]:  # the child ended
            break
    return lines


@pytest.mark.slow
def test_sigint_during_match_save_games_writes_the_games_played(tmp_path):
    """A real ``match --save-games`` process sent SIGINT once its first games are done: it writes the
    games of its finished batches as PDN, says how many, and exits with 130."""
    saved = tmp_path / "games.pdn"
    command = [sys.executable, "-m", "neurocheckers", "match", "random", "greedy-material"]
    command += ["--rules", "simple6", "--games", "1000000", "--batch", "8"]
    command += ["--save-games", str(saved), "--save-count", "40"]
    with children_hear_ctrl_c():
        child = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env(), cwd=tmp_path
        )
    try:
        lines = _lines_until(child.stderr, "neurocheckers: played ", seconds=300)
        assert lines and "neurocheckers: played 8 of 1000000 games" in lines[-1], "".join(
            lines
        )  # a batch ended
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        child.kill()
        pytest.fail(not_interrupted(child.stderr.read()))
    finally:
        child.kill()
    assert child.returncode == 130, err
    said = re.search(r"interrupted: (\d+) of 1000000 games played; (\d+) of them saved in (.+)", err)
    assert said, err
    played, kept = int(said[1]), int(said[2])
    assert played >= 8 and played % 8 == 0 and played < 1000000  # whole batches only
    assert kept == min(played, 40) and said[3] == str(saved)
    loaded = load_game_file(saved)
    assert len(loaded.games) == kept and not loaded.skipped
    assert [g["black"] for g in loaded.games[:2]] == ["random", "greedy-material"]  # colours alternate
    assert f"games: {saved} ({kept} games)" in out  # the summary covers the games played
