"""pybullet, imported without the build-time line it prints from C, and a way to quiet its C."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def quiet_c_output() -> Iterator[None]:
    """Send what C code writes to file descriptors 1 and 2 nowhere while the block runs.

    Python's own errors are exceptions, not writes, so nothing a user needs is lost.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    libc = ctypes.CDLL(None)
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        # C's stdout buffers when it is a pipe or a file: flush it while it still goes nowhere.
        libc.fflush(None)
        for fd, copy in zip((1, 2), saved, strict=True):
            os.dup2(copy, fd)
            os.close(copy)
        os.close(devnull)


# The line is "pybullet build time: ...", on stderr: nothing a user can act on. BulletClient's
# module imports pybullet too, so it is imported here, after it.
with quiet_c_output():
    import pybullet
    from pybullet_utils import bullet_client


class BulletClient(bullet_client.BulletClient):
    """pybullet's client wrapper, keeping each function it binds to the client.

    The wrapper binds a new partial on every attribute access, about 1.5 us, and a house makes
    130,000 of them.
    """

    def __getattr__(self, name: str) -> Any:
        attribute = super().__getattr__(name)
        setattr(self, name, attribute)
        return attribute

    def disconnect(self) -> None:
        """Disconnect, and forget the functions bound to this client's id.

        pybullet hands the id out again: a kept function would reach the next client's world.
        """
        pybullet.disconnect(physicsClientId=self._client)  # type: ignore[has-type]
        self._client = -1
        for name in [n for n, v in vars(self).items() if isinstance(v, functools.partial)]:
            delattr(self, name)


__all__ = ["BulletClient", "pybullet", "quiet_c_output"]
