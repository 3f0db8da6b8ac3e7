"""One teaching run at a time: :meth:`lyra.teach.Learner.teach` in a background thread.

The studio is a front end, not a second loop: it builds the same learner ``lyra learn``
builds, with the browser as its teacher and watch, and reports what the loop says and how the
task ended on the studio's event log.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lyra.curriculum import (
    TAUGHT,
    Task,
    load_curriculum,
    one_off_task,
    progress_on_file,
    resolve_task,
)
from lyra.errors import LyraError
from lyra.library.parse import skill_paths
from lyra.studio.teacher import Events, StudioTeacher
from lyra.workspace import Workspace


class BusyError(LyraError):
    """The studio is already teaching a task, or the workspace must not change while it does."""


class OutsideError(LyraError):
    """A path that leads out of the folders the studio may read."""


@dataclass(frozen=True)
class TaskChoice:
    """What the browser asked to teach: a curriculum's task, or one typed in."""

    curriculum: str | None = None
    task: str | None = None
    instruction: str | None = None
    backend: str | None = None
    skill: str | None = None
    scene: str | None = None
    success: str | None = None
    seeds: tuple[int, ...] = (0,)


def resolve_choice(workspace: Workspace, choice: TaskChoice) -> tuple[Task, str]:
    """The task to teach and the curriculum name it is kept under.

    Raises:
        LyraError: the curriculum, task, scene or predicate cannot be used (the message says why).
    """
    if choice.curriculum:
        path = inside(workspace.root, choice.curriculum)
        skills = [p.stem for p in skill_paths(workspace.skills_dir)]
        curriculum = load_curriculum(path, skills=skills)
        progress = progress_on_file(workspace, curriculum.name)
        wanted = choice.task or next(
            (t.id for t in curriculum.tasks if t.id not in progress.accepted), None
        )
        found = next((t for t in curriculum.tasks if t.id == wanted), None)
        if found is None:
            raise LyraError(
                f"{choice.curriculum} has no task '{wanted}'"
                if wanted
                else f"every task of {curriculum.name} is already accepted"
            )
        return found, curriculum.name
    if not choice.instruction or not choice.backend:
        raise LyraError("give a curriculum and task, or an instruction, a backend and a scene")
    try:
        scene = yaml.safe_load(choice.scene or "") or {}
        success = yaml.safe_load(choice.success or "") or []
    except yaml.YAMLError as error:
        raise LyraError(f"the scene or the success check is not valid YAML: {error}") from None
    task = one_off_task(
        choice.instruction, choice.backend, scene, list(choice.seeds), success, skill=choice.skill
    )
    return resolve_task(task), TAUGHT


def inside(root: Path, relative: str) -> Path:
    """``relative`` resolved under ``root``.

    Raises:
        OutsideError: it names a place outside ``root`` (``..``, an absolute path, a link out).
    """
    base = root.resolve()
    path = (base / relative).resolve()
    if Path(relative).is_absolute() or not path.is_relative_to(base):
        raise OutsideError(f"refused: '{relative}' is outside the workspace")
    return path


class TeachingRun:
    """The studio's teaching runs, one at a time, each in a thread of its own."""

    def __init__(
        self,
        workspace: Workspace,
        events: Events,
        llm: str | None,
        web_path: Callable[[Path], str],
        max_rounds: int = 6,
    ) -> None:
        self.ws = workspace
        self.events = events
        self.llm = llm
        self.web_path = web_path
        self.max_rounds = max_rounds
        self.teacher: StudioTeacher | None = None
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    @property
    def busy(self) -> bool:
        """A task is being taught now."""
        return self._thread is not None and self._thread.is_alive()

    def refuse_while_busy(self, what: str) -> None:
        """Raise BusyError naming ``what`` if a task is being taught now."""
        if self.busy:
            raise BusyError(f"a task is being taught: {what} after it ends (or reject it)")

    def start(self, choice: TaskChoice) -> dict[str, Any]:
        """Start teaching the chosen task in the background; return what was started.

        Raises:
            BusyError: a task is being taught already.
            LyraError: the choice cannot be taught.
        """
        with self._guard:
            self.refuse_while_busy("start another")
            task, curriculum = resolve_choice(self.ws, choice)
            self.teacher = StudioTeacher(self.events, self.ws, self.web_path)
            run = self.events.publish(
                "run",
                task=task.id,
                curriculum=curriculum,
                instruction=task.instruction,
                skill=task.skill.name if task.skill else None,
                backend=task.backend,
                seeds=task.seeds,
                started=time.time(),
            )
            self._thread = threading.Thread(
                target=self._teach, args=(task, curriculum, self.teacher), daemon=True
            )
            self._thread.start()
            return {"run": run, "task": task.id, "curriculum": curriculum}

    def close(self, timeout: float = 30.0) -> None:
        """End the run: an open question is answered 'reject'; wait for the loop to finish."""
        if self.teacher is not None:
            self.teacher.close()
        if self._thread is not None:
            self._thread.join(timeout)

    def _teach(self, task: Task, curriculum: str, teacher: StudioTeacher) -> None:
        from lyra.llm import ReplayProvider, open_session
        from lyra.memory.store import open_memory
        from lyra.teach import Learner

        def say(text: str) -> None:
            self.events.publish("say", text=text)

        try:
            provider = open_session(self.ws, self.llm, backend=task.backend)
            learner = Learner(
                self.ws,
                provider,
                teacher,
                open_memory(self.ws),
                max_rounds=self.max_rounds,
                say=say,
                watch=teacher,
            )
            try:
                progress = progress_on_file(self.ws, curriculum)
                outcome = learner.teach(task, curriculum, progress)
            finally:
                learner.close()
            replayed = provider.provider
            self.events.publish(
                "outcome",
                task=task.id,
                accepted=outcome.accepted,
                rounds=outcome.rounds,
                llm_calls=outcome.llm_calls,
                prompt_tokens=outcome.prompt_tokens,
                completion_tokens=outcome.completion_tokens,
                regression_checks=outcome.regression_checks,
                example=outcome.example.id if outcome.example else None,
                session_log=str(provider.log.relative_to(self.ws.root)),
                replay=replayed.summary() if isinstance(replayed, ReplayProvider) else None,
            )
        except Exception as error:  # the browser must hear why the run stopped
            self.events.publish("error", text=f"{type(error).__name__}: {error}")
