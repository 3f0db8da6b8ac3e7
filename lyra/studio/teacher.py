"""The studio's teacher: every question the loop asks waits for the browser's answer.

The loop runs in a background thread; :class:`StudioTeacher` publishes each question (and each
frame and re-check, as the loop's :class:`~lyra.teachers.Watch`) on an :class:`Events` log the
browser follows, then blocks until the browser posts the answer.
"""

from __future__ import annotations

import base64
import difflib
import io
import itertools
import queue
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from lyra.curriculum import Task
from lyra.errors import LyraError
from lyra.teachers import Attempt, Recheck, SkillRequest, TeacherVerdict
from lyra.workspace import Workspace

VERDICTS = ("accept", "feedback", "hint", "reject")


class Events:
    """An append-only log of what the studio has to show, numbered from 1; thread-safe.

    A browser that connects late (or reloads) reads it from the start and sees the same page.
    """

    def __init__(self) -> None:
        self._events: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def publish(self, kind: str, **data: Any) -> int:
        """Append an event; return its number."""
        with self._lock:
            number = len(self._events) + 1
            self._events.append({"seq": number, "kind": kind, **data})
            return number

    def since(self, seq: int) -> list[dict[str, Any]]:
        """The events numbered after ``seq``."""
        with self._lock:
            return self._events[seq:]


@dataclass(frozen=True)
class Answer:
    """The browser's answer to a question: the question's number, an action and its text."""

    question: int
    action: str
    text: str = ""
    fields: dict[str, Any] | None = None


class NoQuestionError(LyraError):
    """An answer came for a question that is not the one waiting."""


class StudioTeacher:
    """A person in the browser: each question is published, and the loop waits for the answer."""

    # The studio shows a clip of every attempt instead (the learner records it for the watch).
    wants_pictures = False

    def __init__(self, events: Events, workspace: Workspace, web_path: Any) -> None:
        """Ask through ``events``; ``web_path`` turns a workspace file into its URL."""
        self.events = events
        self.ws = workspace
        self.web_path = web_path
        self._answers: queue.Queue[Answer] = queue.Queue()
        self._waiting: int | None = None
        self._guard = threading.Lock()
        self._frames = itertools.count(1)
        self.closed = False

    # -- answers from the browser ------------------------------------------------------------

    def answer(self, answer: Answer) -> None:
        """Hand the browser's answer to the waiting loop.

        Raises:
            NoQuestionError: no question is waiting, or another one is.
        """
        with self._guard:
            if self._waiting is None or answer.question != self._waiting:
                raise NoQuestionError(
                    f"question {answer.question} is not waiting for an answer"
                    + (f" (question {self._waiting} is)" if self._waiting else " (none is)")
                )
            self._waiting = None
        self._answers.put(answer)

    def close(self) -> None:
        """Stop waiting: a question still open is answered 'reject' so the loop ends cleanly."""
        with self._guard:
            self.closed = True
            waiting, self._waiting = self._waiting, None
        if waiting is not None:
            self._answers.put(Answer(waiting, "reject", "the studio was closed"))

    def _ask(self, kind: str, **data: Any) -> Answer:
        with self._guard:
            if self.closed:
                return Answer(0, "reject", "the studio was closed")
            number = self.events.publish("question", question=kind, **data)
            self._waiting = number
        answer = self._answers.get()
        self.events.publish("answered", question=number, action=answer.action, text=answer.text)
        return answer

    # -- the Teacher protocol ----------------------------------------------------------------

    def review_header(self, task: Task, header: str) -> str:
        """Show the proposed header; the browser keeps it or sends it edited."""
        answer = self._ask("header", task=task.id, header=header)
        return answer.text.strip() or header

    def judge(self, attempt: Attempt) -> TeacherVerdict:
        """Show the attempt (its clip, the staged edit as a diff, each seed), wait for a verdict."""
        answer = self._ask("verdict", **self.attempt_view(attempt))
        if answer.action not in VERDICTS:
            return TeacherVerdict("feedback", answer.text)
        return TeacherVerdict(answer.action, answer.text)  # type: ignore[arg-type]

    def teach_missing(self, task: Task, proposal: str) -> SkillRequest | None:
        """Ask whether to teach the skill a plan needs; the browser sends the task or declines."""
        answer = self._ask("missing", task=task.id, proposal=proposal)
        fields = answer.fields or {}
        if answer.action != "teach" or not fields.get("name"):
            return None
        return SkillRequest(
            str(fields["name"]), str(fields.get("instruction", "")), fields.get("success") or []
        )

    def tell(self, message: str) -> None:
        """Show what the loop has to say."""
        self.events.publish("tell", text=message)

    # -- the Watch protocol ------------------------------------------------------------------

    def frame(self, task: Task, round_: int, image: np.ndarray) -> None:
        """Stream a frame of the running attempt as a JPEG."""
        self.events.publish(
            "frame", task=task.id, round=round_, n=next(self._frames), image=jpeg_data(image)
        )

    def recheck(self, step: Recheck) -> None:
        """Show a regression re-run starting or ending."""
        self.events.publish(
            "recheck",
            example=step.example,
            task=step.task,
            instruction=step.instruction,
            done=step.done,
            total=step.total,
            status=step.status,
            why=step.why,
            clip=self.web_path(step.clip) if step.clip else None,
        )

    def attempt_view(self, attempt: Attempt) -> dict[str, Any]:
        """What the browser shows of an attempt."""
        current = ""
        if attempt.skill is not None:
            path = self.ws.skills_dir / f"{attempt.skill}.py"
            current = path.read_text(encoding="utf-8") if path.exists() else ""
        return {
            "task": attempt.task.id,
            "instruction": attempt.task.instruction,
            "round": attempt.round,
            "skill": attempt.skill,
            "diff": module_diff(attempt.skill, current, attempt.module),
            "code": attempt.code,
            "ok": attempt.ok,
            "seeds": [
                {"seed": run.seed, "ok": run.ok, "text": run.describe()} for run in attempt.runs
            ],
            "clip": self.web_path(attempt.clip) if attempt.clip else None,
        }


def module_diff(skill: str | None, current: str, staged: str | None) -> str:
    """The staged module against the one in the library, as a unified diff ('' for a plan)."""
    if skill is None or staged is None:
        return ""
    name = f"skills/{skill}.py"
    return "".join(
        difflib.unified_diff(
            current.splitlines(keepends=True),
            staged.splitlines(keepends=True),
            fromfile=f"{name} (library)" if current else "/dev/null",
            tofile=f"{name} (staged)",
        )
    )


def jpeg_data(image: np.ndarray) -> str:
    """An RGB frame as a ``data:`` URL the browser shows as it comes."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.asarray(image, dtype=np.uint8)[..., :3]).save(buffer, "JPEG", quality=80)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
