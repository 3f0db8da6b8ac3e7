"""A learnt step as one transaction: skill modules, example, progress, history, memory, git commit.

Before the first write, a journal notes what every file the step touches holds now and where
git's HEAD is. Then the files are written, the history recorded, the memory indexed and, last,
the commit made. If any of it fails, everything is put back (files, git's index, the memory's
rows) and the error raised; if the process dies part-way, the next start finds the journal and
finishes the step (its commit made it into git) or undoes it (it did not).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lyra.curriculum import Progress
from lyra.errors import LyraError
from lyra.examples import Example, load_example, save_example
from lyra.files import remove_temporaries, write_atomic
from lyra.library.edit import FileChange, Patch
from lyra.library.history import (
    commit_message,
    commit_step,
    git_head,
    git_parent,
    record,
    record_paths,
    unstage,
)
from lyra.library.parse import parse_library
from lyra.workspace import Workspace

if TYPE_CHECKING:
    from lyra.memory.store import Memory


def journal_path(workspace: Workspace) -> Path:
    """Where the journal of the step in progress is kept."""
    return workspace.state_dir / "journal.json"


@dataclass(frozen=True)
class _Journal:
    """What a step changes, noted before its first write.

    Each file's text before it (None: absent), by path relative to the workspace (which may
    have moved by the time it is read); the folders it made; git's HEAD (id and subject; None:
    no repository); the message of the commit it makes.
    """

    before: dict[str, str | None]
    made: list[str]
    head: tuple[str, str] | None
    message: str

    def save(self, workspace: Workspace) -> None:
        workspace.state_dir.mkdir(parents=True, exist_ok=True)
        data = {
            "before": self.before,
            "made": self.made,
            "head": self.head,
            "message": self.message,
        }
        write_atomic(journal_path(workspace), json.dumps(data))

    @classmethod
    def load(cls, workspace: Workspace) -> _Journal | None:
        path = journal_path(workspace)
        if not path.exists():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        head = (str(data["head"][0]), str(data["head"][1])) if data.get("head") else None
        return cls(data["before"], data.get("made", []), head, data.get("message", ""))


def commit_learnt_step(
    workspace: Workspace,
    *,
    patch: Patch,
    example: Example,
    progress: Progress,
    memory: Memory,
    feedback: str | None,
) -> None:
    """Keep an accepted step: all of it, or (on any error) none of it.

    Args:
        workspace: where it is kept.
        patch: the skill edit (no changes for a plan or a skill reused as it is).
        example: the accepted example, the task's regression check from now on.
        progress: the curriculum's progress, with the task already marked accepted.
        memory: the index that learns the edited skills and the example.
        feedback: the person's corrections, for the history.

    Raises:
        HistoryError: git refused the commit; nothing was kept, and the message says what to fix.
    """
    task = example.task or example.id
    example_path = workspace.examples_dir / f"{example.id}.yaml"
    progress_path = Progress.path(workspace, progress.curriculum)
    touched = [c.path for c in patch.changes] + record_paths(workspace, patch)
    touched += [example_path, progress_path]
    root = workspace.root
    before = {
        str(p.relative_to(root)): p.read_text(encoding="utf-8") if p.exists() else None
        for p in touched
    }
    made = sorted(
        {str(folder.relative_to(root)) for p in touched for folder in _missing_folders(p, root)},
        key=lambda name: -name.count("/"),
    )
    journal = _Journal(before, made, git_head(root), commit_message(task, patch))
    journal.save(workspace)
    try:
        memory.forget_sources()
        patch.apply()
        save_example(example, workspace.examples_dir)
        progress.save(workspace)
        record(workspace, patch, task=task, feedback=feedback)
        library = parse_library(workspace.skills_dir)
        for change in patch.changes:
            if change.path.stem in library.records:
                memory.index_skill(library.records[change.path.stem])
        memory.index_example(example)
        step = Patch(
            (*patch.changes, FileChange(example_path, None, example_path.read_text())),
            patch.summary,
        )
        commit_step(workspace, step, task)
        memory.note_sources(workspace)
    except BaseException:
        _undo(workspace, journal, memory)
        raise
    journal_path(workspace).unlink()


def recover(workspace: Workspace) -> list[Path]:
    """Finish or undo a step a crash interrupted; return the files put back (none: nothing to do).

    The memory is not touched: it is rebuilt from the files when the loop starts. What a
    killed atomic write left behind (a temporary file) is deleted.

    Raises:
        LyraError: git was interrupted mid-command (its index lock is still there), so the
            repository must be looked at before anything is undone.
    """
    state = workspace.state_dir
    # The memory's folder too: a kill while its source digest is written leaves one there.
    remove_temporaries(
        [
            workspace.skills_dir,
            workspace.examples_dir,
            state / "history",
            state / "progress",
            state / "memory",
        ]
    )
    # The journal's own write, killed before its rename, leaves one beside it; no step began.
    for path in state.glob(f".{journal_path(workspace).name}.*.tmp"):
        path.unlink(missing_ok=True)
    journal = _Journal.load(workspace)
    if journal is None:
        return []
    if journal.head is not None and (workspace.root / ".git" / "index.lock").exists():
        raise LyraError(
            f"a git command in {workspace.root} was interrupted while lyra kept a learnt step "
            "(.git/index.lock is still there): if no git command is running, delete that file, "
            "then run lyra again to finish or undo the step"
        )
    if journal.head is not None and _committed(workspace.root, journal):
        journal_path(workspace).unlink()
        return []
    restored = _restore(workspace, journal)
    journal_path(workspace).unlink()
    return restored


def _committed(root: Path, journal: _Journal) -> bool:
    """Whether the step's commit, its last write, made it.

    It did when HEAD is the next commit after the journal's, with the step's message.
    """
    now = git_head(root)
    if now is None or journal.head is None or now == journal.head or now[1] != journal.message:
        return False
    return git_parent(root, now[0]) == journal.head[0]


def _missing_folders(path: Path, root: Path) -> list[Path]:
    """The folders above ``path`` (up to the workspace) that do not exist yet."""
    missing = []
    for folder in path.parents:
        if folder == root or folder.exists():
            break
        missing.append(folder)
    return missing


def _restore(workspace: Workspace, journal: _Journal) -> list[Path]:
    paths = []
    for name, text in journal.before.items():
        path = workspace.root / name
        if text is None:
            path.unlink(missing_ok=True)
        else:
            write_atomic(path, text)
        paths.append(path)
    for name in journal.made:  # deepest first; only what the step made, if it is empty
        with contextlib.suppress(OSError):
            (workspace.root / name).rmdir()
    if journal.head is not None:
        unstage(workspace.root, paths)
    return paths


def _undo(workspace: Workspace, journal: _Journal, memory: Memory) -> None:
    """Put the files, git's index and the memory's rows back as they were before the step."""
    restored = _restore(workspace, journal)
    library = parse_library(workspace.skills_dir)
    for path in restored:
        # Best effort: the memory is rebuilt from the files anyway when the loop next starts.
        with contextlib.suppress(Exception):
            if path.parent == workspace.skills_dir:
                if path.stem in library.records:
                    memory.index_skill(library.records[path.stem])
                else:
                    memory.remove_skill(path.stem)
            elif path.parent == workspace.examples_dir:
                if path.exists():
                    memory.index_example(load_example(path))
                else:
                    memory.remove_example(path.stem)
    journal_path(workspace).unlink(missing_ok=True)
