"""The learning loop: a task in, a skill written, run in simulation, judged, checked, kept.

One task goes: retrieve (examples, skill headers, hints) -> prompt -> LLM -> parse -> stage the
libcst edit -> run the task code in the sandbox on every seed -> the teacher's verdict. Feedback
and hints go round again; an accept re-runs every earlier example that reaches an edited skill,
and only when all still pass are the skill module, the example and the progress written, under
an undo journal so that a crash leaves the library as it was before the task.
"""

from __future__ import annotations

import ast
import json
import math
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from envs.ravens.scene import SceneSpec, load_scene
from envs.ravens.tabletop import Tabletop
from lyra.curriculum import Curriculum, Progress, Task, next_task
from lyra.errors import LyraError
from lyra.examples import Example, iter_examples, save_example, slugify
from lyra.files import write_atomic
from lyra.geometry import Point, Pose
from lyra.library.edit import FileChange, Patch, stage_answer, stage_new_skill
from lyra.library.errors import EditError
from lyra.library.history import commit_step, record
from lyra.library.parse import parse_library
from lyra.library.tree import SkillTree
from lyra.llm import Completion, Message, Provider
from lyra.memory.retrieval import ExampleHit
from lyra.memory.store import Memory
from lyra.predicates import PredicateError, Verdict, from_spec
from lyra.prompts import render, system_prompt
from lyra.sandbox import RunResult, run_code
from lyra.workspace import Workspace

SNAPSHOT_TOLERANCE = 0.005
SNAPSHOT_TURN_DEG = 5.0
_BLOCK = re.compile(r"```[a-zA-Z]*[ \t]*\n(.*?)```", re.DOTALL)


class AnswerError(LyraError):
    """An LLM answer could not be used; the message is the feedback it gets."""


# -- what one attempt did ------------------------------------------------------------------


@dataclass(frozen=True)
class SeedRun:
    """The task code run on one seed: the sandbox's outcome, the predicate, the final poses."""

    seed: int
    result: RunResult
    verdict: Verdict
    snapshot: dict[str, list[float]]

    @property
    def ok(self) -> bool:
        """The code ran and the predicate holds."""
        return self.result.ok and self.verdict.ok

    def describe(self) -> str:
        """One line (or a few) saying what happened on this seed."""
        if not self.result.ok:
            return f"seed {self.seed}: the code failed:\n{self.result.feedback}"
        if not self.verdict.ok:
            return (
                f"seed {self.seed}: the code ran, but the task is not done: {self.verdict.reason}"
            )
        return f"seed {self.seed}: done"


@dataclass(frozen=True)
class Attempt:
    """One round: the staged module, the task code, and what running them did."""

    task: Task
    round: int
    skill: str
    module: str
    code: str
    runs: tuple[SeedRun, ...]
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


class Teacher(Protocol):
    """A person at the terminal, a script, or an LLM critic; all answer the same way."""

    wants_pictures: bool

    def review_header(self, task: Task, header: str) -> str:
        """Return the header to implement: the proposal as it is, or adjusted."""
        ...

    def judge(self, attempt: Attempt) -> TeacherVerdict:
        """Accept the attempt, correct it, hint, or reject the task."""
        ...


class ScriptedTeacher:
    """For tests and benchmarks: the predicate decides; corrections come from the curriculum.

    When a check fails, the task's ``feedback`` lines are given in order (then the check's own
    reason); when it passes, the task's ``review`` lines are given in order before accepting.
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


class LLMCritic:
    """An LLM that reads the final object states and the predicate and gives a verdict."""

    wants_pictures = False

    def __init__(self, provider: Provider, scene_text: Callable[[], str]) -> None:
        self.provider = provider
        self.scene_text = scene_text

    def review_header(self, task: Task, header: str) -> str:
        """Accept the proposed header."""
        return header

    def judge(self, attempt: Attempt) -> TeacherVerdict:
        """Ask the critic; anything but ``ACCEPT`` is feedback."""
        prompt = render(
            "critic",
            instruction=attempt.task.instruction,
            scene=self.scene_text(),
            predicate=attempt.outcome(),
        )
        answer = self.provider.complete([Message("user", prompt)], purpose="critic").text.strip()
        if answer.upper().startswith("ACCEPT"):
            return TeacherVerdict("accept")
        return TeacherVerdict("feedback", answer.removeprefix("FEEDBACK:").strip())


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
    tree = ast.parse(code) if _parses(code) else None
    if tree is not None and not any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == skill
        for node in ast.walk(tree)
    ):
        raise AnswerError(
            f"the task code never calls `{skill}`: do the task by calling the skill, "
            f"after `from skills.{skill} import {skill}`"
        )
    return module, code


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def skills_called(code: str) -> list[str]:
    """The skills a piece of code imports (``from skills.NAME import NAME``)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
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


# -- the undo journal ----------------------------------------------------------------------


def _journal_path(workspace: Workspace) -> Path:
    return workspace.state_dir / "journal.json"


def begin_commit(workspace: Workspace, paths: Sequence[Path]) -> None:
    """Note what the files about to be written hold now, so a crash can be undone."""
    before = {str(p): p.read_text(encoding="utf-8") if p.exists() else None for p in paths}
    workspace.state_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(_journal_path(workspace), json.dumps(before))


def end_commit(workspace: Workspace) -> None:
    """The commit is complete: forget the undo information."""
    _journal_path(workspace).unlink(missing_ok=True)


def recover(workspace: Workspace) -> list[Path]:
    """Undo a commit a crash interrupted; return the files restored (none if there was none)."""
    journal = _journal_path(workspace)
    if not journal.exists():
        return []
    before: dict[str, str | None] = json.loads(journal.read_text(encoding="utf-8"))
    restored = []
    for name, text in before.items():
        path = Path(name)
        if text is None:
            path.unlink(missing_ok=True)
        else:
            write_atomic(path, text)
        restored.append(path)
    journal.unlink()
    return restored


# -- running code in simulation ------------------------------------------------------------


def snapshot_of(table: Tabletop) -> dict[str, list[float]]:
    """Every object's pose as (x, y, z, qx, qy, qz, qw), rounded to a micrometre."""
    return {
        name: [round(v, 6) for v in (*state.pose.position.as_array(), *state.pose.orientation)]
        for name, state in sorted(table.world_state().items())
    }


def run_on_seed(
    table: Tabletop,
    scene: SceneSpec,
    seed: int,
    code: str,
    skills_root: Path,
    success: list[dict[str, Any]],
    hold_seconds: float,
    timeout_s: float = 120.0,
) -> SeedRun:
    """Lay the scene out, run the code in the sandbox, hold, and judge the final state."""
    table.reset(scene, seed)
    result = run_code(code, table, filename="task.py", skills_root=skills_root, timeout_s=timeout_s)
    if not result.ok:
        return SeedRun(seed, result, Verdict(False, "the code failed"), snapshot_of(table))
    held = table.held_object()
    if held is not None:
        # A plan that ends with an object in the gripper has not put it anywhere.
        verdict = Verdict(False, f"the plan ended still holding '{held}': place it")
        return SeedRun(seed, result, verdict, snapshot_of(table))
    for _ in range(round(hold_seconds / table.config.time_step)):
        table.sim.stepSimulation()
    try:
        verdict = from_spec(success)(table.world_state())
    except PredicateError as error:
        verdict = Verdict(False, str(error))
    return SeedRun(seed, result, verdict, snapshot_of(table))


def snapshot_difference(expected: dict[str, list[float]], actual: dict[str, list[float]]) -> str:
    """Why two snapshots differ by more than the tolerance ("" when they agree)."""
    for name, pose in expected.items():
        if name not in actual:
            return f"'{name}' is missing"
        moved = sum((a - b) ** 2 for a, b in zip(pose[:3], actual[name][:3], strict=True)) ** 0.5
        if moved > SNAPSHOT_TOLERANCE:
            return f"'{name}' ended {moved * 1000:.1f} mm from where the accepted run left it"
        # Boxes look the same after a half turn, so yaws are compared modulo 180 degrees.
        turn = math.degrees(_yaw(actual[name]) - _yaw(pose)) % 180.0
        if min(turn, 180.0 - turn) > SNAPSHOT_TURN_DEG:
            return (
                f"'{name}' ended turned {min(turn, 180.0 - turn):.0f} degrees from how the "
                "accepted run left it"
            )
    return ""


def _yaw(pose: list[float]) -> float:
    return Pose(Point.of(pose[:3]), (pose[3], pose[4], pose[5], pose[6])).yaw


def check_example(table: Tabletop, example: Example, skills_root: Path) -> str:
    """Re-run an accepted example; return why it no longer passes ("" when it does)."""
    if example.scene is None or example.seed is None:
        return "the example has no scene or seed to replay"
    run = run_on_seed(
        table,
        load_scene(example.scene),
        example.seed,
        example.code,
        skills_root,
        example.success,
        example.hold_seconds,
    )
    if not run.ok:
        return run.describe()
    return snapshot_difference(example.snapshot, run.snapshot)


# -- the loop ------------------------------------------------------------------------------


@dataclass
class TaskOutcome:
    """How one task ended, and what it cost."""

    task: str
    accepted: bool
    rounds: int = 0
    llm_calls: int = 0
    tokens: int = 0
    regression_checks: int = 0
    example: Example | None = None
    corrections: list[str] = field(default_factory=list)


def scene_text(table: Tabletop) -> str:
    """The objects as the prompts list them."""
    lines = []
    for name, state in sorted(table.world_state().items()):
        p, s = state.pose.position, state.size
        lines.append(
            f"{name}: {state.kind}, {state.color}, centre ({p.x:.3f}, {p.y:.3f}, {p.z:.3f}), "
            f"size ({s.x:.3f}, {s.y:.3f}, {s.z:.3f}), yaw {round(state.pose.yaw * 57.2958):d}"
        )
    return "\n".join(lines)


def skills_section(headers: Sequence[str]) -> str:
    """Skill headers as a prompt lists them."""
    return "\n\n".join(f"```python\n{h}\n```" for h in headers) or "(none yet)"


def examples_section(hits: Sequence[ExampleHit]) -> str:
    """Retrieved examples as a prompt lists them: each instruction and its task code."""
    return (
        "\n\n".join(f"Task: {hit.instruction}\n```python\n{hit.code.rstrip()}\n```" for hit in hits)
        or "(none yet)"
    )


class Learner:
    """Runs tasks through the learning loop in one workspace."""

    def __init__(
        self,
        workspace: Workspace,
        provider: Provider,
        teacher: Teacher,
        memory: Memory,
        *,
        max_rounds: int = 6,
        timeout_s: float = 120.0,
        say: Callable[[str], None] = print,
    ) -> None:
        self.ws = workspace
        self.provider = provider
        self.teacher = teacher
        self.memory = memory
        self.max_rounds = max_rounds
        self.timeout_s = timeout_s
        self.say = say
        self.table = Tabletop()
        restored = recover(workspace)
        if restored:
            say(f"Undid an interrupted commit: restored {', '.join(p.name for p in restored)}")
        self.memory.rebuild(workspace, list(parse_library(workspace.skills_dir)))

    def close(self) -> None:
        """Release the simulator."""
        self.table.close()

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

    def _complete(self, outcome: TaskOutcome, prompt: str, purpose: str) -> Completion:
        messages = [Message("system", system_prompt()), Message("user", prompt)]
        completion = self.provider.complete(messages, purpose=purpose)
        outcome.llm_calls += 1
        outcome.tokens += completion.prompt_tokens + completion.completion_tokens
        return completion

    def _scene(self, task: Task, outcome: TaskOutcome) -> SceneSpec:
        if task.scene is not None:
            return task.scene
        prompt = render("task_setup", instruction=task.instruction, setup=task.setup or "")
        answer = self._complete(outcome, prompt, "task_setup").text
        blocks = code_blocks(answer)
        if not blocks:
            raise AnswerError("the task-setup answer held no ```yaml block")
        return load_scene(_yaml(blocks[0]))

    def _header(self, task: Task, outcome: TaskOutcome) -> str:
        """The header of the target skill: the module's, or a new one proposed and reviewed."""
        skill = task.skill.name
        library = parse_library(self.ws.skills_dir)
        existing = library.records.get(skill)
        if existing is not None:
            return existing.header
        known = "\n\n".join(r.header for r in library) or "(none yet)"
        prompt = render("skill_parser", instruction=task.instruction, skill=skill, skills=known)
        problem = ""
        for _ in range(3):
            answer = self._complete(outcome, prompt + problem, "skill_parser").text
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
        skill = task.skill.name
        scene = self._scene(task, outcome)
        header = self._header(task, outcome)
        module_path = self.ws.skills_dir / f"{skill}.py"
        current = module_path.read_text(encoding="utf-8") if module_path.exists() else None
        hints = list(task.hints)
        correction = ""
        regression = ""
        last: Attempt | None = None
        while outcome.rounds < self.max_rounds:
            outcome.rounds += 1
            prompt = self._prompt(task, scene, header, current, last, correction, regression, hints)
            purpose = "refinement" if last is not None and correction else "skill_learning"
            answer = self._complete(outcome, prompt, purpose).text
            try:
                module_text, code = split_answer(answer, skill)
                patch = stage_answer(self.ws, skill, module_text)
            except (AnswerError, EditError) as error:
                correction = f"Your answer could not be used: {error}"
                self.say(f"round {outcome.rounds}: {correction}")
                continue
            overlay = self._overlay(patch)
            last = self._attempt(task, scene, skill, patch, code, overlay, outcome.rounds)
            self.say(f"round {outcome.rounds}:\n{last.outcome()}")
            verdict = self.teacher.judge(last)
            if verdict.action == "reject":
                self.say(f"'{task.id}' rejected; nothing was kept")
                return outcome
            if verdict.action in ("feedback", "hint"):
                if verdict.action == "hint":
                    hints.extend(self._parse_hint(task, verdict.text, outcome))
                correction = verdict.text
                outcome.corrections.append(verdict.text)
                self.say(f"{verdict.action}: {verdict.text}")
                continue
            if not last.ok:
                # An accepted failure would be stored as the task's regression check and fail
                # every later edit: the run must pass first.
                correction = f"It cannot be kept yet: {last.outcome()}"
                self.say(correction)
                continue
            broken = self._regression(f"{curriculum}/{task.id}", patch, overlay, outcome)
            if broken:
                regression = "\n".join(broken)
                correction = "Your change breaks earlier tasks; keep them solvable."
                self.say(f"the edit breaks earlier tasks and is not kept:\n{regression}")
                continue
            outcome.example = self._commit(task, curriculum, progress, patch, last, scene, outcome)
            outcome.accepted = True
            self.say(f"accepted after {outcome.rounds} round(s); {skill} kept")
            return outcome
        self.say(f"'{task.id}' was not accepted within {self.max_rounds} rounds; nothing was kept")
        return outcome

    def _prompt(
        self,
        task: Task,
        scene: SceneSpec,
        header: str,
        current: str | None,
        last: Attempt | None,
        correction: str,
        regression: str,
        hints: list[str],
    ) -> str:
        skill = task.skill.name
        retrieval = self.memory.retrieve(
            task.instruction, correction=correction or None, hints=hints
        )
        headers = [
            h for s, h in zip(retrieval.skills, retrieval.headers, strict=True) if s.name != skill
        ]
        skills_text = skills_section(headers)
        self.table.reset(scene, task.seeds[0])
        objects = scene_text(self.table)
        regression_text = (
            "\n# Earlier tasks that must stay solvable (they failed after your last change)\n"
            f"{regression}\n"
            if regression
            else ""
        )
        if last is not None and correction:
            return render(
                "refinement",
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
        examples = examples_section(retrieval.examples)
        return render(
            "skill_learning",
            instruction=task.instruction,
            scene=objects,
            skill=skill,
            header=header,
            current_module=(
                f"\nThe module as it is now (change only what the task needs):\n```python\n"
                f"{current.rstrip()}\n```\n"
                if current
                else ""
            ),
            skills=skills_text,
            examples=examples,
            regression=regression_text,
            correction=f"\n# Correction\n{correction}\n" if correction else "",
        )

    def _parse_hint(self, task: Task, hint: str, outcome: TaskOutcome) -> list[str]:
        prompt = render("hint", instruction=task.instruction, hint=hint)
        answer = self._complete(outcome, prompt, "hint_parsing").text
        return [line[2:].strip() for line in answer.splitlines() if line.startswith("- ")]

    def _overlay(self, patch: Patch) -> Path:
        """A copy of the skills folder with the staged patch applied, for the sandbox to read."""
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
        scene: SceneSpec,
        skill: str,
        patch: Patch,
        code: str,
        overlay: Path,
        round_: int,
    ) -> Attempt:
        runs = []
        picture = None
        for seed in task.seeds:
            run = run_on_seed(
                self.table,
                scene,
                seed,
                code,
                overlay,
                task.success,
                task.hold_seconds,
                self.timeout_s,
            )
            runs.append(run)
            if run.result.abandoned:
                # The worker may still be driving this simulator: start a fresh one.
                self.table = Tabletop()
            elif picture is None and self.teacher.wants_pictures:
                picture = self._picture(task, round_)
        module = next(c.after for c in patch.changes if c.after is not None)
        return Attempt(task, round_, skill, module, code, tuple(runs), picture)

    def _picture(self, task: Task, round_: int) -> Path:
        from envs.ravens.render import clear_view, save_png

        clear_view(self.table)
        return save_png(self.table, self.ws.state_dir / "attempts" / f"{task.id}-{round_}.png")

    def _regression(
        self, task_key: str, patch: Patch, overlay: Path, outcome: TaskOutcome
    ) -> list[str]:
        """Re-run every earlier example that reaches an edited skill; return the failures."""
        edited = {c.path.stem for c in patch.changes if c.before != c.after}
        tree = SkillTree.of(parse_library(overlay))
        broken = []
        for _, example in iter_examples(self.ws.examples_dir):
            if example.task == task_key:
                continue
            if not edited & _reach(example.skills, tree):
                continue
            outcome.regression_checks += 1
            why = check_example(self.table, example, overlay)
            self.say(f"re-checked {example.id}: {why or 'ok'}")
            if why:
                broken.append(f"- {example.task or example.id}: {example.instruction}\n  {why}")
        return broken

    def _commit(
        self,
        task: Task,
        curriculum: str,
        progress: Progress,
        patch: Patch,
        attempt: Attempt,
        scene: SceneSpec,
        outcome: TaskOutcome,
    ) -> Example:
        notes = self._improvement(task, attempt, outcome) if outcome.corrections else ""
        example = Example(
            id=slugify(f"{curriculum}-{task.id}"),
            instruction=task.instruction,
            code=attempt.code,
            skills=skills_called(attempt.code),
            task=f"{curriculum}/{task.id}",
            seed=attempt.runs[0].seed,
            scene=scene.model_dump(mode="json", exclude_defaults=True),
            snapshot=attempt.runs[0].snapshot,
            success=task.success,
            hold_seconds=task.hold_seconds,
            notes=notes,
        )
        # A task may reuse its skill unchanged: then only the example is new.
        patch = Patch(tuple(c for c in patch.changes if c.before != c.after), patch.summary)
        example_path = self.ws.examples_dir / f"{example.id}.yaml"
        progress_path = Progress.path(self.ws, curriculum)
        files = [c.path for c in patch.changes]
        begin_commit(self.ws, [*files, example_path, progress_path])
        patch.apply()
        save_example(example, self.ws.examples_dir)
        progress.accept(task.id, example.id)
        progress.save(self.ws)
        end_commit(self.ws)
        record(self.ws, patch, task=example.task, feedback="\n".join(outcome.corrections) or None)
        step = Patch(
            (*patch.changes, FileChange(example_path, None, example_path.read_text())),
            patch.summary,
        )
        commit_step(self.ws, step, example.task or task.id)
        library = parse_library(self.ws.skills_dir)
        for change in patch.changes:
            if change.path.stem in library.records:
                self.memory.index_skill(library.records[change.path.stem])
        self.memory.index_example(example)
        return example

    def _improvement(self, task: Task, attempt: Attempt, outcome: TaskOutcome) -> str:
        prompt = render(
            "improvement",
            instruction=task.instruction,
            corrections="\n".join(f"{i}. {c}" for i, c in enumerate(outcome.corrections, 1)),
            task_code=attempt.code.rstrip("\n"),
        )
        return self._complete(outcome, prompt, "improvement").text.strip()


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
    import yaml

    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise AnswerError("the task-setup answer is not a YAML mapping with `objects`")
    return data
