"""Running a suite: each method on each instruction, runs in sequence, sequences side by side.

A sequence is one method on one instruction: its runs follow each other in one workspace of
their own (a copy of the base workspace's skills, examples and settings), so what the method
keeps from a run is there for the next, as in the incremental-learning paper; the scene is laid
out afresh for every run. Sequences share nothing, so they fan out over worker processes, or
over a Ray cluster. Each keeps its session log, so a comparison answered once replays.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from lyra.errors import LyraError
from lyra.evals.suite import SPLITS, EvalItem

# Accepted tasks are kept under this curriculum name in a sequence's workspace.
EVAL = "eval"
# What a sequence's workspace is made from: the base workspace's library and settings.
_COPIED = ("skills", "examples", "lyra.toml")


@dataclass(frozen=True)
class Job:
    """One sequence to run: everything a worker process needs, and nothing it must share.

    Attributes:
        method: the method's registered name.
        item: the instruction, its task and its teacher's words.
        runs: how many runs of the instruction follow each other.
        base: the workspace the sequence's own is copied from.
        out: the results folder; the session log goes under ``sessions/METHOD/``.
        llm: the ``--llm`` spec; a ``manual:`` or ``replay:`` folder is split per sequence.
        teacher: ``scripted`` or ``llm``.
        max_rounds: rounds (interactions) per run.
        check_seeds: seeds no run was taught on, where an accepted plan is run again.
        demonstrations: what a method that learns from demonstrations (``ical``) learns from
            before the first run; the other methods never see them.
    """

    method: str
    item: EvalItem
    runs: int
    base: Path
    out: Path
    llm: str | None
    teacher: str
    max_rounds: int
    check_seeds: tuple[int, ...] = ()
    demonstrations: tuple[Path, ...] = ()

    @property
    def key(self) -> str:
        """The sequence's name in file names: ``METHOD/TASK``."""
        return f"{self.method}/{self.item.task.id}"


@dataclass(frozen=True)
class RunRecord:
    """One run of one instruction under one method: the papers' metrics and what it cost.

    Attributes:
        success: s: the teacher accepted it within the interaction limit.
        first_try: i: accepted with no correction, in its first interaction.
        interactions: rounds the teacher judged (n, when it succeeded).
        corrections: what the teacher said, in order.
        held_out: of the check seeds, how many the accepted plan does too (LYRA's success
            over seeds once accepted); None when not accepted, or when what was accepted is
            no plan to run again (a console's transcript).
        check_seeds: how many check seeds it ran on (those whose layout already satisfies the
            instruction are left out).
        model: the model that answered, as the session log names it.
    """

    method: str
    template: str
    split: str
    instruction: str
    task: str
    run: int
    success: bool
    first_try: bool
    interactions: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    wall_seconds: float
    corrections: list[str] = field(default_factory=list)
    held_out: int | None = None
    check_seeds: int = 0
    model: str = ""

    def to_json(self) -> dict[str, Any]:
        """The record as one line of ``results.jsonl`` holds it."""
        return dataclasses.asdict(self)


def sequence_llm(spec: str | None, job_key: str) -> str | None:
    """The ``--llm`` spec of one sequence: a folder given to ``manual:`` or ``replay:`` is split.

    ``manual:DIR`` becomes ``manual:DIR/METHOD/TASK`` (each sequence's prompts in a folder of
    their own, answered in any order) and ``replay:DIR`` becomes ``replay:DIR/METHOD/TASK.jsonl``
    (the log that sequence wrote); other specs are unchanged.
    """
    if spec is None:
        return None
    kind, colon, value = spec.partition(":")
    if not colon or kind not in ("manual", "replay"):
        return spec
    folder = Path(value)
    if kind == "manual":
        return f"manual:{folder / job_key}"
    if folder.is_dir():
        return f"replay:{folder / job_key}.jsonl"
    return spec


def run_sequence(job: Job) -> tuple[list[RunRecord], str]:
    """Run one instruction ``job.runs`` times under one method, in a workspace of its own.

    A top-level function of plain values, so that a process pool or Ray can run it. What went
    wrong comes back as text beside no records, not as an exception: an exception of lyra's
    need not survive the trip back from a worker process, and would break the pool for all.
    """
    from lyra.workspace import Workspace

    root = Path(tempfile.mkdtemp(prefix="lyra-eval-"))
    try:
        for name in _COPIED:
            source = job.base / name
            if source.is_dir():
                shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
            elif source.is_file():
                shutil.copy2(source, root / name)
        return _runs(job, Workspace(root)), ""
    except Exception as error:  # reported with the sequence's name; the others go on
        return [], f"{type(error).__name__}: {error}"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _runs(job: Job, workspace: Any) -> list[RunRecord]:
    from lyra.curriculum import Progress
    from lyra.llm import open_session
    from lyra.memory.store import open_memory
    from lyra.methods import find_method
    from lyra.teach import Learner
    from lyra.teachers import ScriptedTeacher

    log = job.out / "sessions" / f"{job.key}.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)  # a sequence run again is logged afresh
    notes_path = job.out / "logs" / f"{job.key}.log"
    notes_path.parent.mkdir(parents=True, exist_ok=True)
    notes = notes_path.open("w", encoding="utf-8")
    provider = open_session(
        workspace, sequence_llm(job.llm, job.key), log=log, backend=job.item.task.backend
    )
    learner = Learner(
        workspace,
        provider,
        ScriptedTeacher(),  # replaced before every run
        open_memory(workspace),
        method=find_method(job.method),
        max_rounds=job.max_rounds,
        say=lambda text: print(text, file=notes, flush=True),
    )
    records = []
    try:
        _learn_demonstrations(learner, job)
        for run in range(1, job.runs + 1):
            # A fresh teacher for every run: its scripted words start again from the first.
            learner.teacher = _teacher(job.teacher, learner, job.item.praise)
            learner.say(f"\n== run {run} of {job.item.instruction}")
            outcome = learner.teach(job.item.task, EVAL, Progress.load(workspace, EVAL))
            checked = outcome.accepted and outcome.runnable
            held_out = _held_out(learner, job, outcome) if checked else None
            records.append(_record(job, run, outcome, held_out, _model(log)))
    finally:
        learner.close()
        notes.close()
    return records


def _learn_demonstrations(learner: Any, job: Job) -> None:
    """Learn the suite's demonstrations, for a method that does; judged by their own checks.

    Their cost is the sequence's setup, not a run's: it is in the session log, not the table.
    """
    from lyra.demos.format import load_demo
    from lyra.methods.ical import Ical, demo_task

    method = learner.method
    if not isinstance(method, Ical):
        return
    learner.teacher = _teacher(job.teacher, learner, job.item.praise)
    for path in job.demonstrations:
        demo = load_demo(path)
        learner.say(f"\n== learning from {path.name}: {demo.instruction}")
        outcome = method.learn(learner, demo, path, demo_task(demo, path))
        if not outcome.accepted:  # the runs go on without it, as they would in a person's hands
            learner.say(f"{path.name}: not learnt within {learner.max_rounds} rounds")


def _model(log: Path) -> str:
    """The model that answered the sequence's last call, as its session log says."""
    from lyra.llm.session import read_log

    records = read_log(log) if log.exists() else []
    return records[-1].model if records else ""


def _teacher(kind: str, learner: Any, praise: str) -> Any:
    from lyra.teachers import ScriptedTeacher, critic

    if kind == "scripted":
        return ScriptedTeacher(praise)
    if kind == "llm":
        return critic(learner)
    raise LyraError(f"lyra eval runs with --teacher scripted or llm, not '{kind}'")


def _held_out(learner: Any, job: Job, outcome: Any) -> tuple[int, int]:
    """On how many check seeds the accepted plan does the task too, and on how many it ran.

    A seed whose layout already satisfies the instruction is left out: doing nothing passes
    there, so it says nothing of the plan.
    """
    from lyra.evals.suite import done_at_start

    if outcome.last is None:
        return 0, 0
    seeds = [seed for seed in job.check_seeds if not done_at_start(job.item.task, seed)]
    if not seeds:
        return 0, 0
    task = job.item.task.model_copy(update={"seeds": seeds})
    attempt = learner.attempt(task, task.scene, outcome.last.code, learner.ws.skills_dir, 0)
    return sum(run.ok for run in attempt.runs), len(seeds)


def _record(
    job: Job, run: int, outcome: Any, held_out: tuple[int, int] | None, model: str
) -> RunRecord:
    item = job.item
    return RunRecord(
        method=job.method,
        template=item.template,
        split=item.split,
        instruction=item.instruction,
        task=item.task.id,
        run=run,
        success=outcome.accepted,
        first_try=outcome.accepted and outcome.rounds == 1 and not outcome.corrections,
        interactions=outcome.rounds,
        llm_calls=outcome.llm_calls,
        prompt_tokens=outcome.prompt_tokens,
        completion_tokens=outcome.completion_tokens,
        wall_seconds=round(outcome.wall_seconds, 3),
        corrections=list(outcome.corrections),
        held_out=None if held_out is None else held_out[0],
        check_seeds=0 if held_out is None else held_out[1],
        model=model,
    )


def run_jobs(
    jobs: Sequence[Job],
    *,
    workers: int = 2,
    ray: str | None = None,
    done: Callable[[Job, list[RunRecord]], None] | None = None,
) -> tuple[list[RunRecord], list[str]]:
    """Run every sequence, over worker processes or a Ray cluster; records in a fixed order.

    A sequence that fails (a method that cannot run on the suite's backend, a recording that
    lacks it) costs only itself: the others' records come back, and the failures as lines
    ``METHOD/TASK: what went wrong``.

    Args:
        jobs: the sequences.
        workers: worker processes; 1 (without Ray) runs them here, one after another.
        ray: None for local processes, ``""`` for a local Ray, else a Ray cluster's address.
        done: called as each sequence ends (for progress).
    """
    from lyra.workers import worker_pool

    finished: list[list[RunRecord]] = []
    failed: list[str] = []

    def collect(job: Job, result: Callable[[], tuple[list[RunRecord], str]]) -> None:
        try:
            records, error = result()
        except Exception as lost:  # a worker that died: one sequence lost, not the others' runs
            records, error = [], f"{type(lost).__name__}: {lost}"
        if error:
            failed.append(f"{job.key}: {error}")
            return
        finished.append(records)
        if done is not None:
            done(job, records)

    if ray is None and (workers <= 1 or len(jobs) <= 1):
        for job in jobs:
            collect(job, partial(run_sequence, job))
    else:
        with worker_pool(min(workers, len(jobs)), ray) as pool:
            futures = {pool.submit(run_sequence, job): job for job in jobs}
            for future in as_completed(futures):
                collect(futures[future], future.result)
    # The same table whichever engine ran them, and however the sequences interleaved.
    records = sorted(
        (record for records in finished for record in records),
        key=lambda r: (r.method, SPLITS.index(r.split), r.template, r.task, r.run),
    )
    return records, sorted(failed)
