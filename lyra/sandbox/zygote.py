"""A fork server for code workers: one clean interpreter, started once, forked once per run.

Generated code runs in a process of its own, never in the one that holds the simulator, the
robot or the files. Starting a Python and importing numpy costs a quarter of a second; forking
an interpreter that has already done so costs a few milliseconds, and every run still starts
from the same clean state, since the zygote itself never runs generated code. The zygote is a
plain ``python -m lyra.sandbox`` (not a fork of the trusted process, whose threads and
simulator must not be copied); it exits when the trusted process closes its end, and its
children die with it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

# Skills need no parallel BLAS, and a thread pool started before fork would be copied broken.
_SINGLE_THREADED = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
# The only variables a worker inherits: API keys and the like stay in the trusted process.
_PASSED_ON = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "SYSTEMROOT")
# How long a killed worker is waited for; SIGKILL takes effect in microseconds.
_DEATH_WAIT_S = 2.0


@dataclass
class Worker:
    """One forked code worker: its end of the pipe, and how to kill it.

    Attributes:
        pid: its process id.
        sock: the connection to it.
        pidfd: a process file descriptor where the platform has them, so that the kill can
            never reach another process that reused the pid.
    """

    pid: int
    sock: socket.socket
    pidfd: int | None = None

    def kill(self) -> None:
        """Kill the worker (it may already have ended), wait for its end, close the connection.

        Waiting matters: the caller removes the worker's scratch folder next. A second kill does
        nothing: by then the pid may be another process's.
        """
        if self.sock.fileno() == -1:  # closed: killed already
            return
        with contextlib.suppress(ProcessLookupError, OSError):
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
                select.select([self.pidfd], [], [], _DEATH_WAIT_S)  # readable once it is gone
            else:
                os.kill(self.pid, signal.SIGKILL)
        self.close()

    def close(self) -> None:
        """Close the connection and the process descriptor."""
        self.sock.close()
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


class Zygote:
    """The trusted process's handle on its fork server, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None

    def start(self) -> None:
        """Start the zygote now if it is not running, without waiting for it to be ready."""
        with self._lock:
            self._ensure_running()

    def fork(self) -> Worker:
        """A new worker, waiting for its job on the returned connection."""
        with self._lock:
            for attempt in range(2):
                control = self._ensure_running()
                try:
                    control.sendall(b"f")
                    # Not inherited by the programs this process may start later.
                    flags = getattr(socket, "MSG_CMSG_CLOEXEC", 0)
                    message, fds, _, _ = socket.recv_fds(control, 32, 2, flags)
                except OSError:
                    message, fds = b"", []
                if message:
                    sock = socket.socket(fileno=fds[0])
                    return Worker(int(message), sock, fds[1] if len(fds) > 1 else None)
                # The zygote died (killed from outside, out of memory): start another once.
                self.close()
                if attempt:
                    raise RuntimeError("the code worker server could not fork a worker")
        raise AssertionError("unreachable")

    def _ensure_running(self) -> socket.socket:
        if self._control is not None and self._process is not None:
            if self._process.poll() is None:
                return self._control
            self.close()
        ours, theirs = socket.socketpair()
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.pathsep.join([package_root, *filter(None, [os.environ.get("PYTHONPATH")])])
        env = {key: os.environ[key] for key in _PASSED_ON if key in os.environ}
        # -P: the current folder (a workspace) is not put on the import path.
        self._process = subprocess.Popen(
            [sys.executable, "-P", "-m", "lyra.sandbox", str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            env={**env, **_SINGLE_THREADED, "PYTHONPATH": path},
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        self._control = ours
        return ours

    def close(self) -> None:
        """Stop the zygote: closing its control connection makes it exit."""
        if self._control is not None:
            self._control.close()
            self._control = None
        if self._process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=5)
            if self._process.poll() is None:
                self._process.kill()
            self._process = None


_ZYGOTE = Zygote()
atexit.register(_ZYGOTE.close)


def prestart() -> None:
    """Start this process's zygote ahead of its first run.

    Its imports then overlap other work (a simulator loading) instead of delaying that run.
    """
    _ZYGOTE.start()


def fork_worker() -> Worker:
    """A fresh code worker from this process's zygote."""
    return _ZYGOTE.fork()


def main(fd: int) -> None:
    """The zygote: preload, then fork one worker per request until the control pipe closes."""
    control = socket.socket(fileno=fd)
    from lyra.sandbox import worker
    from lyra.sandbox.confine import die_with_parent

    worker.preload()
    while control.recv(1):
        # Reap the workers that ended: a zombie keeps its pid from being reused before the
        # trusted process holds a pidfd for it, so a kill can never reach another process.
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            control.close()
            ours.close()
            die_with_parent()
            status = 0
            try:
                worker.serve(theirs)
            except BaseException:
                status = 1
            os._exit(status)
        theirs.close()
        fds = [ours.fileno()]
        pidfd = None
        if hasattr(os, "pidfd_open"):
            with contextlib.suppress(OSError):
                pidfd = os.pidfd_open(pid)
                fds.append(pidfd)
        socket.send_fds(control, [str(pid).encode()], fds)
        ours.close()
        if pidfd is not None:
            os.close(pidfd)
