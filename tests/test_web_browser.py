"""The web app in a real browser: Chromium from the system's packages driven by Playwright.

Plays whole games by clicking squares: on ``american6`` against ``random``, and on 8x8 against the
committed best agent from the board shown on arrival (its timed search for a short think time);
checks deselecting, the move list, PDN downloads read back with the project's PDN reader, the
"must capture" message, keyboard moves, the flip, a reload that keeps the game, a 390 px phone
screen, a saved game stepped through, and the Runs page (details beside the list, refreshed live,
a stop reason, the open run kept in the address, its name the phone's width); a game of 44 moves
whose last move row stays in view on Play and Games (desktop and a 390 px phone), a move by
drag-and-drop, a game from a FEN and its rematch, and a game found again after a restart. The
server is ``serve``'s app under uvicorn in a thread, on a free local port. Chromium must be
installed (``apt-get install chromium``, which the README's test command runs): without it these
tests fail.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import sys
import threading
from pathlib import Path

import pytest
import uvicorn

from neurocheckers.analysis.games import save_games
from neurocheckers.rules import AMERICAN6
from neurocheckers.rules.notation import parse_fen
from neurocheckers.rules.pdn import read_pdn
from neurocheckers.web.app import create_app
from neurocheckers.web.session import play_ply

sys.path.insert(0, str(Path(__file__).resolve().parent))
from web_folder import EPOCHS_WRITTEN, GAME_MOVES, long_game, make_served_folder  # noqa: E402

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
BEST_8X8 = "results/best_american8.safetensors"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
MAX_CLICKS = 800
"""More clicks than any game here needs (american6 against random ends in a few hundred plies; the
8x8 game against the best agent ends well before its 50-plies-without-capture draw would)."""
FAST_THINK = "0.05"
"""The opponents' think time in seconds: short games in test time."""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The app serving a small folder (with the committed best 8x8 agent, and an american6 endgame
    database of up to 3 pieces) on a free port of 127.0.0.1: (URL, folder, app)."""
    from neurocheckers.endgame.solve import build

    folder = make_served_folder(tmp_path_factory.mktemp("served"))
    endgame = tmp_path_factory.mktemp("endgame") / "american6"
    build(AMERICAN6, 3, endgame)
    (folder / "results").mkdir()
    shutil.copy(folder / "agent.safetensors", folder / "results" / "best_simple6.safetensors")
    shutil.copy(REPO / BEST_8X8, folder / BEST_8X8)
    app = create_app(folder, endgame=[endgame])
    with _serving(app) as url:
        yield url, folder, app


@contextlib.contextmanager
def _serving(app):
    """``app`` under uvicorn in a thread on a free port of 127.0.0.1: its URL, until the block ends."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not uv.started and thread.is_alive():
        threading.Event().wait(0.05)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        uv.should_exit = True
        thread.join(timeout=10)
        sock.close()


@pytest.fixture(scope="module")
def server(served):
    return served[0]


@pytest.fixture(scope="module")
def browser():
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("chromium is missing: apt-get install -y chromium (the README's test command runs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def page(browser):
    page = browser.new_page(viewport={"width": 1300, "height": 900}, accept_downloads=True)
    page.set_default_timeout(30_000)
    errors = []
    page.on("pageerror", lambda error: errors.append(error))
    yield page
    assert errors == []


def _board_state(page) -> str:
    """Wait until the person may click (or the game is over) and return the board's state."""
    page.wait_for_function("['human', 'over'].includes(document.getElementById('play-board').dataset.state)")
    return page.get_attribute("#play-board", "data-state")


def _fresh_play_page(page, server) -> None:
    """The Play page as a person opens it (no game in its address)."""
    page.goto("about:blank")
    page.goto(f"{server}/#play")
    page.wait_for_selector("#play-board svg")


def _new_game(page, server, rules: str, opponent: str, human: str = "black") -> None:
    """A fresh page and a new game of ``rules`` against ``opponent`` (chosen in the list)."""
    _fresh_play_page(page, server)
    page.select_option("#rules", rules)
    page.select_option("#human", human)
    page.select_option("#opponent-choice", opponent)
    page.fill("#think", FAST_THINK)
    page.click("#new-game-button")
    page.wait_for_function("document.getElementById('play-board').dataset.state !== 'none'")


def _play_to_the_end(page) -> int:
    """Click the first target, else the first piece that can move, until the game is over."""
    clicks = 0
    while _board_state(page) != "over":
        targets = page.locator("#play-board g.target")
        if targets.count():
            targets.first.click()
        else:
            page.locator("#play-board g.movable").first.click()
        clicks += 1
        assert clicks < MAX_CLICKS
    return clicks


def _turns(page) -> list[str]:
    return page.locator("#play-moves button.turn").all_inner_texts()


def _download_pdn(page, selector: str):
    with page.expect_download() as download:
        page.click(selector)
    return read_pdn(Path(download.value.path()).read_text())


def test_a_whole_game_by_clicking(page, server):
    _new_game(page, server, "american6", "random")
    assert _board_state(page) == "human"
    board = page.locator("#play-board")
    fen = board.get_attribute("data-fen")
    # A second click on the picked piece lets it go, with no message and no move sent.
    page.click("#play-board g.movable >> nth=0")
    assert page.locator("#play-board g.selected").count() == 1
    page.click("#play-board g.selected")
    assert page.locator("#play-board g.selected, #play-board g.target").count() == 0
    assert page.inner_text("#play-message") == "" and board.get_attribute("data-fen") == fen
    # An illegal click: pick a piece, then a square it cannot reach (the opponent's piece on 18).
    page.click("#play-board g.movable >> nth=0")
    assert page.locator("#play-board g.target").count() >= 1
    page.click("#play-board g[data-square='18']")
    page.wait_for_function("document.getElementById('play-message').textContent.includes('illegal move')")
    assert board.get_attribute("data-fen") == fen and _turns(page) == []
    _play_to_the_end(page)
    status = page.inner_text("#play-status")
    assert status.startswith("Game over (") and any(
        why in status for why in ("has no pieces left", "has no legal move", "without a capture")
    ), status
    assert len(_turns(page)) >= 2
    page.click("#undo")  # the person's last move and the reply are taken back
    # The board says "over" until the undo's answer arrives: wait for the person's turn itself.
    page.wait_for_function("document.getElementById('play-board').dataset.state === 'human'")
    assert not page.inner_text("#play-status").startswith("Game over")


def test_a_whole_8x8_game_against_the_best_agent_from_the_board_on_arrival(page, server):
    _fresh_play_page(page, server)
    # On arrival: the 8x8 start position, the strongest agent chosen, nothing started yet.
    assert page.input_value("#rules") == "american8" and page.input_value("#opponent") == BEST_8X8
    assert page.input_value("#opponent-choice") == BEST_8X8
    assert page.get_attribute("#play-board", "data-state") == "none"
    assert page.locator("#play-board circle.piece").count() == 24
    page.fill("#think", FAST_THINK)
    page.click("#new-game-button")  # the one click
    assert _board_state(page) == "human"
    assert "game=" in page.url
    page.click("#play-board g.movable >> nth=0")
    page.click("#play-board g.target >> nth=0")
    assert _board_state(page) == "human"
    assert "your win chance" in page.inner_text("#play-eval")  # the network's, or its search's
    _play_to_the_end(page)
    assert page.inner_text("#play-status").startswith("Game over (")
    assert page.inner_text("#play-eval") == ""  # no stale win chance: the bar shows the result
    assert page.get_attribute("#eval-bar", "data-chance") in ("0", "50", "100")
    turns = _turns(page)
    assert len(turns) >= 10
    # Paired move numbers: "1." then Black's move and White's answer.
    first_row = page.locator("#play-moves li").first
    assert first_row.locator(".no").inner_text() == "1." and first_row.locator("button.turn").count() == 2
    [pdn] = _download_pdn(page, "#pdn")
    assert list(pdn.moves) == turns and pdn.tags["Black"] == "human"
    assert pdn.tags["White"] == f"compiled:{FAST_THINK}s:{BEST_8X8}"  # the compiled search on 8x8
    assert f"({pdn.result})" in page.inner_text("#play-status")
    # A move of the list shows its position; back to the game shows the game's end again.
    live = page.get_attribute("#play-board", "data-fen")
    page.click("#play-moves button.turn[data-turn='1']")
    page.wait_for_function("document.getElementById('play-board').dataset.view === '1'")
    assert page.get_attribute("#play-board", "data-fen") != live
    assert page.locator("#play-board g.last").count() == 2
    page.click("#live")
    assert page.get_attribute("#play-board", "data-fen") == live


def test_flip_and_a_reload_keep_the_game(page, server):
    _new_game(page, server, "american6", "random")
    _board_state(page)
    page.click("#play-board g.movable >> nth=0")
    page.click("#play-board g.target >> nth=0")
    assert _board_state(page) == "human"
    fen, turns = page.get_attribute("#play-board", "data-fen"), _turns(page)

    def top_of(square: int) -> float:
        return page.locator(f"#play-board g[data-square='{square}'] rect.dark").bounding_box()["y"]

    assert page.get_attribute("#play-board", "data-bottom") == "black"  # your side at the bottom
    assert top_of(1) > top_of(18) and "flip=" not in page.url
    page.click("#flip")
    assert page.get_attribute("#play-board", "data-bottom") == "white" and top_of(1) < top_of(18)
    assert "flip=1" in page.url and "game=" in page.url
    page.reload()
    assert _board_state(page) == "human"
    assert page.get_attribute("#play-board", "data-fen") == fen and _turns(page) == turns
    assert page.get_attribute("#play-board", "data-bottom") == "white"  # the flip is kept too
    assert page.input_value("#rules") == "american6" and page.input_value("#opponent-choice") == "random"
    page.goto(f"{server}/#play?game=gnotthere")
    page.wait_for_function("document.getElementById('play-message').textContent.includes('no game')")
    assert page.get_attribute("#play-board", "data-state") == "none"


def test_the_must_capture_message_and_a_marked_multi_jump(page, server, served):
    _new_game(page, server, "american6", "random")
    _board_state(page)
    game_id = page.url.split("game=")[1].split("&")[0]
    session = served[2].state.sessions.get(game_id)
    session.start = parse_fen(AMERICAN6, "B:W8,9:B4,5,1")  # only the man on 5 can move: it must jump
    page.reload()
    assert _board_state(page) == "human"
    assert "You must capture: the piece on 5 can jump" in page.inner_text("#play-status")
    assert page.locator("#play-board g.movable").count() == 1
    page.click("#play-board g[data-square='4']")  # a man that could step if captures were optional
    assert page.inner_text("#play-message") == "You must capture: the piece on 5 can jump"
    page.fill("#move-input", "4-7")
    page.press("#move-input", "Enter")
    assert page.inner_text("#play-message") == "You must capture: the piece on 5 can jump"
    assert _turns(page) == []
    assert not page.is_visible("#play-endgame")  # 4 pieces: outside the endgame database
    # A multi-jump, square by square: mid-way the jumping piece keeps its mark. With 3 pieces the
    # endgame database's line shows under the board (and fits a 390 px phone), not mid-jump.
    session.start = parse_fen(AMERICAN6, "B:W5,11:B1")
    page.reload()
    assert _board_state(page) == "human"
    line = "Endgame database: Black (you) wins in 1 move (best for Black: 1x8x13)"
    assert page.is_visible("#play-endgame") and page.inner_text("#play-endgame") == line
    page.set_viewport_size({"width": 390, "height": 844})
    box = page.locator("#play-endgame").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.set_viewport_size({"width": 1300, "height": 900})
    page.click("#play-board g[data-square='1']")
    page.click("#play-board g[data-square='8']")
    page.wait_for_function("document.querySelector('#play-board g.jumping') !== null")
    jumping = page.locator("#play-board g.jumping")
    assert jumping.get_attribute("data-square") == "8" and jumping.locator("circle.ring").count() == 1
    assert "jumping" in jumping.get_attribute("aria-label")
    assert "go on jumping from 8" in page.inner_text("#play-status") and _turns(page) == ["1x8..."]
    assert not page.is_visible("#play-endgame")
    page.click("#play-board g[data-square='13']")
    assert _board_state(page) == "over" and _turns(page) == ["1x8x13"]


def test_keyboard_moves(page, server):
    _new_game(page, server, "american6", "random")
    _board_state(page)
    focused = "document.activeElement.dataset ? document.activeElement.dataset.square : null"
    page.focus("#play-board g[tabindex='0']")
    start = int(page.evaluate(focused))
    assert page.locator(f"#play-board g[data-square='{start}']").get_attribute("class").split()[1:] == [
        "movable"
    ]
    page.keyboard.press("Enter")  # pick the piece
    assert page.locator(f"#play-board g.selected[data-square='{start}']").count() == 1
    page.keyboard.press("ArrowUp")  # towards the opponent (Black plays from the bottom)
    if "target" not in page.locator(f"#play-board g[data-square='{page.evaluate(focused)}']").get_attribute(
        "class"
    ):
        page.keyboard.press("ArrowRight")
    target = int(page.evaluate(focused))
    page.keyboard.press("Enter")
    assert _board_state(page) == "human"
    assert _turns(page)[0] == f"{start}-{target}"
    label = page.locator(f"#play-board g[data-square='{target}']").get_attribute("aria-label")
    assert label.startswith(f"{target}: black man")  # the piece moved there
    # A typed move: the first legal one, as a person would type it.
    path = page.evaluate("play.game.moves[0]")
    page.fill("#move-input", "-".join(map(str, path)))
    page.press("#move-input", "Enter")
    assert _board_state(page) == "human"
    assert _turns(page)[2] == "-".join(map(str, path)) and len(_turns(page)) == 4


def test_a_390px_phone_screen_shows_the_whole_board(browser, server):
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        phone.goto(f"{server}/#play")
        phone.wait_for_selector("#play-board svg")
        box = phone.locator("#play-board svg").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390 and box["y"] + box["height"] <= 844
        assert box["width"] >= 300  # scaled to the screen, not shrunk to a stamp
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the screen
        squares = phone.locator("#play-board g[data-square]")
        assert squares.count() == 32 and phone.locator("#play-board g[data-square='32']").is_visible()
        # On arrival a click on one of your pieces starts the game against the strongest agent and
        # picks the piece.
        phone.fill("#think", FAST_THINK)
        phone.click("#play-board g[data-square='10']")
        phone.wait_for_selector("#play-board g.selected[data-square='10']")
        assert phone.get_attribute("#play-board", "data-state") == "human" and "game=" in phone.url
        assert phone.locator("#play-board g.target").count() == 2
    finally:
        phone.close()


def test_stepping_through_a_saved_game_and_its_pdn(page, server):
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
    moves = page.locator("#games-moves button.turn").all_inner_texts()
    assert len(moves) == GAME_MOVES
    # Paired like the Play page's list: a numbered row holds a Black move and White's reply.
    assert (GAME_MOVES + 1) // 2 <= page.locator("#games-moves li").count() <= GAME_MOVES // 2 + 1
    assert page.locator("#games-moves li >> nth=0 >> .no").inner_text() == "1."
    page.click("#games-moves button.turn[data-ply='2']")
    assert page.get_attribute("#games-board", "data-ply") == "2"
    for selector in ("#game-list a.pdn >> nth=0", "#games-pdn"):
        [pdn] = _download_pdn(page, selector)
        assert list(pdn.moves) == moves


def test_a_runs_details_beside_the_list_refreshed_live(page, served):
    server, folder, _ = served
    page.goto(f"{server}/#runs")
    page.click("#run-list a >> nth=0")
    median = page.locator("#fitness-chart path.series[data-name='median']")
    median.wait_for()
    # One point per epoch: a move-to and a line-to for each later epoch.
    assert median.get_attribute("d").count("L") == EPOCHS_WRITTEN - 1
    assert "interrupted after 5 of" in page.inner_text("#run-status")
    assert page.locator("#lineage a.play-boss").count() == 1
    listing, detail = page.locator("#run-list").bounding_box(), page.locator("#run-detail").bounding_box()
    assert detail["x"] >= listing["x"] + listing["width"] and detail["y"] < listing["y"] + listing["height"]
    status = page.locator("#run-list td.status >> nth=0")
    assert status.inner_text() == "interrupted (resumable)" and "evolve --resume" in status.get_attribute(
        "title"
    )
    # A new epoch lands in metrics.csv: the epochs column and the curve follow without a reload.
    [run_dir] = (folder / "runs").glob("tiny*")
    metrics = run_dir / "metrics.csv"
    kept = metrics.read_text()
    last = kept.rstrip("\n").split("\n")[-1].split(",")
    try:
        metrics.write_text(kept + ",".join([str(EPOCHS_WRITTEN), *last[1:]]) + "\n")
        epochs = page.locator("#run-list td.epochs >> nth=0")
        page.wait_for_function(
            f"document.querySelector('#run-list td.epochs').textContent.startsWith('{EPOCHS_WRITTEN + 1}/')"
        )
        assert epochs.inner_text().startswith(f"{EPOCHS_WRITTEN + 1}/")
        page.wait_for_function(
            "document.querySelector(\"#fitness-chart path.series[data-name='median']\").getAttribute('d')"
            f".split('L').length === {EPOCHS_WRITTEN + 1}"
        )
    finally:
        metrics.write_text(kept)


def test_the_best_agent_is_the_default_opponent_and_thinks_with_alphabeta(page, server):
    _fresh_play_page(page, server)
    page.select_option("#rules", "simple6")
    best = "results/best_simple6.safetensors"
    assert page.input_value("#opponent") == best and page.input_value("#opponent-choice") == best
    page.select_option("#rules", "american6")
    assert page.input_value("#opponent") == "random"  # no best agent for american6 here: the weakest level
    page.select_option("#rules", "simple6")
    assert page.input_value("#opponent") == best
    page.select_option("#human", "white")
    page.fill("#think", FAST_THINK)
    page.click("#new-game-button")
    assert _board_state(page) == "human"
    assert "alpha-beta to depth" in page.inner_text("#play-eval")
    assert page.get_attribute("#eval-bar", "data-chance") != ""
    number = page.inner_text("#eval-number")  # the bar says its figure: your win chance
    assert number == page.get_attribute("#eval-bar", "data-chance") + "%"
    assert page.inner_text("#play-eval").startswith(f"your win chance: {number} (")
    page.click("#advanced summary")  # Advanced: any player spec
    page.fill("#opponent", "alphabeta:3")  # chosen by the person: the rules no longer change it
    assert page.input_value("#opponent-choice") == ""  # a custom spec
    page.select_option("#rules", "american6")
    assert page.input_value("#opponent") == "alphabeta:3"


LONG_GAME_MOVES = 44
"""Moves of the long game: more than 40, twice the rows a move list shows at once."""
LAST_ROW_SHOWN = """selector => {
  const list = document.querySelector(selector), rows = list.querySelectorAll("li");
  const box = list.getBoundingClientRect(), row = rows[rows.length - 1].getBoundingClientRect();
  const inList = row.top >= box.top - 1 && row.bottom <= box.bottom + 1 && row.left >= box.left - 1
    && row.right <= box.right + 1;
  const onScreen = row.top >= 0 && row.bottom <= window.innerHeight && row.right <= window.innerWidth;
  return {inList, onScreen, oneColumn: list.scrollWidth <= list.clientWidth + 1,
          scrolls: list.scrollHeight > list.clientHeight, text: rows[rows.length - 1].innerText};
}"""


def _last_row(page, selector: str) -> dict:
    page.locator(selector).scroll_into_view_if_needed()  # the page scrolls to the list, not the list
    return page.evaluate(LAST_ROW_SHOWN, selector)


@pytest.mark.parametrize("viewport", [{"width": 1300, "height": 900}, {"width": 390, "height": 844}])
def test_a_long_games_last_move_stays_in_view_on_play_and_games(browser, served, viewport):
    server, folder, app = served
    moves, game = long_game(AMERICAN6, LONG_GAME_MOVES)
    save_games(folder / "games" / "long.json", AMERICAN6, [game])
    session = app.state.sessions.create(
        opponent="random", rules="american6", human="black", think_seconds=0.05
    )
    for move in moves:
        by_human = int(session.state.color) == session.human
        for action in move.actions:
            play_ply(session, action, by_human)
    page = browser.new_page(viewport=viewport)
    try:
        page.goto(f"{server}/#play?game={session.id}")
        assert _board_state(page) == "human" and len(_turns(page)) == LONG_GAME_MOVES
        shown = _last_row(page, "#play-moves")
        assert shown["inList"] and shown["onScreen"] and shown["oneColumn"] and shown["scrolls"], shown
        assert shown["text"].split()[-1] == moves[-1].notation
        page.hover("#play-moves")
        top = page.evaluate("document.getElementById('play-moves').scrollTop")
        page.mouse.wheel(0, -200)  # the wheel scrolls the list back
        page.wait_for_function(f"document.getElementById('play-moves').scrollTop < {top}")
        page.goto(f"{server}/#games?file=games/long.json")
        page.wait_for_selector("#games-board svg")
        page.click("#last")
        assert page.get_attribute("#games-board", "data-ply") == str(LONG_GAME_MOVES)
        shown = _last_row(page, "#games-moves")
        assert shown["inList"] and shown["onScreen"] and shown["oneColumn"] and shown["scrolls"], shown
        assert shown["text"].split()[-1] == moves[-1].notation
    finally:
        page.close()
        (folder / "games" / "long.json").unlink()


def test_a_move_by_drag_and_drop(page, server):
    _new_game(page, server, "american6", "random")
    assert _board_state(page) == "human"
    src, dst = page.evaluate("play.game.steps[0]")

    def centre(square: int) -> tuple[float, float]:
        box = page.locator(f"#play-board g[data-square='{square}'] rect.dark").bounding_box()
        return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    page.mouse.move(*centre(src))
    page.mouse.down()
    page.mouse.move(*centre(dst), steps=8)
    assert page.locator(f"#play-board g.target[data-square='{dst}']").count() == 1  # targets shown
    page.mouse.up()
    assert _board_state(page) == "human"
    assert _turns(page)[0] == f"{src}-{dst}" and page.locator("#play-board g.selected").count() == 0


def test_a_game_from_a_fen_then_a_rematch_with_colours_swapped(page, server):
    _fresh_play_page(page, server)
    page.select_option("#rules", "american6")
    page.select_option("#opponent-choice", "random")
    page.click("#setup summary")
    page.fill("#setup-text", "B:W10,11,12:B1,2,5")
    page.click("#new-game-button")
    assert _board_state(page) == "human"
    assert page.get_attribute("#play-board", "data-fen") == "B:W10,11,12:B1,2,5" and _turns(page) == []
    game_id = page.url.split("game=")[1]
    page.click("#rematch")  # the same start and opponent, you now White: the opponent opens
    page.wait_for_function(f"!location.hash.includes('{game_id}')")
    assert _board_state(page) == "human" and page.input_value("#human") == "white"
    assert page.evaluate("play.game.start_fen") == "B:W10,11,12:B1,2,5" and len(_turns(page)) == 1


def test_a_game_survives_a_restart_of_the_server(page, server, served):
    _new_game(page, server, "american6", "random")
    page.click("#play-board g.movable >> nth=0")
    page.click("#play-board g.target >> nth=0")
    assert _board_state(page) == "human"
    game_id, fen, turns = (
        page.url.split("game=")[1],
        page.get_attribute("#play-board", "data-fen"),
        _turns(page),
    )
    with _serving(create_app(served[1])) as restarted:  # a new server over the same folder
        page.goto(f"{restarted}/#play?game={game_id}")
        assert _board_state(page) == "human"
        assert page.get_attribute("#play-board", "data-fen") == fen and _turns(page) == turns


def test_the_open_run_lives_in_the_address_and_its_name_fits_a_phone(browser, server):
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        phone.goto(f"{server}/#runs")
        phone.click("#run-list a >> nth=0")
        path = phone.get_attribute("#run-list a >> nth=0", "data-path") or phone.inner_text(
            "#run-list a >> nth=0"
        )
        phone.wait_for_function("location.hash.includes('run=')")
        phone.reload()
        phone.wait_for_function(f"document.getElementById('run-title').textContent === {path!r}")
        name = phone.locator("#run-list td >> nth=0").bounding_box()
        assert name["width"] >= 300  # the whole width, not a column broken every few letters
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        phone.close()


def test_a_phone_game_keeps_the_board_and_moves_together_and_ends_with_its_result(browser, server):
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        phone.goto(f"{server}/#play")
        phone.wait_for_selector("#play-board svg")
        assert phone.evaluate("document.getElementById('settings').open")  # no game yet: the settings
        phone.select_option("#rules", "american6")
        phone.select_option("#opponent-choice", "random")
        phone.click("#setup summary")
        phone.fill("#setup-text", "B:W5:B1")  # Black (you) takes White's last man: 1x8
        phone.click("#new-game-button")
        assert _board_state(phone) == "human"
        assert not phone.evaluate("document.getElementById('settings').open")  # collapsed during a game
        moves, settings = (phone.locator(s).bounding_box() for s in ("#play-moves", "#settings"))
        assert moves["y"] < settings["y"]  # the moves under the board, the settings last
        assert phone.locator("#game-over").is_hidden()
        phone.click("#play-board g[data-square='1']")
        phone.click("#play-board g[data-square='8']")
        phone.wait_for_selector("#game-over:not([hidden])")
        text = phone.inner_text("#game-over")
        assert text.startswith("You won. 1-0: Black wins: White has no pieces left")
        assert "Rematch" in text and "New game" in text
        phone.click("#over-new")
        assert phone.evaluate("document.getElementById('settings').open")
        phone.click("#over-rematch")  # the same start, colours swapped: the opponent's only move wins
        phone.wait_for_function("document.getElementById('game-over-result').textContent === 'You lost.'")
        assert phone.input_value("#human") == "white" and _board_state(phone) == "over"
    finally:
        phone.close()


def test_the_games_page_fits_a_phone(browser, served):
    server, folder, _ = served
    long_name = "compiled:equal:results/a_long_folder_name/best_simple6_trained_for_an_hour.safetensors"
    sample = (folder / "games" / "sample.json").read_text()
    (folder / "games" / "long_names.json").write_text(
        sample.replace('"mcts:agent.safetensors:2"', f'"{long_name}"')
    )
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        phone.goto(f"{server}/#games?file=games/long_names.json")
        phone.wait_for_selector("#games-board svg")
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the screen
        box = phone.locator("#games-board svg").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    finally:
        phone.close()
