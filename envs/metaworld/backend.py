"""MetaWorld v3 as a lyra backend: what the episode runner and the learning loop drive.

A later run ends "the same" as an accepted one when each object is within 1 cm and each joint
within 0.02 (radians or metres) of where it was (see :class:`envs.mujoco_parts.MujocoBackend`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from envs.metaworld import SPEC
from envs.metaworld.arm import MetaWorldArm
from envs.metaworld.scene import MetaWorldScene
from envs.mujoco_arm import MujocoArmBackend


class MetaWorldBackend(MujocoArmBackend):
    """A :class:`~envs.metaworld.arm.MetaWorldArm` behind the lyra Backend protocol."""

    spec = SPEC
    arm: MetaWorldArm
    scene_type = MetaWorldScene
    # A camera beside the robot, looking over the table from its right (azimuth in degrees).
    view: ClassVar[Mapping[str, Any]] = {
        "lookat": (0.0, 0.7, 0.1),
        "distance": 1.35,
        "azimuth": 135.0,
        "elevation": -30.0,
    }

    def __init__(self) -> None:
        super().__init__()
        self.arm = MetaWorldArm()

    def _lay_out(self, scene: MetaWorldScene, seed: int, perturb: int) -> None:
        """The task, from a seed (``perturb`` nudges free bodies by a micrometre)."""
        self.arm.reset(scene.task, seed, scene.steps, perturb)

    def _success(self) -> dict[str, float]:
        """MetaWorld's success now and at any step since the reset."""
        return {"success": self.arm.success, "success_any": self.arm.success_any}

    def park(self) -> None:
        """Leave the arm where the plan left it.

        MetaWorld's success is about what the robot does, some of it only while it keeps doing
        it (a button stays down while pressed, a puck stays at a goal in the air while held):
        moving the arm away would undo tasks that are done.
        """
