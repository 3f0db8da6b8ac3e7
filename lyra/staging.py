"""A staged edit before it is kept: the skills folder the runs read, and the regression gate.

An edit is kept only when every earlier task that reaches an edited skill still passes, and a
plan that revises earlier tasks also does each of them on its layout. Both are re-run here in
simulation against the staged copy; the workspace's own files are not touched.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

from lyra.backend import Backend
from lyra.check import check_example, check_revision
from lyra.curriculum import Task
from lyra.episode import Budget
from lyra.errors import LyraError
from lyra.examples import Example, iter_examples, latest_revision, revision_chain, revisions
from lyra.library.edit import Patch
from lyra.library.parse import parse_library
from lyra.library.tree import SkillTree
from lyra.pictures import Recorder
from lyra.teachers import Recheck, Watch
from lyra.workspace import Workspace


def staged_skills(workspace: Workspace, patch: Patch) -> Path:
    """A copy of the skills folder with the staged patch applied, for the runs to read."""
    root = workspace.state_dir / "staging" / "skills"
    shutil.rmtree(root, ignore_errors=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    if workspace.skills_dir.is_dir():
        shutil.copytree(workspace.skills_dir, root, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        root.mkdir()
    for change in patch.changes:
        target = root / change.path.name
        if change.after is None:
            target.unlink(missing_ok=True)
        else:
            target.write_text(change.after, encoding="utf-8")
    return root


class RegressionGate:
    """Re-runs the earlier tasks an edit could break; counts every re-run in ``checks``."""

    def __init__(
        self,
        workspace: Workspace,
        backend: Callable[[str], Backend],
        budget: Budget,
        say: Callable[[str], None],
        watch: Watch | None = None,
    ) -> None:
        self.ws = workspace
        self.backend = backend
        self.budget = budget
        self.say = say
        self.watch = watch
        self.checks = 0

    def broken_by(self, task_key: str, patch: Patch, overlay: Path) -> list[str]:
        """Re-run every earlier example that reaches an edited skill; return the failures."""
        edited = {c.path.stem for c in patch.changes if c.before != c.after}
        if not edited:
            return []
        tree = SkillTree.of(parse_library(overlay))
        examples = [example for _, example in iter_examples(self.ws.examples_dir)]
        by_task = {e.task: e for e in examples if e.task}
        reached = [e for e in examples if e.task != task_key and edited & tree.reach(e.skills)]
        broken = []
        for done, example in enumerate(reached):
            self.checks += 1
            why = self._check(example, overlay, done, len(reached))
            self.say(f"re-checked {example.id}: {why or 'ok'}")
            if why:
                broken.append(_broken(example, why))
            # A revision's plan also does the tasks it revises: their layouts are checked too.
            chain = revision_chain(example, by_task)
            broken += self.recheck(chain, example.code, overlay, f"the plan of {example.task}")
        return broken

    def _check(self, example: Example, overlay: Path, done: int, total: int) -> str:
        """Re-run one example; a watching front end sees it start, end, and its clip."""
        backend = self.backend(example.backend)
        if self.watch is None:
            return check_example(backend, example, overlay)
        step = Recheck(example.id, example.task, example.instruction, done, total, "running")
        self.watch.recheck(step)
        recorder = Recorder(backend)
        why = check_example(backend, example, overlay, recorder=recorder)
        clip = recorder.save(self.ws.state_dir / "attempts" / f"recheck-{example.id}.gif")
        status: Literal["passed", "broken"] = "broken" if why else "passed"
        self.watch.recheck(replace(step, status=status, why=why, clip=clip))
        return why

    def revised(self, task: Task, key: str) -> list[Example]:
        """The examples whose tasks ``task``'s plan would do too (none when it revises none).

        The one it revises first, then the one that one revises, and so on.

        Raises:
            LyraError: that task has not been learnt, or another task already revises it (one
                line of revisions keeps one plan for every layout taught).
        """
        if task.revises is None:
            return []
        by_task = {e.task: e for _, e in iter_examples(self.ws.examples_dir) if e.task}
        revised = by_task.get(task.revises)
        if revised is None:
            raise LyraError(
                f"task '{task.id}' revises '{task.revises}', which has not been learnt here: "
                "learn that task first, or remove `revises`"
            )
        revised_by = revisions(by_task.values())
        other = revised_by.get(task.revises)
        if other is not None and other.task != key:
            raise LyraError(
                f"task '{task.id}' revises '{task.revises}', which '{other.task}' already "
                f"revises: revise '{latest_revision(other, revised_by).task}', its newest "
                "revision, so that one plan does every layout taught"
            )
        return [revised, *revision_chain(revised, by_task)]

    def recheck(
        self,
        revised: Sequence[Example],
        code: str,
        overlay: Path,
        whose: str = "this plan",
    ) -> list[str]:
        """Run a revising plan on the layout of each task it revises; where it fails."""
        broken = []
        for example in revised:
            self.checks += 1
            why = check_revision(self.backend(example.backend), code, example, overlay, self.budget)
            self.say(f"ran {whose} on {example.id}, which it revises: {why or 'ok'}")
            if why:
                broken.append(_broken(example, f"{whose}, run on its layout: {why}"))
        return broken


def _broken(example: Example, why: str) -> str:
    """An earlier task that an edit breaks, as the next prompt lists it."""
    return f"- {example.task or example.id}: {example.instruction}\n  {why}"
