"""Two host devices change nothing: ``evolve_epoch`` with the population split across two XLA host
devices (``jax.shard_map``) gives the metrics and parameters of one device. Each device count needs
its own process (the count is fixed when JAX starts its backend)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import jax
import pytest

pytestmark = pytest.mark.devices

# One process per device count runs every check below (two processes for the file, not six: each
# start imports JAX and traces the programs again). Each check prints one JSON line, by name.
DEVICES_SCRIPT = textwrap.dedent(
    """
    import hashlib, json, sys
    from neurocheckers.devices import use_host_devices
    use_host_devices(int(sys.argv[1]))
    import jax, numpy as np
    from neurocheckers.evolution.boss_ga import evolve_epoch, init, make_setup
    from neurocheckers.search.play_settings import epoch_key
    from neurocheckers.experiment.config import load_config
    from neurocheckers.learners.td_lambda import TDSettings, epoch, init as td_init
    from neurocheckers.sharding import on_every_device

    def digest_of(tree):
        digest = hashlib.sha256()
        for leaf in jax.tree.leaves(tree):
            digest.update(np.asarray(leaf).tobytes())
        return digest.hexdigest()

    def rows_of(metrics):
        return {k: np.asarray(v).tolist() for k, v in jax.device_get(metrics).items()}

    compiles = []  # each compile (or cache load) of an evolution epoch
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, seconds, **kw: compiles.append(1)
        if event.endswith("backend_compile_duration") and kw.get("fun_name") == "jit(evolve_epoch)" else None)

    def tiny_run(extra):
        config = load_config(None, ["population=8", "games_per_epoch=2", "layers=1", "width=4",
                                    "simulations=2", "train_steps=2", "max_plies=60", "name=tiny",
                                    *extra])
        setup = make_setup(config.evolution_settings())
        state = on_every_device(init(setup, jax.random.key(0)))  # as a run lays it
        rows, compiles[:] = [], []
        for e in range(2):
            state, metrics = evolve_epoch(setup, state, epoch_key(0, e))
            state = on_every_device(state)  # as a run lays it before each call
            rows.append(rows_of(metrics))
        rows.append({"compiles": len(compiles)})
        leaves = jax.tree.leaves((state.population, state.boss))
        rows.append({"sums": [float(np.abs(np.asarray(leaf, np.float64)).sum()) for leaf in leaves]})
        return rows, digest_of((state.population, state.boss))

    # TD(lambda): self-play split by games, then the Adam steps read every game's positions (the
    # minibatches were drawn differently, and 5x slower, from weights left split across the devices).
    # 32 games (16 a device) make the same check as 256 did at half the CPU time.
    def td_lambda():
        settings = TDSettings(rules="simple6", layers=1, width=4, search="alphabeta", depth=1,
                              selfplay_games=32, max_plies=60, updates_per_epoch=4, batch_size=64)
        state = td_init(settings, jax.random.key(0))
        rows = []
        for e in range(2):
            state, metrics = epoch(settings, state, jax.random.key(e))
            rows.append(rows_of(metrics))
        return rows, digest_of(state.params)

    checks = {"study": lambda: tiny_run([]), "pooled_learners": lambda: tiny_run(json.loads(sys.argv[2])),
              "td_lambda": td_lambda}
    for name, check in checks.items():
        rows, params = check()
        print(json.dumps({"check": name, "devices": jax.local_device_count(), "metrics": rows,
                          "params": params}), flush=True)
    """
)
"""Two epochs of a tiny evolution config (population 8 splits evenly over 2 devices, so the sharded
path runs), plain and with pooled learners, and two TD(lambda) epochs."""


# Pooled learners (every learner trains on the whole population's games) split the learners, not the
# members, across devices: two elites, one per device.
POOLED_LEARNERS = ["learner_pool=true", "train_batch=4", "learner_sides=both", "supervised_target=td_lambda"]


def one_and_two_devices(script: str, *args: str) -> tuple[dict, dict]:
    """``script``'s printed JSON lines, by their "check", run with one host device and with two."""
    env = dict(os.environ)
    # The parent's other XLA flags (the tests' optimisation level, tests/conftest.py) stay; its device
    # count goes: the script sets its own.
    env["XLA_FLAGS"] = re.sub(r"--xla_force_host_platform_device_count=\S*", "", env.get("XLA_FLAGS", ""))
    env["JAX_PLATFORMS"] = "cpu"  # host devices, even where a GPU is the default backend
    cache = jax.config.jax_compilation_cache_dir
    if cache:
        env["JAX_COMPILATION_CACHE_DIR"] = str(cache)
    procs = {
        n: subprocess.Popen(
            [sys.executable, "-c", script, str(n), *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in (1, 2)
    }
    results = {}
    for n, proc in procs.items():
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
        lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        results[n] = {line.pop("check"): line for line in lines}
        assert {line["devices"] for line in results[n].values()} == {n}
    return results[1], results[2]


@pytest.fixture(scope="module")
def epochs_by_devices() -> tuple[dict, dict]:
    """Every check's results with one host device and with two (one process each, for the file)."""
    return one_and_two_devices(DEVICES_SCRIPT, json.dumps(POOLED_LEARNERS))


@pytest.mark.parametrize("check", ["study", "pooled_learners"])
def test_two_host_devices_give_the_same_epochs(check, epochs_by_devices):
    one, two = (results[check] for results in epochs_by_devices)
    *epochs, compiles, sums = two["metrics"]
    assert len(epochs) == 2 and one["metrics"][0]["games"] == 16
    assert epochs == one["metrics"][:2]
    assert compiles == {"compiles": 1}  # the second epoch reuses the first's program
    if check == "study":
        assert two["params"] == one["params"]
    else:  # each device trains its learner as a vmap of one, one device both as a vmap of two: XLA
        # may round their sums differently in the last bits (the games and points stay the same)
        assert sums["sums"] == pytest.approx(one["metrics"][-1]["sums"], rel=1e-5)


def test_two_host_devices_give_the_same_td_lambda_epochs(epochs_by_devices):
    one, two = (results["td_lambda"] for results in epochs_by_devices)
    assert one["metrics"][0]["games"] == 32
    # The same games and minibatches; sums over all the positions (value_mean, td_error) add the
    # devices' partial sums, so their last bits may differ.
    assert two["metrics"] == [pytest.approx(row, rel=1e-6) for row in one["metrics"]]
    assert two["params"] == one["params"]
