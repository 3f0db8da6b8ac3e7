"""``lyra scene ...``: look at a scene spec of any backend before teaching with it.

The backend comes from the registry, so ``lyra --help`` imports none.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``scene`` command group."""
    scene = subparsers.add_parser("scene", help="lay out and render scenes")
    actions = scene.add_subparsers(dest="scene_command", metavar="ACTION", required=True)
    show = actions.add_parser(
        "show", help="lay a scene spec out from a seed, list its objects and render a PNG"
    )
    show.add_argument("spec", help="a scene YAML file, or a curriculum (with --task)")
    show.add_argument("--task", help="the curriculum task whose scene to show")
    show.add_argument("--seed", type=int, default=0, help="layout seed (default 0)")
    show.add_argument("--backend", help="the backend (default: the file's, else ravens)")
    show.add_argument("--png", help="write a picture of the scene here")
    show.set_defaults(func=_show)


def _show(args: argparse.Namespace) -> int:
    from lyra.backend import make
    from lyra.names import natural_key
    from lyra.pictures import save_png

    name, spec = _scene(args)
    backend = make(name)
    try:
        backend.reset(spec, args.seed)
        print(f"{'object':<22} {'kind':<6} {'colour':<7} {'x':>7} {'y':>7} {'z':>7} {'yaw':>6}")
        world = backend.world_state()
        for obj in sorted(world, key=natural_key):
            state = world[obj]
            p = state.pose.position
            # Adding 0.0 turns a rounded -0.0 into 0.0.
            yaw = round(math.degrees(state.pose.yaw), 1) + 0.0
            print(
                f"{obj:<22} {state.kind:<6} {state.color:<7} "
                f"{p.x:7.3f} {p.y:7.3f} {p.z:7.3f} {yaw:6.1f}"
            )
        if args.png:
            print(f"wrote {save_png(backend.render(), Path(args.png))}")
    finally:
        backend.close()
    return 0


def _scene(args: argparse.Namespace) -> tuple[str, Any]:
    """The backend's name and the scene spec: a scene file's, or a curriculum task's."""
    from lyra.backend import load_scene_file
    from lyra.errors import LyraError

    path = Path(args.spec)
    if args.task is None and not _is_curriculum(path):
        return load_scene_file(path, args.backend)
    from lyra.curriculum import load_curriculum

    tasks = load_curriculum(path).tasks
    ids = ", ".join(task.id for task in tasks)
    if args.task is None:
        raise LyraError(
            f"{path} is a curriculum: name the task whose scene to show (--task ID: {ids})"
        )
    task = next((task for task in tasks if task.id == args.task), None)
    if task is None:
        raise LyraError(f"{path} has no task '{args.task}'; its tasks are {ids}")
    if task.scene is None:
        raise LyraError(
            f"task '{task.id}' gives its scene in words (setup:), which an LLM turns into a "
            "scene when the task is learnt; `lyra run` shows it after that"
        )
    return task.backend, task.scene


def _is_curriculum(path: Path) -> bool:
    """A curriculum file has a top-level ``tasks:`` key; a scene file has none."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False  # the scene loader says what is wrong with the file
    return re.search(r"^tasks\s*:", text, re.MULTILINE) is not None
