"""The regression check: re-run an accepted example on its seed and compare how it ends.

An example passes when its plan still runs, its task's predicate still holds (the primary
check), and the backend finds the final state the same as the accepted run's. "The same" is
within the backend's tolerances, widened per object by how far the run spreads when its start
is nudged: the contacts of a tall structure are chaotic, the accepted run may have been made on
another CPU, and only a difference beyond that spread is a regression. The spread is measured
only when the plain comparison fails. A plan that revises earlier tasks is also run on each of
their layouts, where only their predicates count (:func:`check_revision`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from lyra.backend import Backend, Snapshot, backend_spec
from lyra.episode import Budget, EpisodeResult, run_episode
from lyra.examples import Example, load_example, save_example
from lyra.pictures import Recorder
from lyra.workers import worker_backend
from lyra.workspace import Workspace

# Nudged runs that measure the spread of a run that did not match its snapshot.
SPREAD_RUNS = 3


def check_example(
    backend: Backend,
    example: Example,
    skills_root: Path,
    ended: list[Snapshot] | None = None,
    recorder: Recorder | None = None,
) -> str:
    """Re-run an accepted example; return why it no longer passes ("" when it does).

    Args:
        backend: where it runs.
        example: the accepted example.
        skills_root: the skills folder its plan imports from.
        ended: when given, the plain run's final snapshot is appended to it.
        recorder: frames of the plain run, for a person watching the check.

    Raises:
        LyraError: the backend is a robot (the message names its simulator).
    """
    _require_simulator(backend)
    scene, seed = _scene_on(backend, example), example.seed
    if scene is None or seed is None:
        return "the example has no scene or seed to replay"

    def run(perturb: int = 0, recorder: Recorder | None = None) -> EpisodeResult:
        return run_episode(
            backend,
            scene,
            seed,
            example.code,
            skills_root=skills_root,
            success=example.success,
            hold_seconds=example.hold_seconds,
            perturb=perturb,
            recorder=recorder,
        )

    first = run(recorder=recorder)
    if not first.ok:
        return first.describe()
    if ended is not None:
        ended.append(first.snapshot)
    differs = backend.compare(example.snapshot, first.snapshot)
    if not differs:
        return ""
    if not backend.spec.nudges:
        simulator = backend.spec.simulator or backend.spec.name
        return (
            f"{differs} (no nudged runs measured the spread: {simulator} cannot nudge a run's "
            f"start, so the {backend.spec.tolerance * 1000:.0f} mm tolerance stands alone)"
        )
    # A nudged run that fails shows fragility, not spread: it widens no tolerance.
    nudged = [run(k) for k in range(1, SPREAD_RUNS + 1)]
    ensemble = [other.snapshot for other in nudged if other.ok]
    return backend.compare(example.snapshot, first.snapshot, ensemble)


def check_revision(
    backend: Backend,
    code: str,
    revised: Example,
    skills_root: Path,
    budget: Budget | None = None,
) -> str:
    """Run a revising plan on the layout of a task it revises; why it fails there ("" if not).

    Only the revised task's predicate counts: a revision may well leave things elsewhere than
    the plan it replaces did.

    Raises:
        LyraError: the backend is a robot (the message names its simulator).
    """
    _require_simulator(backend)
    scene = _scene_on(backend, revised)
    if scene is None or revised.seed is None:
        return "the example it revises has no scene or seed to replay"
    run = run_episode(
        backend,
        scene,
        revised.seed,
        code,
        skills_root=skills_root,
        success=revised.success,
        hold_seconds=revised.hold_seconds,
        budget=budget,
    )
    return "" if run.ok else run.describe()


def _scene_on(backend: Backend, example: Example) -> Any:
    """The example's scene as ``backend`` lays it out: read by the backend it was learnt on.

    A backend that runs another's examples (the fr3, the tabletop's) lays out that backend's
    scene spec, not the mapping its YAML reads as.
    """
    if example.scene is None or example.backend == backend.spec.name:
        return example.scene
    return backend_spec(example.backend).load_scene(example.scene)


def _require_simulator(backend: Backend) -> None:
    """Refuse a robot: a regression check replays a seed and nudges, which only a simulator can."""
    if backend.spec.robot:
        raise backend.spec.refuse_robot("a regression check", "lyra check")


def check_file(
    root: str, path: str, update: bool = False, on: str | None = None, backend: str | None = None
) -> tuple[str, str, float, str]:
    """Check one example file in a worker process.

    With ``update``, an example that passes gets the snapshot of how it ends today written back,
    so that later checks compare against this machine and this version of the simulator.

    With ``on`` (the file of an example it revises), its plan runs on that example's layout
    instead (see :func:`check_revision`); nothing is updated.

    With ``backend``, the example runs there instead of on the backend it was learnt on (one
    that lays out its scenes: the fr3 lays out the tabletop's).

    Returns:
        Its task, why it fails ("" when it passes), seconds, and what the update changed ("" if
        nothing).
    """
    start = time.perf_counter()
    example = load_example(Path(path))
    skills = Workspace(Path(root)).skills_dir
    if on is not None:
        revised = load_example(Path(on))
        why = check_revision(
            worker_backend(backend or example.backend), example.code, revised, skills
        )
        task = f"{example.task} on {revised.task}"
        return task, why, time.perf_counter() - start, ""
    ended: list[Snapshot] = []
    why = check_example(worker_backend(backend or example.backend), example, skills, ended)
    changed = ""
    if update and not why and ended and ended[0] != example.snapshot:
        changed = snapshot_change(example.snapshot, ended[0])
        save_example(example.model_copy(update={"snapshot": ended[0]}), Path(path).parent)
    return example.task or example.id, why, time.perf_counter() - start, changed


def snapshot_change(before: Snapshot, after: Snapshot) -> str:
    """Which object's recorded values moved most, and by how much (in the snapshot's units)."""
    moved = {
        name: max(
            (abs(a - b) for a, b in zip(before[name], after[name], strict=False)), default=0.0
        )
        for name in before.keys() & after.keys()
    }
    gone = sorted(before.keys() ^ after.keys())
    if gone:
        return f"objects {', '.join(gone)} appeared or went"
    name = max(moved, key=lambda key: (moved[key], key))
    return f"'{name}' moved most, by {moved[name]:.6f} in one value; {len(moved)} objects"
