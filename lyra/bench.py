"""``lyra bench``: speed and success of the backends, measured the way a user runs them.

``lyra bench tabletop`` builds a 6-block pyramid and a 10-block tower on the pybullet tabletop
with scripted plans written against :mod:`lyra.api`, no rendering, and prints wall seconds per
pick-and-place (median over seeds), physics steps per second and success.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SITE = {
    "type": "zone",
    "name": "site",
    "size": [0.16, 0.16, 0.001],
    "poses": [{"x": 0.64, "y": 0.0}],
}
# Blocks wait nearer the robot than the site: reaching past a tall tower, the Panda's elbow
# would sweep it.
STAGING = {"x": [0.3, 0.54], "y": [-0.3, 0.3]}
BLOCK = 0.04
GAP = 0.005


@dataclass(frozen=True)
class BenchTask:
    """A scene, a scripted plan over the primitives, and a success check."""

    name: str
    scene: dict[str, Any]
    plan: Callable[[], int]
    hold_seconds: float


def _pyramid_plan() -> int:
    """Build a 3-2-1 pyramid of blocks on the site; return the number of pick-and-places."""
    from lyra.api import object_names, object_pose, put_first_on_second, relative_point

    blocks = object_names(kind="block")
    centre = object_pose("site").position
    pitch = BLOCK + GAP
    # Offsets along y, bottom row first: each block lands on whatever is already under it.
    offsets = [-pitch, 0.0, pitch, -pitch / 2, pitch / 2, 0.0]
    for block, offset in zip(blocks, offsets, strict=True):
        target = relative_point(centre, abs(offset), 90.0 if offset >= 0 else -90.0)
        put_first_on_second(block, target, yaw_deg=0.0)
    return len(blocks)


def _pyramid_ok(state: dict[str, Any]) -> tuple[bool, str]:
    from lyra.predicates import next_to, on_table, on_top

    b = sorted(n for n in state if n.startswith("yellow"))
    checks = [
        on_table(state, b[0]),
        on_table(state, b[1]),
        on_table(state, b[2]),
        next_to(state, b[0], b[1], gap=GAP),
        next_to(state, b[1], b[2], gap=GAP),
        on_top(state, b[3], b[0]),
        on_top(state, b[3], b[1]),
        on_top(state, b[4], b[1]),
        on_top(state, b[4], b[2]),
        on_top(state, b[5], b[3]),
        on_top(state, b[5], b[4]),
    ]
    failed = [c.reason for c in checks if not c]
    return not failed, "; ".join(failed)


def _tower_plan() -> int:
    """Stack every block on the site, each on the last."""
    from lyra.api import object_names, put_first_on_second

    below = "site"
    blocks = object_names(kind="block")
    for block in blocks:
        put_first_on_second(block, below)
        below = block
    return len(blocks)


def _tower_ok(state: dict[str, Any]) -> tuple[bool, str]:
    from lyra.predicates import stacked

    verdict = stacked(state, sorted(n for n in state if n.startswith("yellow")))
    return verdict.ok, verdict.reason


TASKS = {
    "pyramid": (
        BenchTask(
            "pyramid-6",
            {"objects": [SITE, {"type": "block", "color": "yellow", "count": 6}], "area": STAGING},
            _pyramid_plan,
            hold_seconds=0.0,
        ),
        _pyramid_ok,
    ),
    "tower": (
        BenchTask(
            "tower-10",
            {"objects": [SITE, {"type": "block", "color": "yellow", "count": 10}], "area": STAGING},
            _tower_plan,
            hold_seconds=5.0,
        ),
        _tower_ok,
    ),
}


def run_tabletop(
    task_names: list[str], seeds: int, gif_dir: Path | None = None
) -> list[dict[str, Any]]:
    """Run each task over seeds 0..seeds-1 and return one summary row per task.

    With ``gif_dir``, one more run of each task (seed 0) is recorded to ``TASK.gif`` there;
    it is not timed, since rendering costs more than the motion.
    """
    import lyra
    from envs.ravens.render import record_run
    from envs.ravens.scene import load_scene
    from envs.ravens.tabletop import Tabletop

    table = Tabletop()
    rows = []
    for task_name in task_names:
        task, check = TASKS[task_name]
        scene = load_scene(task.scene)
        per_pick: list[float] = []
        rates: list[float] = []
        successes = 0
        failures: list[str] = []
        for seed in range(seeds):
            table.reset(scene, seed)
            start_steps, start = table.steps, time.perf_counter()
            with lyra.use(table):
                try:
                    count = task.plan()
                except lyra.LyraError as error:
                    failures.append(f"seed {seed}: {error}")
                    continue
            wall = time.perf_counter() - start
            per_pick.append(wall / count)
            rates.append((table.steps - start_steps) / wall)
            for _ in range(round(task.hold_seconds / table.config.time_step)):
                table.sim.stepSimulation()
            ok, reason = check(table.world_state())
            successes += ok
            if not ok:
                failures.append(f"seed {seed}: {reason}")
        if gif_dir is not None:

            def act(plan: Callable[[], int] = task.plan) -> None:
                with lyra.use(table):
                    plan()

            record_run(table, scene, 0, act, gif_dir / f"{task.name}.gif")
        rows.append(
            {
                "task": task.name,
                "seeds": seeds,
                "success": successes,
                "s_per_pick_place": statistics.median(per_pick) if per_pick else float("nan"),
                "steps_per_s": statistics.median(rates) if rates else float("nan"),
                "failures": failures,
            }
        )
    table.close()
    return rows


def register(subparsers: Any) -> None:
    """Add the ``bench`` command group."""
    bench = subparsers.add_parser("bench", help="measure speed and success of the backends")
    targets = bench.add_subparsers(dest="bench_command", metavar="TARGET", required=True)
    tabletop = targets.add_parser(
        "tabletop", help="pyramid and tower on the pybullet tabletop, no rendering"
    )
    tabletop.add_argument("--seeds", type=int, default=10, help="seeds per task (default 10)")
    tabletop.add_argument(
        "--task", choices=[*TASKS, "all"], default="all", help="which task (default all)"
    )
    tabletop.add_argument(
        "--gif", metavar="DIR", help="also record one run per task as DIR/TASK.gif"
    )
    tabletop.set_defaults(func=_tabletop)


def _tabletop(args: argparse.Namespace) -> int:
    names = list(TASKS) if args.task == "all" else [args.task]
    rows = run_tabletop(names, args.seeds, Path(args.gif) if args.gif else None)
    print(f"{'task':<12} {'success':>9} {'s / pick-place':>15} {'physics steps/s':>16}")
    for row in rows:
        print(
            f"{row['task']:<12} {row['success']:>4}/{row['seeds']:<4} "
            f"{row['s_per_pick_place']:>15.3f} {row['steps_per_s']:>16.0f}"
        )
        for failure in row["failures"]:
            print(f"  failed {failure}")
    if args.gif:
        print(f"GIFs of one run per task: {args.gif}/")
    return 0 if all(r["success"] == r["seeds"] for r in rows) else 1
