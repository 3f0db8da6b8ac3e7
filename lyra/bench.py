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
from typing import Any


def run_bench(
    backend_name: str, task_names: list[str] | None, seeds: int, gif_dir: Path | None = None
) -> list[dict[str, Any]]:
    """Run each benchmark task over seeds 0..seeds-1 and return one summary row per task.

    With ``gif_dir``, one more run of each task (seed 0) is recorded to ``TASK.gif`` there;
    it is not timed, since rendering costs more than the motion.
    """
    from lyra.backend import backend_spec
    from lyra.episode import run_episode
    from lyra.errors import LyraError
    from lyra.pictures import Recorder
    from lyra.progress import Bar

    spec = backend_spec(backend_name)
    tasks = spec.bench_tasks()
    unknown = sorted(set(task_names or ()) - set(tasks))
    if unknown:
        raise LyraError(
            f"the {spec.name} backend has no benchmark task {', '.join(unknown)}; "
            f"it has {', '.join(tasks) or 'none'}"
        )
    backend = spec.make()
    rows = []
    try:
        for key in task_names or list(tasks):
            task = tasks[key]
            per_move: list[float] = []
            speed: list[float] = []
            successes = 0
            failures: list[str] = []
            bar = Bar(seeds, task.name)
            for seed in range(seeds):
                run = run_episode(
                    backend,
                    task.scene,
                    seed,
                    task.code,
                    skills_root=None,
                    success=task.success,
                    hold_seconds=task.hold_seconds,
                )
                moves = sum(run.calls.get(name, 0) for name in task.moves)
                if run.result.ok and moves:
                    per_move.append(run.result.wall_s / moves)
                    # The final hold is simulated outside the timed run: leave it out.
                    speed.append((run.sim_seconds - task.hold_seconds) / run.result.wall_s)
                successes += run.ok
                if not run.ok:
                    failures.append(run.describe())
                bar.step(run.ok)
            if gif_dir is not None:
                recorder = Recorder(backend)
                run_episode(backend, task.scene, 0, task.code, skills_root=None, recorder=recorder)
                recorder.save(gif_dir / f"{task.name}.gif")
            rows.append(
                {
                    "task": task.name,
                    "seeds": seeds,
                    "success": successes,
                    "s_per_pick_place": statistics.median(per_move) if per_move else float("nan"),
                    "sim_per_wall": statistics.median(speed) if speed else float("nan"),
                    "failures": failures,
                }
            )
    finally:
        backend.close()
    return rows


def register(subparsers: Any) -> None:
    """Add the ``bench`` command."""
    bench = subparsers.add_parser("bench", help="measure speed and success of a backend")
    bench.add_argument(
        "backend",
        help="a registered backend with benchmark tasks, by name or alias (tabletop: ravens)",
    )
    bench.add_argument("--seeds", type=int, default=10, help="seeds per task (default 10)")
    bench.add_argument(
        "--task", action="append", help="only this benchmark task (repeatable; default all)"
    )
    bench.add_argument("--gif", metavar="DIR", help="also record one run per task as DIR/TASK.gif")
    bench.set_defaults(func=_bench)


def _bench(args: argparse.Namespace) -> int:
    from lyra.backend import resolve_alias

    name = resolve_alias(args.backend)
    rows = run_bench(name, args.task, args.seeds, Path(args.gif) if args.gif else None)
    width = max(12, *(len(row["task"]) for row in rows))
    print(f"{'task':<{width}} {'success':>9} {'s / pick-place':>15} {'sim s / wall s':>15}")
    for row in rows:
        print(
            f"{row['task']:<{width}} {row['success']:>4}/{row['seeds']:<4} "
            f"{row['s_per_pick_place']:>15.3f} {row['sim_per_wall']:>15.1f}"
        )
        for failure in row["failures"]:
            print(f"  failed {failure}")
    if args.gif:
        print(f"GIFs of one run per task: {args.gif}/")
    return 0 if all(r["success"] == r["seeds"] for r in rows) else 1
