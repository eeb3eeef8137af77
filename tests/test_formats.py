"""The shared file formats: metrics and lineage CSVs read safely while a run writes them, and the
player-spec display names; and the host-device check through JAX's public API."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

from neurocheckers.formats import (
    LINEAGE_COLUMNS,
    LINEAGE_FILE,
    METRIC_COLUMNS,
    METRICS_FILE,
    display_name,
    read_lineage,
    read_metrics,
)


def test_read_metrics_leaves_out_a_half_written_row(tmp_path):
    row = ",".join(str(i) for i in range(len(METRIC_COLUMNS)))
    text = ",".join(METRIC_COLUMNS) + "\r\n" + row + "\r\n" + row[:5]  # CRLF as csv.writer writes
    (tmp_path / METRICS_FILE).write_bytes(text.encode())
    rows = read_metrics(tmp_path)
    assert len(rows) == 1 and list(rows[0]) == list(METRIC_COLUMNS)
    assert rows[0]["wall_seconds"] == str(len(METRIC_COLUMNS) - 1)


def test_read_lineage_rows(tmp_path):
    (tmp_path / LINEAGE_FILE).write_text(",".join(LINEAGE_COLUMNS) + "\n0,-1,nan,a.safetensors\n")
    assert read_lineage(tmp_path) == [
        {"boss_id": "0", "epoch": "-1", "points": "nan", "file": "a.safetensors"}
    ]


def test_display_name_keeps_file_names_only():
    assert display_name("mcts:runs/x/agent.safetensors:16") == "mcts:agent.safetensors:16"
    assert display_name("alphabeta:3") == "alphabeta:3"


def test_backend_initialized_through_public_api():
    """In a fresh process: False before any JAX work, True after, and the device count then fixed."""
    script = textwrap.dedent(
        """
        import jax
        from neurocheckers.devices import backend_initialized, use_host_devices
        before = backend_initialized()
        use_host_devices(2)
        still = backend_initialized()
        count = len(jax.devices("cpu"))
        after = backend_initialized()
        try:
            use_host_devices(3)
            refused = False
        except RuntimeError:
            refused = True
        print(before, still, count, after, refused, use_host_devices(2))
        """
    )
    env = dict(os.environ)
    # The parent's other XLA flags (the tests' optimisation level, tests/conftest.py) stay; its device
    # count goes: the script sets its own.
    env["XLA_FLAGS"] = re.sub(r"--xla_force_host_platform_device_count=\S*", "", env.get("XLA_FLAGS", ""))
    env["JAX_PLATFORMS"] = "cpu"  # host devices, even where a GPU is the default backend
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "2", "True", "True", "2"]
