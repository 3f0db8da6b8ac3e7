"""``lyra scene ...``: look at a tabletop scene spec before teaching with it.

It lives outside ``envs`` so that ``lyra --help`` imports no backend (importing ``envs.ravens``
registers its Gymnasium environment, which imports gymnasium).
"""

from __future__ import annotations

import argparse
import math
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``scene`` command group."""
    scene = subparsers.add_parser("scene", help="lay out and render tabletop scenes")
    actions = scene.add_subparsers(dest="scene_command", metavar="ACTION", required=True)
    show = actions.add_parser(
        "show", help="lay a scene spec out from a seed, list its objects and render a PNG"
    )
    show.add_argument("spec", help="a scene YAML file (or a curriculum task's scene)")
    show.add_argument("--seed", type=int, default=0, help="layout seed (default 0)")
    show.add_argument("--png", help="write a picture of the scene here")
    show.set_defaults(func=_show)


def _show(args: argparse.Namespace) -> int:
    from envs.ravens.render import save_png
    from envs.ravens.scene import load_scene
    from envs.ravens.tabletop import Tabletop

    spec = load_scene(args.spec)
    table = Tabletop()
    try:
        table.reset(spec, args.seed)
        print(f"{'object':<22} {'kind':<6} {'colour':<7} {'x':>7} {'y':>7} {'z':>7} {'yaw':>6}")
        for name, state in sorted(table.world_state().items()):
            p = state.pose.position
            # Adding 0.0 turns a rounded -0.0 into 0.0.
            yaw = round(math.degrees(state.pose.yaw), 1) + 0.0
            print(
                f"{name:<22} {state.kind:<6} {state.color:<7} "
                f"{p.x:7.3f} {p.y:7.3f} {p.z:7.3f} {yaw:6.1f}"
            )
        if args.png:
            print(f"wrote {save_png(table, args.png)}")
    finally:
        table.close()
    return 0
