"""Every key of the config (``config_class``: a loaded plug-in's sections too) with its default and
one-line documentation (read from the field docstrings of ``sections``): for ``evolve --help`` and
the config reference (``docs/config.md``), by section. No JAX."""

from __future__ import annotations

import dataclasses

from neurocheckers import sections
from neurocheckers.experiment.config import config_class


def field_docs() -> dict[str, str]:
    """Each config key's one-line documentation, from the docstrings of ``sections``."""
    return sections.field_docs(config_class())


def config_sections() -> dict[str, list[str]]:
    """Every config key by its section (``sections``), in the config's field order."""
    return sections.sections_of(config_class())


def config_reference() -> str:
    """``docs/config.md``: every config key with its default and one-line documentation, by section
    (``config_sections``); generated from the field docstrings, and kept current by a test."""
    docs = field_docs()
    defaults = {f.name: f.default for f in dataclasses.fields(config_class())}
    lines = [
        "# Config reference",
        "",
        "Generated from the field docstrings of the config's sections (`neurocheckers/sections.py`),",
        "where each key is declared once, by `python scripts/config_doc.py > docs/config.md`; a test",
        "keeps this page current. A key is set",
        "in an experiment TOML file at its top level (`population = 64`) or in its section's table",
        "(`[boss_ga]` then `population = 64`), or on the command line with `--set population=64` or",
        '`--set boss_ga.population=64`. A TOML file may `inherit = "other.toml"`. The keys of the',
        "`boss_ga`, `td_lambda` and `dqn` sections are refused, at values other than their defaults,",
        "by the strategies that do not read them.",
    ]
    for section, keys in config_sections().items():
        lines += ["", f"## {section}", "", "| key | default | meaning |", "|---|---|---|"]
        for key in keys:
            default = defaults[key]
            shown = str(default).lower() if isinstance(default, bool) else repr(default)
            lines.append(f"| `{key}` | `{shown}` | {docs.get(key, '').replace('|', '/')} |")
    return "\n".join(lines) + "\n"
