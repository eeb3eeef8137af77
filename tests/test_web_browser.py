"""The web app in a real browser: Chromium from the system's packages driven by Playwright.

Plays a whole game against ``random`` on ``american6`` by clicking squares (an illegal click
changes nothing), steps through a saved game, checks that a run's fitness curve is drawn, and that
the rules' best agent is the default opponent and replies with the timed alpha-beta search. The
server is ``serve``'s app under uvicorn in a thread, on a free local port. Chromium must be
installed (``apt-get install chromium``; ``.ci/run`` does it): without it this test fails.
"""

from __future__ import annotations

import shutil
import socket
import sys
import threading
from pathlib import Path

import pytest
import uvicorn

from neurocheckers.web.app import create_app

sys.path.insert(0, str(Path(__file__).resolve().parent))
from web_folder import EPOCHS_WRITTEN, GAME_MOVES, make_served_folder  # noqa: E402

pytestmark = pytest.mark.browser

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
MAX_CLICKS = 800
"""More clicks than any american6 game against random needs (it ends in at most a few hundred plies)."""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The URL of the app serving a small folder, on a free port of 127.0.0.1."""
    folder = make_served_folder(tmp_path_factory.mktemp("served"))
    (folder / "results").mkdir()
    shutil.copy(folder / "agent.safetensors", folder / "results" / "best_simple6.safetensors")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(create_app(folder), log_level="warning")
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not uv.started and thread.is_alive():
        threading.Event().wait(0.05)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    uv.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture(scope="module")
def page(server):
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("chromium is not installed: apt-get install -y chromium (CI's .ci/run does it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.set_default_timeout(20_000)
        yield page
        browser.close()


def _board_state(page) -> str:
    """Wait until the person may click (or the game is over) and return the board's state."""
    page.wait_for_function("['human', 'over'].includes(document.getElementById('play-board').dataset.state)")
    return page.get_attribute("#play-board", "data-state")


def test_a_whole_game_by_clicking(page, server):
    page.goto(f"{server}/#play")
    page.select_option("#rules", "american6")
    page.fill("#opponent", "random")
    page.fill("#think", "0.05")
    page.click("#new-game-button")
    assert _board_state(page) == "human"
    board = page.locator("#play-board")
    fen = board.get_attribute("data-fen")
    # An illegal click: pick a piece, then a square it cannot reach (the opponent's piece on 18).
    page.click("#play-board g.movable >> nth=0")
    assert page.locator("#play-board g.target").count() >= 1
    page.click("#play-board g[data-square='18']")
    page.wait_for_function("document.getElementById('play-message').textContent.includes('illegal move')")
    assert board.get_attribute("data-fen") == fen and page.locator("#play-moves li").count() == 0
    clicks = 0
    while _board_state(page) != "over":
        targets = page.locator("#play-board g.target")
        if targets.count():
            targets.first.click()
        else:
            page.locator("#play-board g.movable").first.click()
        clicks += 1
        assert clicks < MAX_CLICKS
    status = page.inner_text("#play-status")
    assert status.startswith("Game over (") and any(
        why in status for why in ("has no pieces left", "has no legal move", "without a capture")
    ), status
    assert page.locator("#play-moves li").count() >= 2
    page.click("#undo")  # the person's last move and the reply are taken back
    # The board says "over" until the undo's answer arrives: wait for the person's turn itself.
    page.wait_for_function("document.getElementById('play-board').dataset.state === 'human'")
    assert not page.inner_text("#play-status").startswith("Game over")


def test_stepping_through_a_saved_game(page, server):
    page.goto(f"{server}/#games?file=games/sample.json")
    page.wait_for_selector("#games-board svg")
    assert page.get_attribute("#games-board", "data-ply") == "0"
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    assert page.get_attribute("#games-board", "data-ply") == "3"
    page.keyboard.press("ArrowLeft")
    assert page.get_attribute("#games-board", "data-ply") == "2"
    assert "Black's chance of winning" in page.inner_text("#games-eval")
    page.click("#last")
    assert page.get_attribute("#games-board", "data-ply") == str(GAME_MOVES)
    assert page.inner_text("#ply-label") == f"move {GAME_MOVES} of {GAME_MOVES}"
    assert page.locator("#games-moves li").count() == GAME_MOVES


def test_a_runs_fitness_curve_is_drawn(page, server):
    page.goto(f"{server}/#runs")
    page.click("#run-list a >> nth=0")
    median = page.locator("#fitness-chart path.series[data-name='median']")
    median.wait_for()
    # One point per epoch: a move-to and a line-to for each later epoch.
    assert median.get_attribute("d").count("L") == EPOCHS_WRITTEN - 1
    assert "interrupted" in page.inner_text("#run-status")
    assert page.locator("#lineage a.play-boss").count() == 1


def test_the_best_agent_is_the_default_opponent_and_thinks_with_alphabeta(page, server):
    page.goto(f"{server}/#play")
    page.reload()  # a fresh page: the one the person opens
    page.wait_for_function("document.getElementById('rules').options.length > 0")
    best = "results/best_simple6.safetensors"
    assert page.input_value("#rules") == "simple6" and page.input_value("#opponent") == best
    assert page.get_attribute("#agents option >> nth=0", "value") == best
    page.select_option("#rules", "american6")
    assert page.input_value("#opponent") == "random"  # no best agent for american6 here
    page.select_option("#rules", "simple6")
    assert page.input_value("#opponent") == best
    page.select_option("#human", "white")
    page.fill("#think", "0.05")
    page.click("#new-game-button")
    assert _board_state(page) == "human"
    assert "alpha-beta to depth" in page.inner_text("#play-eval")
    page.fill("#opponent", "random")  # chosen by the person: the rules no longer change it
    page.select_option("#rules", "american6")
    assert page.input_value("#opponent") == "random"
