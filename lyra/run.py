"""Running what was learnt: a curriculum's stored plans over many seeds, with no LLM.

Each accepted task's stored plan runs with the current skill library on fresh seeds, through the
episode runner, in worker processes, and the table says how often it still succeeds. A task
that a later one revised (taught again on the layouts where its plan failed) runs the newest
revision's plan.
(Planning a new instruction is a task without a skill: :class:`lyra.teach.Learner` does it.)
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from concurrent.futures import as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lyra.backend import Backend, backend_spec, make
from lyra.curriculum import Curriculum
from lyra.episode import run_episode
from lyra.errors import LayoutError
from lyra.examples import iter_examples, latest_revision, revisions
from lyra.pictures import Recorder
from lyra.progress import Bar
from lyra.workers import worker_backend, worker_pool
from lyra.workspace import Workspace


@dataclass(frozen=True)
class PeerRuns:
    """A peer's policy (see :attr:`lyra.backend.BackendSpec.peer`) on the same seeds."""

    name: str
    held: int
    any_step: int
    median_seconds: float


@dataclass(frozen=True)
class TaskRuns:
    """One task's stored plan run over several seeds.

    Attributes:
        successes_any: runs whose environment said the task was done at some step (its
            ``success_any`` signal); None where the backend gives no such signal.
        peer: the backend's peer on the same seeds, where it has one.
        plan: the task (``curriculum/task-id``) whose plan ran, where a later task revised
            this one's; empty where its own plan ran.
    """

    task: str
    runs: int
    successes: int
    mean_primitives: float
    median_seconds: float
    failures: tuple[str, ...] = ()
    learnt: bool = True
    successes_any: int | None = None
    peer: PeerRuns | None = None
    plan: str = ""


def run_curriculum(
    workspace: Workspace,
    curriculum: Curriculum,
    seeds: range,
    gif_dir: Path | None = None,
    say: Callable[[str], None] = print,
    workers: int = 2,
    ray: str | None = None,
    backend: str | None = None,
) -> list[TaskRuns]:
    """Run every accepted task's stored plan on ``seeds`` with the current library.

    Seeds run in ``workers`` processes, each with its own backend (or on Ray: ``ray`` is a
    cluster's address, ``""`` a local one; see :func:`lyra.workers.worker_pool`). A seed on
    which the scene cannot be laid out is one of the task's failures, with its reason.
    ``backend`` runs the plans on another backend than the curriculum's, one that lays out the
    curriculum's scenes (the ``fr3`` lays out the tabletop's).
    """
    # The example files are the record of what was learnt (progress is local state).
    learnt = {e.task: e for _, e in iter_examples(workspace.examples_dir)}
    # A task taught again on the layouts where its plan failed: the newest revision runs.
    revised_by = revisions(learnt.values())
    rows = []
    with worker_pool(workers, ray) as pool:
        for task in curriculum.tasks:
            example = learnt.get(f"{curriculum.name}/{task.id}")
            if example is None:
                rows.append(TaskRuns(task.id, 0, 0, 0.0, 0.0, ("not learnt yet",), learnt=False))
                continue
            # A scene given in words was written out when the task was learnt.
            scene = task.scene or task.spec().load_scene(example.scene or {})
            plan = latest_revision(example, revised_by)
            row = seed_runs(
                pool,
                task.id,
                Episode(
                    backend or task.backend,
                    workspace.skills_dir,
                    scene,
                    plan.code,
                    task.success,
                    task.hold_seconds,
                ),
                seeds,
            )
            rows.append(replace(row, plan="" if plan is example else plan.task or plan.id))
            say(f"{task.id}: {rows[-1].successes}/{len(seeds)}")
            if gif_dir is not None:
                recording = make(backend or task.backend)
                try:
                    gif = record_gif(
                        recording, scene, plan.code, workspace, gif_dir / f"{task.id}.gif"
                    )
                finally:
                    recording.close()
                say(f"{task.id}: one run recorded to {gif}")
    return rows


@dataclass(frozen=True)
class Episode:
    """A stored plan and what judges it, to run on any seed of its scene."""

    backend: str
    skills_dir: Path
    scene: Any
    code: str
    success: list[dict[str, Any]]
    hold_seconds: float


def seed_runs(pool: Any, task: str, episode: Episode, seeds: range) -> TaskRuns:
    """Run a plan on each seed in the worker pool, beside the backend's peer where it has one."""
    spec = backend_spec(episode.backend)
    bar = Bar(len(seeds), task)
    futures, peers = [], []
    # The peer's episodes interleave with lyra's, so both see the same machine load.
    for seed in seeds:
        futures.append(pool.submit(_run_seed, episode, seed))
        if spec.peer is not None:
            peers.append(pool.submit(spec.run_peer, episode.scene, seed))
    for future in as_completed(futures):
        bar.step(future.result()[0])
    runs = [future.result() for future in futures]
    failures = tuple(failure for ok, _, _, failure, _ in runs if not ok)
    any_step = [anywhen for *_, anywhen in runs]
    peer_runs = [run for future in peers if (run := future.result()) is not None]
    return TaskRuns(
        task,
        len(seeds),
        len(seeds) - len(failures),
        statistics.mean(calls for _, _, calls, _, _ in runs),
        statistics.median(seconds for _, seconds, _, _, _ in runs),
        failures,
        successes_any=(None if None in any_step else sum(bool(a) for a in any_step)),
        peer=(
            PeerRuns(
                spec.peer_name,
                sum(run.held for run in peer_runs),
                sum(run.any_step for run in peer_runs),
                statistics.median(run.seconds for run in peer_runs),
            )
            if peer_runs
            else None
        ),
    )


def _run_seed(episode: Episode, seed: int) -> tuple[bool, float, int, str, float | None]:
    """Run a stored plan on one seed.

    Returns:
        Success, wall seconds, primitive calls, what went wrong, and the environment's success
        at any step (None where it gives no such signal).
    """
    start = time.perf_counter()
    try:
        run = run_episode(
            worker_backend(episode.backend),
            episode.scene,
            seed,
            episode.code,
            skills_root=episode.skills_dir,
            success=episode.success,
            hold_seconds=episode.hold_seconds,
        )
    except LayoutError as error:
        return False, time.perf_counter() - start, 0, f"seed {seed}: not laid out: {error}", None
    seconds = time.perf_counter() - start
    return (
        run.ok,
        seconds,
        run.result.primitive_calls,
        "" if run.ok else run.describe(),
        run.signals.get("success_any"),
    )


def record_gif(backend: Backend, scene: Any, code: str, workspace: Workspace, path: Path) -> Path:
    """Run the code once on seed 0 with a camera on, and write a GIF."""
    recorder = Recorder(backend)
    run_episode(backend, scene, 0, code, skills_root=workspace.skills_dir, recorder=recorder)
    return recorder.save(path)
