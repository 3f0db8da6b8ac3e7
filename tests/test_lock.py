"""One writer per workspace: a second one is told who holds it; a dead holder's lock is free."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lyra.lock import WorkspaceLockedError, acquire, lock_path, locked, release
from lyra.workspace import Workspace

HOLD = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from lyra.lock import acquire\n"
    "from lyra.workspace import Workspace\n"
    "acquire(Workspace(Path(sys.argv[1])))\n"
    "print('held', flush=True)\n"
    "time.sleep(60)\n"
)


def holder(root: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(root)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    return process


def test_a_second_writer_is_refused_naming_the_holder(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    process = holder(tmp_path)
    try:
        with pytest.raises(WorkspaceLockedError) as caught:
            acquire(workspace)
        message = str(caught.value)
        assert message.startswith(
            f"the workspace {tmp_path} is in use by process {process.pid} on "
        )
        assert message.endswith(
            "; wait for it to finish (or stop it): one lyra command at a time may change a "
            "workspace"
        )
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    # The kill freed it: the lock of a dead process is simply taken.
    with locked(workspace):
        assert f'"pid": {os.getpid()}' in lock_path(workspace).read_text()


def test_a_process_may_take_its_own_lock_again(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    acquire(workspace)
    acquire(workspace)  # a plan teaching a skill: the loop nests
    release(workspace)
    process = subprocess.run(
        [sys.executable, "-c", HOLD.replace("time.sleep(60)", ""), str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert "WorkspaceLockedError" in process.stderr  # still held once
    release(workspace)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", HOLD.replace("time.sleep(60)", ""), str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.stdout == "held\n" and time.monotonic() - started < 30


def test_two_learning_loops_never_write_one_workspace(tmp_path: Path) -> None:
    from lyra.memory.embedders import EmbedderConfig
    from lyra.memory.store import open_memory
    from lyra.teach import Learner
    from lyra.teachers import ScriptedTeacher
    from tests.test_teach import ScriptedLLM

    (tmp_path / "skills").mkdir()
    workspace = Workspace(tmp_path)
    process = holder(tmp_path)
    try:
        with pytest.raises(WorkspaceLockedError):
            Learner(
                workspace,
                ScriptedLLM(skill_learning=["-"]),
                ScriptedTeacher(),
                open_memory(workspace, EmbedderConfig(kind="none")),
            )
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    # Refused before it touched anything: the memory it was handed was never rebuilt.
    assert list((workspace.state_dir / "memory").iterdir()) == []
