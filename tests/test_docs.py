"""The README and docs/ hold no dead links to files of the repository, and the README stays a short
front door."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = sorted((REPO / "docs").glob("*.md"))
PAGES = [REPO / "README.md", *DOCS, *sorted((REPO / "results").rglob("README.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page):
    dead = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a web address, or an anchor in the page
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if not path.exists():
            dead.append(target)
    assert not dead, f"{page.relative_to(REPO)} links to missing files: {dead}"


def test_the_readme_is_short_and_maps_the_docs():
    text = (REPO / "README.md").read_text()
    assert len(text) <= 12_000
    for page in DOCS:
        assert f"docs/{page.name}" in text, f"the README does not link docs/{page.name}"


def test_committed_results_name_no_absolute_paths():
    """Results name files relative to the checkout (or runs/), never where a machine kept them."""
    absolute = re.compile(r"(?<![\w.])/(?:work|tmp|root|home|Users)/")
    found = [
        str(path.relative_to(REPO))
        for path in (REPO / "results").rglob("*")
        if path.suffix in (".csv", ".json", ".md", ".txt", ".log")
        and absolute.search(path.read_text(errors="replace"))
    ]
    assert not found, found


def readme_command(number: int) -> str:
    """The command under the README's ``# N. `` line (what ``.ci/run`` reads for N = 2)."""
    lines = (REPO / "README.md").read_text().splitlines()
    marks = [i for i, line in enumerate(lines) if line.startswith(f"# {number}. ")]
    assert marks, f"the README has no '# {number}. ' command"
    return lines[marks[0] + 1]


def test_the_readme_test_command_installs_what_the_tests_need_and_ci_runs_only_it():
    command = readme_command(2)
    assert "apt-get install -y chromium" in command, "the browser tests need the system's Chromium"
    assert 'pip install -e ".[test,ray]"' in command and command.endswith("pytest -q")
    ci = (REPO / ".ci" / "run").read_text()
    assert "awk '/^# 2\\. /{getline; print; exit}' README.md" in ci
    code = [line.split("#", 1)[0] for line in ci.splitlines()]
    for installer in ("apt-get", "pip install", "playwright install"):
        assert not any(installer in line for line in code), f".ci/run runs {installer!r} itself"
