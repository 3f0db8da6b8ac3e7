"""The console learner (the incremental-learning paper's method), as the method ``console``.

The LLM types into an emulated Python console, one statement or block at a time; each runs in
one confined worker whose namespace lives for the run (:func:`lyra.sandbox.open_console`), and
what the console prints is appended to the transcript the LLM reads next. Two functions reach
this process: ``wait_for_trigger()`` hands control to the person and returns their next words
as ``{'type': 'dialog', 'text': ...}`` (the first call returns the instruction; each later call
is the moment the run is judged, automatically, and the teacher speaks: a correction, or the
praise that ends it), and ``learn_from_interaction()`` asks the LLM what went wrong in one
sentence, then for an improved copy of the whole transcript, and stores it. New runs are shown
the transcripts whose first instruction is most like theirs (16 by default).

It runs on the task's first seed, in one scene that is never reset during the run: the person
corrects what the robot is doing, as at a real console.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lyra.answers import code_blocks
from lyra.curriculum import Progress, Task
from lyra.episode import EpisodeResult, judge_state
from lyra.examples import Example, slugify
from lyra.memory.store import Memory
from lyra.methods import TaskOutcome
from lyra.methods.memory import method_memory
from lyra.predicates import Check, PredicateError, from_spec
from lyra.prompts import render, system_prompt
from lyra.sandbox import EndConsole, RunResult, open_console
from lyra.teachers import Attempt

if TYPE_CHECKING:
    from lyra.backend import Backend
    from lyra.teach import Learner

# Transcripts shown, by similarity of their first instruction to this run's (the paper's k).
K_TRANSCRIPTS = 16
# What the person says when the robot did it, unless the teacher says otherwise: the paper's
# cue to call learn_from_interaction().
PRAISE = "Well done, learn that for next time."
# Console inputs the LLM may type per interaction with the person, before the run is cut off.
INPUTS_PER_INTERACTION = 8
# Inputs after the praise in which the LLM may still call learn_from_interaction().
INPUTS_TO_LEARN = 2


@dataclass(frozen=True)
class ConsoleLearner:
    """The method ``console``.

    Attributes:
        name: the method's registered name.
        summary: one line on what it does.
        teaches_skills: whether it takes tasks that name a skill (see lyra.methods.Method).
        k: transcripts retrieved for a new run.
    """

    name: str
    summary: str
    teaches_skills: bool = False
    k: int = K_TRANSCRIPTS

    def solve(
        self, learner: Learner, task: Task, curriculum: str, progress: Progress
    ) -> TaskOutcome:
        """One run at the console: type, watch, be corrected, until praised or out of turns."""
        memory = method_memory(learner, self.name)
        found = memory.retrieve(
            task.instruction, k_examples=self.k, k_skills=0, backends=[task.backend]
        )
        examples = "\n\n".join(
            f"## Interaction {i}\n{hit.code.rstrip()}" for i, hit in enumerate(found.examples, 1)
        )
        return _Run(learner, self, task, memory, examples or "(none yet)").go()


@dataclass
class _Run:
    """One run: the transcript so far, the person's turns, and what they said."""

    learner: Learner
    method: ConsoleLearner
    task: Task
    memory: Memory
    examples: str
    outcome: TaskOutcome = field(init=False)
    transcript: list[str] = field(default_factory=list)
    praised: bool = False
    praised_at: int = 0
    praise: str = PRAISE
    triggers: int = 0
    scene_text: str = ""
    check: Check | str = ""
    calls: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # What is kept is a transcript whose inputs wait for the person: not a plan to run again.
        self.outcome = TaskOutcome(
            self.task.id, accepted=False, method=self.method.name, runnable=False
        )

    def go(self) -> TaskOutcome:
        task, learner = self.task, self.learner
        backend = learner.backend(task.backend)
        seed = task.seeds[0]
        backend.reset(task.scene, seed)
        self.scene_text = backend.describe()
        self.check = _check(task, backend)
        budget = learner.budget
        with open_console(
            backend,
            skills_root=None,
            timeout_s=budget.code_seconds,
            max_primitive_calls=budget.primitive_calls,
            max_sim_seconds=budget.sim_seconds,
            on_primitive=self._count,
            functions={
                "wait_for_trigger": lambda: self._trigger(backend, seed),
                "learn_from_interaction": self._learn,
            },
            require=backend.spec.confinement,
        ) as console:
            imports = _imports(task)
            console.run(imports)
            self.transcript.append(f">>> {imports.rstrip()}")
            limit = INPUTS_PER_INTERACTION * learner.max_rounds
            for typed in range(limit):
                if self.praised and typed >= self.praised_at + INPUTS_TO_LEARN:
                    break  # praised, and the LLM did not ask to learn: the run is over
                code = self._next_input()
                result = console.run(code)
                self._show(code, result.text)
                if console.ended:
                    break
            else:
                learner.say(f"console: {limit} inputs without an end; the run stops")
        learner.say("\n".join(self.transcript))
        return self.outcome

    def _count(self, primitive: str) -> None:
        self.calls[primitive] = self.calls.get(primitive, 0) + 1
        if isinstance(self.check, Check) and self.check.watches:
            self.check.observe(self.learner.backend(self.task.backend).world_state())

    def _next_input(self) -> str:
        """Ask the LLM what to type next, shown the whole transcript so far."""
        prompt = render(
            "console",
            self.task.prompt_pack(),
            examples=self.examples,
            scene=self.scene_text,
            transcript="\n".join(self.transcript),
        )
        system = system_prompt(
            self.task.prompt_pack(), self.task.spec().capabilities, "console_system"
        )
        answer = self.learner.complete(self.task, prompt, "console", system=system).text
        blocks = code_blocks(answer)
        code = blocks[0] if blocks else answer
        # What the LLM echoed of the prompt is not input.
        lines = [line.removeprefix(">>> ").removeprefix("... ") for line in code.splitlines()]
        return "\n".join(lines).strip("\n") + "\n"

    def _show(self, code: str, printed: str) -> None:
        lines = code.rstrip("\n").splitlines() or [""]
        echo = [f">>> {lines[0]}", *(f"... {line}" for line in lines[1:])]
        self.transcript.append(
            "\n".join(echo) + ("\n" + printed.rstrip("\n") if printed.strip() else "")
        )

    def _trigger(self, backend: Backend, seed: int) -> dict[str, str]:
        """The person's turn: the instruction first; then the run is judged and they speak."""
        self.triggers += 1
        if self.triggers == 1:
            return {"type": "dialog", "text": self.task.instruction}
        if self.praised:
            return {"type": "dialog", "text": self.praise}
        self.outcome.rounds += 1
        verdict = judge_state(backend, self.check, self.task.hold_seconds)
        run = EpisodeResult(
            seed,
            RunResult(True, "", sum(self.calls.values()), 0.0),
            verdict,
            backend.snapshot(),
            backend.sim_time,
            dict(self.calls),
        )
        attempt = Attempt(
            self.task, self.outcome.rounds, None, None, "\n".join(self.transcript), (run,)
        )
        self.outcome.first = self.outcome.first or attempt
        self.outcome.last = attempt
        said = self.learner.teacher.judge(attempt)
        if said.action == "accept":
            self.praised, self.praised_at = True, len(self.transcript)
            self.outcome.accepted = True
            self.praise = said.text or PRAISE
            return {"type": "dialog", "text": self.praise}
        if said.action == "reject" or self.outcome.rounds >= self.learner.max_rounds:
            raise EndConsole(f"the person stopped the run after {self.outcome.rounds} interactions")
        self.outcome.corrections.append(said.text)
        return {"type": "dialog", "text": said.text}

    def _learn(self) -> str:
        """Store the run's transcript, improved by the LLM where the person had to correct it."""
        if not self.praised:
            return "Nothing to learn yet: the person has not said the task is done."
        transcript = "\n".join([*self.transcript, ">>> learn_from_interaction()"])
        if self.outcome.corrections:
            what = self.learner.complete(
                self.task,
                render("console_reflect", self.task.prompt_pack(), transcript=transcript),
                "console_reflect",
                system="",
            ).text.strip()
            improved = self.learner.complete(
                self.task,
                render(
                    "console_improve",
                    self.task.prompt_pack(),
                    transcript=transcript,
                    problem=what,
                ),
                "console_improve",
                system="",
            ).text
            blocks = code_blocks(improved)
            transcript = (blocks[0] if blocks else improved).strip("\n")
        self.memory.index_example(_stored(self.task, transcript))
        raise EndConsole("learnt from the interaction")


def _check(task: Task, backend: Backend) -> Check | str:
    try:
        return from_spec(task.success, backend.spec.predicate_functions())
    except PredicateError as error:
        return str(error)


def _imports(task: Task) -> str:
    """The console's first line, typed before the LLM's: every primitive the backend has."""
    from lyra import api

    names = [name for name in api.PRIMITIVES if name in task.spec().capabilities]
    names += ["Point", "Pose", "Size"]
    return f"from lyra.api import {', '.join(names)}\n"


def _stored(task: Task, transcript: str) -> Example:
    digest = hashlib.sha1(transcript.encode()).hexdigest()[:8]
    return Example(
        id=f"{slugify(task.id, 39)}_{digest}",
        instruction=task.instruction,
        code=transcript + "\n",
        backend=task.backend,
        seed=task.seeds[0],
        success=task.success,
    )


CONSOLE = ConsoleLearner(
    "console",
    "the incremental-learning paper's console: one statement at a time, corrected by the "
    "person, improved transcripts remembered",
)
