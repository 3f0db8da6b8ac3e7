"""``lyra bench``: speed and success of a backend, measured the way a user's plans run.

``lyra bench tabletop`` (an alias the ``ravens`` backend declares) builds a 6-block pyramid and
a 10-block tower with scripted plans written against :mod:`lyra.api`, run through the episode
runner like any learnt plan, with no rendering, and prints wall seconds per pick-and-place
(median over seeds), simulated seconds per wall second and success.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lyra.backend import BenchTask
    from lyra.episode import EpisodeResult


def run_bench(
    backend_names: list[str],
    task_names: list[str] | None,
    seeds: int,
    gif_dir: Path | None = None,
) -> list[dict[str, Any]]:
    """Run each benchmark task over seeds 0..seeds-1 and return one summary row per task.

    The tasks are the first backend's; every further backend runs the same plans on the same
    scenes (one that lays out the first's scenes, as the ``fr3`` does the tabletop's), seed by
    seed in turn, so that each sees the same machine load. With ``gif_dir``, one more run of
    each task (seed 0) is recorded to ``TASK.gif`` there; it is not timed, since rendering
    costs more than the motion.
    """
    from lyra.backend import backend_spec
    from lyra.episode import run_episode
    from lyra.errors import LyraError
    from lyra.pictures import Recorder
    from lyra.progress import Bar

    spec = backend_spec(backend_names[0])
    tasks = spec.bench_tasks()
    unknown = sorted(set(task_names or ()) - set(tasks))
    if unknown:
        raise LyraError(
            f"the {spec.name} backend has no benchmark task {', '.join(unknown)}; "
            f"it has {', '.join(tasks) or 'none'}"
        )
    backends = {name: backend_spec(name).make() for name in backend_names}
    rows = []
    try:
        for key in task_names or list(tasks):
            task = tasks[key]
            scene = spec.load_scene(task.scene)
            runs: dict[str, list[EpisodeResult]] = {name: [] for name in backends}
            bar = Bar(seeds * len(backends), task.name)
            for seed in range(seeds):
                for name, backend in backends.items():
                    run = run_episode(
                        backend,
                        scene,
                        seed,
                        task.code,
                        skills_root=None,
                        success=task.success,
                        hold_seconds=task.hold_seconds,
                    )
                    runs[name].append(run)
                    bar.step(run.ok)
            for name, backend in backends.items():
                rows.append(_summary(name, task, runs[name]))
                if gif_dir is not None:
                    recorder = Recorder(backend)
                    run_episode(backend, scene, 0, task.code, skills_root=None, recorder=recorder)
                    suffix = "" if len(backends) == 1 else f"-{name}"
                    recorder.save(gif_dir / f"{task.name}{suffix}.gif")
    finally:
        for backend in backends.values():
            backend.close()
    return rows


def _summary(backend: str, task: BenchTask, runs: list[EpisodeResult]) -> dict[str, Any]:
    """One task's row: successes, wall seconds per pick-and-place and simulated per wall second."""
    per_move: list[float] = []
    speed: list[float] = []
    for run in runs:
        moves = sum(run.calls.get(name, 0) for name in task.moves)
        if run.result.ok and moves:
            per_move.append(run.result.wall_s / moves)
            # The final hold is simulated outside the timed run: leave it out.
            speed.append((run.sim_seconds - task.hold_seconds) / run.result.wall_s)
    return {
        "backend": backend,
        "task": task.name,
        "seeds": len(runs),
        "success": sum(run.ok for run in runs),
        "s_per_pick_place": statistics.median(per_move) if per_move else float("nan"),
        "sim_per_wall": statistics.median(speed) if speed else float("nan"),
        "failures": [run.describe() for run in runs if not run.ok],
    }


def register(subparsers: Any) -> None:
    """Add the ``bench`` command."""
    bench = subparsers.add_parser("bench", help="measure speed and success of a backend")
    bench.add_argument(
        "backend",
        nargs="+",
        help="a registered backend with benchmark tasks, by name or alias (tabletop: ravens); "
        "further backends run its tasks too, seed by seed in turn (`tabletop fr3`)",
    )
    bench.add_argument("--seeds", type=int, default=10, help="seeds per task (default 10)")
    bench.add_argument(
        "--task", action="append", help="only this benchmark task (repeatable; default all)"
    )
    bench.add_argument("--gif", metavar="DIR", help="also record one run per task as DIR/TASK.gif")
    bench.set_defaults(func=_bench)


def _bench(args: argparse.Namespace) -> int:
    from lyra.backend import resolve_alias

    names = [resolve_alias(name) for name in args.backend]
    rows = run_bench(names, args.task, args.seeds, Path(args.gif) if args.gif else None)
    width = max(12, *(len(row["task"]) for row in rows))
    print(
        f"{'backend':<8} {'task':<{width}} {'success':>9} {'s / pick-place':>15} "
        f"{'sim s / wall s':>15}"
    )
    for row in rows:
        print(
            f"{row['backend']:<8} {row['task']:<{width}} {row['success']:>4}/{row['seeds']:<4} "
            f"{row['s_per_pick_place']:>15.3f} {row['sim_per_wall']:>15.1f}"
        )
        for failure in row["failures"]:
            print(f"  failed {failure}")
    if args.gif:
        print(f"GIFs of one run per task: {args.gif}/")
    return 0 if all(r["success"] == r["seeds"] for r in rows) else 1
