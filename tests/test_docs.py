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
