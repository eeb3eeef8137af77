"""Screenshots of the web app's three pages into docs/: ``neurocheckers serve results/`` driven by
Chromium (the system's, through Playwright), as a person would use it.

    python scripts/web_screenshots.py   # docs/web_play.png, web_play_phone.png, web_games.png, web_runs.png

Plays a few moves against the committed best 8x8 agent (the Play page's default opponent: its timed
alpha-beta search, 0.3 s a move), shows that game on a phone-sized screen, opens the committed
saved games and the pilot strength run.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_up(url: str, server: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"serve ended with status {server.returncode}")
        try:
            urllib.request.urlopen(url + "/api/info", timeout=2)
            return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"serve did not answer at {url} within {seconds} s")


def _play_page(page, url: str, out: Path) -> str:
    """Four moves against the best 8x8 agent (the page's default opponent), a piece picked; returns
    the game's address."""
    page.goto(f"{url}/#play")
    page.wait_for_selector("#play-board svg")
    page.fill("#think", "0.3")
    page.click("#new-game-button")
    ready = "['human', 'over'].includes(document.getElementById('play-board').dataset.state)"
    for _ in range(4):  # four moves of the person, each answered by the agent
        page.wait_for_function(ready, timeout=300_000)
        page.locator("#play-board g.movable").last.click()
        page.locator("#play-board g.target").first.click()
    page.wait_for_function(ready, timeout=60_000)
    page.locator("#play-board g.movable").last.click()  # show a piece's legal moves
    page.screenshot(path=out / "web_play.png")
    return page.url


def _phone_page(browser, game_url: str, out: Path) -> None:
    """The same game on a 390 px phone screen (the address keeps the game)."""
    phone = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=1)
    phone.goto(game_url)
    phone.wait_for_function("document.getElementById('play-board').dataset.state === 'human'")
    phone.screenshot(path=out / "web_play_phone.png")
    phone.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default="results", help="The folder to serve (default: results).")
    parser.add_argument("--out", default=str(REPO / "docs"), help="Where to write the PNGs.")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "neurocheckers", "serve", args.folder, "--port", str(port)]
    server = subprocess.Popen(command, cwd=REPO)
    try:
        _wait_until_up(url, server)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            game_url = _play_page(page, url, out)
            _phone_page(browser, game_url, out)
            page.goto(f"{url}/#games?file=games/final_boss_vs_alphabeta3.json")
            page.wait_for_selector("#games-board svg")
            for _ in range(12):
                page.keyboard.press("ArrowRight")
            page.screenshot(path=out / "web_games.png")
            page.goto(f"{url}/#runs?run=strength/pilot_combined")
            page.wait_for_selector("#strength-chart path.series")
            page.screenshot(path=out / "web_runs.png", full_page=True)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    print("wrote " + ", ".join(str(out / f"web_{p}.png") for p in ("play", "play_phone", "games", "runs")))


if __name__ == "__main__":
    main()
