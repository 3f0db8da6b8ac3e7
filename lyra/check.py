"""The regression check: re-run an accepted example on its seed and compare how it ends.

An example passes when its plan still runs, its task's predicate still holds, and the backend
finds the final state the same as the accepted run's within its own tolerances.
"""

from __future__ import annotations

import time
from pathlib import Path

from lyra.backend import Backend
from lyra.episode import run_episode
from lyra.examples import Example, load_example
from lyra.workers import worker_backend
from lyra.workspace import Workspace


def check_example(backend: Backend, example: Example, skills_root: Path) -> str:
    """Re-run an accepted example; return why it no longer passes ("" when it does)."""
    if example.scene is None or example.seed is None:
        return "the example has no scene or seed to replay"
    run = run_episode(
        backend,
        example.scene,
        example.seed,
        example.code,
        skills_root=skills_root,
        success=example.success,
        hold_seconds=example.hold_seconds,
    )
    if not run.ok:
        return run.describe()
    return backend.compare(example.snapshot, run.snapshot)


def check_file(root: str, path: str) -> tuple[str, str, float]:
    """Check one example file in a worker process: (its task, why it fails or "", seconds)."""
    start = time.perf_counter()
    example = load_example(Path(path))
    why = check_example(worker_backend(example.backend), example, Workspace(Path(root)).skills_dir)
    return example.task or example.id, why, time.perf_counter() - start
