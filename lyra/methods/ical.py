"""In-Context Abstraction Learning (ICAL): ``ical`` and its ablations.

A noisy demonstration becomes a high-quality example in two phases. Abstraction: the LLM reads
the demonstration (a console transcript, the state changes, the frames where the provider takes
images) and writes abstractions (task, causal, state changes, subgoals, relevant state) and a
corrected plan. Verification: the plan runs through the episode runner on the demonstration's
scene and seed, the teacher judges it, and the plan and its abstractions are revised together
until accepted or out of rounds. The accepted example is kept in the method's own store
(:mod:`lyra.methods.ical_store`), retrieved by instruction and by abstractions. Planning a task
retrieves the ``k`` most similar examples and writes abstractions and a plan the same way, in
rounds with the teacher; an accepted plan is kept too.

Ablations: ``ical-no-abstraction`` keeps the raw demonstration (its calls as a plan, mistakes
and all; no LLM), ``ical-no-verification`` keeps the first usable abstracted plan unrun.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lyra.answers import AnswerError, code_blocks
from lyra.curriculum import Progress, Task, one_off_task, resolve_task
from lyra.demos.format import Demonstration, demo_scene
from lyra.demos.transcript import (
    calls_plan,
    console_transcript,
    frame_paths,
    state_changes,
    world_text,
)
from lyra.examples import slugify
from lyra.methods import TaskOutcome
from lyra.methods.ical_store import IcalExample, IcalStore
from lyra.methods.memory import method_dir
from lyra.policy import OversizedCodeError, parse_generated
from lyra.prompts import render, system_prompt
from lyra.teachers import Attempt

if TYPE_CHECKING:
    from lyra.teach import Learner

# Examples retrieved for a task (the paper's k).
K_EXAMPLES = 5
# What an abstractions section must name, each on a line of its own.
LABELS = ("Task", "Causal", "State changes", "Subgoals", "Relevant state")
_HEADING = re.compile(r"^#+\s*abstractions\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Abstracted:
    """An answer that passed the structural checks.

    Attributes:
        abstractions: the five labelled lines, as written.
        plan: the task code.
    """

    abstractions: str
    plan: str

    def text(self) -> str:
        """The answer as the revision prompt shows it back."""
        return f"## Abstractions\n{self.abstractions}\n\n```python\n{self.plan.rstrip()}\n```"


def parse_answer(text: str) -> Abstracted:
    """Read abstractions and a plan from an answer, checked structurally.

    Raises:
        AnswerError: a part is missing or the plan does not parse; the message is the feedback.
    """
    blocks = code_blocks(text)
    if not blocks:
        raise AnswerError("the answer held no code block: give the plan in one ```python block")
    plan = blocks[0]
    try:
        parse_generated(plan, "the plan")
    except OversizedCodeError as error:
        raise AnswerError(str(error)) from None
    except SyntaxError as error:
        raise AnswerError(
            f"the plan does not parse (line {error.lineno}: {error.msg}): send Python that does"
        ) from None
    heading = _HEADING.search(text)
    if heading is None:
        raise AnswerError("the answer held no `## Abstractions` section: write it before the plan")
    section = text[heading.end() :].split("```", 1)[0]
    lines = [line.strip() for line in section.splitlines() if line.strip().startswith("-")]
    found = {
        label
        for label in LABELS
        for line in lines
        if line.lstrip("- ").lower().startswith(label.lower() + ":")
    }
    missing = [label for label in LABELS if label not in found]
    if missing:
        raise AnswerError(
            f"the abstractions lack {', '.join(missing)}: write one line `- LABEL: ...` for "
            f"each of {', '.join(LABELS)}"
        )
    return Abstracted("\n".join(lines), plan)


@dataclass
class _State:
    """What the next prompt of a task carries from the rounds before it."""

    last: Attempt | None = None
    answer: str = ""
    correction: str = ""


# Renders a round's prompt from what the rounds before left: (prompt, purpose, images).
Ask = Callable[[_State], tuple[str, str, Sequence[Path]]]


@dataclass(frozen=True)
class Ical:
    """ICAL, or one of its ablations.

    Attributes:
        name: the method's registered name.
        summary: one line on what it does.
        teaches_skills: whether it takes tasks that name a skill (see lyra.methods.Method).
        abstract: the LLM abstracts a demonstration; without, the raw demonstration is kept.
        verify: an abstracted plan runs and the teacher judges it before it is kept.
        k: examples retrieved for a task.
    """

    name: str
    summary: str
    teaches_skills: bool = False
    abstract: bool = True
    verify: bool = True
    k: int = K_EXAMPLES

    def store(self, learner: Learner) -> IcalStore:
        """This method's examples in the workspace (``.lyra/methods/NAME``)."""
        return IcalStore(method_dir(learner.ws, self.name), learner.memory.embedder)

    def solve(
        self, learner: Learner, task: Task, curriculum: str, progress: Progress
    ) -> TaskOutcome:
        """Plan from the most similar examples, in rounds with the teacher; keep what passes."""
        store = self.store(learner)
        outcome = TaskOutcome(task.id, accepted=False, method=self.name)
        scene = learner.describe(task, task.scene)

        def ask(state: _State) -> tuple[str, str, Sequence[Path]]:
            found = store.retrieve(
                task.instruction, state.correction, self.k, task.spec().examples_from()
            )
            prompt = render(
                "ical_plan",
                task.prompt_pack(),
                examples="\n\n".join(_shown(example) for example in found) or "(none yet)",
                scene=scene,
                instruction=task.instruction,
                previous=_previous(state),
                correction=f"\n# Correction\n{state.correction}\n" if state.correction else "",
                format=render("ical_format", task.prompt_pack()),
            )
            return prompt, "ical_plan", ()

        kept = _rounds(learner, task, ask, outcome, verify=True)
        if kept is not None:
            store.add(_example(task, kept, "plan", verified=True))
        return outcome

    def learn(self, learner: Learner, demo: Demonstration, path: Path, task: Task) -> TaskOutcome:
        """Turn a demonstration into an example and keep it; once per demonstration.

        Args:
            learner: the session, teacher and simulators.
            demo: the demonstration, loaded.
            path: its file, beside which its frames are.
            task: the demonstration's task (:func:`demo_task`): its scene, seed and check.
        """
        store = self.store(learner)
        outcome = TaskOutcome(task.id, accepted=False, method=self.name)
        source = f"{path.name}#{_digest(path.read_bytes())}"
        done = [example for example in store.examples() if example.source == source]
        if done:
            learner.say(f"{path}: already learnt by {self.name} as {done[0].id}")
            outcome.accepted = True
            return outcome
        kept: Abstracted | None = Abstracted("", calls_plan(demo))
        if self.abstract:
            kept = _rounds(
                learner, task, _demo_prompts(learner, demo, path, task), outcome, self.verify
            )
        if kept is not None:
            store.add(_example(task, kept, source, verified=self.verify and self.abstract))
            outcome.accepted = True
        return outcome


def _demo_prompts(learner: Learner, demo: Demonstration, path: Path, task: Task) -> Ask:
    """The abstraction prompt for the first round, the revision prompt for the others."""
    pack = task.prompt_pack()
    frames = frame_paths(demo, path)
    shown = dict(
        instruction=task.instruction,
        scene=learner.describe(task, task.scene),
        transcript=console_transcript(demo),
        changes=state_changes(demo),
        frames=(
            f"\n# Frames\nThe {len(frames)} pictures attached show the scene after each "
            "motion, in order.\n"
            if frames
            else ""
        ),
        format=render("ical_format", pack),
    )

    def ask(state: _State) -> tuple[str, str, Sequence[Path]]:
        if not state.answer:
            end = demo.steps[-1].after if demo.steps and demo.steps[-1].after else demo.start
            return (
                render("ical_abstract", pack, end=world_text(end), **shown),
                "ical_abstraction",
                frames,
            )
        outcome = state.last.outcome() if state.last is not None else "It was not run."
        prompt = render(
            "ical_revise",
            pack,
            answer=state.answer,
            outcome=outcome,
            correction=state.correction,
            **shown,
        )
        return prompt, "ical_revision", frames

    return ask


def _rounds(
    learner: Learner, task: Task, ask: Ask, outcome: TaskOutcome, verify: bool
) -> Abstracted | None:
    """Ask, check the answer, run it and have it judged, until accepted or out of rounds.

    Without ``verify`` the first usable answer is taken unrun. A bad answer is a round whose
    feedback is what was wrong with it.
    """
    state = _State()
    system = system_prompt(task.prompt_pack(), task.spec().capabilities, "cap_system")
    while outcome.rounds < learner.max_rounds:
        outcome.rounds += 1
        prompt, purpose, images = ask(state)
        text = learner.complete(task, prompt, purpose, system=system, images=images).text
        try:
            answer = parse_answer(text)
        except AnswerError as error:
            state.answer, state.last = text.strip(), None
            state.correction = f"Your answer could not be used: {error}"
            learner.say(f"round {outcome.rounds}: {state.correction}")
            continue
        state.answer = answer.text()
        if not verify:
            return answer
        attempt = learner.attempt(
            task, task.scene, answer.plan, learner.ws.skills_dir, outcome.rounds
        )
        outcome.first, outcome.last, state.last = outcome.first or attempt, attempt, attempt
        learner.say(f"round {outcome.rounds}:\n{attempt.outcome()}")
        verdict = learner.teacher.judge(attempt)
        if verdict.action == "reject":
            learner.say(f"'{task.id}' rejected; nothing was kept")
            return None
        if verdict.action == "accept" and attempt.ok:
            outcome.accepted = True
            learner.say(f"accepted after {outcome.rounds} round(s)")
            return answer
        if verdict.action == "accept":  # a failed run kept would teach the failure
            state.correction = f"It cannot be kept yet: {attempt.outcome()}"
        else:
            state.correction = verdict.text
            outcome.corrections.append(verdict.text)
        learner.say(f"feedback: {state.correction}")
    learner.say(
        f"'{task.id}' was not accepted within {learner.max_rounds} rounds; nothing was kept"
    )
    return None


def _previous(state: _State) -> str:
    if not state.answer:
        return ""
    what = state.last.outcome() if state.last is not None else "It was not run."
    return f"\n# Your last answer\n{state.answer}\n\nWhat happened:\n{what}\n"


def _shown(example: IcalExample) -> str:
    """An example as the planning prompt shows it: instruction, abstractions, code."""
    abstractions = f"\n{example.abstractions}" if example.abstractions else ""
    return f"Task: {example.instruction}{abstractions}\n```python\n{example.code.rstrip()}\n```"


def _digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()[:8]


def _example(task: Task, kept: Abstracted, source: str, verified: bool) -> IcalExample:
    digest = _digest(f"{task.instruction}\n{kept.plan}".encode())
    return IcalExample(
        id=f"{slugify(task.id, 39)}_{digest}",
        instruction=task.instruction,
        code=kept.plan,
        backend=task.backend,
        seed=task.seeds[0],
        success=task.success,
        abstractions=kept.abstractions,
        source=source,
        verified=verified,
    )


def demo_task(
    demo: Demonstration,
    path: Path,
    success: list[dict[str, object]] | None = None,
    feedback: Sequence[str] = (),
) -> Task:
    """The task a demonstration shows: its instruction, backend, scene and seed, and a check.

    Args:
        demo: the demonstration.
        path: its file (named in errors; its stem names the task).
        success: the check to judge plans by; None takes the demonstration's own.
        feedback: what a scripted teacher says, in order, when a plan fails.

    Raises:
        CurriculumError: the check does not fit the scene (the message names the field).
    """
    scene = demo_scene(demo, path)
    task_id = f"demo-{slugify(path.stem, 40).replace('_', '-')}"
    check = demo.check if success is None else success
    return resolve_task(
        one_off_task(
            demo.instruction,
            demo.backend,
            scene,
            [demo.seed],
            check,
            task_id=task_id,
            feedback=feedback,
        )
    )


ICAL = Ical(
    "ical",
    "ICAL: demonstrations abstracted into corrected plans, verified with the teacher, "
    "retrieved by instruction and abstractions",
)
NO_ABSTRACTION = Ical(
    "ical-no-abstraction",
    "ICAL without abstraction: the raw demonstration, as the calls it made, is the example",
    abstract=False,
    verify=False,
)
NO_VERIFICATION = Ical(
    "ical-no-verification",
    "ICAL without verification: the abstracted plan is kept without running it",
    verify=False,
)
