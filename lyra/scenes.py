"""``lyra scene ...``: look at a scene spec of any backend before teaching with it.

The backend comes from the registry, so ``lyra --help`` imports none.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``scene`` command group."""
    scene = subparsers.add_parser("scene", help="lay out and render scenes")
    actions = scene.add_subparsers(dest="scene_command", metavar="ACTION", required=True)
    show = actions.add_parser(
        "show", help="lay a scene spec out from a seed, list its objects and render a PNG"
    )
    show.add_argument("spec", help="a scene YAML file")
    show.add_argument("--seed", type=int, default=0, help="layout seed (default 0)")
    show.add_argument("--backend", help="the backend (default: the file's, else ravens)")
    show.add_argument("--png", help="write a picture of the scene here")
    show.set_defaults(func=_show)


def _show(args: argparse.Namespace) -> int:
    from lyra.backend import load_scene_file, make
    from lyra.pictures import save_png

    name, spec = load_scene_file(args.spec, args.backend)
    backend = make(name)
    try:
        backend.reset(spec, args.seed)
        print(f"{'object':<22} {'kind':<6} {'colour':<7} {'x':>7} {'y':>7} {'z':>7} {'yaw':>6}")
        for obj, state in sorted(backend.world_state().items()):
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
