"""The learner: a workspace's LLM session, teacher, memory and simulators, that methods run in.

A learning method (:mod:`lyra.methods`) decides what to ask the LLM and what to keep; the
learner holds what every method shares: one writer per workspace (the lock), recovery of a step
a crash cut short, the memory rebuilt from the files, the simulators made on first use, each
completion logged and counted, and an attempt's task code run on every seed of its task. It
walks a curriculum task by task, each through its method. The loop knows no backend: each task
names one, and the registry builds it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from lyra import lock
from lyra.backend import Backend, make
from lyra.curriculum import Curriculum, Progress, Task, pending_tasks, progress_on_file
from lyra.episode import Budget, run_episode
from lyra.errors import LyraError
from lyra.journal import recover
from lyra.library.history import git_head
from lyra.llm import Completion, Image, Message, Provider
from lyra.memory.store import Memory
from lyra.methods import DEFAULT_METHOD, Method, TaskOutcome, find_method
from lyra.pictures import Recorder, save_png
from lyra.progress import Bar
from lyra.prompts import system_prompt
from lyra.teachers import Attempt, Teacher, Watch
from lyra.workspace import Workspace


class CountedProvider:
    """A provider that keeps running totals of its calls, whoever makes them.

    The learner counts a task's cost from these totals, so that a critic's calls, a hint
    parser's and a skill taught while a plan paused are in it without each caller counting.
    """

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def complete(
        self, messages: Sequence[Message], *, purpose: str, task: str | None = None
    ) -> Completion:
        """Ask the wrapped provider; count the call."""
        completion = self.provider.complete(messages, purpose=purpose, task=task)
        self.calls += 1
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        return completion

    def totals(self) -> tuple[int, int, int]:
        """Calls, prompt tokens and completion tokens so far."""
        return self.calls, self.prompt_tokens, self.completion_tokens


class Learner:
    """Runs tasks through a learning method in one workspace, on whichever backends they name."""

    def __init__(
        self,
        workspace: Workspace,
        provider: Provider,
        teacher: Teacher,
        memory: Memory,
        *,
        method: Method | None = None,
        max_rounds: int = 6,
        budget: Budget | None = None,
        teach_missing: bool = False,
        say: Callable[[str], None] = print,
        progress: Callable[[int, str], Bar] | None = None,
        watch: Watch | None = None,
    ) -> None:
        """Start the loop in a workspace: finish or undo a step a crash cut short, index it.

        Args:
            workspace: the skills, examples and state to learn into.
            provider: the LLM.
            teacher: who judges each attempt.
            memory: the workspace's memory; it is rebuilt from the files here.
            method: how each task is taught (default: the registered ``lyra``).
            max_rounds: rounds per task before it is given up.
            budget: the limits of each episode (default: :class:`~lyra.episode.Budget`).
            teach_missing: when a plan needs a skill the library lacks, ask the teacher to
                teach it and resume; otherwise the plan stops there.
            say: where the loop reports progress.
            progress: makes a bar for the seeds of an attempt, from their number and a label
                (the command line passes :class:`lyra.progress.Bar`; none by default).
            watch: a front end shown each attempt's first seed frame by frame (then kept as a
                clip in the attempt) and each regression re-run; none by default, since a
                frame costs more than a pick-and-place.

        Raises:
            WorkspaceLockedError: another process is writing to the workspace.
        """
        self.ws = workspace
        self.provider = CountedProvider(provider)
        self.teacher = teacher
        self.memory = memory
        self.method = method or find_method(DEFAULT_METHOD)
        self.max_rounds = max_rounds
        self.budget = budget or Budget()
        self.teach_missing = teach_missing
        self.say = say
        self.progress = progress
        self.watch = watch
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
        """Teach every task not yet accepted, in order.

        Stop at the first one not accepted, unless the curriculum's tasks are independent.
        """
        progress = progress_on_file(self.ws, curriculum.name)
        outcomes = []
        # Each task once, in order: a method that keeps no record of what it was taught (CaP)
        # would otherwise be given its first task again and again.
        for task in pending_tasks(curriculum, progress):
            self.say(f"\n== {curriculum.name}/{task.id}: {task.instruction}")
            outcome = self.teach(task, curriculum.name, progress)
            outcomes.append(outcome)
            if not outcome.accepted and not curriculum.independent:
                break
        return outcomes

    def teach(self, task: Task, curriculum: str, progress: Progress) -> TaskOutcome:
        """Run one task through the method until it is accepted, rejected or out of rounds.

        Raises:
            LyraError: the task names a skill and the method writes task code only.
        """
        if task.skill is not None and not self.method.teaches_skills:
            raise LyraError(
                f"task '{task.id}' teaches the skill '{task.skill.name}', and the method "
                f"'{self.method.name}' writes task code only: teach skills with a method that "
                "does (--method lyra), or give it tasks without a skill"
            )
        return self.counted(lambda: self.method.solve(self, task, curriculum, progress))

    def counted(self, solve: Callable[[], TaskOutcome]) -> TaskOutcome:
        """Run one task's ``solve`` and put its time, LLM calls and tokens in its outcome."""
        start, spent = time.monotonic(), self.provider.totals()
        outcome = solve()
        outcome.method = self.method.name
        outcome.wall_seconds = time.monotonic() - start
        calls, prompt, completion = (
            now - then for now, then in zip(self.provider.totals(), spent, strict=True)
        )
        outcome.llm_calls, outcome.prompt_tokens, outcome.completion_tokens = (
            calls,
            prompt,
            completion,
        )
        return outcome

    def complete(
        self,
        task: Task,
        prompt: str,
        purpose: str,
        *,
        system: str | None = None,
        images: Sequence[Path] = (),
    ) -> Completion:
        """Ask the LLM about a task (:meth:`teach` counts the call in the task's outcome).

        Args:
            task: the task asked about, named in the session log.
            prompt: the user message; it says in words what the pictures show.
            purpose: what the call is for, in the session log (``plan``, ``critic`` ...).
            system: the system message (default: LYRA's, for the task's backend).
            images: PNG files sent with the user message.
        """
        if system is None:
            system = system_prompt(task.prompt_pack(), task.spec().capabilities)
        user = Message("user", prompt, tuple(Image.read(path) for path in images))
        return self.provider.complete(
            [Message("system", system), user], purpose=purpose, task=task.id
        )

    def describe(self, task: Task, scene: Any) -> str:
        """The scene as a prompt lists it: laid out on the task's first seed."""
        backend = self.backend(task.backend)
        backend.reset(scene, task.seeds[0])
        return backend.describe()

    def attempt(
        self,
        task: Task,
        scene: Any,
        code: str,
        skills_root: Path,
        round_: int,
        *,
        skill: str | None = None,
        module: str | None = None,
        teacher: Teacher | None = None,
    ) -> Attempt:
        """Run task code on every seed of the task, for a teacher to judge.

        Args:
            task: the task; its seeds, success check and hold.
            scene: the scene to lay out on each seed.
            code: the task code.
            skills_root: the skills folder the code imports from (a staged copy while an edit
                is judged).
            round_: the round's number, for the progress bar and the picture's name.
            skill: the skill being taught, if any.
            module: that skill's staged module text, for the next prompt.
            teacher: who will judge it (default the learner's): a picture is taken for a
                teacher who looks at one.
        """
        teacher = teacher or self.teacher
        backend = self.backend(task.backend)
        runs = []
        picture = clip = None
        bar = self.progress(len(task.seeds), f"{task.id} round {round_}") if self.progress else None
        for seed in task.seeds:
            recorder = None
            if self.watch is not None and clip is None:
                recorder = Recorder(backend, listener=partial(self.watch.frame, task, round_))
            run = run_episode(
                backend,
                scene,
                seed,
                code,
                skills_root=skills_root,
                success=task.success,
                hold_seconds=task.hold_seconds,
                budget=self.budget,
                recorder=recorder,
            )
            if recorder is not None:
                clip = recorder.save(self.ws.state_dir / "attempts" / f"{task.id}-{round_}.gif")
            runs.append(run)
            if bar is not None:
                bar.step(run.ok)
            if picture is None and teacher.wants_pictures:
                backend.park()
                path = self.ws.state_dir / "attempts" / f"{task.id}-{round_}.png"
                picture = save_png(backend.render(), path)
        return Attempt(task, round_, skill, module, code, tuple(runs), picture, clip)
