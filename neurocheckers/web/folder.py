"""Reading the served folder: run folders and their curves, game files, agent files.

Everything here only reads. Every path a request names is relative to the served folder and is
refused (``PathRefused``) when it leads outside it, symbolic links included; ``NotFound`` when
there is nothing there. Agent files named in player specs are found the same way.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import math
import os
from pathlib import Path
from typing import Any

import jax
import numpy as np
from safetensors import SafetensorError, safe_open

from neurocheckers.agent_file import load_agent
from neurocheckers.analysis.games import FORMAT as GAMES_FORMAT
from neurocheckers.analysis.games import GameFile, replay_game
from neurocheckers.analysis.lineage import lineage
from neurocheckers.analysis.pdn_games import load_game_file, pdn_of_game
from neurocheckers.evaluator import value_fn
from neurocheckers.experiment.folder import (
    CHECKPOINT,
    FAILURE_FILE,
    config_summary,
    failure,
    read_run_config,
    run_is_locked,
    training_seconds,
)
from neurocheckers.experiment.folder import run_status as folder_run_status
from neurocheckers.formats import (
    CONFIG_FILE,
    FITNESS_COLUMNS,
    LINEAGE_DIR,
    METRICS_FILE,
    STRENGTH_COLUMNS,
    read_metrics,
)
from neurocheckers.rules.pdn import write_pdn
from neurocheckers.rules.presets import PRESETS, Rules
from neurocheckers.rules.state import BLACK
from neurocheckers.web.board import position_json

CURVE_COLUMNS = (
    *FITNESS_COLUMNS,
    *(c for c in STRENGTH_COLUMNS if c != "strength_seconds"),
    "boss_changed",
)
"""The ``metrics.csv`` columns the Runs page draws (fitness and strength curves, boss changes)."""
GAME_SUFFIXES = (".json", ".pdn")
"""Files the Games page offers (a .json file only when it is a game file)."""
SKIPPED_FOLDERS = (LINEAGE_DIR, "__pycache__", "node_modules")
"""Folders never searched for runs or game files (hidden ones neither)."""
BEST_AGENT = "best_{rules}.safetensors"
"""The name of a rules preset's best agent file (``results/``), which the Play page offers first."""
AGENT_FILE_ARGUMENT = {("greedy", 1): 0, ("alphabeta", 2): 1, ("mcts", 2): 0, ("timed", 2): 1}
"""Where a player spec names its agent file: (kind, argument count) -> argument index."""

LOG = logging.getLogger("neurocheckers.web")
"""Where the server logs what it leaves out and its own failures."""


class PathRefused(ValueError):
    """A path that leads outside the served folder."""


class NotFound(ValueError):
    """A path inside the served folder with nothing (of the asked kind) there."""


class BadFile(ValueError):
    """A file of the served folder that cannot be used (a damaged run folder or game file)."""


def reads_files(function):
    """``function`` with the problems of the files it reads told apart from the server's own: a file
    that cannot be read is ``NotFound``, one whose content is refused (``ValueError``) ``BadFile``."""

    @functools.wraps(function)
    def reading(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except (PathRefused, NotFound, BadFile):
            raise
        except OSError as error:
            raise NotFound(f"cannot read it: {error.strerror or error}") from None
        except (ValueError, KeyError) as error:
            raise BadFile(str(error.args[0]) if error.args else type(error).__name__) from None

    return reading


def inside(root: str | Path, relative: str) -> Path:
    """``root / relative`` resolved (links followed); ``PathRefused`` when that is outside ``root``,
    ``NotFound`` when it does not exist."""
    base = Path(root).resolve()
    target = (base / relative).resolve()
    if target != base and base not in target.parents:
        raise PathRefused(f"{relative!r} is outside the served folder")
    if not target.exists():
        raise NotFound(f"nothing at {relative!r} in the served folder")
    return target


def relative_name(root: str | Path, path: Path) -> str:
    """``path`` relative to ``root``, with forward slashes (how the page names it)."""
    return path.resolve().relative_to(Path(root).resolve()).as_posix()


def listed(root: str | Path, paths) -> list[str]:
    """The names (``relative_name``) of ``paths`` that stay inside ``root``; an entry that leads
    outside it (a link) is left out of the listing and logged, and the listing goes on."""
    names = []
    for path in paths:
        try:
            names.append(relative_name(root, path))
        except ValueError:
            LOG.warning("not listed: %s leads outside the served folder", Path(path).name)
    return names


def relative_message(root: str | Path, text: str) -> str:
    """``text`` with the served folder's absolute path taken out (messages name files relative to
    it, never where it is on the server)."""
    for base in {str(Path(root).resolve()), str(Path(root).absolute())}:
        text = text.replace(base + os.sep, "").replace(base, ".")
    return text


def _walk(root: str | Path):
    """``os.walk`` of ``root`` (links not followed) without hidden or skipped folders."""
    for folder, subfolders, files in os.walk(Path(root).resolve()):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        yield Path(folder), subfolders, sorted(files)


# --- player specs and agent files ----------------------------------------------------------------


def spec_agent_file(spec: str) -> str | None:
    """The agent file a player spec names (``mcts:FILE:SIMS``, ``alphabeta:D:FILE``,
    ``greedy:FILE``), or None."""
    kind, _, rest = spec.strip().partition(":")
    args = rest.split(":") if rest else []
    index = AGENT_FILE_ARGUMENT.get((kind, len(args)))
    # alphabeta:D:heuristic and timed:BUDGET:material name a built-in evaluation, not a file.
    return None if index is None or args[index] in ("heuristic", "material") else args[index]


def with_agent_file(spec: str, path: str | Path) -> str:
    """``spec`` with its agent file replaced by ``path``."""
    kind, _, rest = spec.strip().partition(":")
    args = rest.split(":")
    args[AGENT_FILE_ARGUMENT[(kind, len(args))]] = str(path)
    return ":".join([kind, *args])


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
    hand-written evaluation too, and py-draughts' engine when it is installed)."""
    first = [best[rules]] if rules in best else []
    files = first + [a for a in agents if a not in first]
    specs = [s for f in files for s in (f, f"mcts:{f}:16", f"alphabeta:2:{f}")]
    specs += ["random", "alphabeta:2", "alphabeta:4", "timed:1s:material", "greedy-material"]
    if rules == "american8":
        specs += ["alphabeta:4:heuristic", "timed:1s:heuristic"]
        specs += ["pydraughts:6"] if importlib.util.find_spec("draughts") is not None else []
    return specs


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
PYDRAUGHTS_DEPTHS = (2, 4, 6, 8)
"""py-draughts' search depths offered on ``american8`` when it is installed."""


def _choice(spec: str, label: str, group: str) -> dict[str, str]:
    return {"spec": spec, "label": label, "group": group}


def opponent_choices(rules: str, agent_rules: dict[str, str], best: dict[str, str]) -> list[dict[str, str]]:
    """The Play page's opponent list for ``rules``, strongest first: the rules' best agent (alone:
    the timed search for the think time), the named levels (the best agent at a fixed depth on top),
    every other agent file of these rules (``agent_rules``: file -> its rules), then py-draughts'
    engine (``american8``, when installed). Each is ``{spec, label, group}``."""
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
    if rules == "american8" and importlib.util.find_spec("draughts") is not None:
        choices += [
            _choice(f"pydraughts:{d}", f"py-draughts to depth {d}", "Engines") for d in PYDRAUGHTS_DEPTHS
        ]
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
    for folder, _, files in _walk(root):
        found += listed(root, [folder / f for f in files if f.endswith(".safetensors")])
        found = [f for f in found if not f.endswith("checkpoint.safetensors")]
        if len(found) >= limit:
            break
    return found[:limit]


# --- runs ----------------------------------------------------------------------------------------


def is_run_folder(path: Path) -> bool:
    return (path / CONFIG_FILE).is_file() and (path / METRICS_FILE).is_file()


def find_runs(root: str | Path) -> list[Path]:
    """Every run folder under ``root`` (itself included), in path order."""
    runs = []
    for folder, subfolders, _ in _walk(root):
        if is_run_folder(folder):
            runs.append(folder)
            subfolders[:] = []  # a run folder holds no other runs
    return runs


def run_status(run_dir: Path, epochs: int, epochs_done: int) -> str:
    """``experiment.folder.run_status``: running, finished, budget reached or interrupted (resumable);
    a committed run kept without its checkpoint is finished when its metrics hold every epoch."""
    status = folder_run_status(run_dir, epochs)
    if status in ("interrupted (resumable)", "not started") and epochs_done >= epochs:
        return "finished"
    return status


def stop_reason(run_dir: Path, status: str, epochs: int, epochs_done: int, budget_minutes: float) -> str:
    """Where the run stands, or why it stopped, in one line (``status`` from ``run_status``)."""
    done = f"{epochs_done} of {epochs} epochs"
    if status == "running":
        return f"running: {done} so far"
    if status == "finished":
        return f"finished: {done}"
    if status == "budget reached":
        spent = training_seconds(run_dir) / 60
        return f"budget reached: {spent:.1f} of {budget_minutes:g} training minutes spent after {done}"
    if status == "interrupted (resumable)":
        return f"interrupted after {done}: evolve --resume goes on"
    if status == "failed":
        return f"failed after {done}: {failure(run_dir)} (evolve --resume retries)"
    return f"{status}: {done}"


@reads_files
def run_summary(root: str | Path, run_dir: Path) -> dict[str, Any]:
    """One run folder for the Runs page's list: name, summary line, status and why it stopped,
    epochs."""
    config, simulations = read_run_config(run_dir)
    epochs_done = len(read_metrics(run_dir))
    status = run_status(run_dir, config.epochs, epochs_done)
    return {
        "path": relative_name(root, run_dir),
        "name": config.name,
        "rules": config.rules,
        "summary": config_summary(config, simulations),
        "status": status,
        "stop_reason": stop_reason(run_dir, status, config.epochs, epochs_done, config.budget_minutes),
        "epochs_done": epochs_done,
        "epochs": config.epochs,
    }


SUMMARY_FILES = (CONFIG_FILE, METRICS_FILE, CHECKPOINT, FAILURE_FILE)
"""The files a run's summary is read from: it is read again when one of them changes."""
_SUMMARIES: dict[Path, tuple[tuple, dict[str, Any]]] = {}
"""Run folder -> (its files' signature, its summary): the Runs page re-reads its list every few
seconds, and reading a config (validating it) is slow."""


def _signature(run_dir: Path) -> tuple:
    """What a run's summary depends on: its files' sizes and times, and whether it runs now."""
    stats = []
    for name in SUMMARY_FILES:
        try:
            stat = (run_dir / name).stat()
            stats.append((stat.st_mtime_ns, stat.st_size))
        except OSError:
            stats.append(None)
    return (*stats, run_is_locked(run_dir))


def cached_summary(root: str | Path, run_dir: Path) -> dict[str, Any]:
    """``run_summary``, read again only when the run's files or lock changed."""
    signature = _signature(run_dir)
    kept = _SUMMARIES.get(run_dir)
    if kept is None or kept[0] != signature:
        kept = (signature, run_summary(root, run_dir))
        _SUMMARIES[run_dir] = kept
    return dict(kept[1])


FAILED = "failed"
"""The status of a run folder that cannot be read (a damaged config.json or metrics.csv)."""


def run_row(root: str | Path, run_dir: Path) -> dict[str, Any]:
    """``run_summary``, or for a run folder that cannot be read a ``failed`` row saying why (the
    listing goes on with the other runs)."""
    try:
        return cached_summary(root, run_dir)
    except (BadFile, NotFound) as error:
        reason = relative_message(root, str(error))
        path = relative_name(root, run_dir)
        return {"path": path, "name": run_dir.name, "rules": None, "summary": "", "status": FAILED,
                "stop_reason": f"failed: the run folder cannot be read: {reason}", "epochs_done": None,
                "epochs": None}  # fmt: skip


@reads_files
def run_detail(root: str | Path, run_dir: Path) -> dict[str, Any]:
    """A run's summary, its whole config and its boss lineage (with whether each file is there)."""
    config, simulations = read_run_config(run_dir)
    try:
        bosses = lineage(run_dir)
    except ValueError:  # no lineage.csv
        bosses = []
    entries = [
        {
            "boss_id": b.boss_id,
            "epoch": b.epoch,
            "points": None if math.isnan(b.points) else b.points,
            "file": relative_name(root, b.path) if b.path.is_file() else None,
            "simulations": simulations,
        }
        for b in bosses
    ]
    detail = cached_summary(root, run_dir)
    detail.update(config=config.to_dict(), simulations_used=simulations, lineage=entries)
    return detail


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text not in (None, "") else None
    except ValueError:
        return None
    return None if value is None or not math.isfinite(value) else value


@reads_files
def run_curves(run_dir: Path) -> dict[str, Any]:
    """The run's finished epochs and its ``CURVE_COLUMNS`` (None where a row has no value)."""
    rows = read_metrics(run_dir)
    curves = {c: [_number(r.get(c)) for r in rows] for c in CURVE_COLUMNS}
    return {"epoch": [int(r["epoch"]) for r in rows], "columns": curves}


# --- game files ----------------------------------------------------------------------------------


def _is_game_file(path: Path) -> bool:
    if path.suffix == ".json":
        with open(path, "rb") as f:
            return GAMES_FORMAT.encode() in f.read(512)
    return path.suffix in GAME_SUFFIXES


def game_files(root: str | Path) -> list[str]:
    """The game files under ``root`` (``match --save-games``, ``play --save``, PDN)."""
    return listed(
        root,
        [
            folder / f
            for folder, _, files in _walk(root)
            for f in files
            if Path(f).suffix in GAME_SUFFIXES and inside_root(root, folder / f) and _is_game_file(folder / f)
        ],
    )


def inside_root(root: str | Path, path: Path) -> bool:
    """Whether ``path``, links followed, is inside ``root`` (nothing outside is ever opened)."""
    base = Path(root).resolve()
    return base in path.resolve().parents


@reads_files
def open_games(path: Path) -> GameFile:
    """The games of a game file: the one place the web app reads game files."""
    return load_game_file(path)


@functools.cache
def _values_of_positions(spec):
    return jax.jit(jax.vmap(value_fn(spec), in_axes=(None, 0, None)))


def _black_chances(rules: Rules, agent_path: Path, states: list) -> list[float]:
    """The agent's chance that Black wins, position by position (the result once a game is over)."""
    agent = load_agent(agent_path, rules)
    stacked = jax.tree.map(lambda *xs: np.stack(xs), *states)
    values = np.asarray(_values_of_positions(agent.spec)(agent.params, stacked, jax.random.key(0)))
    chances = []
    for state, v in zip(states, values, strict=True):
        if bool(state.terminated):
            chances.append(0.5 + 0.5 * int(state.result))
        else:
            chances.append(float(v) if int(state.color) == BLACK else 1.0 - float(v))
    return chances


@reads_files
def game_view(root: str | Path, rules: Rules, game: dict[str, Any]) -> dict[str, Any]:
    """One saved game for the Games page: its positions move by move, the moves, and the agent's
    evaluation of each position when a player spec names an agent file found in the served folder."""
    states, moves = replay_game(rules, game)
    evaluation, note = None, "no player names an agent file: material only"
    for name in (game.get("black", ""), game.get("white", "")):
        file = spec_agent_file(str(name))
        if file is None:
            continue
        try:
            path = find_agent_file(root, file)
            evaluation = {
                "agent": relative_name(root, path),
                "black_chance": _black_chances(rules, path, states),
            }
            break
        except ValueError as error:  # not in the folder, or not an agent of these rules
            note = f"no evaluation: {error}"
    return {
        "black": game.get("black"),
        "white": game.get("white"),
        "result": game.get("result"),
        "moves": [m.notation for m in moves],
        "positions": [position_json(rules, s) for s in states],
        "evaluation": evaluation,
        "note": None if evaluation else note,
    }


@reads_files
def game_pdn(rules: Rules, game: dict[str, Any]) -> str:
    """One game of a game file as PDN text (``analysis.pdn_games.pdn_of_game``)."""
    return write_pdn([pdn_of_game(rules, game)])
