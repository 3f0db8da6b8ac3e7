"""kill -9 at 21 points of learning: nothing lost, nothing half-written, resume finishes the job.

A two-task curriculum (a new skill, then an extension that re-checks the first task) is
learnt by `lyra learn` in a subprocess, from a replayed session, in a git workspace. Each run
is killed with SIGKILL at one point: aimed at every boundary inside the commit of a learnt
step (after the journal, the skill module, the example, the progress, the history, each
memory index, after `git add`, after `git commit`, and with the memory's source digest
half-written), in the first and the second task, and at random moments. After the kill the
files are whole; after `lyra learn` again, the workspace equals an uninterrupted run's, byte
for byte.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lyra.curriculum import load_curriculum
from lyra.llm import LoggedProvider
from lyra.memory.embedders import EmbedderConfig
from lyra.memory.store import open_memory
from lyra.teach import Learner
from lyra.teachers import ScriptedTeacher
from lyra.workspace import Workspace
from tests.test_teach import (
    BESIDE,
    BESIDE_MODULE,
    BESIDE_TASK,
    CURRICULUM,
    GOOD,
    GOOD_MODULE,
    HEADER,
    ScriptedLLM,
    answer,
)

pytestmark = pytest.mark.slow


# Runs `lyra learn` and SIGKILLs itself at the chosen point (the nth time it is reached).
KILLER = textwrap.dedent(
    """
    import os, signal, sys, threading
    import lyra.curriculum, lyra.journal, lyra.library.edit, lyra.library.history
    import lyra.memory.store
    point, nth, delay, log = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    seen = {"n": 0}

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    def after(owner, name):
        original = getattr(owner, name)
        def wrapped(*args, **kwargs):
            result = original(*args, **kwargs)
            seen["n"] += 1
            if seen["n"] == nth:
                die()
            return result
        setattr(owner, name, wrapped)

    targets = {
        "journal": (lyra.journal._Journal, "save"),
        "module": (lyra.library.edit.Patch, "apply"),
        "example": (lyra.journal, "save_example"),
        "progress": (lyra.curriculum.Progress, "save"),
        "history": (lyra.journal, "record"),
        "skill_index": (lyra.memory.store.Memory, "index_skill"),
        "example_index": (lyra.memory.store.Memory, "index_example"),
        "git_commit": (lyra.journal, "commit_step"),
    }
    if point in targets:
        after(*targets[point])
    elif point == "git_add":  # after `git add`, before `git commit`
        original = lyra.library.history._git
        def git(root, *args):
            if args[0] == "commit":
                seen["n"] += 1
                if seen["n"] == nth:
                    die()
            return original(root, *args)
        lyra.library.history._git = git
    elif point == "digest":  # the memory's source digest in its temporary file, not yet renamed
        original_replace = os.replace
        def replace(source, target):
            if str(target).endswith("sources.sha256"):
                seen["n"] += 1
                if seen["n"] == nth:
                    die()
            return original_replace(source, target)
        os.replace = replace
    elif point == "random":
        timer = threading.Timer(delay, die)
        timer.daemon = True  # a run that ends first is not killed on its way out
        timer.start()
    from lyra.cli import main
    sys.exit(main(["learn", "curriculum.yaml", "--llm", "replay:" + log]))
    """
)

POINTS = [
    *((point, 1) for point in ("journal", "module", "example", "progress", "history")),
    *((point, 1) for point in ("skill_index", "example_index", "git_add", "git_commit")),
    *((point, 2) for point in ("journal", "module", "history", "git_commit", "digest")),
]
# Counted from the end of the imports, a run learns in about 1.4 s here: the kills land in it.
_RNG = random.Random(7)
RANDOM_DELAYS = sorted(_RNG.uniform(0.2, 1.3) for _ in range(7))


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two tasks' session, answered by the test's script (not a model), as a replay log."""
    root = tmp_path_factory.mktemp("recording")
    workspace = fresh_workspace(root / "ws")
    llm = ScriptedLLM(
        skill_parser=[HEADER],
        skill_learning=[GOOD, answer(BESIDE_MODULE, BESIDE_TASK)],
    )
    log = root / "session.jsonl"
    learner = Learner(
        workspace,
        LoggedProvider(llm, log),
        ScriptedTeacher(),
        open_memory(workspace, EmbedderConfig(kind="none")),
        say=lambda _: None,
    )
    try:
        outcomes = learner.learn(load_curriculum(workspace.root / "curriculum.yaml"))
    finally:
        learner.close()
    assert [o.accepted for o in outcomes] == [True, True]
    return log


def fresh_workspace(root: Path) -> Workspace:
    (root / "skills").mkdir(parents=True)
    (root / "skills" / "__init__.py").write_text("")
    (root / "curriculum.yaml").write_text(CURRICULUM + BESIDE)
    for args in (["init", "-q"], ["config", "user.email", "t@t"], ["config", "user.name", "t"]):
        subprocess.run(["git", "-C", str(root), *args], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "start"], check=True)
    return Workspace(root)


def learn(workspace: Workspace, log: Path, point: str = "none", nth: int = 0, delay: float = 0):
    env = {**os.environ, "LYRA_WORKSPACE": str(workspace.root), "LYRA_EMBEDDER": "none"}
    return subprocess.run(
        [sys.executable, "-c", KILLER, point, str(nth), str(delay), str(log)],
        cwd=workspace.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def state_of(workspace: Workspace) -> dict[str, object]:
    """What must come out the same: skills, examples (but their time), progress, history, git."""

    def without_time(text: str) -> str:
        return "\n".join(line for line in text.splitlines() if not line.startswith("created:"))

    history = workspace.state_dir / "history"
    git = subprocess.run(
        ["git", "-C", str(workspace.root), "log", "--format=%s", "--name-only"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {
        "skills": {p.name: p.read_text() for p in sorted(workspace.skills_dir.glob("*.py"))},
        "examples": {
            p.name: without_time(p.read_text()) for p in sorted(workspace.examples_dir.glob("*"))
        },
        "progress": (workspace.state_dir / "progress" / "test-loop.json").read_text(),
        "history": {
            str(p.relative_to(history)): (
                [
                    {k: v for k, v in json.loads(line).items() if k != "time"}
                    for line in p.read_text().splitlines()
                ]
                if p.suffix == ".jsonl"
                else p.read_text()
            )
            for p in sorted(history.rglob("*"))
            if p.is_file()
        },
        "git": git,
        "leftovers": sorted(str(p) for p in workspace.root.rglob("*.tmp")),
        "journal": (workspace.state_dir / "journal.json").exists(),
    }


@pytest.fixture(scope="module")
def uninterrupted(recording: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    workspace = fresh_workspace(tmp_path_factory.mktemp("reference") / "ws")
    done = learn(workspace, recording)
    assert done.returncode == 0, done.stderr
    return state_of(workspace)


def whole(workspace: Workspace, reference: dict[str, object]) -> None:
    """After a kill: every file is one a run writes, complete; nothing else is there."""
    skills = {p.name: p.read_text() for p in workspace.skills_dir.glob("*.py")}
    allowed = {
        "__init__.py": {""},
        "put_on.py": {
            reference["skills"]["put_on.py"],
            GOOD_MODULE.removeprefix("# skills/put_on.py\n"),
        },
    }  # type: ignore[index]
    assert all(text in allowed[name] for name, text in skills.items()), skills
    for path in workspace.examples_dir.glob("*.yaml"):
        assert path.read_text().startswith("id: test_loop_red_")


@pytest.mark.parametrize(
    ("point", "nth", "delay"),
    [*((p, n, 0.0) for p, n in POINTS), *(("random", 0, d) for d in RANDOM_DELAYS)],
)
def test_a_kill_anywhere_loses_nothing_and_resume_finishes(
    recording: Path,
    uninterrupted: dict[str, object],
    tmp_path: Path,
    point: str,
    nth: int,
    delay: float,
) -> None:
    workspace = fresh_workspace(tmp_path / "ws")
    killed = learn(workspace, recording, point, nth, delay)
    assert killed.returncode in (-9, 0), killed.stderr
    if point != "random":
        assert killed.returncode == -9  # the aimed kill happened
    whole(workspace, uninterrupted)
    resumed = learn(workspace, recording)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert state_of(workspace) == uninterrupted
    shutil.rmtree(workspace.root)


def test_recovery_deletes_what_a_kill_left_of_the_journal_being_written(tmp_path: Path) -> None:
    """Killed inside the journal's own atomic write: only its temporary file is there."""
    from lyra.journal import recover

    workspace = Workspace(tmp_path)
    workspace.state_dir.mkdir()
    left = workspace.state_dir / ".journal.json.ndt4hn39.tmp"
    left.write_text('{"head": nu')  # half a journal: the kill came before the rename
    other = workspace.state_dir / "notes.tmp"
    other.write_text("not write_atomic's")
    assert recover(workspace) == []
    assert not left.exists() and other.exists()
    assert not (workspace.state_dir / "journal.json").exists()
