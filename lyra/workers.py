"""The worker processes that run episodes side by side (``lyra run``, ``lyra check``)."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from lyra.backend import Backend, make

# One backend of each kind per worker process, made on first use and reset for every episode.
_BACKENDS: dict[str, Backend] = {}


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes (at least one), each a fresh interpreter.

    Spawned, not forked: a fork would copy this process's threads and open files.
    """
    return ProcessPoolExecutor(max_workers=max(1, workers), mp_context=get_context("spawn"))


def worker_backend(name: str) -> Backend:
    """This process's backend of a kind (episodes reset it, so one serves them all)."""
    if name not in _BACKENDS:
        _BACKENDS[name] = make(name)
    return _BACKENDS[name]
