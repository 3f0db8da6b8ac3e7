from __future__ import annotations

import subprocess

import pytest

from lyra.library.edit import stage_answer
from lyra.library.errors import HistoryError
from lyra.library.history import commit_step, record, revert, source_of, versions
from lyra.workspace import Workspace

BODY = (
    "def stack(blocks: list[str]) -> None:\n"
    "    for upper in blocks[1:]:\n"
    "        pick_onto(upper, blocks[0])\n"
)


def test_record_and_revert(workspace: Workspace) -> None:
    path = workspace.skills_dir / "stack.py"
    original = path.read_text()
    patch = stage_answer(workspace, "stack", BODY)
    patch.apply()
    recorded = record(workspace, patch, task="ravens/stack-3", feedback="all on the first block")
    assert [(v.version, v.change, v.task, v.feedback) for v in recorded] == [
        (2, "stack: changed stack", "ravens/stack-3", "all on the first block")
    ]
    assert [(v.version, v.change) for v in versions(workspace, "stack")] == [
        (1, "as found before lyra's first edit"),
        (2, "stack: changed stack"),
    ]
    assert source_of(workspace, "stack", 1) == original
    edited = path.read_text()
    reverted = revert(workspace, "stack")
    assert reverted.summary == "stack: reverted to version 1"
    assert path.read_text() == original
    assert versions(workspace, "stack")[-1].version == 3
    revert(workspace, "stack", to=2)
    assert path.read_text() == edited
    with pytest.raises(HistoryError) as caught:
        revert(workspace, "stack", to=9)
    assert str(caught.value) == (
        "'stack' has no version 9; recorded versions: 1, 2, 3, 4 (see `lyra skills history stack`)"
    )


def git(root: object, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout


def start_repository(root: object, message: str) -> None:
    git(root, "init", "-q")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def test_commit_step_commits_only_the_changed_files(workspace: Workspace) -> None:
    root = workspace.root
    start_repository(root, "start")
    (root / "notes.txt").write_text("not part of the step\n")
    patch = stage_answer(workspace, "stack", BODY)
    patch.apply()
    commit = commit_step(workspace, patch, "ravens/stack-3")
    assert commit == git(root, "rev-parse", "HEAD").strip()
    assert git(root, "log", "-1", "--format=%s") == "lyra: ravens/stack-3: stack: changed stack\n"
    assert git(root, "show", "--name-only", "--format=", "HEAD") == "skills/stack.py\n"
    assert git(root, "status", "--porcelain") == "?? notes.txt\n"


def test_commit_step_outside_git_does_nothing(workspace: Workspace) -> None:
    patch = stage_answer(workspace, "stack", BODY)
    patch.apply()
    if (
        subprocess.run(
            ["git", "-C", str(workspace.root), "rev-parse"], capture_output=True
        ).returncode
        == 0
    ):
        pytest.skip("tmp folder lies inside a git repository")
    assert commit_step(workspace, patch, "t") is None


def test_a_fresh_clone_gets_the_history_from_lyras_commits(workspace: Workspace) -> None:
    from lyra.library.history import import_from_git

    root = workspace.root
    start_repository(root, "a hand-written start")
    original = (workspace.skills_dir / "stack.py").read_text()
    patch = stage_answer(workspace, "stack", BODY)
    patch.apply()
    commit_step(workspace, patch, "ravens/stack-3")
    edited = (workspace.skills_dir / "stack.py").read_text()
    # What a clone has: the files and git, no .lyra/.
    assert versions(workspace, "stack") == []
    found = import_from_git(workspace, "stack")
    assert [(v.version, v.change, v.task) for v in found] == [
        (1, "a hand-written start", None),
        (2, "stack: changed stack", "ravens/stack-3"),
    ]
    assert source_of(workspace, "stack", 1) == original
    assert source_of(workspace, "stack", 2) == edited
    assert import_from_git(workspace, "stack") == found  # once only
    revert(workspace, "stack")
    assert (workspace.skills_dir / "stack.py").read_text() == original
    assert import_from_git(workspace, "not_a_skill") == []
