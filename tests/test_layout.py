"""The package's shape (issue 55): no import circle between its modules (lazy and type-checking
imports included), no module over 500 lines and no function over 80."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

PACKAGE = Path(__file__).resolve().parents[1] / "neurocheckers"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def import_circles(graph) -> list[list[str]]:
    """The strongly connected groups of more than one module in ``graph`` (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    circles.append(sorted(group))
    return circles


def test_no_import_circle():
    graph = grimp.build_graph("neurocheckers", exclude_type_checking_imports=False)
    assert import_circles(graph) == []


def test_the_circle_finder_finds_a_circle():
    class Graph:
        modules = {"a", "b", "c", "d"}

        @staticmethod
        def find_modules_directly_imported_by(module):
            return {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}[module]

    assert import_circles(Graph()) == [["a", "b", "c"]]


def test_modules_and_functions_stay_short():
    long_modules, long_functions = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(PACKAGE.parent)
        if len(text.splitlines()) > MAX_MODULE_LINES:
            long_modules.append(f"{name} ({len(text.splitlines())} lines)")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long_functions.append(f"{name}:{node.lineno} {node.name} ({length} lines)")
    assert long_modules == []
    assert long_functions == []


MAX_ROOT_MODULES = 8
"""Loose modules at the package root (``__init__`` and ``__main__`` aside): the rest live in rooms."""


def test_few_loose_modules_at_the_root():
    loose = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__"))
    assert len(loose) <= MAX_ROOT_MODULES, loose


def player_classes() -> set[str]:
    """The names of the classes of every registered player kind: the protocol's ``HostPlayer``
    subclasses and our batched ``Player``, found by importing each kind's parse function's module."""
    import importlib
    import inspect

    from neurocheckers.players.policies import Player
    from neurocheckers.players.protocol import HostPlayer
    from neurocheckers.players.registry import player_kinds

    found = {"Player", "HostPlayer"}
    for kind in player_kinds():
        module = importlib.import_module(kind.parser.partition(":")[0])
        for name, value in vars(module).items():
            if inspect.isclass(value) and (issubclass(value, HostPlayer) or value is Player):
                found.add(name)
    return found


def test_callers_ask_the_player_protocol_not_the_class():
    classes = player_classes()
    assert {"TimedPlayer", "CompiledPlayer", "ExternalEnginePlayer", "EngineBot", "PyDraughtsBot"} <= classes
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if PACKAGE / "players" in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
                names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                names |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
                found |= {(str(path.relative_to(PACKAGE)), name) for name in names & classes}
    assert found == set()


DECLARED_OPTIONS = {
    "match": (
        "neurocheckers.match.options:MatchOptions",
        {"games", "seed", "batch", "max_plies", "opening_plies"},
    ),
    "gauntlet": (
        "neurocheckers.analysis.gauntlet_config:GauntletConfig",
        {"openings", "depth", "equal_depths", "seed", "batch", "ladder", "heuristic_depths",
         "equal_time", "engine_openings", "only", "kinds", "first_opening", "endgame",
         "perfect_play"},
    ),
}  # fmt: skip
"""The options of ``match`` and ``gauntlet`` that their settings dataclass declares, by field (``match
--openings`` counts committed openings: ``MatchOptions.openings`` holds their states)."""


def test_match_and_gauntlet_options_are_declared_once_by_their_fields():
    """Each such option's help is its field's docstring and its default the field's: the command copies
    neither (``cli.common.field_option``)."""
    import dataclasses
    import importlib

    import typer

    from neurocheckers.cli import app
    from neurocheckers.sections import field_docs

    commands = typer.main.get_command(app).commands
    for command, (reference, names) in DECLARED_OPTIONS.items():
        module, _, name = reference.partition(":")
        settings = getattr(importlib.import_module(module), name)
        fields = {f.name: f for f in dataclasses.fields(settings)}
        docs = field_docs(settings)
        params = {p.name: p for p in commands[command].params if p.name in fields}
        if command == "match":
            params.pop("openings")
        assert set(params) == names, command
        for key, param in params.items():
            assert param.help == docs[key].replace("``", ""), (command, key)
            default = fields[key].default
            assert param.default == (",".join(map(str, default)) if isinstance(default, tuple) else default)
