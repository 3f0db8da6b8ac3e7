"""OS confinement of a code worker, applied in the worker right after it is forked.

What the operating system offers and a pip install can rely on, each layer on its own so that
a machine without one still gets the others, and each reported by name:

* ``rlimits``: address space, CPU seconds, open files, file size, no core dumps;
* ``namespaces``: a user, IPC and network namespace of its own, so that the host's IPC objects
  and network are out of reach and nothing it makes there outlives it; under a trusted side
  that runs as root it also becomes a uid of its own, owner of its scratch folder and of no
  other file, unable to touch other processes, with a limit on its threads (Linux);
* ``capabilities``: every capability dropped, so a worker started as root is root in name
  only: it cannot make device nodes, load kernel modules, raise its limits again or reach
  raw I/O (Linux);
* ``no_new_privs``: nothing the worker runs can gain privileges (Linux);
* ``landlock``: files may be written or created only beneath the run's scratch folder (plain
  files and folders there, no devices or links), read only beneath Python's and lyra's own
  folders, and executed nowhere (Linux 5.13+);
* ``seccomp``: an allow-list of the system calls Python, numpy and the worker use
  (``ALLOWED_CALLS``): memory never executable, clone only for a thread, ioctl only to ask
  whether a file is a terminal or to set close-on-exec. Anything else (processes, programs,
  sockets, signals, scheduling, modes, owners, extended attributes, IPC, keys, tracing,
  mounts, namespaces, and whatever the kernel adds later) fails with an errno that names the
  call (``refused_call``), so the feedback says which (Linux; x86_64 and aarch64).

A layer that cannot be applied is reported as missing; a run that requires a layer (a real
robot) refuses to start without it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import resource
import signal
import struct
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

OS_LAYERS = ("rlimits", "namespaces", "capabilities", "no_new_privs", "landlock", "seccomp")

# The C library of this process: ctypes.util.find_library would run ldconfig each time.
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
if _LIBC is not None:
    _LIBC.syscall.restype = ctypes.c_long

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_SECCOMP_MODE_FILTER = 2
_CAPABILITY_VERSION_3 = 0x20080522
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
# Under a root trusted side each worker runs as a uid from this range, one no file or other
# process has, so that its limit on threads counts its threads alone: 100,000 plus its pid
# modulo 60,000, a uid of its own among the workers alive at once wherever pid_max is 32,768
# (two workers whose pids differ by a multiple of 60,000 would share one, and the limit).
_FIRST_UID = 100_000
_UIDS = 60_000

# Landlock (linux/landlock.h): syscall numbers are the same on x86_64 and aarch64.
_LANDLOCK_CREATE_RULESET = 444
_LANDLOCK_ADD_RULE = 445
_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_REMOVE_DIR = 1 << 4
_FS_REMOVE_FILE = 1 << 5
_FS_MAKE_DIR = 1 << 7
_FS_MAKE_REG = 1 << 8
# Character and block devices, sockets, fifos and links: made nowhere.
_FS_MAKE_OTHER = (1 << 6) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12)
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_IOCTL_DEV = 1 << 15  # ABI 5
_NET_ALL = (1 << 0) | (1 << 1)  # ABI 4: bind and connect over TCP
_SCOPE_ALL = (1 << 0) | (1 << 1)  # ABI 6: abstract unix sockets, signals outside the domain

# seccomp: what a worker may call, and why. Every other call fails with an error that names
# it (refused_call), so that the feedback says which; tests/sandbox/test_confine.py holds the
# reviewed list and fails when this one changes without it.
ALLOWED_CALLS = frozenset(
    {
        # Memory, never executable (see _filter): no code is loaded after the zygote's.
        "brk", "mmap", "munmap", "mremap", "mprotect", "madvise",
        # Files, where Landlock lets them be: Python's own to read, the scratch folder's.
        "read", "write", "readv", "writev", "pread64", "lseek", "close", "open", "openat",
        "stat", "lstat", "fstat", "newfstatat", "statx", "getdents64", "fcntl", "getcwd",
        "chdir", "mkdir", "mkdirat", "unlink", "unlinkat", "rmdir",
        # The pipe to the trusted side.
        "recvfrom", "sendto",
        # Threads (clone only for a thread, see _filter) and their locks.
        "clone", "futex", "set_robust_list", "rseq", "sched_yield", "gettid", "getpid",
        # Its own signal handling, the time, randomness (numpy's seeds), its end, and ioctl
        # only to ask whether a file is a terminal and to set close-on-exec (see _filter).
        "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack",
        "clock_gettime", "clock_getres", "gettimeofday", "clock_nanosleep", "nanosleep",
        "getrandom", "exit", "exit_group", "ioctl",
    }
)  # fmt: skip
# A refused call fails with this errno plus its number: no errno the kernel uses, and below
# the 4,095 a system call can return.
_REFUSED_ERRNO = 1024
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_CLONE_THREAD = 0x00010000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME.
_CLONE_NEW_ANY = 0x7E020080
_PROT_EXEC = 0x4
# What Python asks of a file descriptor: TCGETS (isatty), FIONCLEX and FIOCLEX.
_IOCTLS = (0x5401, 0x5450, 0x5451)
# Each architecture's audit number and its system call numbers (the kernel's unistd
# headers): the allowed calls, clone3, and the refused calls that feedback names by name,
# those a plan past the rules tries; others it names by number.
# fmt: off
_ARCHES = {
    "x86_64": (
        0xC000003E,
        {
            "read": 0, "write": 1, "open": 2, "close": 3, "stat": 4, "fstat": 5, "lstat": 6,
            "lseek": 8, "mmap": 9, "mprotect": 10, "munmap": 11, "brk": 12, "rt_sigaction": 13,
            "rt_sigprocmask": 14, "rt_sigreturn": 15, "ioctl": 16, "pread64": 17, "readv": 19,
            "writev": 20, "pipe": 22, "sched_yield": 24, "mremap": 25, "madvise": 28, "shmget": 29,
            "shmat": 30, "dup": 32, "dup2": 33, "nanosleep": 35, "getpid": 39, "socket": 41,
            "connect": 42, "accept": 43, "sendto": 44, "recvfrom": 45, "sendmsg": 46, "recvmsg": 47,
            "bind": 49, "listen": 50, "socketpair": 53, "clone": 56, "fork": 57, "vfork": 58,
            "execve": 59, "exit": 60, "wait4": 61, "kill": 62, "uname": 63, "semget": 64,
            "semop": 65, "msgget": 68, "msgsnd": 69, "fcntl": 72, "truncate": 76, "getcwd": 79,
            "chdir": 80, "rename": 82, "mkdir": 83, "rmdir": 84, "link": 86, "unlink": 87,
            "symlink": 88, "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94,
            "gettimeofday": 96, "getrusage": 98, "sysinfo": 99, "ptrace": 101, "setuid": 105,
            "setgid": 106, "getppid": 110, "setsid": 112, "getpgid": 121, "rt_sigqueueinfo": 129,
            "sigaltstack": 131, "utime": 132, "mknod": 133, "personality": 135, "setpriority": 141,
            "sched_setparam": 142, "sched_setscheduler": 144, "pivot_root": 155, "prctl": 157,
            "setrlimit": 160, "chroot": 161, "sync": 162, "acct": 163, "settimeofday": 164,
            "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169, "iopl": 172,
            "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179, "gettid": 186,
            "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197,
            "lremovexattr": 198, "fremovexattr": 199, "tkill": 200, "futex": 202,
            "sched_setaffinity": 203, "sched_getaffinity": 204, "getdents64": 217,
            "clock_settime": 227, "clock_gettime": 228, "clock_getres": 229, "clock_nanosleep": 230,
            "exit_group": 231, "tgkill": 234, "utimes": 235, "mq_open": 240, "kexec_load": 246,
            "waitid": 247, "add_key": 248, "request_key": 249, "keyctl": 250, "ioprio_set": 251,
            "inotify_add_watch": 254, "openat": 257, "mkdirat": 258, "mknodat": 259,
            "fchownat": 260, "futimesat": 261, "newfstatat": 262, "unlinkat": 263, "renameat": 264,
            "linkat": 265, "symlinkat": 266, "fchmodat": 268, "unshare": 272,
            "set_robust_list": 273, "splice": 275, "vmsplice": 278, "utimensat": 280,
            "accept4": 288, "eventfd2": 290, "epoll_create1": 291, "dup3": 292, "pipe2": 293,
            "inotify_init1": 294, "rt_tgsigqueueinfo": 297, "perf_event_open": 298,
            "fanotify_init": 300, "prlimit64": 302, "open_by_handle_at": 304, "setns": 308,
            "process_vm_readv": 310, "process_vm_writev": 311, "finit_module": 313,
            "sched_setattr": 314, "renameat2": 316, "seccomp": 317, "getrandom": 318,
            "memfd_create": 319, "kexec_file_load": 320, "bpf": 321, "execveat": 322,
            "userfaultfd": 323, "pkey_mprotect": 329, "statx": 332, "rseq": 334,
            "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426,
            "io_uring_register": 427, "pidfd_open": 434, "clone3": 435,
            "landlock_create_ruleset": 444, "fchmodat2": 452, "setxattrat": 463,
            "removexattrat": 466, "file_setattr": 469,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15,
            "fremovexattr": 16, "getcwd": 17, "eventfd2": 19, "epoll_create1": 20, "dup": 23,
            "dup3": 24, "fcntl": 25, "inotify_init1": 26, "inotify_add_watch": 27, "ioctl": 29,
            "ioprio_set": 30, "mknodat": 33, "mkdirat": 34, "unlinkat": 35, "symlinkat": 36,
            "linkat": 37, "renameat": 38, "umount2": 39, "mount": 40, "pivot_root": 41,
            "truncate": 45, "chdir": 49, "chroot": 51, "fchmod": 52, "fchmodat": 53, "fchownat": 54,
            "fchown": 55, "openat": 56, "close": 57, "pipe2": 59, "quotactl": 60, "getdents64": 61,
            "lseek": 62, "read": 63, "write": 64, "readv": 65, "writev": 66, "pread64": 67,
            "vmsplice": 75, "splice": 76, "newfstatat": 79, "fstat": 80, "sync": 81,
            "utimensat": 88, "acct": 89, "personality": 92, "exit": 93, "exit_group": 94,
            "waitid": 95, "unshare": 97, "futex": 98, "set_robust_list": 99, "nanosleep": 101,
            "kexec_load": 104, "init_module": 105, "delete_module": 106, "clock_settime": 112,
            "clock_gettime": 113, "clock_getres": 114, "clock_nanosleep": 115, "ptrace": 117,
            "sched_setparam": 118, "sched_setscheduler": 119, "sched_setaffinity": 122,
            "sched_getaffinity": 123, "sched_yield": 124, "kill": 129, "tkill": 130, "tgkill": 131,
            "sigaltstack": 132, "rt_sigaction": 134, "rt_sigprocmask": 135, "rt_sigqueueinfo": 138,
            "rt_sigreturn": 139, "setpriority": 140, "reboot": 142, "setgid": 144, "setuid": 146,
            "getpgid": 155, "setsid": 157, "uname": 160, "setrlimit": 164, "getrusage": 165,
            "prctl": 167, "gettimeofday": 169, "settimeofday": 170, "getpid": 172, "getppid": 173,
            "gettid": 178, "sysinfo": 179, "mq_open": 180, "msgget": 186, "msgsnd": 189,
            "semget": 190, "semop": 193, "shmget": 194, "shmat": 196, "socket": 198,
            "socketpair": 199, "bind": 200, "listen": 201, "accept": 202, "connect": 203,
            "sendto": 206, "recvfrom": 207, "sendmsg": 211, "recvmsg": 212, "brk": 214,
            "munmap": 215, "mremap": 216, "add_key": 217, "request_key": 218, "keyctl": 219,
            "clone": 220, "execve": 221, "mmap": 222, "swapon": 224, "swapoff": 225,
            "mprotect": 226, "madvise": 233, "rt_tgsigqueueinfo": 240, "perf_event_open": 241,
            "accept4": 242, "wait4": 260, "prlimit64": 261, "fanotify_init": 262,
            "open_by_handle_at": 265, "setns": 268, "process_vm_readv": 270,
            "process_vm_writev": 271, "finit_module": 273, "sched_setattr": 274, "renameat2": 276,
            "seccomp": 277, "getrandom": 278, "memfd_create": 279, "bpf": 280, "execveat": 281,
            "userfaultfd": 282, "pkey_mprotect": 288, "statx": 291, "rseq": 293,
            "kexec_file_load": 294, "pidfd_send_signal": 424, "io_uring_setup": 425,
            "io_uring_enter": 426, "io_uring_register": 427, "pidfd_open": 434, "clone3": 435,
            "landlock_create_ruleset": 444, "fchmodat2": 452, "setxattrat": 463,
            "removexattrat": 466, "file_setattr": 469,
        },
    ),
}
# fmt: on
_CAPSET = {"x86_64": 126, "aarch64": 91}
_X32_BIT = 0x40000000


@dataclass(frozen=True)
class Limits:
    """The resource limits of one worker.

    Attributes:
        address_space: bytes of virtual memory.
        cpu_seconds: CPU seconds, a backstop behind the trusted side's kill.
        open_files: file descriptors.
        file_bytes: the largest file it may write (in its scratch folder).
        threads: its threads, the first included; counted only where it has a uid of its own
            (see ``namespaces``), since the limit counts all of a uid's processes.
    """

    address_space: int = 4 * 1024**3
    cpu_seconds: int = 120
    open_files: int = 64
    file_bytes: int = 64 * 1024**2
    threads: int = 32


@dataclass(frozen=True)
class Confinement:
    """Which layers a worker got, and why the others are missing."""

    applied: tuple[str, ...]
    missing: dict[str, str]


def confine(scratch: Path, limits: Limits) -> Confinement:
    """Confine this process (a freshly forked worker) for the rest of its life.

    The order matters: the limits are set while they still may be, the namespaces are made
    while the capabilities to switch the uid are still there, the capabilities (those inside
    its user namespace, where it has one) go before anything could use them, and Landlock and
    seccomp come last, once nothing more needs the files or the calls they refuse (seccomp
    refuses namespaces).

    Args:
        scratch: the only folder it may write in; it becomes the working directory.
        limits: its resource limits.
    """
    os.chdir(scratch)
    applied: list[str] = []
    missing: dict[str, str] = {}
    # Landlock names folders by descriptors, opened here: the uid the worker becomes may not
    # reach them all (a Python installed in root's home).
    folders = {path: os.open(path, os.O_PATH | os.O_CLOEXEC) for path in [scratch, *_readable()]}
    layers = (
        ("rlimits", lambda: _rlimits(limits)),
        ("namespaces", lambda: _namespaces(scratch, limits.threads)),
        ("capabilities", _drop_capabilities),
        ("no_new_privs", _no_new_privs),
        ("landlock", lambda: _landlock(scratch, folders)),
        ("seccomp", _seccomp),
    )
    try:
        for name, apply in layers:
            why = apply()
            if why:
                missing[name] = why
            else:
                applied.append(name)
    finally:
        for fd in folders.values():
            os.close(fd)
    return Confinement(tuple(applied), missing)


def _readable() -> list[Path]:
    """Where a worker may read: Python's own files, the packages it imports, lyra's."""
    import numpy

    import lyra

    # The packages' own folders, not the folders above them: a workspace beside lyra's source
    # (an editable install) stays unreadable.
    roots = {Path(sys.base_prefix), Path(sys.prefix)}
    roots |= {Path(str(module.__file__)).resolve().parent for module in (lyra, numpy)}
    return sorted(roots)


def _rlimits(limits: Limits) -> str:
    try:
        for kind, value in (
            (resource.RLIMIT_AS, limits.address_space),
            (resource.RLIMIT_CPU, limits.cpu_seconds),
            (resource.RLIMIT_NOFILE, limits.open_files),
            (resource.RLIMIT_FSIZE, limits.file_bytes),
            (resource.RLIMIT_CORE, 0),
        ):
            resource.setrlimit(kind, (value, value))
    except (OSError, ValueError) as error:
        return f"setrlimit failed: {error}"
    return ""


def die_with_parent() -> None:
    """Ask the kernel to kill this process when the process that forked it ends (Linux)."""
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _namespaces(scratch: Path, threads: int) -> str:
    """Move into a user, IPC and network namespace of its own, as a uid of its own under root.

    The user namespace must come first (it is what lets an unprivileged process make the
    others) and maps one uid only: the worker's. A root trusted side gives each worker an
    unprivileged uid of its own, so that root's files are only the worker's to read and other
    processes are not its to renice; otherwise the worker keeps the user's uid, the only one
    the kernel lets it map. A PID namespace would change nothing: it applies to the children
    of the process that makes it, and a worker can make none.
    """
    if _LIBC is None:
        return f"not available on {sys.platform}"
    root = os.geteuid() == 0
    uid = _FIRST_UID + os.getpid() % _UIDS if root else os.geteuid()
    gid = uid if root else os.getegid()
    why = ""
    try:
        if root:
            os.chown(scratch, uid, gid)
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            # Root stays the saved uid until the namespaces exist, to go back to if they cannot.
            os.setresuid(uid, uid, 0)
            # A new uid makes a process undumpable, which makes its /proc files root's: its
            # uid_map among them.
            _LIBC.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
    except OSError as error:
        why = f"cannot become uid {uid}: {error.strerror}"
    if not why and _LIBC.unshare(_CLONE_NEWUSER | _CLONE_NEWIPC | _CLONE_NEWNET) != 0:
        why = _failed("unshare")
    if why:
        if root:
            # Root again, with its capabilities, and its scratch folder back: as without this layer.
            os.setresuid(0, 0, 0)
            os.setresgid(0, 0, 0)
            os.chown(scratch, 0, 0)
        return why
    try:
        # setgroups is denied first: only then may an unprivileged process map its gid.
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"{uid} {uid} 1"),
            ("gid_map", f"{gid} {gid} 1"),
        ):
            _write(f"/proc/self/{name}", text)
        if root:
            os.setresuid(uid, uid, uid)  # root is no longer the saved uid
    except OSError as error:
        return f"cannot map uid {uid} into its namespace: {error.strerror}"
    # Changing the credentials cancelled the zygote's death signal, set when it forked.
    die_with_parent()
    if root:
        try:
            resource.setrlimit(resource.RLIMIT_NPROC, (threads, threads))
        except (OSError, ValueError) as error:
            return f"setrlimit(RLIMIT_NPROC) failed: {error}"
    return ""


def _write(path: str, text: str) -> None:
    """Write a /proc file in one write, as the kernel reads such files."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _failed(call: str) -> str:
    return f"{call} failed: {os.strerror(ctypes.get_errno())}"


def _drop_capabilities() -> str:
    if _LIBC is None:
        return f"not available on {sys.platform}"
    capset = _CAPSET.get(platform.machine())
    if capset is None:
        return f"no capset number known for {platform.machine()}"
    try:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError) as error:
        return f"cannot read the kernel's capabilities: {error}"
    # The bounding set first (it needs CAP_SETPCAP, about to go), then ambient, then the rest.
    for capability in range(last + 1):
        if _LIBC.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            return _failed(f"prctl(PR_CAPBSET_DROP, {capability})")
    if _LIBC.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0:
        return _failed("prctl(PR_CAP_AMBIENT_CLEAR_ALL)")
    header = struct.pack("=Ii", _CAPABILITY_VERSION_3, 0)
    nothing = bytes(24)  # two of {effective, permitted, inheritable}, all empty
    if _LIBC.syscall(capset, header, nothing) != 0:
        return _failed("capset")
    return ""


def _no_new_privs() -> str:
    if _LIBC is None:
        return f"not available on {sys.platform}"
    if _LIBC.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return _failed("prctl(PR_SET_NO_NEW_PRIVS)")
    return ""


def _landlock(scratch: Path, folders: Mapping[Path, int]) -> str:
    """Write beneath scratch only, read beneath the other folders only (descriptors by path)."""
    if _LIBC is None:
        return f"not available on {sys.platform}"
    libc = _LIBC
    abi = libc.syscall(
        _LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), _LANDLOCK_CREATE_RULESET_VERSION
    )
    if abi < 1:
        return f"the kernel has no Landlock ({os.strerror(ctypes.get_errno())})"
    write = _FS_WRITE_FILE | _FS_REMOVE_DIR | _FS_REMOVE_FILE | _FS_MAKE_DIR | _FS_MAKE_REG
    write |= _FS_TRUNCATE if abi >= 3 else 0
    read = _FS_READ_FILE | _FS_READ_DIR
    handled = write | read | _FS_EXECUTE | _FS_MAKE_OTHER
    handled |= (_FS_REFER if abi >= 2 else 0) | (_FS_IOCTL_DEV if abi >= 5 else 0)
    fields = [handled]
    if abi >= 4:
        fields.append(_NET_ALL)
    if abi >= 6:
        fields.append(_SCOPE_ALL)
    attr = struct.pack(f"{len(fields)}Q", *fields)
    ruleset = libc.syscall(
        _LANDLOCK_CREATE_RULESET, ctypes.c_char_p(attr), ctypes.c_size_t(len(attr)), 0
    )
    if ruleset < 0:
        return _failed("landlock_create_ruleset")
    try:
        for path, fd in folders.items():
            access = write | read if path == scratch else read
            # struct landlock_path_beneath_attr is packed: u64 allowed_access, s32 fd.
            beneath = struct.pack("=Qi", access & handled, fd)
            if libc.syscall(_LANDLOCK_ADD_RULE, ruleset, _LANDLOCK_RULE_PATH_BENEATH, beneath, 0):
                return _failed(f"landlock_add_rule({path})")
        if libc.syscall(_LANDLOCK_RESTRICT_SELF, ruleset, 0):
            return _failed("landlock_restrict_self")
    finally:
        os.close(ruleset)
    return ""


def _filter(arch: int, numbers: Mapping[str, int]) -> list[tuple[int, int, int, int]]:
    """The BPF program: (code, jump if true, jump if false, k) instructions."""
    ld_abs, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    add_k, or_k, ret_a = 0x04, 0x44, 0x16

    def refuse(name: str) -> tuple[int, int, int, int]:
        return (ret, 0, 0, _RET_ERRNO | (_REFUSED_ERRNO + numbers[name]))

    allow = (ret, 0, 0, _RET_ALLOW)
    program = [
        (ld_abs, 0, 0, 4),  # seccomp_data.arch
        (jeq, 1, 0, arch),
        (ret, 0, 0, _RET_KILL_PROCESS),
        (ld_abs, 0, 0, 0),  # seccomp_data.nr
    ]
    if arch == _ARCHES["x86_64"][0]:
        program += [(jge, 0, 1, _X32_BIT), (ret, 0, 0, _RET_ERRNO | errno.EPERM)]
    # clone3's flags sit behind a pointer the filter cannot read: glibc falls back to clone.
    program += [(jeq, 0, 1, numbers["clone3"]), (ret, 0, 0, _RET_ERRNO | errno.ENOSYS)]
    # Calls allowed for some arguments only; the low half of an argument is read, since the
    # flags, protections and requests all fit in 32 bits (little-endian).
    # clone makes threads as well as processes: a thread (CLONE_THREAD) may go, in no new
    # namespace.
    program += [
        (jeq, 0, 5, numbers["clone"]),
        (ld_abs, 0, 0, 16),  # args[0], the flags
        (jset, 2, 0, _CLONE_NEW_ANY),
        (jset, 0, 1, _CLONE_THREAD),
        allow,
        refuse("clone"),
    ]
    for call in ("mmap", "mprotect"):
        program += [
            (jeq, 0, 4, numbers[call]),
            (ld_abs, 0, 0, 32),  # args[2], the protection
            (jset, 0, 1, _PROT_EXEC),
            refuse(call),
            allow,
        ]
    program += [(jeq, 0, 2 + 2 * len(_IOCTLS), numbers["ioctl"]), (ld_abs, 0, 0, 24)]
    for request in _IOCTLS:  # args[1], the request
        program += [(jeq, 0, 1, request), allow]
    program.append(refuse("ioctl"))
    conditional = {"clone", "mmap", "mprotect", "ioctl"}
    for nr in sorted(numbers[name] for name in ALLOWED_CALLS - conditional if name in numbers):
        program += [(jeq, 0, 1, nr), allow]
    # Anything else: the errno that names the call, which is still in the accumulator.
    program += [(add_k, 0, 0, _REFUSED_ERRNO), (or_k, 0, 0, _RET_ERRNO), (ret_a, 0, 0, 0)]
    return program


def _seccomp() -> str:
    if _LIBC is None:
        return f"not available on {sys.platform}"
    machine = platform.machine()
    if machine not in _ARCHES:
        return f"no filter written for {machine}"
    program = _filter(*_ARCHES[machine])
    raw = b"".join(struct.pack("=HBBI", *instruction) for instruction in program)
    buffer = ctypes.create_string_buffer(raw, len(raw))
    fprog = struct.pack("=HxxxxxxQ", len(program), ctypes.addressof(buffer))
    if _LIBC.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.c_char_p(fprog), 0, 0) != 0:
        return _failed("prctl(PR_SET_SECCOMP)")
    return ""


def refused_call(error_number: int) -> str | None:
    """The system call the seccomp layer refused, from the errno it failed with.

    None where the errno is not one of the layer's (system call numbers are below 1,024).
    """
    nr = error_number - _REFUSED_ERRNO
    if not 0 <= nr < _REFUSED_ERRNO or platform.machine() not in _ARCHES:
        return None
    names = {number: name for name, number in _ARCHES[platform.machine()][1].items()}
    return names.get(nr, f"number {nr}")
