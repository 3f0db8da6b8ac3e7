"""What lyra's MuJoCo backends (MetaWorld, the Kitchen, franky-sim's FR3) share: boxes, frames.

Both keep their world in a MuJoCo model: an object is bounded by the geoms of a body and the
bodies below it, its joints are read from the model's data, a regression snapshot is each
object's pose and each joint's value, and a frame is rendered offscreen from a free camera,
from the simulator's own thread.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Protocol

import numpy as np

from lyra.backend import Snapshot
from lyra.embodiment import Embodiment, ObjectState
from lyra.errors import LyraError, MotionError, UnknownObjectError, UnsupportedPrimitiveError
from lyra.geometry import Point, Pose, Size

JOINT_PREFIX = "joint:"
SPREAD_FACTOR = 2.0


def dot3(a: np.ndarray, b: np.ndarray) -> float:
    """The dot product of two 3-vectors as fused multiply-adds, the same on every CPU.

    numpy hands a dot (and a norm) to the BLAS kernel it picked for the CPU, and the kernels
    round differently in the last bit: a chain of fused multiply-adds with AVX-512, separate
    multiplies and adds without. An arm that steers by them follows a different path through a
    contact on another CPU. This is that chain, each step rounded once, exactly, so that the
    arm's path does not depend on the CPU.
    """
    total = float(a[0]) * float(b[0])
    for x, y in ((a[1], b[1]), (a[2], b[2])):
        total = _fma(float(x), float(y), total)
    return total


def norm3(v: np.ndarray) -> float:
    """The length of a 3-vector, as ``dot3`` rounds it."""
    return math.sqrt(dot3(v, v))


def _fma(x: float, y: float, z: float) -> float:
    """The product of x and y plus z, rounded once (exact integers; Python 3.11 has no fma)."""
    xn, xd = x.as_integer_ratio()
    yn, yd = y.as_integer_ratio()
    zn, zd = z.as_integer_ratio()
    return (xn * yn * zd + zn * xd * yd) / (xd * yd * zd)


def rotation_error(target: np.ndarray, current: np.ndarray) -> np.ndarray:
    """The rotation vector that turns ``current`` into ``target`` (both 3x3, world frame)."""
    # Imported here: each backend sets MUJOCO_GL before it imports mujoco, after this module.
    import mujoco

    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, (target @ current.T).flatten())
    velocity = np.zeros(3)
    mujoco.mju_quat2Vel(velocity, quat, 1.0)
    return velocity


def subtree_box(
    model: Any, data: Any, root: int, keep: Callable[[int], bool] = lambda geom: True
) -> tuple[np.ndarray, np.ndarray]:
    """The world-aligned box around the geoms of a body and the bodies below it.

    Args:
        model: the MuJoCo model.
        data: its data, after a forward pass.
        root: the body's id.
        keep: which of those geoms count (a handle's bars, not the door they are fixed to).

    Raises:
        ValueError: no geom counts.
    """
    corners = []
    for geom in range(model.ngeom):
        body = int(model.geom_bodyid[geom])
        while body not in (root, 0):
            body = int(model.body_parentid[body])
        if body != root or not keep(geom):
            continue
        local_centre, half = model.geom_aabb[geom][:3], model.geom_aabb[geom][3:]
        rotation = data.geom_xmat[geom].reshape(3, 3)
        extent = np.abs(rotation) @ half
        middle = data.geom_xpos[geom] + rotation @ local_centre
        corners += [middle - extent, middle + extent]
    if not corners:
        raise ValueError(f"no geom of body {root} counts")
    points = np.array(corners)
    return points.min(axis=0), points.max(axis=0)


class StepBudgetError(MotionError):
    """The episode's environment steps are used up."""


class Named(Protocol):
    """A thing of a MuJoCo scene, as its backend's task tables name it."""

    @property
    def name(self) -> str:
        """What skills call it."""
        ...

    @property
    def kind(self) -> str:
        """Its kind, as ``object_names(kind=...)`` filters."""
        ...


class ArmParts:
    """The primitives that read a MuJoCo scene the same way on every backend that has one.

    A backend's arm supplies its things, where each is and its box, and its joints' ids.
    """

    env: Any
    held: str | None
    backend_name = ""

    def _things(self) -> Sequence[Named]:
        raise NotImplementedError

    def _box(self, thing: Any) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _thing(self, name: str) -> Any:
        for thing in self._things():
            if thing.name == name:
                return thing
        raise UnknownObjectError(name, [thing.name for thing in self._things()])

    def _joint(self, name: str) -> int:
        raise NotImplementedError

    def object_pose(self, name: str) -> Pose:
        """Where the backend measures the object."""
        raise NotImplementedError

    def joint_names(self) -> list[str]:
        """The articulated joints, sorted."""
        raise NotImplementedError

    def object_names(self, kind: str | None = None, color: str | None = None) -> list[str]:
        """The scene's things, sorted by name; they have no colour names."""
        return sorted(
            thing.name
            for thing in self._things()
            if (kind is None or thing.kind == kind) and color is None
        )

    def object_size(self, name: str) -> Size:
        """The extent of the object's box (world-aligned)."""
        low, high = self._box(self._thing(name))
        return Size(*(float(v) for v in high - low))

    def bounding_box(self, name: str) -> tuple[Point, Point]:
        """World-aligned lowest and highest corners of the object's geoms."""
        low, high = self._box(self._thing(name))
        return Point.of(low), Point.of(high)

    def joint_value(self, name: str) -> float:
        """A joint's value: radians for hinges, metres for slides."""
        joint = self._joint(name)
        return float(self.env.data.qpos[self.env.model.jnt_qposadr[joint]])

    def joint_axis(self, name: str) -> tuple[Point, Point]:
        """A point on a joint's axis (its anchor) and the axis's direction, in the world."""
        joint = self._joint(name)
        data = self.env.data
        return Point.of(data.xanchor[joint]), Point.of(data.xaxis[joint])

    def joints(self) -> dict[str, float]:
        """Every joint's value, by name."""
        return {name: self.joint_value(name) for name in self.joint_names()}

    def held_object(self) -> str | None:
        """What the gripper closed on with ``pick`` or ``grasp``, if it still holds it."""
        return self.held

    def world_state(self) -> dict[str, ObjectState]:
        """Every object's state: kind, pose and the size of its box."""
        return {
            thing.name: ObjectState(
                thing.name,
                thing.kind,
                "",
                self.object_pose(thing.name),
                self.object_size(thing.name),
            )
            for thing in self._things()
        }

    def put_first_on_second(self, obj: str, target: str | Pose, yaw: float | None) -> None:
        """Not a primitive here (the backend's spec leaves it out, so the facade refuses first)."""
        from lyra.backend import backends_with

        raise UnsupportedPrimitiveError(
            "put_first_on_second", self.backend_name, backends_with("put_first_on_second")
        )


class MujocoWorld(Embodiment, Protocol):
    """What :class:`MujocoBackend` needs of its arm, beside the primitives.

    ``env`` is what renders: anything with the MuJoCo ``model`` and ``data`` of the world.
    """

    env: Any

    @property
    def sim_time(self) -> float:
        """Simulated seconds since the last reset."""
        ...

    def joints(self) -> dict[str, float]:
        """Every joint's value, by name."""
        ...

    def hold(self, seconds: float) -> None:
        """Simulate ``seconds`` with the arm held where it is."""
        ...

    def stop(self) -> None:
        """Make the running motion fail at its next step."""
        ...

    def close(self) -> None:
        """Close the environments."""
        ...


class MujocoBackend:
    """Snapshots, comparison, the scene listing and frames of a MuJoCo backend's arm.

    A snapshot is each object's pose (x, y, z, qx, qy, qz, qw) and each joint's value; a later
    run ends "the same" when each object is within ``position_tolerance`` and each joint within
    ``joint_tolerance`` of where it was, widened by the spread the run shows when its start is
    nudged. Subclasses set the tolerances, the camera (``view``) and ``arm``.
    """

    arm: MujocoWorld
    position_tolerance = 0.01
    joint_tolerance = 0.02
    view: ClassVar[Mapping[str, Any]] = {}
    size = (480, 640)

    def __init__(self) -> None:
        self._renderer: Any = None
        self._rendered_model: Any = None

    @property
    def embodiment(self) -> Embodiment:
        """The arm: it implements the primitives the backend has."""
        return self.arm

    @property
    def sim_time(self) -> float:
        """Simulated seconds since the last reset."""
        return self.arm.sim_time

    def settle(self) -> None:
        """Let the world come to rest for a quarter of a second."""
        self.arm.hold(0.25)

    def hold(self, seconds: float) -> None:
        """Simulate ``seconds`` with the arm held where it is."""
        self.arm.hold(seconds)

    def stop(self) -> None:
        """Preempt the running motion at its next step."""
        self.arm.stop()

    def close(self) -> None:
        """Close the renderer and the environments."""
        self.close_renderer()
        self.arm.close()

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
            tolerance = self.joint_tolerance if joint else self.position_tolerance
            allowed = tolerance + SPREAD_FACTOR * spread
            off = math.dist(values[:width], actual[name][:width])
            if off > allowed:
                if joint:
                    return (
                        f"the joint '{name[len(JOINT_PREFIX) :]}' ended at {actual[name][0]:.3f}, "
                        f"{off:.3f} from the accepted run's {values[0]:.3f} (at most {allowed:.3f})"
                    )
                # Both points, so that whoever reads it sees which way it went, not only how far.
                (x, y, z), (ax, ay, az) = actual[name][:3], values[:3]
                return (
                    f"'{name}' ended at ({x:.3f}, {y:.3f}, {z:.3f}), {off * 1000:.1f} mm from "
                    f"({ax:.3f}, {ay:.3f}, {az:.3f}), where the accepted run left it "
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
        """An RGB frame from the backend's camera (MuJoCo offscreen, EGL)."""
        import mujoco

        model, data = self.arm.env.model, self.arm.env.data
        if self._renderer is None or self._rendered_model is not model:
            self.close_renderer()
            try:
                self._renderer = mujoco.Renderer(model, *self.size)
            except Exception as error:  # the GL stack's errors have no common type
                raise LyraError(
                    f"MuJoCo cannot render here ({error}); set MUJOCO_GL to egl or osmesa, "
                    "whichever this machine's GL supports"
                ) from None
            self._rendered_model = model
        camera = mujoco.MjvCamera()
        camera.lookat[:] = self.view["lookat"]
        camera.distance, camera.azimuth = self.view["distance"], self.view["azimuth"]
        camera.elevation = self.view["elevation"]
        self._renderer.update_scene(data, camera)
        return np.asarray(self._renderer.render(), dtype=np.uint8).copy()

    def close_renderer(self) -> None:
        """Free the offscreen context (a task's model changes with the task)."""
        if self._renderer is not None:
            self._renderer.close()
        self._renderer = None
