"""The record of every accepted skill edit: numbered versions, a JSONL log, git commits, reverts.

Versions live in ``.lyra/history/<skill>/<NNNN>.py`` beside ``log.jsonl``, one JSON line per
version saying when, what changed and why (the task and the person's feedback).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from lyra.library.edit import (
    FileChange,
    Patch,
    check_signature_change,
    validate_module,
    write_atomic,
)
from lyra.library.errors import HistoryError
from lyra.library.parse import source_hash
from lyra.workspace import Workspace

_LOG = "log.jsonl"


@dataclass(frozen=True)
class Version:
    """One recorded version of a skill module.

    Attributes:
        skill: the skill's name.
        version: 1 for the first recorded version, then counting up.
        time: when it was recorded, ISO 8601 in UTC.
        change: what changed, in a few words.
        task: the task the edit was made for, if any.
        feedback: the person's words that led to it, if any.
        source_hash: sha256 of the module text.
    """

    skill: str
    version: int
    time: str
    change: str
    task: str | None
    feedback: str | None
    source_hash: str


def history_dir(workspace: Workspace, skill: str) -> Path:
    """Return the folder holding a skill's versions and log."""
    return workspace.state_dir / "history" / skill


def versions(workspace: Workspace, skill: str) -> list[Version]:
    """Return a skill's recorded versions, oldest first (empty if it has none)."""
    log = history_dir(workspace, skill) / _LOG
    if not log.exists():
        return []
    lines = log.read_text(encoding="utf-8").splitlines()
    return [Version(**json.loads(line)) for line in lines if line.strip()]


def source_of(workspace: Workspace, skill: str, version: int) -> str:
    """Return the module text of one recorded version.

    Raises:
        HistoryError: the version was never recorded.
    """
    path = history_dir(workspace, skill) / f"{version:04d}.py"
    if not path.exists():
        known = ", ".join(str(v.version) for v in versions(workspace, skill)) or "none"
        raise HistoryError(
            f"'{skill}' has no version {version}; recorded versions: {known} "
            f"(see `lyra skills history {skill}`)"
        )
    return path.read_text(encoding="utf-8")


def _append(
    workspace: Workspace,
    skill: str,
    text: str,
    change: str,
    task: str | None,
    feedback: str | None,
    time: str | None = None,
) -> Version:
    folder = history_dir(workspace, skill)
    number = len(versions(workspace, skill)) + 1
    entry = Version(
        skill=skill,
        version=number,
        time=time or datetime.now(UTC).isoformat(timespec="seconds"),
        change=change,
        task=task,
        feedback=feedback,
        source_hash=source_hash(text),
    )
    write_atomic(folder / f"{number:04d}.py", text)
    with (folder / _LOG).open("a", encoding="utf-8") as log:
        log.write(json.dumps(asdict(entry)) + "\n")
    return entry


def record(
    workspace: Workspace, patch: Patch, *, task: str | None = None, feedback: str | None = None
) -> list[Version]:
    """Record the new text of every skill module an applied patch wrote.

    A module edited for the first time also gets its text from before the edit recorded, so
    the first lyra edit of a hand-written skill can be reverted.

    Args:
        workspace: the workspace the patch was applied to.
        patch: the applied patch.
        task: the task the edit was made for.
        feedback: the person's words that led to the edit.
    """
    recorded = []
    for change in patch.changes:
        if change.after is None or change.path.parent != workspace.skills_dir:
            continue
        skill = change.path.stem
        if change.before is not None and not versions(workspace, skill):
            _append(
                workspace, skill, change.before, "as found before lyra's first edit", None, None
            )
        recorded.append(_append(workspace, skill, change.after, patch.summary, task, feedback))
    return recorded


def import_from_git(workspace: Workspace, skill: str) -> list[Version]:
    """Record a skill's versions from the git log of its module, when none are recorded here.

    ``.lyra/`` is not committed, so a fresh clone has no history of its own; every accepted step
    was a ``lyra: TASK: CHANGE`` commit, and those commits are the history. Nothing is done when
    versions are already recorded, or when the workspace is not a git repository.

    Returns:
        The versions now recorded, oldest first.
    """
    known = versions(workspace, skill)
    if known or git_head(workspace.root) is None:
        return known
    module = f"skills/{skill}.py"
    log = _git(workspace.root, "log", "--reverse", "--format=%H%x00%cI%x00%s", "--", module)
    for line in log.stdout.splitlines():
        commit, when, subject = line.split("\0", 2)
        shown = _git(workspace.root, "show", f"{commit}:{module}")
        if shown.returncode != 0:
            continue  # the commit deleted the module
        lyra, task, change = subject.split(": ", 2) if subject.count(": ") >= 2 else ("", "", "")
        _append(
            workspace,
            skill,
            shown.stdout,
            change if lyra == "lyra" else subject,
            task if lyra == "lyra" else None,
            None,
            time=datetime.fromisoformat(when).astimezone(UTC).isoformat(timespec="seconds"),
        )
    return versions(workspace, skill)


def record_paths(workspace: Workspace, patch: Patch) -> list[Path]:
    """The files :func:`record` would write for a patch, so that a journal can undo them."""
    paths = []
    for change in patch.changes:
        if change.after is None or change.path.parent != workspace.skills_dir:
            continue
        skill = change.path.stem
        folder = history_dir(workspace, skill)
        count = len(versions(workspace, skill))
        new = 2 if change.before is not None and count == 0 else 1
        paths += [folder / _LOG, *(folder / f"{count + i:04d}.py" for i in range(1, new + 1))]
    return paths


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )


def commit_step(workspace: Workspace, patch: Patch, task: str) -> str | None:
    """Commit the files an applied patch changed, if the workspace is a git repository.

    Only those files are committed; anything else staged or modified is left alone.

    Args:
        workspace: the workspace the patch was applied to.
        patch: the applied patch.
        task: the task it was made for; the commit message names it.

    Returns:
        The new commit's id, or None when the workspace is not in a git repository.

    Raises:
        HistoryError: git refused the commit (its message says why).
    """
    root = workspace.root
    if _git(root, "rev-parse", "--is-inside-work-tree").returncode != 0:
        return None
    paths = [str(change.path.relative_to(root)) for change in patch.changes]
    tracked = set(_git(root, "ls-files", "--", *paths).stdout.splitlines())
    # A deleted file can only be staged if git knew it; new and edited files always can.
    present = [p for p in paths if (root / p).exists() or p in tracked]
    for args in (
        ("add", "-A", "--", *present),
        ("commit", "-q", "-m", commit_message(task, patch), "--", *present),
    ):
        done = _git(root, *args)
        if done.returncode != 0:
            raise HistoryError(
                f"git {args[0]} failed in {root}: {done.stderr.strip() or done.stdout.strip()}; "
                "fix the repository (for example set user.name and user.email) and commit by hand"
            )
    return _git(root, "rev-parse", "HEAD").stdout.strip()


def commit_message(task: str, patch: Patch) -> str:
    """The message of the commit :func:`commit_step` makes."""
    return f"lyra: {task}: {patch.summary}"


def git_head(root: Path) -> tuple[str, str] | None:
    """The id and subject of the last commit, ("", "") with none yet; None if not a repository."""
    if _git(root, "rev-parse", "--is-inside-work-tree").returncode != 0:
        return None
    done = _git(root, "log", "-1", "--format=%H%n%s")
    head, _, subject = done.stdout.strip().partition("\n") if done.returncode == 0 else ("", "", "")
    return head, subject


def git_parent(root: Path, commit: str) -> str:
    """The id of a commit's first parent ("" for a root commit or an unknown one)."""
    done = _git(root, "rev-parse", "--verify", "-q", f"{commit}^")
    return done.stdout.strip() if done.returncode == 0 else ""


def unstage(root: Path, paths: list[Path]) -> None:
    """Take files out of git's index again (after a failed commit); the work tree is untouched."""
    names = [str(path.relative_to(root)) for path in paths]
    if _git(root, "rev-parse", "--verify", "-q", "HEAD").returncode == 0:
        _git(root, "reset", "-q", "--", *names)
    else:
        _git(root, "rm", "-q", "--cached", "--ignore-unmatch", "--", *names)


def revert(
    workspace: Workspace, skill: str, to: int | None = None, *, task: str | None = None
) -> Patch:
    """Restore a recorded version of a skill, validated like any edit, and record it.

    Args:
        workspace: the workspace.
        skill: the skill's name.
        to: the version to restore; None restores the one before the latest.
        task: the task the revert is made for, if any.

    Returns:
        The applied patch (pass it to :func:`commit_step` to commit it).

    Raises:
        HistoryError: the version does not exist.
        ValidationError: the version is no longer a valid module here.
        SignatureError: its signature would break a current call of the skill.
    """
    recorded = versions(workspace, skill)
    target = to if to is not None else len(recorded) - 1
    text = source_of(workspace, skill, target)
    path = workspace.skills_dir / f"{skill}.py"
    before = path.read_text(encoding="utf-8") if path.exists() else None
    validate_module(text, skill, f"skills/{skill}.py")
    if before is not None:
        check_signature_change(workspace, skill, before, text)
    patch = Patch((FileChange(path, before, text),), f"{skill}: reverted to version {target}")
    patch.apply()
    record(workspace, patch, task=task)
    return patch
