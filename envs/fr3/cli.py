"""``lyra fr3 sim``: franky-sim with a scene's cubes on the table, standing in for an FR3.

It serves the libfranka protocol on a loopback address until Ctrl-C, so that ``lyra deploy
--robot ADDRESS`` (and anything else that drives an arm through franky) connects to it as to
the real arm. franky-sim is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import math
import threading
from typing import Any

from lyra.errors import LyraError

# The scenes `lyra fr3 sim` lays out: its own, and the tabletop's (on a seed).
SCENES = ("fr3", "ravens")


def register(subparsers: Any) -> None:
    """Add the ``fr3`` command and its ``sim`` action."""
    fr3 = subparsers.add_parser("fr3", help="the Franka FR3: franky-sim standing in for the arm")
    actions = fr3.add_subparsers(dest="action", metavar="ACTION", required=True)
    sim = actions.add_parser(
        "sim",
        help="serve franky-sim with a scene's objects on the table until Ctrl-C, and print the "
        "address to connect to",
    )
    sim.add_argument(
        "--scene",
        help="a scene YAML file: an fr3 scene (`backend: fr3`) or a tabletop one, laid out on "
        "--seed (default: the fr3 backend's sample scene)",
    )
    sim.add_argument("--seed", type=int, default=0, help="a tabletop scene's layout seed")
    sim.add_argument(
        "--host", help="the loopback address to serve on (default: the first free from 127.0.0.1)"
    )
    sim.set_defaults(func=_sim)


def _sim(args: argparse.Namespace) -> int:
    from envs.fr3 import SPEC
    from envs.fr3.perception import SimPerception
    from envs.fr3.scene import SAMPLE, fr3_scene
    from envs.fr3.sim import FrankySim
    from lyra.backend import load_scene_file

    if args.scene is None:
        name, scene = "fr3", SPEC.load_scene(SAMPLE.scene)
    else:
        name, scene = load_scene_file(args.scene)
    if name not in SCENES:
        raise LyraError(f"lyra fr3 sim lays out fr3 and tabletop (ravens) scenes, not {name}'s")
    laid = fr3_scene(scene, args.seed)
    sim = FrankySim(laid, host=args.host)
    try:
        names = ", ".join(cube.name for cube in laid.objects)
        print(f"franky-sim serves a simulated FR3 at {sim.host}, with {names} on the table")
        print(
            "connect to it as to the arm, e.g.\n  lyra deploy PLAN.py --scene SCENE.yaml "
            f"--robot {sim.host}\nCtrl-C stops it",
            flush=True,
        )
        threading.Event().wait()
    except KeyboardInterrupt:
        print("\nwhere the objects are now:")
        for state in SimPerception(sim.sim, laid).objects().values():
            x, y, z = state.pose.position.as_array()
            print(
                f"  {state.name} ({x:.3f}, {y:.3f}, {z:.3f}) yaw {math.degrees(state.pose.yaw):.0f}"
            )
    finally:
        sim.close()
    print("franky-sim stopped", flush=True)
    return 0
