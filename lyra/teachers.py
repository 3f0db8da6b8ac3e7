"""Who judges an attempt: a person at the terminal, a script, or an LLM critic; all answer alike."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from lyra.curriculum import Task
from lyra.episode import EpisodeResult
from lyra.llm import Message, Provider
from lyra.prompts import render

if TYPE_CHECKING:
    from lyra.teach import Learner

# -- what one attempt did ------------------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """One round: the staged module (none for a plan), the task code, what running them did."""

    task: Task
    round: int
    skill: str | None
    module: str | None
    code: str
    runs: tuple[EpisodeResult, ...]
    picture: Path | None = None
    clip: Path | None = None

    @property
    def ok(self) -> bool:
        """Every seed ran and passed its predicate."""
        return all(run.ok for run in self.runs)

    def outcome(self) -> str:
        """What happened, seed by seed: the text the LLM and the person read."""
        return "\n".join(run.describe() for run in self.runs)


@dataclass(frozen=True)
class TeacherVerdict:
    """A teacher's answer to an attempt (or to a proposed header)."""

    action: Literal["accept", "feedback", "hint", "reject"]
    text: str = ""


@dataclass(frozen=True)
class SkillRequest:
    """What a teacher asks for when a plan needs a skill the library lacks: a task teaching it."""

    name: str
    instruction: str
    success: list[dict[str, Any]]


class Teacher(Protocol):
    """A person at the terminal or in a browser, a script, or an LLM critic; all answer alike.

    Every question the loop asks a person goes through these methods, so a front end that
    implements them drives the same loop.
    """

    wants_pictures: bool

    def review_header(self, task: Task, header: str) -> str:
        """Return the header to implement: the proposal as it is, or adjusted."""
        ...

    def judge(self, attempt: Attempt) -> TeacherVerdict:
        """Accept the attempt, correct it, hint, or reject the task."""
        ...

    def teach_missing(self, task: Task, proposal: str) -> SkillRequest | None:
        """The task that teaches a skill a plan asked for (``name: what it does``), or None."""
        ...

    def tell(self, message: str) -> None:
        """Show the person something the loop has to say (a refusal, a pause)."""
        ...


class Watch(Protocol):
    """A front end that shows the loop's runs as they happen (the browser studio).

    The learner records the first seed of each attempt for it, frame by frame, and the
    regression gate tells it each earlier task it re-runs; a teacher alone sees neither.
    """

    def frame(self, task: Task, round_: int, image: np.ndarray) -> None:
        """A frame of the attempt now running, as soon as it is rendered."""
        ...

    def recheck(self, step: Recheck) -> None:
        """An earlier task the gate is about to re-run (``status`` running) or has re-run."""
        ...


@dataclass(frozen=True)
class Recheck:
    """One earlier task the regression gate re-runs after an accepted edit.

    Attributes:
        example: the example's id.
        task: the curriculum task it was learnt from, if any.
        instruction: its instruction.
        done: how many re-runs of this gate came before it.
        total: how many re-runs the gate will make for this edit.
        status: ``running``, ``passed`` or ``broken``.
        why: why it broke ('' unless broken).
        clip: a GIF of the re-run, where one was recorded.
    """

    example: str
    task: str | None
    instruction: str
    done: int
    total: int
    status: Literal["running", "passed", "broken"]
    why: str = ""
    clip: Path | None = None


class ScriptedTeacher:
    """For tests and benchmarks: the predicate decides; corrections come from the task.

    When a check fails, the task's ``feedback`` lines are given in order (then the check's own
    reason); when the code fails on a mistake in its Python (a NameError, a refused import),
    :data:`CODE_MISTAKE` is said instead and the lines wait for a failure they can be about;
    when it passes, the task's ``review`` lines are given in order before accepting, and the
    acceptance says ``praise`` (an evaluation suite's "well done, learn that for next time").
    It never teaches a missing skill: a script cannot make up the task that shows one.
    """

    wants_pictures = False

    def __init__(self, praise: str = "") -> None:
        self.praise = praise
        self._feedback_used: dict[str, int] = {}
        self._review_used: dict[str, int] = {}

    def review_header(self, task: Task, header: str) -> str:
        """Accept the proposed header."""
        return header

    def judge(self, attempt: Attempt) -> TeacherVerdict:
        """Give the next scripted correction, or accept."""
        task = attempt.task
        if not attempt.ok:
            if _code_mistake(attempt):
                # A person's words about the task would not fit an error in the code itself.
                return TeacherVerdict("feedback", CODE_MISTAKE)
            used = self._feedback_used.get(task.id, 0)
            self._feedback_used[task.id] = used + 1
            # What went wrong is already in the prompt's account of the attempt; the
            # teacher adds only what a person would say about it.
            said = task.feedback[used] if used < len(task.feedback) else ""
            return TeacherVerdict("feedback", said or "It is not done yet: fix what went wrong.")
        used = self._review_used.get(task.id, 0)
        if used < len(task.review):
            self._review_used[task.id] = used + 1
            return TeacherVerdict("feedback", task.review[used])
        return TeacherVerdict("accept", self.praise)

    def teach_missing(self, task: Task, proposal: str) -> SkillRequest | None:
        """Decline."""
        return None

    def tell(self, message: str) -> None:
        """Nobody is listening."""


# Errors in writing Python rather than in moving the robot: the robot's own are lyra's errors.
_PYTHON_MISTAKE = re.compile(
    r"(NameError|ImportError|ModuleNotFoundError|AttributeError|TypeError|SyntaxError|"
    r"IndentationError|UnboundLocalError)\b"
)
CODE_MISTAKE = "The code failed before the robot could do the task: fix the error shown above."


def _code_mistake(attempt: Attempt) -> bool:
    """The attempt failed on a mistake in the Python code itself, on some seed."""
    return any(
        run.result.error in ("policy", "syntax")
        or (run.result.error == "exception" and _PYTHON_MISTAKE.match(run.result.feedback))
        for run in attempt.runs
        if not run.result.ok
    )


class LLMCritic:
    """An LLM that reads the final object states and the predicate and gives a verdict."""

    wants_pictures = False

    def __init__(self, provider: Provider, scene_text: Callable[[Task], str]) -> None:
        self.provider = provider
        self.scene_text = scene_text

    def review_header(self, task: Task, header: str) -> str:
        """Accept the proposed header."""
        return header

    def judge(self, attempt: Attempt) -> TeacherVerdict:
        """Ask the critic; anything but ``ACCEPT`` is feedback."""
        task = attempt.task
        prompt = render(
            "critic",
            task.prompt_pack(),
            instruction=task.instruction,
            scene=self.scene_text(task),
            predicate=attempt.outcome(),
        )
        answer = self.provider.complete(
            [Message("user", prompt)], purpose="critic", task=task.id
        ).text.strip()
        if answer.upper().startswith("ACCEPT"):
            return TeacherVerdict("accept")
        return TeacherVerdict("feedback", answer.removeprefix("FEEDBACK:").strip())

    def teach_missing(self, task: Task, proposal: str) -> SkillRequest | None:
        """Decline: a critic judges, it does not set tasks."""
        return None

    def tell(self, message: str) -> None:
        """Nobody is listening."""


def critic(learner: Learner) -> LLMCritic:
    """An LLM critic asking through the learner's session, shown the scene its backend lists."""
    return LLMCritic(learner.provider, lambda task: learner.backend(task.backend).describe())
