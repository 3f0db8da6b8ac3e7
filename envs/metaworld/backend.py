"""MetaWorld v3 as a lyra backend: what the episode runner and the learning loop drive.

A snapshot is each object's pose (x, y, z, qx, qy, qz, qw) and each joint's value; a later run
ends "the same" when each object is within 1 cm and each joint within 0.02 (radians or metres)
of where it was, widened by the spread the run shows when its start is nudged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from envs.metaworld import SPEC
from envs.metaworld.arm import MetaWorldArm
from envs.metaworld.scene import MetaWorldScene
from lyra.backend import Snapshot
from lyra.embodiment import WorldState
from lyra.errors import LyraError

POSITION_TOLERANCE = 0.01
JOINT_TOLERANCE = 0.02
SPREAD_FACTOR = 2.0
JOINT_PREFIX = "joint:"
# A camera beside the robot, looking over the table from its right (azimuth in degrees).
VIEW = {"lookat": (0.0, 0.7, 0.1), "distance": 1.35, "azimuth": 135.0, "elevation": -30.0}
SIZE = (480, 640)


class MetaWorldBackend:
    """A :class:`~envs.metaworld.arm.MetaWorldArm` behind the lyra Backend protocol."""

    spec = SPEC

    def __init__(self) -> None:
        self.arm = MetaWorldArm()
        self._renderer: Any = None
        self._rendered_model: Any = None

    @property
    def embodiment(self) -> MetaWorldArm:
        """The arm: it implements the primitives MetaWorld has."""
        return self.arm

    @property
    def sim_time(self) -> float:
        """Simulated seconds since the last reset."""
        return self.arm.sim_time

    def reset(self, scene: Any, seed: int, perturb: int = 0) -> None:
        """Lay the task out from a seed (``perturb`` nudges free bodies by a micrometre)."""
        spec = scene if isinstance(scene, MetaWorldScene) else MetaWorldScene.model_validate(scene)
        self.arm.reset(spec.task, seed, spec.steps, perturb)

    def settle(self) -> None:
        """Let the world come to rest for a quarter of a second."""
        self.arm.hold(0.25)

    def hold(self, seconds: float) -> None:
        """Simulate ``seconds`` with the hand where it is."""
        self.arm.hold(seconds)

    def world_state(self) -> WorldState:
        """Objects, joints, and MetaWorld's success now and at any step since the reset."""
        return WorldState(
            self.arm.world_state(),
            self.arm.joints(),
            {"success": self.arm.success, "success_any": self.arm.success_any},
        )

    def snapshot(self) -> Snapshot:
        """Each object's pose and each joint's value, rounded to a micrometre (or microradian)."""
        shot: Snapshot = {
            name: [
                float(round(v, 6))
                for v in (*state.pose.position.as_array(), *state.pose.orientation)
            ]
            for name, state in sorted(self.arm.world_state().items())
        }
        for name, value in sorted(self.arm.joints().items()):
            shot[JOINT_PREFIX + name] = [float(round(value, 6))]
        return shot

    def compare(
        self, expected: Snapshot, actual: Snapshot, ensemble: Sequence[Snapshot] = ()
    ) -> str:
        """Why two snapshots differ beyond the tolerances ("" when they agree)."""
        for name, values in expected.items():
            if name not in actual:
                return f"'{name}' is missing"
            runs = [actual[name], *(s[name] for s in ensemble if name in s)]
            joint = name.startswith(JOINT_PREFIX)
            width = 1 if joint else 3
            spread = max(math.dist(a[:width], b[:width]) for a in runs for b in runs)
            allowed = (JOINT_TOLERANCE if joint else POSITION_TOLERANCE) + SPREAD_FACTOR * spread
            off = math.dist(values[:width], actual[name][:width])
            if off > allowed:
                if joint:
                    return (
                        f"the joint '{name[len(JOINT_PREFIX) :]}' ended at {actual[name][0]:.3f}, "
                        f"{off:.3f} from the accepted run's {values[0]:.3f} (at most {allowed:.3f})"
                    )
                return (
                    f"'{name}' ended {off * 1000:.1f} mm from where the accepted run left it "
                    f"(at most {allowed * 1000:.1f} mm)"
                )
        return ""

    def describe(self) -> str:
        """One line per object (name, kind, point, box size), then one per joint."""
        lines = []
        for name, state in sorted(self.arm.world_state().items()):
            p, s = state.pose.position, state.size
            lines.append(
                f"{name}: {state.kind}, at ({p.x:.3f}, {p.y:.3f}, {p.z:.3f}), "
                f"size ({s.x:.3f}, {s.y:.3f}, {s.z:.3f})"
            )
        for name, value in sorted(self.arm.joints().items()):
            lines.append(f"{name}: joint, value {value:.3f}")
        return "\n".join(lines)

    def render(self) -> np.ndarray:
        """An RGB frame from beside the robot (MuJoCo offscreen, EGL)."""
        import mujoco

        model, data = self.arm.env.model, self.arm.env.data
        if self._renderer is None or self._rendered_model is not model:
            self.close_renderer()
            try:
                self._renderer = mujoco.Renderer(model, *SIZE)
            except Exception as error:  # the GL stack's errors have no common type
                raise LyraError(
                    f"MuJoCo cannot render here ({error}); set MUJOCO_GL to egl or osmesa, "
                    "whichever this machine's GL supports"
                ) from None
            self._rendered_model = model
        camera = mujoco.MjvCamera()
        camera.lookat[:] = VIEW["lookat"]
        camera.distance, camera.azimuth = VIEW["distance"], VIEW["azimuth"]
        camera.elevation = VIEW["elevation"]
        self._renderer.update_scene(data, camera)
        return np.asarray(self._renderer.render(), dtype=np.uint8).copy()

    def close_renderer(self) -> None:
        """Free the offscreen context (a task's model changes with the task)."""
        if self._renderer is not None:
            self._renderer.close()
        self._renderer = None

    def park(self) -> None:
        """Leave the arm where the plan left it.

        MetaWorld's success is about what the robot does, some of it only while it keeps doing
        it (a button stays down while pressed, a puck stays at a goal in the air while held):
        moving the arm away would undo tasks that are done.
        """

    def stop(self) -> None:
        """Preempt the running motion at its next step."""
        self.arm.stop()

    def close(self) -> None:
        """Close the renderer and every environment."""
        self.close_renderer()
        self.arm.close()
