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

# Two epochs of a tiny config; population 8 splits evenly over 2 devices, so the sharded path runs.
EPOCHS_OF_A_TINY_RUN = textwrap.dedent(
    """
    import hashlib, json, sys
    from neurocheckers.devices import use_host_devices
    use_host_devices(int(sys.argv[1]))
    import jax, numpy as np
    from neurocheckers.evolution.boss_ga import epoch_key, evolve_epoch, init, make_setup
    from neurocheckers.experiment.config import load_config
    config = load_config(None, ["population=8", "games_per_epoch=2", "layers=1", "width=4",
                                "simulations=2", "train_steps=2", "max_plies=60", "name=tiny",
                                *json.loads(sys.argv[2])])
    setup = make_setup(config.evolution_settings())
    state = init(setup, jax.random.key(0))
    rows = []
    for epoch in range(2):
        state, metrics = evolve_epoch(setup, state, epoch_key(0, epoch))
        rows.append({k: np.asarray(v).tolist() for k, v in jax.device_get(metrics).items()})
    digest = hashlib.sha256()
    for leaf in jax.tree.leaves((state.population, state.boss)):
        digest.update(np.asarray(leaf).tobytes())
    print(json.dumps({"devices": jax.local_device_count(), "metrics": rows, "params": digest.hexdigest()}))
    """
)


# Pooled learners (every learner trains on the whole population's games) split the learners, not the
# members, across devices: two elites, one per device.
POOLED_LEARNERS = ["learner_pool=true", "train_batch=4", "learner_sides=both", "supervised_target=td_lambda"]


# TD(lambda): self-play split by games, then the Adam steps read every game's positions (the
# minibatches were drawn differently, and 5x slower, from weights left split across the devices).
# 32 games (16 a device) make the same check as 256 did at half the CPU time.
TD_LAMBDA_EPOCHS = textwrap.dedent(
    """
    import hashlib, json, sys
    from neurocheckers.devices import use_host_devices
    use_host_devices(int(sys.argv[1]))
    import jax, numpy as np
    from neurocheckers.learners.td_lambda import TDSettings, epoch, init
    settings = TDSettings(rules="simple6", layers=1, width=4, search="alphabeta", depth=1,
                          selfplay_games=32, max_plies=60,
                          updates_per_epoch=4, batch_size=64)
    state = init(settings, jax.random.key(0))
    rows = []
    for e in range(2):
        state, metrics = epoch(settings, state, jax.random.key(e))
        rows.append({k: np.asarray(v).tolist() for k, v in jax.device_get(metrics).items()})
    digest = hashlib.sha256()
    for leaf in jax.tree.leaves(state.params):
        digest.update(np.asarray(leaf).tobytes())
    print(json.dumps({"devices": jax.local_device_count(), "metrics": rows, "params": digest.hexdigest()}))
    """
)


def one_and_two_devices(script: str, *args: str) -> tuple[dict, dict]:
    """``script``'s last printed JSON line run with one host device and with two."""
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
        results[n] = json.loads(out.strip().splitlines()[-1])
    assert (results[1]["devices"], results[2]["devices"]) == (1, 2)
    return results[1], results[2]


@pytest.mark.parametrize("extra", [[], POOLED_LEARNERS], ids=["study", "pooled_learners"])
def test_two_host_devices_give_the_same_epochs(extra):
    one, two = one_and_two_devices(EPOCHS_OF_A_TINY_RUN, json.dumps(extra))
    assert len(one["metrics"]) == 2 and one["metrics"][0]["games"] == 16
    assert two["metrics"] == one["metrics"]
    assert two["params"] == one["params"]


def test_two_host_devices_give_the_same_td_lambda_epochs():
    one, two = one_and_two_devices(TD_LAMBDA_EPOCHS)
    assert one["metrics"][0]["games"] == 32
    # The same games and minibatches; sums over all the positions (value_mean, td_error) add the
    # devices' partial sums, so their last bits may differ.
    assert two["metrics"] == [pytest.approx(row, rel=1e-6) for row in one["metrics"]]
    assert two["params"] == one["params"]
