"""Every key of ``ExperimentConfig`` with its default and one-line documentation (read from the
field docstrings): for ``evolve --help`` and the config reference (``docs/config.md``), grouped by the
part of the code that reads it. No JAX."""

from __future__ import annotations

import dataclasses

from neurocheckers.experiment.config import ExperimentConfig


def field_docs() -> dict[str, str]:
    """Each field's one-line documentation, read from the attribute docstrings in this source."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(ExperimentConfig))
    docs: dict[str, str] = {}
    body = tree.body[0].body  # type: ignore[attr-defined]
    for node, following in zip(body, body[1:], strict=False):
        if isinstance(node, ast.AnnAssign) and isinstance(following, ast.Expr):
            value = getattr(following, "value", None)
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                docs[node.target.id] = value.value.strip()  # type: ignore[attr-defined]
    return docs


SEARCH_KEYS = ("search", "simulations", "seconds_per_move", "depth")
"""The keys of how agents choose their moves, whichever the strategy."""


def config_sections() -> dict[str, list[str]]:
    """Every config key under the part of the code that reads it: ``run`` (the run loop), ``network``
    (``architectures.ArchitectureSettings``), ``search``, ``learners`` (``learners.LearnerSettings``,
    every self-play learner), ``td_lambda`` (TD(lambda) and TDLeaf), ``dqn`` (``DQNSettings``) and
    ``evolution`` (``EvolutionSettings``: the boss GA and evosax). A key read by several parts is
    listed under the first of them in that order."""
    from neurocheckers.architectures import ArchitectureSettings
    from neurocheckers.evolution.settings import EvolutionSettings
    from neurocheckers.learners.common import LearnerSettings
    from neurocheckers.learners.dqn_settings import DQNSettings
    from neurocheckers.learners.td_lambda import TDLeafSettings

    def names(settings: type) -> set[str]:
        return {f.name for f in dataclasses.fields(settings)}

    owners = {
        "network": names(ArchitectureSettings) | {"layers", "width", "material_input"},
        "search": set(SEARCH_KEYS),
        "learners": names(LearnerSettings),
        "td_lambda": names(TDLeafSettings),
        "dqn": names(DQNSettings),
        "evolution": names(EvolutionSettings),
    }
    sections: dict[str, list[str]] = {"run": [], **{name: [] for name in owners}}
    for f in dataclasses.fields(ExperimentConfig):
        home = next((name for name, keys in owners.items() if f.name in keys and f.name != "rules"), "run")
        sections[home].append(f.name)
    return sections


def config_reference() -> str:
    """``docs/config.md``: every config key with its default and one-line documentation, by section
    (``config_sections``); generated from the field docstrings, and kept current by a test."""
    docs = field_docs()
    defaults = {f.name: f.default for f in dataclasses.fields(ExperimentConfig)}
    lines = [
        "# Config reference",
        "",
        "Generated from the field docstrings of `ExperimentConfig` (`neurocheckers/experiment/config.py`)",
        "by `python scripts/config_doc.py > docs/config.md`; a test keeps this page current. Every key",
        "is a top-level key of an experiment TOML file, or `--set KEY=VALUE` on `neurocheckers evolve`;",
        '`neurocheckers evolve --help` lists them too. A TOML file may `inherit = "other.toml"`.',
    ]
    for section, keys in config_sections().items():
        lines += ["", f"## {section}", "", "| key | default | meaning |", "|---|---|---|"]
        for key in keys:
            default = defaults[key]
            shown = str(default).lower() if isinstance(default, bool) else repr(default)
            lines.append(f"| `{key}` | `{shown}` | {docs.get(key, '').replace('|', '/')} |")
    return "\n".join(lines) + "\n"
