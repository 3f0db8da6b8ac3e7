"""One writer per workspace: a lock that names its holder and dies with it.

The lock is an ``flock`` on ``.lyra/lock``, so the kernel releases it when its process ends,
however it ends: a lock left by a killed process is simply taken. The file says who holds it
(process, machine, command, since when), so a second writer is told whom it waits for. A process
may take the lock of a workspace it already holds again (the learning loop nests: a plan teaches
a skill).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from lyra.errors import LyraError
from lyra.workspace import Workspace

# Locks this process holds, by lock file: the open file and how many holders share it.
_HELD: dict[Path, tuple[int, int]] = {}
_GUARD = threading.Lock()


class WorkspaceLockedError(LyraError):
    """Another process is writing to the workspace."""

    def __init__(self, workspace: Workspace, holder: str) -> None:
        super().__init__(
            f"the workspace {workspace.root} is in use by {holder}; wait for it to finish (or "
            "stop it): one lyra command at a time may change a workspace"
        )


def lock_path(workspace: Workspace) -> Path:
    """The workspace's lock file."""
    return workspace.state_dir / "lock"


def acquire(workspace: Workspace) -> None:
    """Take the workspace's lock, or fail at once naming who holds it.

    Raises:
        WorkspaceLockedError: a live process holds it.
    """
    with _GUARD:
        _acquire(workspace, lock_path(workspace).resolve())


def _acquire(workspace: Workspace, path: Path) -> None:
    if path in _HELD:
        fd, count = _HELD[path]
        _HELD[path] = (fd, count + 1)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(path)
        os.close(fd)
        raise WorkspaceLockedError(workspace, holder) from None
    os.ftruncate(fd, 0)
    info = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": " ".join(["lyra", *sys.argv[1:]]) if sys.argv else "lyra",
        "since": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    os.write(fd, json.dumps(info).encode())
    _HELD[path] = (fd, 1)


def release(workspace: Workspace) -> None:
    """Give the lock back (the last holder in this process unlocks it)."""
    with _GUARD:
        _release(lock_path(workspace).resolve())


def _release(path: Path) -> None:
    if path not in _HELD:
        return
    fd, count = _HELD.pop(path)
    if count > 1:
        _HELD[path] = (fd, count - 1)
        return
    os.ftruncate(fd, 0)
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


@contextlib.contextmanager
def locked(workspace: Workspace) -> Iterator[None]:
    """Hold the workspace's lock inside the block."""
    acquire(workspace)
    try:
        yield
    finally:
        release(workspace)


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        info = {}
    if not info:
        return "another process"
    return (
        f"process {info.get('pid')} on {info.get('host')} ('{info.get('command')}', since "
        f"{info.get('since')})"
    )
