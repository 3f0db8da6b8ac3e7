"""The Franka Kitchen as a lyra backend: what the episode runner and the learning loop drive.

A later run ends "the same" as an accepted one when each object is within 1 cm and each joint
within 0.02 (radians or metres) of where it was (see :class:`envs.mujoco_parts.MujocoBackend`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from envs.kitchen import SPEC
from envs.kitchen.arm import KitchenArm
from envs.kitchen.scene import KitchenScene
from envs.mujoco_arm import MujocoArmBackend


class KitchenBackend(MujocoArmBackend):
    """A :class:`~envs.kitchen.arm.KitchenArm` behind the lyra Backend protocol."""

    spec = SPEC
    arm: KitchenArm
    scene_type = KitchenScene
    # From behind the robot's left shoulder, looking at the stove and the microwave.
    view: ClassVar[Mapping[str, Any]] = {
        "lookat": (-0.35, 0.55, 2.0),
        "distance": 2.0,
        "azimuth": 65.0,
        "elevation": -30.0,
    }

    def __init__(self) -> None:
        super().__init__()
        self.arm = KitchenArm()

    def _lay_out(self, scene: KitchenScene, seed: int, perturb: int) -> None:
        """The Kitchen; the seed draws its sensor noise (``perturb`` nudges the kettle)."""
        self.arm.reset(scene.tasks, seed, scene.steps, perturb, scene.jitter)

    def _success(self) -> dict[str, float]:
        """The Kitchen's success now and at any step since the reset, and each task's now."""
        return {
            "success": self.arm.success,
            "success_any": self.arm.success_any,
            **{f"done:{task}": float(task in self.arm.done_tasks) for task in self.arm.tasks},
        }

    def park(self) -> None:
        """Leave the arm where the plan left it (a knob let go of stays turned; so do doors)."""
