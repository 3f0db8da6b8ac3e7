"""What code that got past every Python-level rule could do to the host with the kernel's help:
change the metadata of files it cannot write, leave IPC objects and keys behind for the next
run, start threads without end, and slow down the trusted side. The worker runs as a uid of its
own in namespaces of its own, and none of it gets through.

Each snippet starts with the ESCAPE of :mod:`tests.sandbox.test_hostile`, past every
Python-level rule, so that only the OS layers stand in its way with the rules on or off
(``LYRA_SANDBOX_RULES=off``).
"""

from __future__ import annotations

import array
import ctypes
import errno
import fcntl
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lyra import sandbox
from lyra.backend import Backend
from lyra.sandbox import confine, run_code, worker
from lyra.sandbox.zygote import _ZYGOTE, Worker
from tests.sandbox.conftest import FakeTable
from tests.sandbox.test_hostile import ESCAPE, NEXT, SCENE, refused

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "aarch64"),
    reason="namespaces and these syscall numbers are Linux's on x86_64 and aarch64",
)

# The same on both architectures (the newer ones come from the generic table).
FCHMODAT2, SETXATTRAT, FILE_SETATTR = 452, 463, 469
ADD_KEY, REQUEST_KEY = {"x86_64": (248, 249), "aarch64": (217, 218)}[platform.machine()]
# A raw syscall that raises as os's functions do.
SYSCALL = ESCAPE + (
    "ctypes = g['sys'].modules['ctypes']\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "def call(nr, *args):\n"
    "    if libc.syscall(nr, *args) == -1:\n"
    "        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))\n"
)
# (code, the start of the feedback). seccomp allows none of these calls; without it the uid of
# the worker's own stops them (test_confine's probe without seccomp).
METADATA = {
    "chmod to setuid with fchmodat2": (
        f"call({FCHMODAT2}, -100, FILE.encode(), 0o4777, 0)\n",
        refused("fchmodat2"),
    ),
    "set its times": ("os.utime(FILE, (0, 0))\n", refused("utimensat")),
    "set its times to now": ("os.utime(FILE)\n", refused("utimensat")),
    "setxattr": ("os.setxattr(FILE, 'user.lyra', b'x')\n", refused("setxattr")),
    "setxattrat": (
        "value = ctypes.create_string_buffer(b'x')\n"
        "args = (ctypes.c_uint64 * 2)(ctypes.addressof(value), 1)\n"  # value, size 1, flags 0
        f"call({SETXATTRAT}, -100, FILE.encode(), 0, b'user.lyra', args, 16)\n",
        refused("setxattrat"),
    ),
    "set its flags with file_setattr": (
        "attr = (ctypes.c_uint64 * 3)(0x80, 0, 0)\n"  # FS_XFLAG_NODUMP
        f"call({FILE_SETATTR}, -100, FILE.encode(), attr, 24, 0)\n",
        refused("file_setattr"),
    ),
}
_FS_IOC_GETFLAGS = 0x80086601


@pytest.fixture
def host_file() -> Iterator[Path]:
    """A root-owned file anyone may reach and read, as the skill library and Python's own are.

    Not under tmp_path: pytest's folders are closed to other users, and the worker would be
    stopped on the way there instead of at the file.
    """
    folder = Path(tempfile.mkdtemp(prefix="lyra-host-"))
    folder.chmod(0o755)
    path = folder / "put_on.py"
    path.write_text("def put_on(): ...\n")
    path.chmod(0o644)
    yield path
    shutil.rmtree(folder)


def metadata(path: Path) -> tuple[object, ...]:
    """All that may change about a file without writing it: the change time covers the rest."""
    status = path.stat()
    flags = array.array("l", [0])
    with open(path, "rb") as file:
        fcntl.ioctl(file.fileno(), _FS_IOC_GETFLAGS, flags)
    return (
        status.st_mode,
        status.st_uid,
        status.st_gid,
        status.st_mtime_ns,
        status.st_ctime_ns,
        os.listxattr(path),
        flags[0],
    )


def assert_next_run_works(target: object) -> None:
    after = run_code(NEXT, target, timeout_s=5)
    assert after.ok and after.output == "['blue_block', 'red_block']\n", after.feedback


@pytest.mark.parametrize("name", METADATA)
def test_metadata_of_a_file_outside_scratch_stays(
    name: str, host_file: Path, ravens: Backend
) -> None:
    code, feedback = METADATA[name]
    before = metadata(host_file)
    ravens.reset(SCENE, 0)
    result = run_code(SYSCALL + code.replace("FILE", repr(str(host_file))), ravens)
    assert result.error == "exception" and result.feedback.startswith(feedback), result.feedback
    assert metadata(host_file) == before
    assert host_file.stat().st_mode == 0o100644
    assert_next_run_works(ravens)


IPC_KEY = 0x1E7A
NAME = "lyra-escaped"
_LIBC = ctypes.CDLL(None, use_errno=True)


@pytest.fixture
def host_ipc() -> Iterator[tuple[int, int, int]]:
    """A shared memory segment, a message queue and a semaphore set of the host's, root's."""
    ids = (_LIBC.shmget(0, 4096, 0o600), _LIBC.msgget(0, 0o600), _LIBC.semget(0, 1, 0o600))
    assert min(ids) >= 0
    yield ids
    shm, msg, sem = ids
    _LIBC.shmctl(shm, 0, None)  # IPC_RMID
    _LIBC.msgctl(msg, 0, None)
    _LIBC.semctl(sem, 0, 0)


def sysvipc(ids: tuple[int, int, int]) -> list[str]:
    """The host's lines on the objects of these ids, and those of any with the test's key."""
    lines = []
    for kind, id_ in zip(("shm", "msg", "sem"), ids, strict=True):
        for line in Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]:
            key, found = (int(field) for field in line.split()[:2])
            if found == id_ or key == IPC_KEY:
                lines.append(line)
    return lines


def test_ipc_objects_and_keys_are_out_of_reach_and_die_with_a_run(
    host_ipc: tuple[int, int, int], ravens: Backend
) -> None:
    shm, msg, sem = host_ipc
    before = sysvipc(host_ipc)
    ravens.reset(SCENE, 0)
    made = run_code(
        SYSCALL + "def done(result):\n"
        "    return 'refused' if result == -1 else 'done'\n"
        "message = ctypes.create_string_buffer(bytes([1, 0, 0, 0, 0, 0, 0, 0]) + b'x')\n"
        # The host's objects, by id: attach, send (IPC_NOWAIT), set a value (SETVAL).
        f"print([done(libc.shmat({shm}, None, 0)), done(libc.msgsnd({msg}, message, 1, 0o4000)),"
        f" done(libc.semctl({sem}, 0, 16, 1)),\n"
        # Objects and a key of its own, for the next run to find.
        f"       done(libc.shmget({IPC_KEY}, 4096, 0o1600)), done(libc.msgget({IPC_KEY}, 0o1600)),"
        f" done(libc.semget({IPC_KEY}, 1, 0o1600)),\n"
        f"       done(libc.mq_open(b'/{NAME}', 0o102, 0o600, None))])\n"  # O_CREAT | O_RDWR
        # KEY_SPEC_USER_KEYRING: the keyring every process of the user shares.
        f"call({ADD_KEY}, b'user', b'{NAME}', b'x', 1, -4)\n",
        ravens,
    )
    # seccomp allows no IPC call and no key; beneath it, the host's objects are not in the
    # worker's IPC namespace, and a POSIX queue it made would end with that namespace.
    assert made.output == f"{['refused'] * 7}\n", made.feedback
    assert made.error == "exception" and made.feedback.startswith(refused("add_key"))
    assert sysvipc(host_ipc) == before
    assert NAME not in Path("/proc/keys").read_text()
    assert _LIBC.mq_open(f"/{NAME}".encode(), 2) == -1 and ctypes.get_errno() == errno.ENOENT
    found = run_code(
        SYSCALL + f"print(libc.mq_open(b'/{NAME}', 2), ctypes.get_errno())\n"  # O_RDWR
        f"call({REQUEST_KEY}, b'user', b'{NAME}', None, 0)\n",
        ravens,
    )
    mq_open = confine._REFUSED_ERRNO + confine._ARCHES[platform.machine()][1]["mq_open"]
    assert found.output == f"-1 {mq_open}\n"
    assert found.error == "exception" and found.feedback.startswith(refused("request_key"))
    assert_next_run_works(ravens)


def test_a_thread_bomb_is_stopped(ravens: Backend) -> None:
    ravens.reset(SCENE, 0)
    result = run_code(
        ESCAPE + "threading = g['sys'].modules['threading']\n"
        # Small stacks: the address-space limit is not what stops it.
        "threading.stack_size(64 * 1024)\n"
        "forever = threading.Event()\n"
        "for i in range(2000):\n"
        "    threading.Thread(target=forever.wait, daemon=True).start()\n",
        ravens,
    )
    assert result.error == "exception", result.feedback
    assert result.feedback.startswith("RuntimeError: can't start new thread"), result.feedback
    assert_next_run_works(ravens)


def scheduling(pid: int) -> tuple[object, ...]:
    return (
        os.getpriority(os.PRIO_PROCESS, pid),
        os.sched_getaffinity(pid),
        os.sched_getscheduler(pid),
    )


@pytest.fixture
def unprivileged() -> Iterator[int]:
    """A process of the trusted side's uid without its capabilities, as one run by a user is."""
    process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        preexec_fn=confine._drop_capabilities,
    )
    yield process.pid
    process.kill()
    process.wait()


def test_the_trusted_sides_scheduling_is_out_of_reach(unprivileged: int, ravens: Backend) -> None:
    ravens.reset(SCENE, 0)
    assert_next_run_works(ravens)  # the zygote is running
    assert _ZYGOTE._process is not None
    before = {pid: scheduling(pid) for pid in (_ZYGOTE._process.pid, os.getpid(), unprivileged)}
    result = run_code(
        ESCAPE + "def attempt(call, *args):\n"
        "    try:\n"
        "        call(*args)\n"
        "        return 'done'\n"
        "    except OSError:\n"
        "        return 'refused'\n"
        "print([[attempt(os.setpriority, os.PRIO_PROCESS, pid, 19),\n"
        "        attempt(os.sched_setaffinity, pid, {0}),\n"
        "        attempt(os.sched_setscheduler, pid, os.SCHED_IDLE, os.sched_param(0))]\n"
        f"       for pid in (os.getppid(), {os.getpid()}, {unprivileged})])\n",
        ravens,
    )
    assert result.ok, result.feedback
    assert result.output == f"{[['refused'] * 3] * 3}\n"
    assert {pid: scheduling(pid) for pid in before} == before
    assert_next_run_works(ravens)


def test_a_run_that_requires_namespaces_refuses_without_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unshare(flags: int) -> int:
        confine.ctypes.set_errno(errno.EPERM)
        return -1

    forked = []

    def fork_worker() -> Worker:
        # A worker forked from this process, where the patch holds, rather than the zygote.
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            try:
                ours.close()
                worker.serve(theirs)
            finally:
                os._exit(0)
        theirs.close()
        forked.append(pid)
        return Worker(pid, ours, os.pidfd_open(pid))

    monkeypatch.setattr(confine._LIBC, "unshare", unshare)
    monkeypatch.setattr(sandbox, "fork_worker", fork_worker)
    result = run_code("x = 1\n", FakeTable(), require=("namespaces",))
    os.waitpid(forked[0], 0)
    assert (result.error, result.feedback) == (
        "policy",
        "the code was not run: this machine cannot confine it as required (namespaces: "
        "unshare failed: Operation not permitted); run on a machine with these layers, or do "
        "not require them",
    )
    # The worker went back to what it was, and every other layer still holds.
    lacking = ("namespaces",) if sandbox.rules_on() else ("namespaces", "rules")
    assert result.confined == tuple(layer for layer in sandbox.LAYERS if layer not in lacking)
