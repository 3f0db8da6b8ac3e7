"""The regression check: re-run an accepted example on its seed and compare how it ends.

An example passes when its plan still runs, its task's predicate still holds (the primary
check), and the backend finds the final state the same as the accepted run's. "The same" is
within the backend's tolerances, widened per object by how far the run spreads when its start
is nudged: the contacts of a tall structure are chaotic, the accepted run may have been made on
another CPU, and only a difference beyond that spread is a regression. The spread is measured
only when the plain comparison fails.
"""

from __future__ import annotations

import time
from pathlib import Path

from lyra.backend import Backend
from lyra.episode import EpisodeResult, run_episode
from lyra.examples import Example, load_example
from lyra.workers import worker_backend
from lyra.workspace import Workspace

# Nudged runs that measure the spread of a run that did not match its snapshot.
SPREAD_RUNS = 3


def check_example(backend: Backend, example: Example, skills_root: Path) -> str:
    """Re-run an accepted example; return why it no longer passes ("" when it does)."""
    scene, seed = example.scene, example.seed
    if scene is None or seed is None:
        return "the example has no scene or seed to replay"

    def run(perturb: int = 0) -> EpisodeResult:
        return run_episode(
            backend,
            scene,
            seed,
            example.code,
            skills_root=skills_root,
            success=example.success,
            hold_seconds=example.hold_seconds,
            perturb=perturb,
        )

    first = run()
    if not first.ok:
        return first.describe()
    if not backend.compare(example.snapshot, first.snapshot):
        return ""
    # A nudged run that fails shows fragility, not spread: it widens no tolerance.
    nudged = [run(k) for k in range(1, SPREAD_RUNS + 1)]
    ensemble = [other.snapshot for other in nudged if other.ok]
    return backend.compare(example.snapshot, first.snapshot, ensemble)


def check_file(root: str, path: str) -> tuple[str, str, float]:
    """Check one example file in a worker process: (its task, why it fails or "", seconds)."""
    start = time.perf_counter()
    example = load_example(Path(path))
    why = check_example(worker_backend(example.backend), example, Workspace(Path(root)).skills_dir)
    return example.task or example.id, why, time.perf_counter() - start
