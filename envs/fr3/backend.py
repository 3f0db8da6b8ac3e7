"""The FR3 as a lyra backend: franky-sim started in this process, or the arm at an address.

Made with no ``host``, it runs franky-sim on a free loopback address and lays each scene out
there on ``reset`` (a fresh simulator each time, so a seed starts where every other one does): a
simulator. Made with the address of a real FR3 (or of a franky-sim started elsewhere, standing
in for one), it is the robot (its spec is ``SPEC.for_robot()``'s): ``reset`` lays nothing out,
it checks that perception sees the scene's objects. Snapshots, comparison and the scene listing
are :class:`envs.mujoco_parts.MujocoBackend`'s (1 cm; there are no joints).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from envs.fr3 import SPEC
from envs.fr3.arm import FR3Arm
from envs.fr3.perception import Perception, SimPerception, StaticPerception, perception_from
from envs.fr3.safety import Limits
from envs.fr3.scene import ZONE_THICKNESS, FR3Scene, fr3_scene
from envs.fr3.sim import FrankySim, require_franky
from envs.mujoco_parts import MujocoBackend
from lyra.embodiment import ObjectState, WorldState
from lyra.errors import LyraError
from lyra.geometry import Point, Pose, Size, quat_from_yaw


class FR3Backend(MujocoBackend):
    """An :class:`~envs.fr3.arm.FR3Arm` behind the lyra Backend protocol.

    Args:
        host: the robot's (or a running franky-sim's) address; None starts franky-sim here.
        perception: where object poses come from with a ``host``: a :class:`Perception`, or
            the path of a YAML file of poses (:class:`StaticPerception`) or of a camera's
            calibration (:class:`~envs.fr3.markers.MarkerPerception`, reading the camera it
            names); None: the poses the scene of the first reset gives its cubes.
        limits: the workspace box, speed cap and joint margin every motion is checked against.
        speed: the dynamics factor motions run at (clamped to ``limits.max_speed``).
    """

    spec = SPEC
    arm: FR3Arm
    # From in front of the robot and to its right, over the table it stands on.
    view: ClassVar[Mapping[str, Any]] = {
        "lookat": (0.5, 0.0, 0.05),
        "distance": 1.3,
        "azimuth": 200.0,
        "elevation": -30.0,
    }

    def __init__(
        self,
        host: str | None = None,
        perception: Perception | str | Path | None = None,
        limits: Limits | None = None,
        speed: float = 0.3,
    ) -> None:
        super().__init__()
        self._franky = require_franky()
        if host is not None:
            # The same backend name serves franky-sim and the arm: this instance is the arm.
            self.spec = SPEC.for_robot()
        self._host = host
        self._perception = (
            perception_from(perception) if isinstance(perception, str | Path) else perception
        )
        self._limits = limits or Limits()
        self._speed = speed
        self._sim: FrankySim | None = None
        self._arm: FR3Arm | None = None  # connected on the first reset (``arm`` from then on)

    def reset(self, scene: Any, seed: int, perturb: int = 0) -> None:
        """Lay the scene out (franky-sim here) or check the robot's table shows it.

        The seed moves nothing of an FR3 scene (a tabletop scene lies as the tabletop lays it out
        on the seed), and ``perturb`` nudges nothing: franky-sim's own timing already varies
        from run to run more than a micrometre would.

        Raises:
            LyraError: on the robot, ``perturb`` was asked for, or perception does not see
                every object of the scene.
        """
        spec = fr3_scene(scene, seed)
        seen: Perception
        if self._host is None:
            self._close_connection()
            self._sim = FrankySim(spec)
            seen = SimPerception(self._sim.sim, spec)
            self._arm = self._connect(self._sim.host, seen)
            self._arm.env = self._sim.sim
        else:
            if perturb:
                raise SPEC.refuse_robot("a nudged run", "lyra check")
            if self._perception is None:
                self._perception = StaticPerception(spec)
            seen = self._perception
            if self._arm is None:
                self._arm = self._connect(self._host, seen)
            missing = {cube.name for cube in spec.objects} - set(seen.objects())
            if missing:
                raise LyraError(
                    f"perception does not see {', '.join(sorted(missing))}: set the table up "
                    "as the scene says before running it on the robot"
                )
        self._arm.perception = ScenePerception(seen, spec)
        self._arm.restart_clock()
        self.arm = self._arm

    def _connect(self, host: str, perception: Perception) -> FR3Arm:
        return FR3Arm(self._franky, host, perception, self._limits, self._speed)

    def world_state(self) -> WorldState:
        """The objects as perception sees them."""
        return WorldState(self.arm.world_state())

    def park(self) -> None:
        """Leave the arm where it is: the plan ended with it drawn back up, clear of the table."""

    def render(self) -> np.ndarray:
        """A frame of franky-sim's world (a real robot has no camera here yet)."""
        if self.arm.env is None:
            raise LyraError("the fr3 backend renders franky-sim only: this robot has no camera")
        return super().render()

    def close(self) -> None:
        """Close the renderer, the connection and franky-sim."""
        self.close_renderer()
        self._close_connection()

    def _close_connection(self) -> None:
        self._arm = None  # franky closes its connections as the objects go
        if self._sim is not None:
            self._sim.close()
            self._sim = None


class ScenePerception:
    """What perception sees of the cubes, with the scene's kinds and its zones.

    A zone is a mark on the table that no motion moves, so it is where the scene says; a
    cube is of the kind the scene calls it (a tabletop scene's are blocks), which perception,
    seeing only its shape, cannot tell.
    """

    def __init__(self, perception: Perception, scene: FR3Scene) -> None:
        self._inner = perception
        self._kinds = {cube.name: cube.kind for cube in scene.objects}
        self._zones = {
            zone.name: ObjectState(
                zone.name,
                "zone",
                zone.color,
                Pose(
                    Point(*zone.position, ZONE_THICKNESS / 2),
                    quat_from_yaw(math.radians(zone.yaw_deg)),
                ),
                Size(*zone.size, ZONE_THICKNESS),
            )
            for zone in scene.zones
        }

    def objects(self) -> dict[str, ObjectState]:
        """The cubes perception sees, and the zones."""
        states = {
            name: dataclasses.replace(state, kind=self._kinds.get(name, state.kind))
            for name, state in self._inner.objects().items()
        }
        return {**states, **self._zones}

    def placed(self, name: str, pose: Pose) -> None:
        """Tell perception where the arm put a cube."""
        self._inner.placed(name, pose)
