"""Running what was learnt: a curriculum's stored plans over many seeds, or a new instruction.

``run_curriculum`` needs no LLM: each accepted task's stored plan runs with the current skill
library on fresh seeds, and the table says how often it still succeeds. ``plan`` asks the LLM
for task code composed from the learnt skills (retrieved from the memory) and runs it in the
sandbox, feeding a failure back for another try.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.ravens.render import record_run
from envs.ravens.scene import SceneSpec, load_scene
from envs.ravens.tabletop import Tabletop
from lyra.curriculum import Curriculum
from lyra.examples import iter_examples
from lyra.llm import Message, Provider
from lyra.memory.store import Memory
from lyra.prompts import render, system_prompt
from lyra.sandbox import RunResult, run_code
from lyra.teach import (
    code_blocks,
    examples_section,
    run_on_seed,
    scene_text,
    skills_section,
)
from lyra.workers import worker_pool
from lyra.workspace import Workspace


@dataclass(frozen=True)
class TaskRuns:
    """One task's stored plan run over several seeds."""

    task: str
    runs: int
    successes: int
    mean_primitives: float
    median_seconds: float
    failures: tuple[str, ...] = ()
    learnt: bool = True


def run_curriculum(
    workspace: Workspace,
    curriculum: Curriculum,
    seeds: int,
    gif_dir: Path | None = None,
    say: Callable[[str], None] = print,
    workers: int = 2,
) -> list[TaskRuns]:
    """Run every accepted task's stored plan on seeds 0..seeds-1 with the current library.

    Seeds run in ``workers`` processes, each with its own simulator.
    """
    # The example files are the record of what was learnt (progress is local state).
    learnt = {e.task: e for _, e in iter_examples(workspace.examples_dir)}
    rows = []
    with worker_pool(workers) as pool:
        for task in curriculum.tasks:
            example = learnt.get(f"{curriculum.name}/{task.id}")
            if example is None:
                rows.append(TaskRuns(task.id, 0, 0, 0.0, 0.0, ("not learnt yet",), learnt=False))
                continue
            # A scene given in words was written out when the task was learnt.
            scene = task.scene or load_scene(example.scene or {})
            jobs = [
                (workspace.skills_dir, scene, seed, example.code, task.success, task.hold_seconds)
                for seed in range(seeds)
            ]
            runs = list(pool.map(_run_seed, jobs))
            failures = tuple(failure for ok, _, _, failure in runs if not ok)
            rows.append(
                TaskRuns(
                    task.id,
                    seeds,
                    seeds - len(failures),
                    statistics.mean(calls for _, _, calls, _ in runs),
                    statistics.median(seconds for _, seconds, _, _ in runs),
                    failures,
                )
            )
            say(f"{task.id}: {rows[-1].successes}/{seeds}")
            if gif_dir is not None:
                table = Tabletop()
                try:
                    gif = record_gif(
                        table, scene, example.code, workspace, gif_dir / f"{task.id}.gif"
                    )
                finally:
                    table.close()
                say(f"{task.id}: one run recorded to {gif}")
    return rows


# One simulator per worker process, made on its first seed and kept for the next ones.
_worker_table: Tabletop | None = None


def _run_seed(
    job: tuple[Path, SceneSpec, int, str, list[dict[str, Any]], float],
) -> tuple[bool, float, int, str]:
    """Run a stored plan on one seed: success, wall seconds, primitive calls, what went wrong."""
    global _worker_table
    skills_dir, scene, seed, code, success, hold_seconds = job
    if _worker_table is None:
        _worker_table = Tabletop()
    start = time.perf_counter()
    run = run_on_seed(_worker_table, scene, seed, code, skills_dir, success, hold_seconds)
    seconds = time.perf_counter() - start
    if run.result.abandoned:
        # Its sandbox thread may still be driving that simulator.
        _worker_table = None
    return run.ok, seconds, run.result.primitive_calls, "" if run.ok else run.describe()


def record_gif(
    table: Tabletop, scene: SceneSpec, code: str, workspace: Workspace, path: Path
) -> Path:
    """Run the code once on seed 0 in the sandbox with a camera on, and write a GIF."""
    return record_run(
        table,
        scene,
        0,
        lambda: run_code(code, table, filename="task.py", skills_root=workspace.skills_dir),
        path,
    )


@dataclass(frozen=True)
class PlanOutcome:
    """What planning an instruction produced."""

    code: str
    result: RunResult | None
    attempts: int
    missing_skill: str = ""


def plan(
    workspace: Workspace,
    provider: Provider,
    memory: Memory,
    table: Tabletop,
    instruction: str,
    scene: SceneSpec,
    seed: int,
    hints: tuple[str, ...] = (),
    attempts: int = 3,
) -> PlanOutcome:
    """Generate task code from the learnt skills, run it, and retry with the error as feedback.

    Stops early when the LLM says a skill is missing: that skill is to be taught first (with
    ``lyra teach``), and planning resumed afterwards.
    """
    feedback = ""
    code = ""
    result: RunResult | None = None
    for attempt in range(1, attempts + 1):
        retrieval = memory.retrieve(instruction, correction=feedback or None, hints=hints)
        table.reset(scene, seed)
        prompt = render(
            "plan",
            instruction=instruction,
            scene=scene_text(table),
            skills=skills_section(retrieval.headers),
            examples=examples_section(retrieval.examples),
            hint=f"\n# Hint from the person\n{'; '.join(hints)}\n" if hints else "",
            feedback=f"\n# Your last plan failed\n```python\n{code.rstrip()}\n```\n{feedback}\n"
            if feedback
            else "",
        )
        messages = [Message("system", system_prompt()), Message("user", prompt)]
        answer = provider.complete(messages, purpose="plan").text
        missing = next(
            (line for line in answer.splitlines() if line.startswith("MISSING SKILL:")), ""
        )
        if missing:
            return PlanOutcome("", None, attempt, missing.removeprefix("MISSING SKILL:").strip())
        blocks = code_blocks(answer)
        code = blocks[0] if blocks else ""
        result = run_code(code, table, filename="task.py", skills_root=workspace.skills_dir)
        if result.ok or result.abandoned:
            # An abandoned run may still be driving the simulator: no further attempt on it.
            return PlanOutcome(code, result, attempt)
        feedback = result.feedback
    return PlanOutcome(code, result, attempts)
