"""The one-line error of a refused command, as the command-line tests check it."""

from __future__ import annotations


def error_line(capsys, *names: str, printed: bool = False) -> str:
    """The one stderr line of a refused command (no traceback; nothing on stdout unless ``printed``:
    a command that reports progress before it fails); it names every one of ``names``."""
    captured = capsys.readouterr()
    assert printed or captured.out == ""
    err = captured.err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("neurocheckers: error: "), err
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]
