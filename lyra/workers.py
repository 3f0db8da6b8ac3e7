"""The worker processes that run simulations side by side (``lyra run``, ``lyra check``)."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes (at least one), each a fresh interpreter.

    Spawned, not forked: a fork would copy this process's threads and open files.
    """
    return ProcessPoolExecutor(max_workers=max(1, workers), mp_context=get_context("spawn"))
