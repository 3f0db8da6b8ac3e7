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
from envs.mujoco_parts import MujocoBackend
from lyra.embodiment import WorldState


class MetaWorldBackend(MujocoBackend):
    """A :class:`~envs.metaworld.arm.MetaWorldArm` behind the lyra Backend protocol."""

    spec = SPEC
    arm: MetaWorldArm
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

    def reset(self, scene: Any, seed: int, perturb: int = 0) -> None:
        """Lay the task out from a seed (``perturb`` nudges free bodies by a micrometre)."""
        spec = scene if isinstance(scene, MetaWorldScene) else MetaWorldScene.model_validate(scene)
        self.arm.reset(spec.task, seed, spec.steps, perturb)

    def world_state(self) -> WorldState:
        """Objects, joints, and MetaWorld's success now and at any step since the reset."""
        return WorldState(
            self.arm.world_state(),
            self.arm.joints(),
            {"success": self.arm.success, "success_any": self.arm.success_any},
        )

    def park(self) -> None:
        """Leave the arm where the plan left it.

        MetaWorld's success is about what the robot does, some of it only while it keeps doing
        it (a button stays down while pressed, a puck stays at a goal in the air while held):
        moving the arm away would undo tasks that are done.
        """
