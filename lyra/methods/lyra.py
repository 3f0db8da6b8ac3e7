"""LYRA's loop, the method ``lyra``, and its ablations ``lyra-no-memory`` and ``lyra-llm-feedback``.

One task goes: retrieve (examples, skill headers, hints) -> prompt -> LLM -> parse -> stage the
libcst edit -> run the task code through the episode runner on every seed -> the teacher's
verdict. Feedback and hints go round again; an accept re-runs every earlier example that reaches
an edited skill, and only when all still pass are the skill module, the example and the progress
kept, as one transaction (:mod:`lyra.journal`).

A task that names a skill teaches it; a task without one is planned from the skills already
learnt, in rounds with the teacher the same way, and when the plan needs a skill the library
lacks, the teacher may teach that skill first and planning resumes with it.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from lyra.answers import MISSING, AnswerError, code_blocks, skills_called, split_answer
from lyra.api import PRIMITIVES
from lyra.curriculum import (
    TAUGHT,
    CurriculumError,
    Progress,
    SkillTarget,
    Task,
    one_off_task,
    refuse_anchors,
    resolve_task,
)
from lyra.errors import LyraError
from lyra.examples import Example, iter_examples, load_example, slugify
from lyra.journal import commit_learnt_step
from lyra.library.edit import Patch, stage_answer, stage_new_skill
from lyra.library.errors import EditError
from lyra.library.parse import Library, brief_header, parse_library
from lyra.library.tree import runnable
from lyra.memory.retrieval import METHODS
from lyra.methods import TaskOutcome
from lyra.prompts import example_block, examples_section, render, skills_section
from lyra.staging import RegressionGate, staged_skills
from lyra.teachers import Attempt, Teacher, critic

if TYPE_CHECKING:
    from lyra.teach import Learner

# Skills a prompt shows by the similarity of their docstrings to the task: the skill parser's
# examples of style; in the others, beside the hinted ones, those the examples call and the
# neighbours of a skill being extended.
PROMPT_SKILLS = 3
# Characters of skill headers and example code a prompt without retrieval is filled with, drawn
# at random (lyra-no-memory): about what retrieval shows, 2,000 tokens.
CONTEXT_BUDGET = 8_000


@dataclass(frozen=True)
class LyraMethod:
    """LYRA's loop, or one of its ablations.

    Attributes:
        name: the method's registered name.
        summary: one line on what it does, for ``lyra eval`` and ``--help``.
        teaches_skills: whether it takes tasks that name a skill (see lyra.methods.Method).
        memory: retrieve examples and skills by similarity; without it (the paper's ablation),
            learnt skills and examples are drawn at random into the prompt while they fit.
        critic: an LLM judges each attempt from the scene and the success check's reason,
            instead of the learner's teacher.
    """

    name: str
    summary: str
    teaches_skills: bool = True
    memory: bool = True
    critic: bool = False

    def solve(
        self, learner: Learner, task: Task, curriculum: str, progress: Progress
    ) -> TaskOutcome:
        """Teach the task's skill, or plan it from the library, in rounds with the teacher."""
        teacher = critic(learner) if self.critic else learner.teacher
        return _Loop(learner, self, teacher).teach(task, curriculum, progress)


LYRA = LyraMethod(
    "lyra", "LYRA: skills as code, corrected by the teacher, kept behind a regression gate"
)
NO_MEMORY = LyraMethod(
    "lyra-no-memory",
    "LYRA without retrieval: learnt skills and examples drawn at random into the prompt",
    memory=False,
)
LLM_FEEDBACK = LyraMethod(
    "lyra-llm-feedback",
    "LYRA with an LLM critic judging each attempt instead of the person",
    critic=True,
)


@dataclass
class _Round:
    """What the next prompt of a task carries from the rounds before it."""

    last: Attempt | None = None
    correction: str = ""
    regression: str = ""
    hints: list[str] = field(default_factory=list)
    # Where the last round's plan failed inside a skill: (skill, line, error), or None.
    stuck: tuple[str, str, str] | None = None


class _Loop:
    """One task's rounds under LYRA's loop, with the learner's session, memory and simulators."""

    def __init__(self, learner: Learner, method: LyraMethod, teacher: Teacher) -> None:
        self.learner = learner
        self.method = method
        self.teacher = teacher

    def _scene(self, task: Task, outcome: TaskOutcome) -> Any:
        if task.scene is not None:
            return task.scene
        spec = task.spec()
        if "task_setup" not in task.prompt_pack().templates:
            raise LyraError(
                f"the {spec.name} backend cannot lay a scene out from words: give the task "
                "its `scene` instead of `setup`"
            )
        prompt = render(
            "task_setup", task.prompt_pack(), instruction=task.instruction, setup=task.setup or ""
        )
        problem = ""
        for _ in range(3):
            answer = self.learner.complete(task, prompt + problem, "task_setup").text
            try:
                blocks = code_blocks(answer)
                if not blocks:
                    raise AnswerError("the answer held no ```yaml block")
                scene = spec.load_scene(_yaml(blocks[0]))
                # Laid out on every seed, and holding what the task's check names.
                resolve_task(task.model_copy(update={"scene": scene, "setup": None}))
                return scene
            except (AnswerError, CurriculumError, ValidationError) as error:
                problem = f"\n\nYour last scene could not be used: {str(error)[:2000]}"
                self.learner.say(problem.strip())
        raise AnswerError(f"no usable scene after 3 answers: {problem.strip()}")

    def _header(self, task: Task, skill: str, outcome: TaskOutcome) -> str:
        """The header of the target skill: the module's, or a new one proposed and reviewed."""
        library = parse_library(self.learner.ws.skills_dir)
        existing = library.records.get(skill)
        if existing is not None:
            return existing.header
        # Style examples: the skills most like the task, among those its backend can run (a
        # tabletop skill teaches MetaWorld the wrong frame), rather than the whole library.
        if self.method.memory:
            similar = self.learner.memory.retrieve(
                task.instruction,
                k_examples=0,
                k_skills=PROMPT_SKILLS,
                capabilities=task.spec().capabilities,
            )
            headers = [hit.header for hit in similar.skills]
        else:
            usable = _usable(task, library)
            headers = [r.header for r in library if r.name in usable]
            headers = random.Random(task.id).sample(headers, min(PROMPT_SKILLS, len(headers)))
        known = "\n\n".join(headers) or "(none yet)"
        prompt = render(
            "skill_parser",
            task.prompt_pack(),
            instruction=task.instruction,
            skill=skill,
            skills=known,
        )
        problem = ""
        for _ in range(3):
            answer = self.learner.complete(task, prompt + problem, "skill_parser").text
            blocks = code_blocks(answer) or [answer]
            header = re.sub(r"def\s+\w+\s*\(", f"def {skill}(", blocks[0], count=1)
            header = self.teacher.review_header(task, header)
            try:
                stage_new_skill(self.learner.ws, header)  # validates the header; nothing is written
            except EditError as error:
                problem = f"\n\nYour last header could not be used: {error}"
                self.learner.say(problem.strip())
                continue
            return header.strip("\n")
        raise AnswerError(f"no usable header for '{skill}' after 3 proposals: {problem.strip()}")

    def teach(self, task: Task, curriculum: str, progress: Progress) -> TaskOutcome:
        """Run one task through the loop until it is accepted, rejected or out of rounds."""
        outcome = TaskOutcome(task.id, accepted=False)
        gate = RegressionGate(
            self.learner.ws,
            self.learner.backend,
            self.learner.budget,
            self.learner.say,
            self.learner.watch,
        )
        revised = gate.revised(task, f"{curriculum}/{task.id}")
        scene = self._scene(task, outcome)
        skill = task.skill.name if task.skill is not None else None
        header = self._header(task, skill, outcome) if skill is not None else ""
        state = _Round(hints=list(task.hints))
        while outcome.rounds < self.learner.max_rounds:
            outcome.rounds += 1
            try:
                staged = (
                    self._propose_skill(task, skill, scene, header, state, outcome)
                    if skill is not None
                    else self._propose_plan(task, scene, state, outcome)
                )
            except (AnswerError, EditError) as error:
                state.correction = f"Your answer could not be used: {error}"
                self.learner.say(f"round {outcome.rounds}: {state.correction}")
                continue
            if staged is None:  # the plan needs a skill that was not taught
                return outcome
            patch, code = staged
            overlay = (
                staged_skills(self.learner.ws, patch)
                if patch.changes
                else self.learner.ws.skills_dir
            )
            module = next((c.after for c in patch.changes if c.after is not None), None)
            state.last = self.learner.attempt(
                task,
                scene,
                code,
                overlay,
                outcome.rounds,
                skill=skill,
                module=module,
                teacher=self.teacher,
            )
            outcome.last = state.last
            outcome.first = outcome.first or state.last
            self.learner.say(f"round {outcome.rounds}:\n{state.last.outcome()}")
            verdict = self.teacher.judge(state.last)
            if verdict.action == "reject":
                self.learner.say(f"'{task.id}' rejected; nothing was kept")
                return outcome
            if verdict.action in ("feedback", "hint"):
                if verdict.action == "hint":
                    state.hints.extend(self._parse_hint(task, verdict.text, outcome))
                state.correction = verdict.text
                outcome.corrections.append(verdict.text)
                self.learner.say(f"{verdict.action}: {verdict.text}")
                if skill is None and self._stuck_again(task, scene, state, outcome):
                    state.correction = ""
                    self.learner.say("Resuming the plan with the extended skill.")
                continue
            if not state.last.ok:
                # An accepted failure would be stored as the task's regression check and fail
                # every later edit: the run must pass first.
                state.correction = f"It cannot be kept yet: {state.last.outcome()}"
                self.learner.say(state.correction)
                continue
            broken = gate.broken_by(f"{curriculum}/{task.id}", patch, overlay)
            broken += gate.recheck(revised, state.last.code, overlay)
            outcome.regression_checks = gate.checks
            if broken:
                state.regression = "\n".join(broken)
                # A skill's prompts list the broken tasks; a plan's shows only the correction.
                state.correction = (
                    "Your change breaks earlier tasks; keep them solvable."
                    if skill is not None
                    else "Your plan fails on the task it revises; it must do that one too:\n"
                    + state.regression
                )
                self.learner.say(
                    f"the edit breaks earlier tasks and is not kept:\n{state.regression}"
                )
                continue
            outcome.example = self._commit(
                task, curriculum, progress, patch, state.last, scene, outcome
            )
            outcome.accepted = True
            kept = f"{skill} kept" if skill is not None else "the plan kept as an example"
            self.learner.say(f"accepted after {outcome.rounds} round(s); {kept}")
            return outcome
        self.learner.say(
            f"'{task.id}' was not accepted within {self.learner.max_rounds} rounds; "
            "nothing was kept"
        )
        return outcome

    def _retrieve_for(self, task: Task, state: _Round) -> tuple[str, str]:
        """The skill headers and the examples a prompt shows, retrieved for the task's backend."""
        if not self.method.memory:
            return self._drawn(task)
        spec = task.spec()
        retrieval = self.learner.memory.retrieve(
            task.instruction,
            correction=state.correction or None,
            hints=state.hints,
            k_skills=PROMPT_SKILLS,
            capabilities=spec.capabilities,
            backends=spec.examples_from(),
        )
        examples, in_full = examples_section(retrieval.examples)
        # A skill that only a one-line example calls is left out: the line names it, and the
        # similar skills and those the full examples call are what the task is likely to use.
        # Similar means found by every search that ran: one list alone also ranks the nearest
        # of unrelated skills (a tabletop's roof for a drawer).
        agreed = METHODS if self.learner.memory.embedder is not None else ()
        briefs = {
            hit.name: hit.brief for hit in retrieval.skills if hit.brought_by(in_full, agreed)
        }
        if task.skill is not None:
            briefs |= self._neighbours(task, task.skill.name)
            briefs.pop(task.skill.name, None)  # shown whole where the prompt asks for it
        # The library may hold skills, none of them found for this task.
        return skills_section(list(briefs.values()), "(none that fit this task)"), examples

    def _drawn(self, task: Task) -> tuple[str, str]:
        """Without retrieval: skills and examples drawn at random while they fit the budget.

        The draw is seeded by the task, so a recorded session replays with the same prompts.
        """
        library = parse_library(self.learner.ws.skills_dir)
        usable = _usable(task, library)
        target = task.skill.name if task.skill is not None else None
        backends = task.spec().examples_from()
        items = [
            ("skill", brief_header(r.signature, r.docstring))
            for r in library
            if r.name in usable and r.name != target
        ] + [
            ("example", example_block(e.instruction, e.code))
            for _, e in iter_examples(self.learner.ws.examples_dir)
            if e.backend in backends
        ]
        random.Random(task.id).shuffle(items)
        chosen: dict[str, list[str]] = {"skill": [], "example": []}
        spent = 0
        for kind, text in items:
            if spent + len(text) <= CONTEXT_BUDGET:  # a shorter one further on may still fit
                chosen[kind].append(text)
                spent += len(text)
        return skills_section(chosen["skill"]), "\n\n".join(chosen["example"]) or "(none yet)"

    def _neighbours(self, task: Task, skill: str) -> dict[str, str]:
        """The brief headers of the skills a skill calls and of those that call it.

        Extending a skill must keep its callers working with what it calls, so these come
        whatever the retrieval found; only those the task's backend can run.
        """
        library = parse_library(self.learner.ws.skills_dir)
        usable = _usable(task, library)
        callees = library.records[skill].calls_skills if skill in library else ()
        return {
            r.name: brief_header(r.signature, r.docstring)
            for r in library
            if r.name in usable and (r.name in callees or skill in r.calls_skills)
        }

    def _propose_skill(
        self,
        task: Task,
        skill: str,
        scene: Any,
        header: str,
        state: _Round,
        outcome: TaskOutcome,
    ) -> tuple[Patch, str]:
        """Ask for the skill module and its task code; stage the module's edit."""
        skills_text, examples = self._retrieve_for(task, state)
        objects = self.learner.describe(task, scene)
        regression_text = (
            "\n# Earlier tasks that must stay solvable (they failed after your last change)\n"
            f"{state.regression}\n"
            if state.regression
            else ""
        )
        last, correction = state.last, state.correction
        if last is not None and last.module is not None and correction:
            prompt = render(
                "refinement",
                task.prompt_pack(),
                instruction=task.instruction,
                scene=objects,
                module=last.module.rstrip("\n"),
                task_code=last.code.rstrip("\n"),
                outcome=last.outcome(),
                correction=correction,
                skills=skills_text,
                regression=regression_text,
                skill=skill,
            )
            purpose = "refinement"
        else:
            module_path = self.learner.ws.skills_dir / f"{skill}.py"
            current = module_path.read_text(encoding="utf-8") if module_path.exists() else None
            pack = task.prompt_pack()
            prompt = render(
                "skill_learning",
                pack,
                instruction=task.instruction,
                scene=objects,
                skill=skill,
                # The module, when there is one, holds the header: it is not shown twice.
                target=(
                    render("skill_current", pack, skill=skill, module=current.rstrip())
                    if current
                    else render("skill_new", pack, skill=skill, header=header)
                ),
                skills=skills_text,
                examples=examples,
                regression=regression_text,
                correction=f"\n# Correction\n{correction}\n" if correction else "",
            )
            purpose = "skill_learning"
        answer = self.learner.complete(task, prompt, purpose).text
        module_text, code = split_answer(answer, skill)
        return stage_answer(self.learner.ws, skill, module_text), code

    def _propose_plan(
        self, task: Task, scene: Any, state: _Round, outcome: TaskOutcome
    ) -> tuple[Patch, str] | None:
        """Ask for task code composed of learnt skills; None when it stops for a missing skill.

        When the LLM answers that a skill is missing and the teacher teaches it, the new skill
        is in the library for the next round's prompt, and this round asks again.
        """
        for _ in range(self.learner.max_rounds):
            skills_text, examples = self._retrieve_for(task, state)
            last = state.last
            previous = ""
            if last is not None:
                previous = (
                    f"\n# Your last plan\n```python\n{last.code.rstrip()}\n```\n"
                    f"What happened:\n{last.outcome()}\n"
                )
            prompt = render(
                "plan",
                task.prompt_pack(),
                instruction=task.instruction,
                scene=self.learner.describe(task, scene),
                skills=skills_text,
                examples=examples,
                hint=(
                    f"\n# Hint from the person\n{'; '.join(state.hints)}\n" if state.hints else ""
                ),
                previous=previous,
                correction=f"\n# Correction\n{state.correction}\n" if state.correction else "",
            )
            answer = self.learner.complete(task, prompt, "plan").text
            missing = next((line for line in answer.splitlines() if line.startswith(MISSING)), "")
            if not missing:
                blocks = code_blocks(answer)
                if not blocks:
                    raise AnswerError(
                        "the answer held no code block: answer with the task code in one "
                        f"```python block beginning with `# task`, or with `{MISSING} ...`"
                    )
                return Patch((), _plan_summary(blocks[0])), blocks[0]
            proposal = missing.removeprefix(MISSING).strip()
            self.learner.say(f"The plan needs a skill the library lacks: {proposal}")
            if not self._teach_skill_for(task, scene, proposal, outcome):
                outcome.missing_skill = proposal
                return None
            self.learner.say("Resuming the plan with the new skill.")
        raise AnswerError(
            f"the plan asked for a missing skill {self.learner.max_rounds} times in one round; "
            "write the task code with the skills the library has now"
        )

    def _stuck_again(self, task: Task, scene: Any, state: _Round, outcome: TaskOutcome) -> bool:
        """Offer to extend a skill the plan fails inside the same way as in the round before.

        Rounds of plan feedback cannot change a skill; the person can extend it on this layout
        (as a missing skill is taught), and the plan resumes with it. True if it was extended.
        """
        assert state.last is not None
        stuck, before = _failed_inside(state.last), state.stuck
        state.stuck = stuck
        if stuck is None or stuck != before:
            return False
        name, line, error = stuck
        if name in outcome.taught:  # extended in this task already
            return False
        self.learner.say(
            f"The plan fails inside {name} ({line}) the same way as the round before: {error}"
        )
        return self._teach_skill_for(
            task, scene, f"{name}: extended to this case, where it fails: {error}", outcome
        )

    def _teach_skill_for(self, task: Task, scene: Any, proposal: str, outcome: TaskOutcome) -> bool:
        """Pause a plan to teach the skill it asked for, in the plan's scene; True if kept.

        A skill the library has already is extended (``extend: true``) rather than made anew.
        """
        name = proposal.partition(":")[0].strip()
        if not self.learner.teach_missing:
            self.teacher.tell(
                "Teach it first (lyra teach ...) and plan again, or plan with --teach to "
                "teach it here and resume."
            )
            return False
        if name in outcome.taught:
            self.teacher.tell(f"It asks for '{name}' again after it was taught; the plan stops.")
            return False
        request = self.teacher.teach_missing(task, proposal)
        if request is None:
            self.teacher.tell("The skill was not taught; the plan stays paused.")
            return False
        try:
            skill_task = resolve_task(
                one_off_task(
                    request.instruction,
                    task.backend,
                    scene,
                    task.seeds[:1],
                    request.success,
                    skill=request.name,
                )
            )
        except CurriculumError as error:
            self.teacher.tell(f"That task cannot be taught: {error}")
            return False
        if request.name in parse_library(self.learner.ws.skills_dir).records:
            target = SkillTarget(name=request.name, extend=True)
            skill_task = skill_task.model_copy(update={"skill": target})
        taught_outcome = self.learner.teach(
            skill_task, TAUGHT, Progress.load(self.learner.ws, TAUGHT)
        )
        # Both names: a second request under either is the same skill asked for again.
        outcome.taught += [name, request.name]
        if not taught_outcome.accepted:
            self.teacher.tell("The skill was not taught; the plan stays paused.")
        return taught_outcome.accepted

    def _parse_hint(self, task: Task, hint: str, outcome: TaskOutcome) -> list[str]:
        prompt = render("hint", task.prompt_pack(), instruction=task.instruction, hint=hint)
        answer = self.learner.complete(task, prompt, "hint_parsing").text
        return [line[2:].strip() for line in answer.splitlines() if line.startswith("- ")]

    def _commit(
        self,
        task: Task,
        curriculum: str,
        progress: Progress,
        patch: Patch,
        attempt: Attempt,
        scene: Any,
        outcome: TaskOutcome,
    ) -> Example:
        notes = self._improvement(task, attempt, outcome) if outcome.corrections else ""
        first = attempt.runs[0]
        scene = task.spec().load_scene(scene)
        example = Example(
            id=self._example_id(f"{curriculum}/{task.id}"),
            instruction=task.instruction,
            code=attempt.code,
            skills=skills_called(attempt.code),
            backend=task.backend,
            task=f"{curriculum}/{task.id}",
            revises=task.revises,
            seed=first.seed,
            scene=scene.model_dump(mode="json", exclude_defaults=True),
            snapshot=first.snapshot,
            success=task.success,
            hold_seconds=task.hold_seconds,
            notes=notes,
        )
        # A task may reuse its skill unchanged: then only the example is new.
        kept = Patch(tuple(c for c in patch.changes if c.before != c.after), patch.summary)
        progress.accept(task.id, example.id)
        commit_learnt_step(
            self.learner.ws,
            patch=kept,
            example=example,
            progress=progress,
            memory=self.learner.memory,
            feedback="\n".join(outcome.corrections) or None,
        )
        return example

    def _example_id(self, key: str) -> str:
        """A readable id for a task's example, with a digest when another task has that slug.

        Slugs are cut at 48 characters and fold punctuation, so two tasks can share one; the
        second then keeps its own file instead of overwriting the first's regression check.
        """
        slug = slugify(key.replace("/", "-"))
        path = self.learner.ws.examples_dir / f"{slug}.yaml"
        if not path.exists() or load_example(path).task == key:
            return slug
        digest = hashlib.sha1(key.encode()).hexdigest()[:8]
        return f"{slug[:39]}_{digest}"

    def _improvement(self, task: Task, attempt: Attempt, outcome: TaskOutcome) -> str:
        first = outcome.first or attempt
        prompt = render(
            "improvement",
            task.prompt_pack(),
            instruction=task.instruction,
            first_code=first.code.rstrip("\n"),
            first_outcome=first.outcome(),
            corrections="\n".join(f"{i}. {c}" for i, c in enumerate(outcome.corrections, 1)),
            task_code=attempt.code.rstrip("\n"),
        )
        return self.learner.complete(task, prompt, "improvement").text.strip()


def _usable(task: Task, library: Library) -> set[str]:
    """The skills the task's backend can run: those that reach only primitives it has."""
    calls = {r.name: (r.calls_primitives, r.calls_skills) for r in library}
    return runnable(calls, set(PRIMITIVES) - set(task.spec().capabilities))


# A traceback line of the runner's feedback that is inside a skill module.
_SKILL_FRAME = re.compile(r"^\s*at skills/(\w+)\.py:(\d+)")


def _failed_inside(attempt: Attempt) -> tuple[str, str, str] | None:
    """Where the first seed whose code failed went wrong inside a skill.

    The innermost skill frame (name, ``skills/NAME.py:LINE``) and the error's first line; None
    where the code failed outside every skill, or no seed's code failed.
    """
    failed = next((run.result for run in attempt.runs if not run.result.ok), None)
    if failed is None:
        return None
    lines = failed.feedback.splitlines()
    frames = [m for m in map(_SKILL_FRAME.match, lines) if m is not None]
    if not frames:
        return None
    name, line = frames[-1].groups()
    # The error without its numbers: a slip a few millimetres off is the same slip.
    error = re.sub(r"-?\d+(\.\d+)?", "N", lines[0])
    return name, f"skills/{name}.py:{line}", error


def _plan_summary(code: str) -> str:
    called = skills_called(code)
    return f"a plan of {', '.join(called)}" if called else "a plan of primitives"


def _yaml(text: str) -> dict[str, Any]:
    """An answer's YAML: plain (no anchors, which expand without bound), and a mapping."""
    try:
        refuse_anchors("the answer", text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise AnswerError(f"the YAML does not parse: {error}") from None
    if not isinstance(data, dict):
        raise AnswerError("the answer is not a YAML mapping with `objects`")
    return data
