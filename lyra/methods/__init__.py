"""Ways of teaching a robot through an LLM, side by side: the `Method` seam and its registry.

A method is given a task and the learner (the workspace's LLM session, teacher, memory and
simulators, see :class:`lyra.teach.Learner`) and runs rounds until the teacher accepts or the
rounds run out; it returns a :class:`TaskOutcome`. LYRA's loop is the method ``lyra``; the
others are its ablations and the baselines it is compared with. Methods are found by name, as
backends are: from the ``lyra.methods`` entry-point group, or :func:`register` in code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from lyra.errors import LyraError, unknown_name
from lyra.plugins import Registry

if TYPE_CHECKING:
    from lyra.curriculum import Progress, Task
    from lyra.examples import Example
    from lyra.teach import Learner
    from lyra.teachers import Attempt

ENTRY_POINT_GROUP = "lyra.methods"
DEFAULT_METHOD = "lyra"


@dataclass
class TaskOutcome:
    """How one task ended under a method, and what it cost.

    Attributes:
        task: the task's id.
        accepted: the teacher accepted an attempt and it was kept.
        method: the method's name.
        rounds: attempts judged by the teacher (a console's interactions).
        llm_calls: completions asked for, the critic's and the hint parser's included.
        prompt_tokens: the provider's count of the prompts' tokens.
        completion_tokens: the provider's count of the answers' tokens.
        wall_seconds: the task from its first prompt to its verdict, on this machine.
        regression_checks: earlier tasks re-run before an edit was kept.
        example: what was kept in the workspace's examples, if anything.
        corrections: what the teacher said, in order.
        missing_skill: for a plan, the skill it asked for (``name: what``) when it stopped
            because the library lacks it.
        taught: the skills taught while a plan was paused for them.
        first: the first attempt that ran.
        last: the last attempt that ran.
        runnable: the last attempt's code runs on its own, on another layout (a plan); a
            console's transcript does not.
    """

    task: str
    accepted: bool
    method: str = DEFAULT_METHOD
    rounds: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_seconds: float = 0.0
    regression_checks: int = 0
    example: Example | None = None
    corrections: list[str] = field(default_factory=list)
    missing_skill: str = ""
    taught: list[str] = field(default_factory=list)
    first: Attempt | None = None
    last: Attempt | None = None
    runnable: bool = True

    @property
    def tokens(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens


@runtime_checkable
class Method(Protocol):
    """One way of teaching: what it asks the LLM, what it keeps, how it uses the teacher.

    Attributes:
        name: the name it is found by (``--method NAME``).
        summary: one line on what it does.
        teaches_skills: it can take a task that names a skill to create or extend; one that
            cannot writes task code only, and the learner refuses it such a task.
    """

    name: str
    summary: str
    teaches_skills: bool

    def solve(
        self, learner: Learner, task: Task, curriculum: str, progress: Progress
    ) -> TaskOutcome:
        """Run ``task`` in rounds with ``learner``'s teacher until accepted or out of rounds.

        Args:
            learner: the LLM session, teacher, memory and simulators of the workspace.
            task: the task, resolved.
            curriculum: the name the task's record is kept under (its curriculum's, or
                ``planned``/``taught`` for a task outside one).
            progress: that curriculum's record of accepted tasks.
        """
        ...


class UnknownMethodError(LyraError):
    """No method is registered under a name."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        super().__init__(
            unknown_name("no method named", "methods", name, known)
            + f" (a package registers one in the '{ENTRY_POINT_GROUP}' entry-point group)"
        )


_REGISTRY: Registry[Method] = Registry(
    ENTRY_POINT_GROUP, Method, "lyra.methods.Method", UnknownMethodError
)


def register(method: Method) -> None:
    """Register a method under its name (a later registration of the name replaces it)."""
    _REGISTRY.register(method)


def registered() -> dict[str, Method]:
    """Every registered method, by name: the installed packages' and those registered here."""
    return _REGISTRY.registered()


def find_method(name: str) -> Method:
    """The method registered under ``name``.

    Raises:
        UnknownMethodError: none is; the message lists those that are.
    """
    return _REGISTRY.get(name)
