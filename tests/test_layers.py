"""The package's import rule that import-linter cannot state: no module imports another module's
private names (``_x``) or a private module, of this package or of a library (e.g. ``jax._src``).
The layer order itself is import-linter's contract in pyproject.toml (``lint-imports`` in .ci/run).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "neurocheckers"
DOCUMENTED = {"os._exit"}
"""Underscored names that are documented public API (``os._exit`` ends a process at once)."""


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def private_imports(source: str, module: str) -> list[str]:
    """``line: what`` for every import in ``source`` (the text of ``module``) of a private module or
    of another module's private name, and every use of a private attribute of an imported name."""
    tree = ast.parse(source)
    found = []
    imported: set[str] = set()  # names bound by imports, e.g. `evaluator` in `from p import evaluator`
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if any(_private(part) for part in alias.name.split(".")):
                    found.append(f"{node.lineno}: import {alias.name}")
                imported.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
            if any(_private(part) for part in node.module.split(".")):
                found.append(f"{node.lineno}: from {node.module} import ...")
            for alias in node.names:
                if _private(alias.name) and node.module != module:
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
                imported.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            continue
        used = f"{node.value.id}.{node.attr}"
        if node.value.id in imported and _private(node.attr) and used not in DOCUMENTED:
            found.append(f"{node.lineno}: {used}")
    return sorted(found, key=lambda hit: int(hit.split(":")[0]))


def test_the_check_finds_each_kind_of_private_import():
    source = (
        "from __future__ import annotations\n"
        "import jax._src.xla_bridge\n"
        "from neurocheckers.networks.evaluator import _mlp, value\n"
        "from neurocheckers import evaluator\n"
        "evaluator._unravel(value)\n"
        "evaluator.__name__\n"
        "from neurocheckers._setup import configure_jax\n"
        "from neurocheckers.sample import _own_helper\n"
    )
    assert private_imports(source, "neurocheckers.sample") == [
        "2: import jax._src.xla_bridge",
        "3: from neurocheckers.networks.evaluator import _mlp",
        "5: evaluator._unravel",
        "7: from neurocheckers._setup import ...",
    ]


def test_no_module_imports_private_names_of_another():
    found = {
        str(path.relative_to(PACKAGE.parent)): hits
        for path in sorted(PACKAGE.rglob("*.py"))
        if (hits := private_imports(path.read_text(), _module_name(path)))
    }
    assert found == {}
