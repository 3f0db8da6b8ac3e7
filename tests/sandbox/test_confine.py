"""The OS layers of a code worker, tried by unrestricted Python inside a confined process.

Each attempt runs in a fresh interpreter that confines itself exactly as a worker does, and
then does what generated code that escaped every Python-level rule would do. The layers must
stop it whatever the Python-level rules let through.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lyra.sandbox import LAYERS, run_code
from lyra.sandbox.zygote import _SINGLE_THREADED
from tests.sandbox.conftest import FakeTable

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="Landlock and seccomp are Linux's"
)

ATTEMPTS = {
    "write_outside": "open(OUTSIDE / 'evil.py', 'w').write('x')",
    "append_to_a_skill": "open(OUTSIDE / 'put_on.py', 'a').write('import os')",
    "delete_outside": "(OUTSIDE / 'put_on.py').unlink()",
    "make_a_folder_outside": "(OUTSIDE / 'new').mkdir()",
    "read_the_workspace": "(OUTSIDE / 'put_on.py').read_text()",
    "fork": "os.fork()",
    "run_a_program": "os.execv('/bin/true', ['true'])",
    "spawn_a_shell": "subprocess.run(['true'], check=True)",
    "os_system": "assert os.system('touch ' + str(OUTSIDE / 'touched')) == 0",
    "open_a_socket": "socket.socket(socket.AF_INET, socket.SOCK_STREAM)",
    "connect_out": "socket.create_connection(('127.0.0.1', 9), timeout=1)",
    "a_unix_socket": "socket.socketpair()",
    "signal_another_process": "os.kill(PARENT, 0)",  # signal 0: asks only whether it could
    "allocate_ten_gigabytes": "bytearray(10 * 1024**3)",
    "make_a_block_device": "os.mknod(SCRATCH / 'disk', 0o600 | stat.S_IFBLK, os.makedev(8, 0))",
    "raise_a_limit_again": "resource.setrlimit(resource.RLIMIT_AS, (2**40, 2**40))",
    "chmod_outside": "os.chmod(OUTSIDE / 'put_on.py', 0o777)",
    "chown_outside": "os.chown(OUTSIDE / 'put_on.py', 1000, 1000)",
    "truncate_outside": "os.truncate(OUTSIDE / 'put_on.py', 0)",
    "link_out_of_scratch": "os.symlink(OUTSIDE / 'put_on.py', SCRATCH / 'link')",
}
WITHIN = {
    "write_in_scratch": "(SCRATCH / 'note.txt').write_text('ok')",
    # Not the standard library: where Python lives in root's home, a worker given a uid of its
    # own cannot reach it (and needs not: the zygote imported what it uses).
    "read_lyra": "import lyra.api; open(lyra.api.__file__).read()",
    "compute_with_numpy": "import numpy; float(numpy.linalg.norm(numpy.ones(3)))",
    "start_a_thread": "t = threading.Thread(target=lambda: None); t.start(); t.join()",
}

PROBE = """
import json, os, resource, signal, socket, stat, subprocess, sys, threading
import encodings.idna  # imported before, as the zygote imports what workers use: see read_lyra
from pathlib import Path
from lyra.sandbox.confine import Limits, confine

SCRATCH, OUTSIDE, PARENT = Path(sys.argv[1]), Path(sys.argv[2]), os.getppid()
confinement = confine(SCRATCH, Limits())
outcomes = {}
for name, attempt in json.loads(sys.argv[3]).items():
    try:
        exec(attempt)
        outcomes[name] = "done"
    except BaseException as error:
        outcomes[name] = type(error).__name__
print(json.dumps({"applied": confinement.applied, "missing": confinement.missing,
                  "outcomes": outcomes}))
"""


@pytest.fixture
def top() -> Iterator[Path]:
    """A folder for scratch and skills that a worker's uid may reach, as the trusted side's is.

    Not tmp_path: pytest's folders are closed to other users.
    """
    folder = Path(tempfile.mkdtemp(prefix="lyra-probe-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def probe(top: Path, attempts: dict[str, str]) -> dict[str, object]:
    scratch, outside = top / "scratch", top / "skills"
    scratch.mkdir(mode=0o700)
    outside.mkdir()
    (outside / "put_on.py").write_text("def put_on(): ...\n")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(scratch), str(outside), json.dumps(attempts)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        # As the zygote starts: one thread, else no user namespace can be made.
        env={**os.environ, **_SINGLE_THREADED},
    )
    assert sorted(p.name for p in outside.iterdir()) == ["put_on.py"]
    assert (outside / "put_on.py").read_text() == "def put_on(): ...\n"
    return json.loads(done.stdout)


def test_every_layer_applies_here(top: Path) -> None:
    report = probe(top, {})
    assert (report["applied"], report["missing"]) == (list(LAYERS), {})


def test_what_escaped_code_would_try_is_refused_by_the_os(top: Path) -> None:
    outcomes = probe(top, ATTEMPTS)["outcomes"]
    assert outcomes == {
        "write_outside": "PermissionError",
        "append_to_a_skill": "PermissionError",
        "delete_outside": "PermissionError",
        "make_a_folder_outside": "PermissionError",
        "read_the_workspace": "PermissionError",
        "fork": "PermissionError",
        "run_a_program": "PermissionError",
        "spawn_a_shell": "PermissionError",
        "os_system": "AssertionError",  # the shell cannot start: a nonzero status
        "open_a_socket": "PermissionError",
        "connect_out": "PermissionError",
        "a_unix_socket": "PermissionError",
        "signal_another_process": "PermissionError",
        "allocate_ten_gigabytes": "MemoryError",
        "make_a_block_device": "PermissionError",
        "raise_a_limit_again": "ValueError",  # beyond the hard limit, which cannot be raised
        "chmod_outside": "PermissionError",
        "chown_outside": "PermissionError",
        "truncate_outside": "PermissionError",
        "link_out_of_scratch": "PermissionError",
    }


def test_what_a_plan_needs_still_works(top: Path) -> None:
    outcomes = probe(top, WITHIN)["outcomes"]
    assert outcomes == {name: "done" for name in WITHIN}
    assert (top / "scratch" / "note.txt").read_text() == "ok"


def test_a_run_reports_its_layers_and_can_require_them() -> None:
    result = run_code("from lyra.api import object_names\nobject_names()\n", FakeTable())
    assert result.ok and result.confined == LAYERS
    required = run_code("x = 1\n", FakeTable(), require=LAYERS)
    assert required.ok and required.confined == LAYERS


def test_a_memory_bomb_becomes_feedback() -> None:
    result = run_code("x = 'x' * 10**10\n", FakeTable())
    assert (result.ok, result.error) == (False, "exception")
    assert result.feedback == "MemoryError\n  at <task>:1: x = 'x' * 10**10"


def test_a_backend_that_requires_a_layer_gets_no_run_without_it(toy_registered_spec) -> None:
    from lyra.episode import run_episode

    backend = toy_registered_spec.make()
    backend.spec = toy_registered_spec
    run = run_episode(
        backend, toy_registered_spec.sample_scene().scene, 0, "x = 1\n", skills_root=None
    )
    assert (run.result.error, run.result.feedback) == (
        "policy",
        "the code was not run: this machine cannot confine it as required (tpm: not a layer "
        "lyra knows); run on a machine with these layers, or do not require them",
    )
