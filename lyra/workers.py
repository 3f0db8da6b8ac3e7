"""The worker processes that run episodes side by side (``lyra run``, ``check``, ``eval``).

Local processes by default; a Ray cluster where one is given (``--ray [ADDRESS]``), through the
same ``submit``/future interface, so no caller knows which runs its work.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

from lyra.backend import Backend, make
from lyra.errors import LyraError

# One backend of each kind per worker process, made on first use and reset for every episode.
_BACKENDS: dict[str, Backend] = {}


def worker_pool(workers: int, ray: str | None = None) -> Executor:
    """A pool of ``workers`` processes (at least one), each a fresh interpreter; or Ray's.

    Spawned, not forked: a fork would copy this process's threads and open files.

    Args:
        workers: how many processes; for a local Ray, how many CPUs it may use.
        ray: None for local processes; ``""`` to start a local Ray; else a Ray cluster's
            address (``ray://host:10001``, or ``auto`` for the one this machine joined).
    """
    if ray is None:
        return ProcessPoolExecutor(max_workers=max(1, workers), mp_context=get_context("spawn"))
    return RayPool(ray or None, workers)


class RayPool(Executor):
    """Ray tasks behind the executor interface: each ``submit`` is a remote call's future."""

    def __init__(self, address: str | None, workers: int) -> None:
        try:
            import ray
        except ImportError:
            raise LyraError(
                "--ray needs Ray: pip install 'lyra-robot[ray]' (or leave --ray out to use "
                "local worker processes)"
            ) from None
        self._ray = ray
        # A Ray this pool started is its to stop; one already running belongs to the caller.
        self._started = not ray.is_initialized()
        if self._started:
            if address:
                ray.init(address=address)
            else:
                ray.init(num_cpus=max(1, workers), include_dashboard=False)
        self._remote: dict[Callable[..., Any], Any] = {}

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """Run ``fn(*args, **kwargs)`` as a Ray task."""
        if fn not in self._remote:
            self._remote[fn] = self._ray.remote(fn)
        future: Future[Any] = self._remote[fn].remote(*args, **kwargs).future()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop the Ray this pool started."""
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()


def worker_backend(name: str) -> Backend:
    """This process's backend of a kind (episodes reset it, so one serves them all)."""
    if name not in _BACKENDS:
        _BACKENDS[name] = make(name)
    return _BACKENDS[name]
