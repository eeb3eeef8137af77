"""The agent files of the served folder and the players the Play page offers: the best agent of each
rules preset, the opponents that fit a preset, and where a player spec's agent file is found (which
argument names it: ``players.registry.spec_agent_file``)."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from pathlib import Path

from safetensors import SafetensorError, safe_open

from neurocheckers.players.registry import player_kinds
from neurocheckers.rules.presets import PRESETS
from neurocheckers.web.folder import NotFound, inside, listed, walk_served

BEST_AGENT = "best_{rules}.safetensors"
"""The name of a rules preset's best agent file (``results/``), which the Play page offers first."""


def find_agent_file(root: str | Path, name: str) -> Path:
    """The agent file ``name`` of a player spec: relative to the served folder, else to the current
    folder (how ``match --save-games`` names them); refused outside the served folder."""
    candidates = [Path(name)] if Path(name).is_absolute() else [Path(root) / name, Path(name)]
    for candidate in candidates:
        if candidate.is_file():
            return inside(root, os.path.relpath(candidate.resolve(), Path(root).resolve()))
    raise NotFound(f"no agent file {name!r} in the served folder")


def best_agents(root: str | Path, agents: list[str] | None = None) -> dict[str, str]:
    """Each rules preset's best agent file in the served folder (by name: ``BEST_AGENT``), as the
    page names it: ``results/best_<rules>.safetensors`` first, then ``best_<rules>.safetensors`` at
    the top (a served ``results/``), then the shallowest of that name among ``agents``."""
    found = {}
    for rules in PRESETS:
        name = BEST_AGENT.format(rules=rules)
        places = [f"results/{name}", name]
        places += sorted((a for a in agents or [] if Path(a).name == name), key=lambda a: (a.count("/"), a))
        for place in places:
            try:
                if inside(root, place).is_file():
                    found[rules] = place
                    break
            except ValueError:  # not there, or a link that leads outside the folder
                continue
    return found


PREFERRED_RULES = "american8"
"""The rules the Play page opens on when the folder has their best agent (standard checkers)."""


def default_rules(best: dict[str, str]) -> str:
    """The rules the Play page opens on: ``PREFERRED_RULES`` when the folder has their best agent,
    else the first preset with a best agent, else the first preset."""
    if PREFERRED_RULES in best:
        return PREFERRED_RULES
    return next((rules for rules in PRESETS if rules in best), next(iter(PRESETS)))


def opponent_suggestions(rules: str, agents: list[str], best: dict[str, str]) -> list[str]:
    """The opponents the Play page offers for ``rules``, in order: the rules' best agent (``best``)
    first, then every other agent file (each alone, the timed search for the think time, then as
    ``mcts:FILE:16`` and ``alphabeta:2:FILE``), then players without a file (on ``american8`` the
    hand-written evaluation too), then the registered engines' menu entries (``PlayerKind.offered``:
    py-draughts' engine when it is installed)."""
    first = [best[rules]] if rules in best else []
    files = first + [a for a in agents if a not in first]
    specs = [s for f in files for s in (f, f"mcts:{f}:16", f"alphabeta:2:{f}")]
    specs += ["random", "alphabeta:2", "alphabeta:4", "timed:1s:material", "greedy-material"]
    if rules == "american8":
        specs += ["alphabeta:4:heuristic", "timed:1s:heuristic"]
    return specs + [spec for kind in player_kinds() for spec, _ in kind.offered(rules)]


LEVELS = (
    ("random", "Level 1: random moves"),
    ("greedy-material", "Level 2: greedy, grabs material"),
    ("alphabeta:2", "Level 3: alpha-beta to depth 2, counting material"),
    ("alphabeta:4", "Level 4: alpha-beta to depth 4, counting material"),
)
"""Named strength levels without an agent file, weakest first (every rules preset)."""
AMERICAN8_LEVELS = (
    ("alphabeta:4:heuristic", "Level 5: alpha-beta to depth 4, hand-written evaluation"),
    ("timed:equal:heuristic", "Level 6: hand-written evaluation for the think time"),
)
"""Further levels on ``american8``, where the hand-written evaluation applies."""


def _choice(spec: str, label: str, group: str) -> dict[str, str]:
    return {"spec": spec, "label": label, "group": group}


def opponent_choices(
    rules: str, agent_rules: dict[str, str], best: dict[str, str], engines: Iterable[str] = ()
) -> list[dict[str, str]]:
    """The Play page's opponent list for ``rules``, strongest first: the rules' best agent (alone:
    the timed search for the think time), the named levels (the best agent at a fixed depth on top),
    every other agent file of these rules (``agent_rules``: file -> its rules), then the registered
    engines' menu entries for these rules (``PlayerKind.offered``: py-draughts' engine on ``american8``
    when installed) and the external engines the server was started with (``engines``: their names),
    each for the think time. Each is ``{spec, label, group}``."""
    choices = []
    top = best.get(rules)
    if top is not None:
        choices.append(_choice(top, f"Strongest: {top} (alpha-beta for the think time)", "Strongest"))
    levels = [*LEVELS, *(AMERICAN8_LEVELS if rules == "american8" else ())]
    if top is not None:
        levels += [(f"alphabeta:2:{top}", f"Level {len(levels) + 1}: the best agent to depth 2")]
    choices += [_choice(spec, label, "Levels") for spec, label in levels]
    others = [a for a, r in agent_rules.items() if r == rules and a != top]
    choices += [_choice(a, f"{a} (alpha-beta for the think time)", "Agents in this folder") for a in others]
    choices += [
        _choice(spec, label, "Engines") for kind in player_kinds() for spec, label in kind.offered(rules)
    ]
    choices += [_choice(f"engine:{name}:equal", f"{name} for the think time", "Engines") for name in engines]
    return choices


@functools.cache
def _header_rules(path: str, modified_ns: int) -> str | None:
    """The ``rules`` metadata of an agent file's header (its tensors are not read)."""
    try:
        with safe_open(path, framework="numpy") as f:
            return (f.metadata() or {}).get("rules")
    except (SafetensorError, OSError):
        return None


def agent_rules(root: str | Path, agents: list[str]) -> dict[str, str]:
    """The rules preset each of ``agents`` (files of the served folder) was written for, from the
    file's header; files that cannot be read or name no known preset are left out."""
    found = {}
    for name in agents:
        path = Path(root) / name
        try:
            rules = _header_rules(str(path.resolve()), path.stat().st_mtime_ns)
        except OSError:
            continue
        if rules in PRESETS:
            found[name] = rules
    return found


def agent_files(root: str | Path, limit: int = 200) -> list[str]:
    """Agent files under ``root`` outside lineage folders (bosses are listed with their run)."""
    found = []
    for folder, _, files in walk_served(root):
        found += listed(root, [folder / f for f in files if f.endswith(".safetensors")])
        found = [f for f in found if not f.endswith("checkpoint.safetensors")]
        if len(found) >= limit:
            break
    return found[:limit]
