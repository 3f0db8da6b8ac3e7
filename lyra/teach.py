"""The learning loop: a task in, code written, run in simulation, judged, checked, kept.

One task goes: retrieve (examples, skill headers, hints) -> prompt -> LLM -> parse -> stage the
libcst edit -> run the task code through the episode runner on every seed -> the teacher's
verdict. Feedback and hints go round again; an accept re-runs every earlier example that reaches
an edited skill, and only when all still pass are the skill module, the example and the progress
kept, as one transaction (:mod:`lyra.journal`).

A task that names a skill teaches it; a task without one is planned from the skills already
learnt, in rounds with the teacher the same way, and when the plan needs a skill the library
lacks, the teacher may teach that skill first and planning resumes with it. The loop knows no
backend: each task names one, and the registry builds it.
"""

from __future__ import annotations

import ast
import hashlib
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import yaml
from pydantic import ValidationError

from lyra import lock
from lyra.api import PRIMITIVES
from lyra.backend import Backend, make
from lyra.check import check_example, check_revision
from lyra.curriculum import (
    Curriculum,
    CurriculumError,
    Progress,
    Task,
    next_task,
    refuse_anchors,
    resolve_task,
)
from lyra.episode import Budget, EpisodeResult, run_episode
from lyra.errors import LyraError
from lyra.examples import (
    Example,
    iter_examples,
    latest_revision,
    load_example,
    revision_chain,
    revisions,
    slugify,
)
from lyra.journal import commit_learnt_step, recover
from lyra.library.edit import Patch, stage_answer, stage_new_skill
from lyra.library.errors import EditError
from lyra.library.history import git_head
from lyra.library.parse import brief_header, parse_library
from lyra.library.tree import SkillTree, runnable
from lyra.llm import Completion, Message, Provider
from lyra.memory.store import Memory
from lyra.names import SKILL_NAME
from lyra.pictures import save_png
from lyra.policy import OversizedCodeError, parse_generated
from lyra.predicates import PredicateError, from_spec
from lyra.progress import Bar
from lyra.prompts import examples_section, render, skills_section, system_prompt
from lyra.workspace import Workspace

_BLOCK = re.compile(r"```[a-zA-Z]*[ \t]*\n(.*?)```", re.DOTALL)
MISSING = "MISSING SKILL:"
# Skills a prompt shows by the similarity of their docstrings to the task: the skill parser's
# examples of style; in the others, beside the hinted ones, those the examples call and the
# neighbours of a skill being extended.
PROMPT_SKILLS = 3
# Plans and skills taught outside any curriculum are kept under these names.
PLANNED = "planned"
TAUGHT = "taught"


class AnswerError(LyraError):
    """An LLM answer could not be used; the message is the feedback it gets."""


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


class ScriptedTeacher:
    """For tests and benchmarks: the predicate decides; corrections come from the task.

    When a check fails, the task's ``feedback`` lines are given in order (then the check's own
    reason); when the code fails on a mistake in its Python (a NameError, a refused import),
    :data:`CODE_MISTAKE` is said instead and the lines wait for a failure they can be about;
    when it passes, the task's ``review`` lines are given in order before accepting.
    It never teaches a missing skill: a script cannot make up the task that shows one.
    """

    wants_pictures = False

    def __init__(self) -> None:
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
        return TeacherVerdict("accept")

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


class HumanTeacher:
    """A person at the terminal, answering with numbered choices."""

    wants_pictures = True

    def __init__(
        self, ask: Callable[[str], str] = input, say: Callable[[str], None] = print
    ) -> None:
        self.ask = ask
        self.say = say

    def review_header(self, task: Task, header: str) -> str:
        """Show the proposed header; the person may paste a corrected one."""
        self.say(f"Proposed header for the new skill:\n\n{header}\n")
        answer = self.ask("Press Enter to accept, or paste a corrected `def` line: ").strip()
        if not answer:
            return header
        docstring = header[header.index(":\n") + 2 :] if ":\n" in header else ""
        return f"{answer.rstrip(':')}:\n{docstring}"

    def judge(self, attempt: Attempt) -> TeacherVerdict:
        """Show what happened and ask for a verdict."""
        self.say(f"\nRound {attempt.round} of '{attempt.task.id}':\n{attempt.outcome()}")
        if attempt.picture is not None:
            self.say(f"Picture of the final scene: {attempt.picture}")
        choices = {"1": "accept", "2": "feedback", "3": "hint", "4": "reject"}
        while True:
            choice = self.ask("1 accept   2 give feedback   3 give a hint   4 reject > ").strip()
            if choice in choices:
                break
            self.say("Answer 1, 2, 3 or 4.")
        action = choices[choice]
        text = self.ask("Your words: ").strip() if action in ("feedback", "hint") else ""
        return TeacherVerdict(action, text)  # type: ignore[arg-type]

    def teach_missing(self, task: Task, proposal: str) -> SkillRequest | None:
        """Ask for the skill's name (default the LLM's), the task that shows it, its predicate."""
        proposed, _, what = (part.strip() for part in proposal.partition(":"))
        while True:
            answer = self.ask(f"Teach it now? The skill's name [{proposed}] ('no' to stop): ")
            if answer.strip().lower() == "no":
                return None
            name = answer.strip() or proposed
            if SKILL_NAME.fullmatch(name):
                break
            self.say(f"'{name}' is not a skill name: use lower case letters, digits and _")
        instruction = ""
        while not instruction:
            instruction = self.ask(f"The task that shows it, in this scene [{what}]: ").strip()
            instruction = instruction or what
        while True:
            text = self.ask(
                "Its success predicate as YAML, e.g. [{on_top: {upper: a, lower: b}}]: "
            )
            try:
                success = yaml.safe_load(text)
                from_spec(success, task.predicate_functions())
                return SkillRequest(name, instruction, success)
            except (PredicateError, yaml.YAMLError, TypeError, AttributeError) as error:
                self.say(f"That cannot be used: {error}")

    def tell(self, message: str) -> None:
        """Print it."""
        self.say(message)


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


# -- parsing answers -----------------------------------------------------------------------


def code_blocks(text: str) -> list[str]:
    """The fenced code blocks of an answer, in order."""
    return [block.strip("\n") + "\n" for block in _BLOCK.findall(text)]


def split_answer(text: str, skill: str) -> tuple[str, str]:
    """Return (module text, task code) from a skill-learning answer.

    Raises:
        AnswerError: the answer lacks one of the two blocks; the message says what to send.
    """
    blocks = code_blocks(text)
    module = next((b for b in blocks if b.startswith(f"# skills/{skill}.py")), None)
    module = module or next((b for b in blocks if f"def {skill}(" in b), None)
    code = next((b for b in blocks if b.startswith("# task")), None)
    code = code or next((b for b in blocks if b is not module), None)
    if module is None or code is None:
        raise AnswerError(
            f"the answer must hold two Python code blocks: the module skills/{skill}.py "
            f"(defining `def {skill}(...)`) and the task code (beginning with `# task`); "
            f"it held {len(blocks)} code block(s)"
        )
    tree = _parsed(code)
    if tree is not None and not any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == skill
        for node in ast.walk(tree)
    ):
        raise AnswerError(
            f"the task code never calls `{skill}`: do the task by calling the skill, "
            f"after `from skills.{skill} import {skill}`"
        )
    return module, code


def _parsed(code: str) -> ast.Module | None:
    """The code's tree; None when it does not parse (the run reports that, with its line).

    Raises:
        AnswerError: the code is too large or nested too deep to be read at all.
    """
    try:
        return parse_generated(code, "the task code")
    except OversizedCodeError as error:
        raise AnswerError(str(error)) from None
    except SyntaxError:
        return None


def skills_called(code: str) -> list[str]:
    """The skills a piece of code imports (``from skills.NAME import NAME``)."""
    tree = _parsed(code)
    if tree is None:
        return []
    return sorted(
        {
            node.module.removeprefix("skills.")
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("skills.")
        }
    )


# -- the loop ------------------------------------------------------------------------------


@dataclass
class TaskOutcome:
    """How one task ended, and what it cost.

    Attributes:
        missing_skill: for a plan, the skill it asked for (``name: what``) when it stopped
            because the library lacks it.
        taught: the skills taught while a plan was paused for them.
        first: the first attempt that ran.
        last: the last attempt that ran.
    """

    task: str
    accepted: bool
    rounds: int = 0
    llm_calls: int = 0
    tokens: int = 0
    regression_checks: int = 0
    example: Example | None = None
    corrections: list[str] = field(default_factory=list)
    missing_skill: str = ""
    taught: list[str] = field(default_factory=list)
    first: Attempt | None = None
    last: Attempt | None = None


@dataclass
class _Round:
    """What the next prompt of a task carries from the rounds before it."""

    last: Attempt | None = None
    correction: str = ""
    regression: str = ""
    hints: list[str] = field(default_factory=list)


class Learner:
    """Runs tasks through the learning loop in one workspace, on whichever backends they name."""

    def __init__(
        self,
        workspace: Workspace,
        provider: Provider,
        teacher: Teacher,
        memory: Memory,
        *,
        max_rounds: int = 6,
        budget: Budget | None = None,
        teach_missing: bool = False,
        say: Callable[[str], None] = print,
        progress: Callable[[int, str], Bar] | None = None,
    ) -> None:
        """Start the loop in a workspace: finish or undo a step a crash cut short, index it.

        Args:
            workspace: the skills, examples and state to learn into.
            provider: the LLM.
            teacher: who judges each attempt.
            memory: the workspace's memory; it is rebuilt from the files here.
            max_rounds: rounds per task before it is given up.
            budget: the limits of each episode (default: :class:`~lyra.episode.Budget`).
            teach_missing: when a plan needs a skill the library lacks, ask the teacher to
                teach it and resume; otherwise the plan stops there.
            say: where the loop reports progress.
            progress: makes a bar for the seeds of an attempt, from their number and a label
                (the command line passes :class:`lyra.progress.Bar`; none by default).

        Raises:
            WorkspaceLockedError: another process is writing to the workspace.
        """
        self.ws = workspace
        self.provider = provider
        self.teacher = teacher
        self.memory = memory
        self.max_rounds = max_rounds
        self.budget = budget or Budget()
        self.teach_missing = teach_missing
        self.say = say
        self.progress = progress
        self._backends: dict[str, Backend] = {}
        # One writer per workspace, from here until close(); the lock dies with the process.
        lock.acquire(workspace)
        try:
            restored = recover(workspace)
            if restored:
                names = ", ".join(p.name for p in restored)
                say(f"Undid an interrupted commit: restored {names}")
            # Rebuilt even when current: rows written after the text index was built are scored
            # apart from it, so a memory grown row by row ranks a little differently from one
            # built from the files, and a recorded session replays the same only from the files.
            indexed = self.memory.refresh(workspace, always=True, progress=progress)
            if indexed:
                say(f"Memory: {indexed}")
            if git_head(workspace.root) is None:
                say(
                    f"Warning: {workspace.root} is not a git repository, so accepted steps are "
                    "not committed; run `git init` there (or start a workspace with `lyra init`)"
                )
        except BaseException:
            lock.release(workspace)
            raise

    def backend(self, name: str) -> Backend:
        """The loop's backend of a kind, made on first use."""
        if name not in self._backends:
            self._backends[name] = make(name)
        return self._backends[name]

    def close(self) -> None:
        """Release the simulators and the workspace."""
        for backend in self._backends.values():
            backend.close()
        self._backends.clear()
        lock.release(self.ws)

    def learn(self, curriculum: Curriculum) -> list[TaskOutcome]:
        """Teach every task not yet accepted, in order; stop at the first one not accepted."""
        progress = Progress.load(self.ws, curriculum.name)
        # Progress lives in .lyra, which a fresh clone lacks; the example files are the record
        # of what was accepted, so a task with one is done.
        for _, example in iter_examples(self.ws.examples_dir):
            name, _, task_id = (example.task or "").partition("/")
            if name == curriculum.name:
                progress.accepted.setdefault(task_id, example.id)
        outcomes = []
        while (task := next_task(curriculum, progress)) is not None:
            self.say(f"\n== {curriculum.name}/{task.id}: {task.instruction}")
            outcome = self.teach(task, curriculum.name, progress)
            outcomes.append(outcome)
            if not outcome.accepted:
                break
        return outcomes

    # -- one task --------------------------------------------------------------------------

    def _complete(self, task: Task, outcome: TaskOutcome, prompt: str, purpose: str) -> Completion:
        system = system_prompt(task.prompt_pack(), task.spec().capabilities)
        completion = self.provider.complete(
            [Message("system", system), Message("user", prompt)], purpose=purpose, task=task.id
        )
        outcome.llm_calls += 1
        outcome.tokens += completion.prompt_tokens + completion.completion_tokens
        return completion

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
            answer = self._complete(task, outcome, prompt + problem, "task_setup").text
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
                self.say(problem.strip())
        raise AnswerError(f"no usable scene after 3 answers: {problem.strip()}")

    def _header(self, task: Task, skill: str, outcome: TaskOutcome) -> str:
        """The header of the target skill: the module's, or a new one proposed and reviewed."""
        library = parse_library(self.ws.skills_dir)
        existing = library.records.get(skill)
        if existing is not None:
            return existing.header
        # Style examples: the skills most like the task, among those its backend can run (a
        # tabletop skill teaches MetaWorld the wrong frame), rather than the whole library.
        similar = self.memory.retrieve(
            task.instruction,
            k_examples=0,
            k_skills=PROMPT_SKILLS,
            capabilities=task.spec().capabilities,
        )
        known = "\n\n".join(hit.header for hit in similar.skills) or "(none yet)"
        prompt = render(
            "skill_parser",
            task.prompt_pack(),
            instruction=task.instruction,
            skill=skill,
            skills=known,
        )
        problem = ""
        for _ in range(3):
            answer = self._complete(task, outcome, prompt + problem, "skill_parser").text
            blocks = code_blocks(answer) or [answer]
            header = re.sub(r"def\s+\w+\s*\(", f"def {skill}(", blocks[0], count=1)
            header = self.teacher.review_header(task, header)
            try:
                stage_new_skill(self.ws, header)  # validates the header; nothing is written
            except EditError as error:
                problem = f"\n\nYour last header could not be used: {error}"
                self.say(problem.strip())
                continue
            return header.strip("\n")
        raise AnswerError(f"no usable header for '{skill}' after 3 proposals: {problem.strip()}")

    def teach(self, task: Task, curriculum: str, progress: Progress) -> TaskOutcome:
        """Run one task through the loop until it is accepted, rejected or out of rounds."""
        outcome = TaskOutcome(task.id, accepted=False)
        revised = self._revised(task, f"{curriculum}/{task.id}")
        scene = self._scene(task, outcome)
        skill = task.skill.name if task.skill is not None else None
        header = self._header(task, skill, outcome) if skill is not None else ""
        state = _Round(hints=list(task.hints))
        while outcome.rounds < self.max_rounds:
            outcome.rounds += 1
            try:
                staged = (
                    self._propose_skill(task, skill, scene, header, state, outcome)
                    if skill is not None
                    else self._propose_plan(task, scene, state, outcome)
                )
            except (AnswerError, EditError) as error:
                state.correction = f"Your answer could not be used: {error}"
                self.say(f"round {outcome.rounds}: {state.correction}")
                continue
            if staged is None:  # the plan needs a skill that was not taught
                return outcome
            patch, code = staged
            overlay = self._overlay(patch) if patch.changes else self.ws.skills_dir
            state.last = self._attempt(task, scene, skill, patch, code, overlay, outcome.rounds)
            outcome.last = state.last
            outcome.first = outcome.first or state.last
            self.say(f"round {outcome.rounds}:\n{state.last.outcome()}")
            verdict = self.teacher.judge(state.last)
            if verdict.action == "reject":
                self.say(f"'{task.id}' rejected; nothing was kept")
                return outcome
            if verdict.action in ("feedback", "hint"):
                if verdict.action == "hint":
                    state.hints.extend(self._parse_hint(task, verdict.text, outcome))
                state.correction = verdict.text
                outcome.corrections.append(verdict.text)
                self.say(f"{verdict.action}: {verdict.text}")
                continue
            if not state.last.ok:
                # An accepted failure would be stored as the task's regression check and fail
                # every later edit: the run must pass first.
                state.correction = f"It cannot be kept yet: {state.last.outcome()}"
                self.say(state.correction)
                continue
            broken = self._regression(f"{curriculum}/{task.id}", patch, overlay, outcome)
            broken += self._recheck(revised, state.last.code, overlay, outcome)
            if broken:
                state.regression = "\n".join(broken)
                # A skill's prompts list the broken tasks; a plan's shows only the correction.
                state.correction = (
                    "Your change breaks earlier tasks; keep them solvable."
                    if skill is not None
                    else "Your plan fails on the task it revises; it must do that one too:\n"
                    + state.regression
                )
                self.say(f"the edit breaks earlier tasks and is not kept:\n{state.regression}")
                continue
            outcome.example = self._commit(
                task, curriculum, progress, patch, state.last, scene, outcome
            )
            outcome.accepted = True
            kept = f"{skill} kept" if skill is not None else "the plan kept as an example"
            self.say(f"accepted after {outcome.rounds} round(s); {kept}")
            return outcome
        self.say(f"'{task.id}' was not accepted within {self.max_rounds} rounds; nothing was kept")
        return outcome

    def _retrieve_for(self, task: Task, state: _Round) -> tuple[str, str]:
        """The skill headers and the examples a prompt shows, retrieved for the task's backend."""
        spec = task.spec()
        retrieval = self.memory.retrieve(
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
        briefs = {hit.name: hit.brief for hit in retrieval.skills if hit.brought_by(in_full)}
        if task.skill is not None:
            briefs |= self._neighbours(task, task.skill.name)
            briefs.pop(task.skill.name, None)  # shown whole where the prompt asks for it
        return skills_section(list(briefs.values())), examples

    def _neighbours(self, task: Task, skill: str) -> dict[str, str]:
        """The brief headers of the skills a skill calls and of those that call it.

        Extending a skill must keep its callers working with what it calls, so these come
        whatever the retrieval found; only those the task's backend can run.
        """
        library = parse_library(self.ws.skills_dir)
        calls = {r.name: (r.calls_primitives, r.calls_skills) for r in library}
        usable = runnable(calls, set(PRIMITIVES) - set(task.spec().capabilities))
        callees = library.records[skill].calls_skills if skill in library else ()
        return {
            r.name: brief_header(r.signature, r.docstring)
            for r in library
            if r.name in usable and (r.name in callees or skill in r.calls_skills)
        }

    def _describe(self, task: Task, scene: Any) -> str:
        backend = self.backend(task.backend)
        backend.reset(scene, task.seeds[0])
        return backend.describe()

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
        objects = self._describe(task, scene)
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
            module_path = self.ws.skills_dir / f"{skill}.py"
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
        answer = self._complete(task, outcome, prompt, purpose).text
        module_text, code = split_answer(answer, skill)
        return stage_answer(self.ws, skill, module_text), code

    def _propose_plan(
        self, task: Task, scene: Any, state: _Round, outcome: TaskOutcome
    ) -> tuple[Patch, str] | None:
        """Ask for task code composed of learnt skills; None when it stops for a missing skill.

        When the LLM answers that a skill is missing and the teacher teaches it, the new skill
        is in the library for the next round's prompt, and this round asks again.
        """
        for _ in range(self.max_rounds):
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
                scene=self._describe(task, scene),
                skills=skills_text,
                examples=examples,
                hint=(
                    f"\n# Hint from the person\n{'; '.join(state.hints)}\n" if state.hints else ""
                ),
                previous=previous,
                correction=f"\n# Correction\n{state.correction}\n" if state.correction else "",
            )
            answer = self._complete(task, outcome, prompt, "plan").text
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
            self.say(f"The plan needs a skill the library lacks: {proposal}")
            if not self._teach_skill_for(task, scene, proposal, outcome):
                outcome.missing_skill = proposal
                return None
            self.say("Resuming the plan with the new skill.")
        raise AnswerError(
            f"the plan asked for a missing skill {self.max_rounds} times in one round; "
            "write the task code with the skills the library has now"
        )

    def _teach_skill_for(self, task: Task, scene: Any, proposal: str, outcome: TaskOutcome) -> bool:
        """Pause a plan to teach the skill it asked for, in the plan's scene; True if kept."""
        name = proposal.partition(":")[0].strip()
        if not self.teach_missing:
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
        taught_outcome = self.teach(skill_task, TAUGHT, Progress.load(self.ws, TAUGHT))
        outcome.llm_calls += taught_outcome.llm_calls
        outcome.tokens += taught_outcome.tokens
        # Both names: a second request under either is the same skill asked for again.
        outcome.taught += [name, request.name]
        if not taught_outcome.accepted:
            self.teacher.tell("The skill was not taught; the plan stays paused.")
        return taught_outcome.accepted

    def _parse_hint(self, task: Task, hint: str, outcome: TaskOutcome) -> list[str]:
        prompt = render("hint", task.prompt_pack(), instruction=task.instruction, hint=hint)
        answer = self._complete(task, outcome, prompt, "hint_parsing").text
        return [line[2:].strip() for line in answer.splitlines() if line.startswith("- ")]

    def _overlay(self, patch: Patch) -> Path:
        """A copy of the skills folder with the staged patch applied, for the runs to read."""
        root = self.ws.state_dir / "staging" / "skills"
        shutil.rmtree(root, ignore_errors=True)
        root.parent.mkdir(parents=True, exist_ok=True)
        if self.ws.skills_dir.is_dir():
            shutil.copytree(self.ws.skills_dir, root, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            root.mkdir()
        for change in patch.changes:
            target = root / change.path.name
            if change.after is None:
                target.unlink(missing_ok=True)
            else:
                target.write_text(change.after, encoding="utf-8")
        return root

    def _attempt(
        self,
        task: Task,
        scene: Any,
        skill: str | None,
        patch: Patch,
        code: str,
        skills_root: Path,
        round_: int,
    ) -> Attempt:
        backend = self.backend(task.backend)
        runs = []
        picture = None
        bar = self.progress(len(task.seeds), f"{task.id} round {round_}") if self.progress else None
        for seed in task.seeds:
            run = run_episode(
                backend,
                scene,
                seed,
                code,
                skills_root=skills_root,
                success=task.success,
                hold_seconds=task.hold_seconds,
                budget=self.budget,
            )
            runs.append(run)
            if bar is not None:
                bar.step(run.ok)
            if picture is None and self.teacher.wants_pictures:
                backend.park()
                path = self.ws.state_dir / "attempts" / f"{task.id}-{round_}.png"
                picture = save_png(backend.render(), path)
        module = next((c.after for c in patch.changes if c.after is not None), None)
        return Attempt(task, round_, skill, module, code, tuple(runs), picture)

    def _regression(
        self, task_key: str, patch: Patch, overlay: Path, outcome: TaskOutcome
    ) -> list[str]:
        """Re-run every earlier example that reaches an edited skill; return the failures."""
        edited = {c.path.stem for c in patch.changes if c.before != c.after}
        if not edited:
            return []
        tree = SkillTree.of(parse_library(overlay))
        examples = [example for _, example in iter_examples(self.ws.examples_dir)]
        by_task = {e.task: e for e in examples if e.task}
        broken = []
        for example in examples:
            if example.task == task_key:
                continue
            if not edited & _reach(example.skills, tree):
                continue
            outcome.regression_checks += 1
            why = check_example(self.backend(example.backend), example, overlay)
            self.say(f"re-checked {example.id}: {why or 'ok'}")
            if why:
                broken.append(_broken(example, why))
            # A revision's plan also does the tasks it revises: their layouts are checked too.
            chain = revision_chain(example, by_task)
            broken += self._recheck(
                chain, example.code, overlay, outcome, f"the plan of {example.task}"
            )
        return broken

    def _revised(self, task: Task, key: str) -> list[Example]:
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

    def _recheck(
        self,
        revised: Sequence[Example],
        code: str,
        overlay: Path,
        outcome: TaskOutcome,
        whose: str = "this plan",
    ) -> list[str]:
        """Run a revising plan on the layout of each task it revises; where it fails."""
        broken = []
        for example in revised:
            outcome.regression_checks += 1
            why = check_revision(self.backend(example.backend), code, example, overlay, self.budget)
            self.say(f"ran {whose} on {example.id}, which it revises: {why or 'ok'}")
            if why:
                broken.append(_broken(example, f"{whose}, run on its layout: {why}"))
        return broken

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
            self.ws,
            patch=kept,
            example=example,
            progress=progress,
            memory=self.memory,
            feedback="\n".join(outcome.corrections) or None,
        )
        return example

    def _example_id(self, key: str) -> str:
        """A readable id for a task's example, with a digest when another task has that slug.

        Slugs are cut at 48 characters and fold punctuation, so two tasks can share one; the
        second then keeps its own file instead of overwriting the first's regression check.
        """
        slug = slugify(key.replace("/", "-"))
        path = self.ws.examples_dir / f"{slug}.yaml"
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
        return self._complete(task, outcome, prompt, "improvement").text.strip()


def one_off_task(
    instruction: str,
    backend: str,
    scene: Any,
    seeds: list[int],
    success: Any,
    *,
    skill: str | None = None,
    task_id: str | None = None,
    feedback: Sequence[str] = (),
    review: Sequence[str] = (),
    hints: Sequence[str] = (),
) -> Task:
    """A task outside any curriculum: a skill to teach (``skill``), or else a plan.

    Raises:
        pydantic.ValidationError: when the skill name or another field is unusable.
    """
    from lyra.curriculum import SkillTarget

    return Task(
        id=task_id or short_id(instruction),
        backend=backend,
        instruction=instruction,
        scene=scene,
        skill=SkillTarget(name=skill, new=True) if skill is not None else None,
        seeds=seeds,
        success=success or [],
        feedback=list(feedback),
        review=list(review),
        hints=list(hints),
    )


def _broken(example: Example, why: str) -> str:
    """An earlier task that an edit breaks, as the next prompt lists it."""
    return f"- {example.task or example.id}: {example.instruction}\n  {why}"


def short_id(instruction: str) -> str:
    """A task id that reads in a table: the instruction's first words and a digest of all of it.

    ``build a temple centred at (0.58, 0), four pillars...`` becomes ``build_a_temple-34aa60``;
    the digest keeps two instructions that begin alike apart.
    """
    words = re.findall(r"[a-z0-9]+", instruction.lower())
    head = "_".join(words[:3])[:24].rstrip("_") or "task"
    return f"{head}-{hashlib.sha1(instruction.encode()).hexdigest()[:6]}"


def _plan_summary(code: str) -> str:
    called = skills_called(code)
    return f"a plan of {', '.join(called)}" if called else "a plan of primitives"


def _reach(skills: Sequence[str], tree: SkillTree) -> set[str]:
    """The skills ``skills`` call, directly or through other skills."""
    seen: set[str] = set()
    stack = list(skills)
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(tree.callees.get(name, ()))
    return seen


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
