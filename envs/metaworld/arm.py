"""The Sawyer of a MetaWorld v3 task, driven through MetaWorld's own action space.

Every motion is a sequence of ``env.step`` calls, so MetaWorld's ``info["success"]`` is seen at
every step: the arm keeps it as it was at the last step and whether it held at any step. An
action adds ``a[:3] * 1 cm`` to the mocap target that pulls the hand; steering that target toward
a waypoint moving along a straight line at most 8 mm a step, then holding it on the target, brings
the fingertip centre within 3 mm. The gripper's orientation is fixed.
"""

from __future__ import annotations

import math
import os
import threading
from typing import Any

import numpy as np

from envs.metaworld.tasks import TASKS, Task, Thing
from lyra.embodiment import ObjectState, WorkspaceBox
from lyra.errors import (
    GraspError,
    LyraError,
    MotionError,
    StoppedError,
    UnknownObjectError,
    UnreachablePoseError,
    UnsupportedPrimitiveError,
)
from lyra.geometry import Point, Pose, Size

# MuJoCo picks its GL backend at import: EGL renders offscreen on a machine with no display.
os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco  # (after MUJOCO_GL)

# The gripper points down; skills see the tabletop's "down" quaternion (x, y, z, w).
DOWN = (1.0, 0.0, 0.0, 0.0)
STEP_SPEED = 0.008  # metres a step along a line (an action moves the target at most 1 cm)
GAIN = 30.0  # action per metre of error while closing the last gap (fewest steps, measured)
REACHED = 0.003  # a motion ends when the fingertips are this close to the target
SETTLE_STEPS = 60  # steps a motion may take to close the last gap
SLACK_STEPS = 5  # steps to bring the hand's target back to a blocked hand
GRIP_STEPS = 15  # steps to close or open the fingers (measured: 12 close on a puck)
# Blocked: the fingertips lag this far behind the hand's target (in free motion at 8 mm a
# step they lag up to 27 mm, measured).
LAG = 0.05
CLEARANCE = 0.05  # above an object's top before descending onto it
MARKER = Size(0.02, 0.02, 0.02)  # the extent reported for a goal, which has none


class StepBudgetError(MotionError):
    """The episode's environment steps are used up."""


class MetaWorldArm:
    """One MetaWorld task's world, reused across seeds (building an environment costs 0.5 s)."""

    def __init__(self) -> None:
        self._envs: dict[str, Any] = {}
        self.env: Any = None
        self.task: Task | None = None
        self.grip = -1.0  # the last gripper command: -1 open, +1 closed
        self.held: str | None = None
        self.steps = 0
        self.max_steps = 500
        self.success = 0.0
        self.success_any = 0.0
        self._stop = threading.Event()

    # --- the world ---------------------------------------------------------------------

    def reset(self, task: str, seed: int, max_steps: int, perturb: int = 0) -> None:
        """Lay the task out from a seed, MetaWorld's way (its reset samples from its own rng)."""
        self.task = TASKS[task]
        self.env = self._envs.get(task) or self._build(self.task)
        self._envs[task] = self.env
        env = self.env
        # A reused environment keeps MuJoCo's warm start and contacts: clear them, so that a
        # seed lays out the same world on a fresh environment and on a reused one.
        mujoco.mj_resetData(env.model, env.data)
        env.seed(seed)
        env.reset()
        if perturb:
            self._nudge(perturb)
        self.grip, self.held, self.steps, self.max_steps = -1.0, None, 0, max_steps
        self._stop.clear()
        self.success = self._success_now()
        self.success_any = self.success

    @staticmethod
    def _build(task: Task) -> Any:
        from metaworld.env_dict import ALL_V3_ENVIRONMENTS

        env = ALL_V3_ENVIRONMENTS[task.env]()
        # Sample a layout from the env's seeded rng at each reset, as MetaWorld's own benchmarks
        # do when they make tasks; the step limit is lyra's to keep (see ``max_steps``).
        env._freeze_rand_vec = False
        env.seeded_rand_vec = True
        env._set_task_called = True
        env._partially_observable = False
        env.max_path_length = 10**9
        return env

    def _nudge(self, perturb: int) -> None:
        """Move every free body by at most a micrometre, and the hand's target with them."""
        rng = np.random.default_rng(perturb)
        model, data = self.env.model, self.env.data
        for joint in range(model.njnt):
            if model.jnt_type[joint] == mujoco.mjtJoint.mjJNT_FREE:
                address = model.jnt_qposadr[joint]
                data.qpos[address : address + 3] += rng.uniform(-1e-6, 1e-6, 3)
        data.mocap_pos[0] += rng.uniform(-1e-6, 1e-6, 3)
        mujoco.mj_forward(model, data)

    def _success_now(self) -> float:
        obs = self.env._get_obs()
        _, info = self.env.evaluate_state(obs, np.zeros(4))
        return float(info["success"])

    @property
    def sim_time(self) -> float:
        """Simulated seconds since the reset (a step is 12.5 ms)."""
        return self.steps * float(self.env.dt) if self.env is not None else 0.0

    def stop(self) -> None:
        """Make the next step fail: another thread preempts the running motion."""
        self._stop.set()

    def step(self, move: np.ndarray, *, budgeted: bool = True) -> None:
        """One environment step steering the hand by ``move`` (an action, clipped to +-1)."""
        if self._stop.is_set():
            raise StoppedError("the motion was stopped; nothing moves until the next reset")
        if budgeted and self.steps >= self.max_steps:
            raise StepBudgetError(
                f"the episode's {self.max_steps} environment steps are used up "
                f"({self.max_steps * float(self.env.dt):.2f} simulated seconds): "
                "take fewer or shorter motions"
            )
        action = np.append(np.clip(move, -1.0, 1.0), self.grip)
        _, _, _, _, info = self.env.step(action)
        self.steps += 1
        self.success = float(info["success"])
        self.success_any = max(self.success_any, self.success)

    def hold(self, seconds: float) -> None:
        """Step with the hand's target where it is and the gripper as it was."""
        for _ in range(round(seconds / float(self.env.dt))):
            self.step(np.zeros(3), budgeted=False)

    def close(self) -> None:
        """Close every environment built."""
        for env in self._envs.values():
            env.close()
        self._envs.clear()
        self.env = None

    # --- reading the world ---------------------------------------------------------------

    def _thing(self, name: str) -> Thing:
        assert self.task is not None, "reset the arm before using it"
        for thing in self.task.things:
            if thing.name == name:
                return thing
        raise UnknownObjectError(name, [thing.name for thing in self.task.things])

    def _position(self, thing: Thing) -> np.ndarray:
        env = self.env
        if thing.where == "goal":
            return np.asarray(env._target_pos, dtype=float).copy()
        if thing.where.startswith("site:"):
            return np.asarray(env.data.site(thing.where[5:]).xpos, dtype=float).copy()
        return np.asarray(env._get_pos_objects()[:3], dtype=float).copy()

    def _orientation(self, thing: Thing) -> tuple[float, float, float, float]:
        if thing.body is None:
            return (0.0, 0.0, 0.0, 1.0)
        w, x, y, z = (float(v) for v in self.env.data.body(thing.body).xquat)
        return (x, y, z, w)

    def _box(self, thing: Thing) -> tuple[np.ndarray, np.ndarray]:
        """The world-aligned box around the geoms of the thing's body and the bodies below it."""
        centre = self._position(thing)
        if thing.body is None:
            half = np.array([MARKER.x, MARKER.y, MARKER.z]) / 2
            return centre - half, centre + half
        model, data = self.env.model, self.env.data
        root = model.body(thing.body).id
        corners = []
        for geom in range(model.ngeom):
            body = int(model.geom_bodyid[geom])
            while body not in (root, 0):
                body = int(model.body_parentid[body])
            if body != root:
                continue
            local_centre, half = model.geom_aabb[geom][:3], model.geom_aabb[geom][3:]
            rotation = data.geom_xmat[geom].reshape(3, 3)
            extent = np.abs(rotation) @ half
            middle = data.geom_xpos[geom] + rotation @ local_centre
            corners += [middle - extent, middle + extent]
        points = np.array(corners)
        # The measured point (a handle's grip) lies in its box even where geoms are meshes.
        return np.minimum(points.min(axis=0), centre), np.maximum(points.max(axis=0), centre)

    def object_names(self, kind: str | None = None, color: str | None = None) -> list[str]:
        """The task's objects, sorted by name; MetaWorld's objects have no colour names."""
        assert self.task is not None, "reset the arm before using it"
        return sorted(
            thing.name
            for thing in self.task.things
            if (kind is None or thing.kind == kind) and color is None
        )

    def object_pose(self, name: str) -> Pose:
        """Where MetaWorld measures the object (a handle's grip point, a puck's centre)."""
        thing = self._thing(name)
        return Pose(Point.of(self._position(thing)), self._orientation(thing))

    def object_size(self, name: str) -> Size:
        """The extent of the object's box (world-aligned: MetaWorld's parts barely turn)."""
        low, high = self._box(self._thing(name))
        return Size(*(float(v) for v in high - low))

    def bounding_box(self, name: str) -> tuple[Point, Point]:
        """World-aligned lowest and highest corners of the object's geoms."""
        low, high = self._box(self._thing(name))
        return Point.of(low), Point.of(high)

    def joint_names(self) -> list[str]:
        """The articulated joints of the task, sorted."""
        assert self.task is not None, "reset the arm before using it"
        return sorted(self.task.joints)

    def joint_value(self, name: str) -> float:
        """A joint's value: radians for hinges, metres for slides."""
        assert self.task is not None, "reset the arm before using it"
        if name not in self.task.joints:
            raise LyraError(
                f"unknown joint '{name}'. Known joints: "
                f"{', '.join(sorted(self.task.joints)) or '(none)'}"
            )
        source, model = self.task.joints[name], self.env.model
        if source.startswith("body:"):
            joint = int(model.body_jntadr[model.body(source[5:]).id])
        else:
            joint = model.joint(source).id
        return float(self.env.data.qpos[model.jnt_qposadr[joint]])

    def ee_pose(self) -> Pose:
        """The fingertips' centre, gripper pointing down."""
        return Pose(Point.of(self.env.tcp_center), DOWN)

    def held_object(self) -> str | None:
        """What the gripper closed on with ``pick`` or ``grasp``, if it still holds it."""
        return self.held

    def workspace(self) -> WorkspaceBox:
        """The box the fingertips reach: MetaWorld's hand box, shifted by the fingers' length."""
        offset = np.asarray(self.env.tcp_center) - np.asarray(self.env.data.mocap_pos[0])
        low = np.asarray(self.env.mocap_low) + offset
        high = np.asarray(self.env.mocap_high) + offset
        return WorkspaceBox(Point.of(low), Point.of(high), 0.0)

    def world_state(self) -> dict[str, ObjectState]:
        """Every object's state: kind, pose and the size of its box."""
        assert self.task is not None, "reset the arm before using it"
        return {
            thing.name: ObjectState(
                thing.name,
                thing.kind,
                "",
                self.object_pose(thing.name),
                self.object_size(thing.name),
            )
            for thing in self.task.things
        }

    def joints(self) -> dict[str, float]:
        """Every joint's value, by name."""
        return {name: self.joint_value(name) for name in self.joint_names()}

    # --- moving ----------------------------------------------------------------------------

    def _tcp(self) -> np.ndarray:
        return np.asarray(self.env.tcp_center, dtype=float).copy()

    def _check_reach(self, target: np.ndarray) -> None:
        box = self.workspace()
        low, high = box.low.as_array(), box.high.as_array()
        for axis, name in enumerate("xyz"):
            if not low[axis] - 1e-9 <= target[axis] <= high[axis] + 1e-9:
                raise UnreachablePoseError(
                    f"({target[0]:.3f}, {target[1]:.3f}, {target[2]:.3f})",
                    f"{name} must lie in [{low[axis]:.3f}, {high[axis]:.3f}], the box the "
                    "fingertips reach",
                )

    def _mocap(self) -> np.ndarray:
        return np.asarray(self.env.data.mocap_pos[0], dtype=float).copy()

    def _toward(self, mocap: np.ndarray) -> None:
        """One step moving the hand's target toward a point (at most 1 cm a step)."""
        self.step((mocap - self._mocap()) / float(self.env.action_scale))

    def _line(self, target: np.ndarray) -> float:
        """Steer the fingertips along a straight line to a target; the distance left at the end.

        The hand's target leads the fingertips by the offset it had at rest; when the fingers
        fall ``LAG`` behind that (something blocks them), the target comes back to them and the
        motion ends where they are.
        """
        start = self._tcp()
        offset = self._mocap() - start
        count = max(1, math.ceil(float(np.linalg.norm(target - start)) / STEP_SPEED))
        for i in range(1, count + 1):
            self._toward(start + (target - start) * (i / count) + offset)
            if np.linalg.norm(self._mocap() - self._tcp() - offset) > LAG:
                for _ in range(SLACK_STEPS):
                    self._toward(self._tcp() + offset)
                return float(np.linalg.norm(target - self._tcp()))
        for _ in range(SETTLE_STEPS):
            error = target - self._tcp()
            if np.linalg.norm(error) < REACHED:
                break
            self.step(GAIN * error)
        return float(np.linalg.norm(target - self._tcp()))

    def move_ee(self, pose: Pose) -> None:
        """Move the fingertips in a straight line to a pose (the gripper keeps pointing down)."""
        target = pose.position.as_array()
        self._check_reach(target)
        if abs(math.remainder(pose.yaw - self.ee_pose().yaw, 2 * math.pi)) > math.radians(1):
            raise UnreachablePoseError(
                "that yaw", "the gripper's orientation is fixed on MetaWorld: give a Point"
            )
        left = self._line(target)
        if left > 0.01:
            raise MotionError(
                f"the gripper stopped {left * 1000:.0f} mm short of "
                f"({target[0]:.3f}, {target[1]:.3f}, {target[2]:.3f}): something is in the way"
            )

    def _fingers(self, command: float) -> None:
        self.grip = command
        for _ in range(GRIP_STEPS):
            self.step(np.zeros(3))

    def _approach(self, thing: Thing) -> np.ndarray:
        """Open, go above the thing, descend onto its measured point: that point."""
        point = self._position(thing)
        top = float(self._box(thing)[1][2])
        self._fingers(-1.0)
        here = self._tcp()
        above = max(top + CLEARANCE, float(here[2]))
        box = self.workspace()
        for target in (np.array([here[0], here[1], above]), np.array([*point[:2], above]), point):
            reachable = np.clip(target, box.low.as_array(), box.high.as_array())
            self.move_ee(Pose(Point.of(reachable), DOWN))
        return point

    def grasp(self, name: str) -> None:
        """Close the gripper on an object where it is, coming from above; nothing is lifted."""
        thing = self._thing(name)
        if self.held is not None:
            raise GraspError(f"the gripper already holds '{self.held}': release it first")
        if thing.kind == "goal":
            raise GraspError(f"'{name}' is a marker, not a thing to hold")
        self._approach(thing)
        self._fingers(1.0)
        self.held = name

    def release(self) -> None:
        """Open the gripper and draw the fingertips up 5 cm, or as far as they go."""
        self._fingers(-1.0)
        self.held = None
        self.push(Point(0.0, 0.0, 1.0), CLEARANCE)

    def pick(self, name: str) -> None:
        """Grasp a free object and lift it 10 cm; a grasp that slips raises GraspError."""
        thing = self._thing(name)
        if not thing.movable:
            raise GraspError(
                f"'{name}' is a {thing.kind}, fixed to its part: use grasp() and push() to move it"
            )
        start = self._position(thing)
        self.grasp(name)
        self.move_ee(Pose(Point.of(self._tcp() + np.array([0.0, 0.0, 0.1])), DOWN))
        if self._position(thing)[2] < start[2] + 0.05:
            self._fingers(-1.0)
            self.held = None
            raise GraspError(f"the grasp on '{name}' slipped: it did not rise with the gripper")

    def place(self, pose: Pose) -> None:
        """Carry the held object so its measured point reaches the pose, open, retreat upwards."""
        if self.held is None:
            raise GraspError("the gripper holds nothing: pick something first")
        thing = self._thing(self.held)
        offset = self._tcp() - self._position(thing)
        target = pose.position.as_array() + offset
        above = np.array([target[0], target[1], max(target[2], float(self._tcp()[2]))])
        self.move_ee(Pose(Point.of(above), DOWN))
        self.move_ee(Pose(Point.of(target), DOWN))
        self.release()

    def put_first_on_second(self, obj: str, target: str | Pose, yaw: float | None) -> None:
        """Not a MetaWorld primitive (its spec leaves it out, so the facade refuses it first)."""
        from lyra.backend import backends_with

        raise UnsupportedPrimitiveError(
            "put_first_on_second", "metaworld", backends_with("put_first_on_second")
        )

    def push(self, direction: Point, distance: float) -> float:
        """Move the fingertips along a direction up to a distance; how far they got along it."""
        vector = direction.as_array()
        norm = float(np.linalg.norm(vector))
        if norm < 1e-9 or distance < 0:
            raise LyraError("push needs a non-zero direction and a distance of 0 or more")
        unit = vector / norm
        start = self._tcp()
        box = self.workspace()
        target = np.clip(start + unit * distance, box.low.as_array(), box.high.as_array())
        self._line(target)
        return float(np.dot(self._tcp() - start, unit))
