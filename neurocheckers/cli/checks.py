"""Checks of the user's input, made before any work: each raises a one-line ``UserError``."""

from __future__ import annotations

from contextlib import contextmanager

from neurocheckers.cli.common import UserError


@contextmanager
def user_errors(*errors: type[Exception]):
    """Turn the ``errors`` raised inside into a ``UserError`` with their message: the library's own
    errors about the user's input are one line, not a traceback."""
    try:
        yield
    except errors as e:
        raise UserError(str(e)) from None


def rules_preset(name: str):
    """The rules preset ``name`` (a ``--rules`` value)."""
    from neurocheckers.rules import get_rules

    with user_errors(ValueError):
        return get_rules(name)


def at_least(option: str, value: int | float | None, low: int) -> None:
    """``UserError`` naming ``option`` and ``value`` when ``value`` is below ``low`` (None passes)."""
    if value is not None and value < low:
        raise UserError(f"{option} must be >= {low}, got {value}")


def seed(option: str, value: int | None) -> None:
    """``UserError`` naming ``option`` unless ``value`` is a seed (``stats.check_seed``; None passes)."""
    from neurocheckers.stats import check_seed

    if value is not None:
        with user_errors(ValueError):
            check_seed(value, option)


def positive(option: str, value: float) -> None:
    """``UserError`` naming ``option`` unless ``value`` is a finite number above 0."""
    import math

    if not (value > 0 and math.isfinite(value)):
        raise UserError(f"{option} must be a positive number, got {value}")


def writable_folder(path: str, option: str = "--out") -> None:
    """Create folder ``path`` (and its parents) now, before any work, or raise ``UserError`` naming
    ``option``: a result is never computed only to be lost for want of somewhere to write it."""
    from pathlib import Path

    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{option} {path!r} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create {option} folder {path!r}: {e.strerror or e}") from None
    if not os_writable(folder):
        raise UserError(f"cannot write in {option} folder {path!r}: permission denied")


def writable_file(path: str, option: str, suffixes: tuple[str, ...] = ()) -> None:
    """Check before any work that file ``path`` can be written: it is not a folder, it ends in one of
    ``suffixes`` (when given), and its folder is writable, created with its parents when missing (the
    rule of every output option, as in ``writable_folder``); else ``UserError`` naming ``option``."""
    from pathlib import Path

    file = Path(path)
    if file.is_dir():
        raise UserError(f"{option} {path!r} is a folder; give a file name")
    if suffixes and file.suffix.lower() not in suffixes:
        raise UserError(f"{option} {path!r} must end in {' or '.join(suffixes)}")
    writable_folder(str(file.parent), option)


def os_writable(folder) -> bool:
    import os

    return os.access(folder, os.W_OK | os.X_OK)
