"""Work in shares, run anywhere: ``map_shares(function, shares) -> [function(*share) for share in
shares]`` in this process (``in_process``), in a pool of local processes (``process_pool``), or as
Ray tasks on the instance this process is connected to (``ray_shares``). ``function`` is a
module-level function and its arguments plain values (numbers, strings, frozen dataclasses, NumPy
arrays), so any of them can run it. PBT trains its members in shares; engine games are played in
them (``match.engine_pairs``)."""

from __future__ import annotations

import atexit
from collections.abc import Callable

MapShares = Callable[[Callable, list[tuple]], list]
"""``map_shares(function, shares) -> [function(*share) for share in shares]``, in order."""


def in_process(function: Callable, shares: list[tuple]) -> list:
    """``MapShares`` in this process, one share after another."""
    return [function(*share) for share in shares]


def process_pool(workers: int) -> MapShares:
    """``MapShares`` over ``workers`` fresh ``spawn`` processes (JAX is not fork-safe), started at the
    first call and kept for the later ones (a worker pays its imports and compiles once)."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    pool = []

    def map_shares(function: Callable, shares: list[tuple]) -> list:
        if not pool:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            pool.append(ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")))
            atexit.register(pool[0].shutdown, cancel_futures=True)
        futures = [pool[0].submit(function, *share) for share in shares]
        return [future.result() for future in futures]

    return map_shares


def ray_shares(cpus_per_share: int = 1) -> MapShares:
    """``MapShares`` as Ray tasks of ``cpus_per_share`` CPUs each, on the Ray instance this process
    is connected to (``ray.init``); the results come back in order."""
    import ray

    def map_shares(function: Callable, shares: list[tuple]) -> list:
        task = ray.remote(num_cpus=cpus_per_share, max_retries=0)(function)
        return ray.get([task.remote(*share) for share in shares])

    return map_shares
