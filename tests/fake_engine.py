"""A tiny host engine for the plug-in test (``tests/test_player_kinds.py``): ``fake:N`` plays the
N-th legal action (mod their count) of each position, reporting a search of depth N. Registered
with one line, ``FAKE_KIND``, as a new engine would be."""

from __future__ import annotations

import dataclasses

import numpy as np

from neurocheckers.players.protocol import HostPlayer
from neurocheckers.players.registry import PlayerKind, SearchReport


@dataclasses.dataclass(frozen=True)
class FakeEngine(HostPlayer):
    name: str
    index: int
    warmed: list = dataclasses.field(default_factory=list)

    def new_game(self, seed: int) -> FakeGame:
        return FakeGame(self.index)

    def warm_up(self, rules) -> None:
        self.warmed.append(True)


class FakeGame:
    def __init__(self, index: int) -> None:
        self.index = index
        self.infos: list[SearchReport] = []

    def __call__(self, state, seconds: float | None = None) -> int:
        legal = np.flatnonzero(np.asarray(state.legal_action_mask))
        action = int(legal[self.index % len(legal)])
        self.infos.append(SearchReport((action,), 0.0, self.index, 1, 0.0))
        return action


def parse_fake(spec: str, rules) -> FakeEngine:
    _, _, text = spec.partition(":")
    if not text.isdigit() or not 1 <= int(text) <= 9:
        raise ValueError(f"bad player spec {spec!r}: N must be in 1..9, got {text!r}")
    return FakeEngine(spec, int(text))


FAKE_KIND = PlayerKind(
    "fake",
    "fake:N",
    "the N-th legal move (a test engine)",
    "fake_engine:parse_fake",
    host=True,
    menu=(("fake:1", "the fake engine, first legal move"),),
)
