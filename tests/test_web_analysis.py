"""The analysis panel in a real browser (Chromium driven by Playwright, as ``test_web_browser``):
on the Games page, an 8x8 game (the evaluation graph, a position clicked: its best move and line,
no exact verdict) and a 6x6 game from a few-piece position (the database's exact verdict, the move
that throws away the win marked in the graph and the move list); on the Play page, the game being
played analysed and a position picked in the graph. Tiny node budgets keep it fast."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from neurocheckers.analysis.games import save_games
from neurocheckers.rules import AMERICAN6, AMERICAN8
from neurocheckers.web.app import create_app

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_web_browser import _serving, browser  # noqa: E402, F401  (the browser fixture)
from web_folder import long_game  # noqa: E402

pytestmark = pytest.mark.browser

START = "B:WK16:BK13,7"
"""Black to move wins in one (7-11); 7-10 throws the win away."""
MOVES = ["7-10", "16x11", "10-13", "11x16"]
SCREENSHOT = os.environ.get("NEUROCHECKERS_ANALYSIS_SCREENSHOT")
"""Where to save a screenshot of the 6x6 game's analysis (unset: none)."""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from neurocheckers.endgame.solve import build

    root = tmp_path_factory.mktemp("served")
    game = {"black": "a", "white": "b", "start_fen": START, "moves": MOVES, "result": "0-1", "plies": 4}
    save_games(root / "games" / "six.json", AMERICAN6, [game])
    save_games(root / "games" / "eight.json", AMERICAN8, [long_game(AMERICAN8, 6)[1]])
    endgame = tmp_path_factory.mktemp("endgame") / "american6"
    build(AMERICAN6, 3, endgame)
    with _serving(create_app(root, endgame=[endgame], analysis_nodes=300)) as url:
        yield url


@pytest.fixture(scope="module")
def page(browser):  # noqa: F811
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    page.set_default_timeout(30_000)
    errors = []
    page.on("pageerror", lambda error: errors.append(error))
    yield page
    assert errors == []


def _open_and_analyse(page, server, file: str) -> None:
    page.goto("about:blank")
    page.goto(f"{server}/#games?file={file}")
    page.wait_for_selector("#games-board svg")
    page.wait_for_function("!document.getElementById('games-analyse').disabled")
    page.click("#games-analyse")
    page.wait_for_selector("#games-analysis-chart svg circle.ply")


def test_an_8x8_game_analysed_on_the_games_page(page, server):
    _open_and_analyse(page, server, "games/eight.json")
    assert page.locator("#games-analysis-chart circle.ply").count() == 7
    assert "compiled search, 300 nodes a position" in page.inner_text("#games-analysis-status")
    page.click("#games-analysis-chart rect.ply-hit[data-ply='2']")
    assert page.get_attribute("#games-board", "data-ply") == "2"  # the board follows the graph
    detail = page.locator("#games-analysis-detail")
    assert detail.get_attribute("data-ply") == "2"
    text = detail.inner_text()
    assert "After move 2, Black to move" in text and "Best move " in text and "; line: " in text
    assert "No exact verdict here" in text
    page.keyboard.press("ArrowRight")  # stepping through the game moves the analysis along
    page.wait_for_function("document.getElementById('games-analysis-detail').dataset.ply === '3'")


def test_a_6x6_game_with_a_thrown_win_and_exact_verdicts(page, server):
    _open_and_analyse(page, server, "games/six.json")
    assert "moves that throw away the value: 0. 7-10" in page.inner_text("#games-analysis-status")
    assert page.locator("#games-analysis-chart path.thrown[data-ply='0']").count() == 1
    assert page.locator("#games-moves button.turn.thrown").all_inner_texts() == ["7-10"]
    detail = page.locator("#games-analysis-detail")
    assert detail.get_attribute("data-verdict") == "win"  # the start is shown first
    text = detail.inner_text()
    assert "Exact: Black wins in 1 move (endgame database)" in text and "Best move 7-11" in text
    assert "throws away the win (win -> loss)" in text
    page.click("#games-analysis-chart rect.ply-hit[data-ply='1']")
    assert "Exact: White wins" in detail.inner_text() and detail.get_attribute("data-ply") == "1"
    if SCREENSHOT:
        page.screenshot(path=SCREENSHOT, full_page=True)


def test_the_play_page_game_analysed(page, server):
    page.goto("about:blank")
    created = page.request.post(
        f"{server}/api/games",
        data={"opponent": "random", "rules": "american6", "human": "black", "fen": START},
    ).json()
    page.request.post(f"{server}/api/games/{created['id']}/move", data={"from": 7, "to": 10})
    page.goto(f"{server}/#play?game={created['id']}")
    page.wait_for_function("['human', 'over'].includes(document.getElementById('play-board').dataset.state)")
    page.click("#play-analyse")
    page.wait_for_selector("#play-analysis-chart svg circle.ply")
    assert page.locator("#play-analysis-chart path.thrown[data-ply='0']").count() == 1
    assert page.locator("#play-moves button.turn.thrown").first.inner_text() == "7-10"
    page.click("#play-analysis-chart rect.ply-hit[data-ply='0']")
    page.wait_for_function("document.getElementById('play-board').dataset.view === '0'")
    text = page.inner_text("#play-analysis-detail")
    assert "Exact: Black wins in 1 move (endgame database)" in text and "Best move 7-11" in text
