"""The Ravens-style tabletop: a Panda with a suction tool over a table of boxes, in pybullet.

Frame: the robot base is the origin, x points away from the robot, y to its left, the table top
is z = 0. The tool point is the tip of the closed fingers, which act as a suction cup: picking
descends until the tip touches the object and then holds it with a fixed constraint; placing
descends until the held object rests on something (or reaches the target) and releases it.
Every motion is simulated: the arm follows straight Cartesian lines under joint position control
and objects move only through contact or the suction constraint.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pybullet_data

from envs.ravens._pybullet import BulletClient, pybullet, quiet_c_output
from envs.ravens.predicates import on_top
from envs.ravens.scene import COLORS, PlacedObject, SceneSpec, layout
from lyra.embodiment import ObjectState, WorkspaceBox
from lyra.errors import (
    GraspError,
    MotionError,
    StoppedError,
    UnknownObjectError,
    UnreachablePoseError,
)
from lyra.geometry import Point, Pose, Size, aligned_box, quat_to_matrix, wrap_angle

ARM_JOINTS = tuple(range(7))
FINGER_JOINTS = (9, 10)
TOOL_LINK = 11  # panda_grasptarget
GRIPPER_LINKS = (8, 9, 10, 11)
# The closed fingertips reach this far beyond panda_grasptarget along the tool axis (measured).
TIP_OFFSET = 0.0113
# Boxes around the hand and the closed fingers in the tool frame, measured at HOME_Q:
# (half extent across, half extent along the finger axis, lowest point above the tip).
HAND_BOX = (0.036, 0.108, 0.046)
FINGER_BOX = (0.015, 0.031, 0.0)
HOME_Q = (0.0, -0.4, 0.0, -2.2, 0.0, 1.8, math.pi / 4)
JOINT_FORCES = (87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0)
# The tool-link yaw at HOME_Q; boxes look the same turned by 180 degrees, so the tool takes
# whichever of the two equivalent yaws is nearer this one and the wrist stays inside its limits.
HOME_TOOL_YAW = 0.0
# The inverse kinematics' damping of its step, and the one that only keeps J J^T invertible.
_DAMPING = 1e-4 * np.eye(6)
_SINGULAR = 1e-9 * np.eye(6)


@dataclass(frozen=True)
class TabletopConfig:
    """Physics and motion settings; the defaults hold a 12-block tower and stay fast."""

    time_step: float = 1.0 / 240.0
    # 150 solver iterations keep a 12-block tower standing (50, pybullet's default, does not).
    solver_iterations: int = 150
    # While the arm crosses above everything (see Tabletop._transit): pybullet's default.
    transit_solver_iterations: int = 50
    # Bullet widens every bounding box by this much and wakes, as one island, whatever has
    # overlapping boxes. At its default 2 cm the moving arm kept every structure within a few
    # centimetres awake, which was two thirds of a house's stepping time; at 1 mm only what it
    # nearly touches wakes. Contact points are reported up to this distance too.
    contact_threshold: float = 0.001
    transit_speed: float = 1.2
    # Lifting a picked object clear of its neighbours, a little slower than a transit (at
    # 0.5 m/s that lift was a ninth of a pick-and-place's steps).
    approach_speed: float = 1.0
    contact_speed: float = 0.25
    turn_speed: float = 3.0
    clearance: float = 0.03
    min_transit_height: float = 0.12
    settle_max_steps: int = 240
    box_low: tuple[float, float, float] = (0.15, -0.45, 0.0)
    box_high: tuple[float, float, float] = (0.8, 0.45, 0.6)
    ik_tolerance: float = 0.003


@dataclass
class _Body:
    uid: int
    placed: PlacedObject


@dataclass
class _Grasp:
    name: str
    constraint: int
    # The object's pose in the tool-link frame at the moment it was grasped.
    offset_pos: tuple[float, float, float]
    offset_orn: tuple[float, float, float, float]


def connect() -> BulletClient:
    """Return a new headless pybullet client with pybullet_data on its search path."""
    # Connecting prints from C too.
    with quiet_c_output():
        client = BulletClient(connection_mode=pybullet.DIRECT)
    client.setAdditionalSearchPath(pybullet_data.getDataPath())
    return client


def _tip_offset(orientation: tuple[float, ...]) -> np.ndarray:
    """From the tool link to the fingertips, in the world frame, for a tool orientation."""
    return quat_to_matrix(orientation) @ np.array([0, 0, TIP_OFFSET])  # type: ignore[arg-type]


def _tool_orientation(yaw: float) -> tuple[float, float, float, float]:
    """The tool-link orientation pointing straight down, turned by ``yaw``."""
    return tuple(pybullet.getQuaternionFromEuler((math.pi, 0.0, yaw)))


class _Kinematics:
    """Inverse kinematics on a kinematics-only copy of the arm, so the simulated arm is untouched.

    Damped least squares on the full tool pose, with a null-space pull towards the home posture:
    pybullet's own IK stops millimetres short of the target, and an arm left to drift in its
    null space ends up in postures from which later targets are out of reach.
    """

    def __init__(self) -> None:
        self.client = connect()
        self.robot = self.client.loadURDF("franka_panda/panda.urdf", useFixedBase=True)
        info = [self.client.getJointInfo(self.robot, j) for j in ARM_JOINTS]
        self.lower = np.array([i[8] for i in info])
        self.upper = np.array([i[9] for i in info])
        self.home = np.array(HOME_Q)
        position, rotation = self.forward(self.home)
        self.home_tip = Point.of(position + rotation @ np.array([0, 0, TIP_OFFSET]))

    def forward(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return the tool link's position and rotation matrix at joint angles ``q``."""
        # One call for the seven joints: seven calls were a third of an IK iteration.
        self.client.resetJointStatesMultiDof(self.robot, ARM_JOINTS, [[float(v)] for v in q])
        state = self.client.getLinkState(self.robot, TOOL_LINK, computeForwardKinematics=True)
        return np.asarray(state[4]), quat_to_matrix(state[5])

    def solve(
        self, seed: np.ndarray, position: np.ndarray, orientation: tuple[float, float, float, float]
    ) -> tuple[np.ndarray, float]:
        """Return arm joint angles placing the tool link at a pose, and the remaining error (m)."""
        target_rotation = quat_to_matrix(orientation)
        q = np.clip(np.asarray(seed, dtype=float), self.lower, self.upper)
        position_error = math.inf
        for _ in range(100):
            reached, rotation = self.forward(q)
            delta = position - reached
            turn = target_rotation @ rotation.T
            rotation_error = 0.5 * np.array(
                [turn[2, 1] - turn[1, 2], turn[0, 2] - turn[2, 0], turn[1, 0] - turn[0, 1]]
            )
            position_error = float(np.linalg.norm(delta))
            if position_error < 1e-5 and np.linalg.norm(rotation_error) < 1e-4:
                break
            linear, angular = self.client.calculateJacobian(
                self.robot, TOOL_LINK, [0, 0, 0], [*q.tolist(), 0.0, 0.0], [0.0] * 9, [0.0] * 9
            )
            jacobian = np.vstack([np.asarray(linear)[:, :7], np.asarray(angular)[:, :7]])
            error = np.concatenate([delta, rotation_error])
            gram = jacobian @ jacobian.T
            pull = 0.1 * (self.home - q)
            # The step J^T (J J^T + 1e-4)^-1 e plus the pull towards home projected on the null
            # space, (I - J^T (J J^T)^-1 J) pull, with no SVD for a pseudo-inverse: both 6x6
            # systems in one call, and the projection applied to the pull rather than formed as
            # a 7x7 matrix (two calls and the matrix were a fifth of a solve's time). The tiny
            # damping keeps an exactly singular posture from raising.
            solved = np.linalg.solve(
                np.stack([gram + _DAMPING, gram + _SINGULAR]),
                np.stack([error, jacobian @ pull])[:, :, None],
            )
            step = jacobian.T @ (solved[0, :, 0] - solved[1, :, 0])
            q = np.clip(q + step + pull, self.lower, self.upper)
        return q, position_error

    def close(self) -> None:
        """Disconnect the kinematics client."""
        self.client.disconnect()


class Tabletop:
    """A Panda with a suction tool on a table, implementing :class:`lyra.Embodiment`."""

    def __init__(self, config: TabletopConfig | None = None) -> None:
        self.config = config or TabletopConfig()
        self.sim = connect()
        self.kinematics = _Kinematics()
        self.bodies: dict[str, _Body] = {}
        self.robot = -1
        self.grasp: _Grasp | None = None
        self.steps = 0
        # Set from another thread by stop(); read before every physics step.
        self._stopped = False

    # -- scene -----------------------------------------------------------------------------

    def reset(self, scene: SceneSpec, seed: int, perturb: int = 0) -> None:
        """Rebuild the world from scratch: the same scene and seed give the same world.

        Args:
            scene: what to lay out.
            seed: the layout seed.
            perturb: 0 for the scene as laid out; k > 0 moves every object's start by at most
                a micrometre, in directions drawn from k, to show how far a chaotic contact
                simulation spreads (what another CPU's rounding would do).
        """
        sim = self.sim
        sim.resetSimulation()
        sim.setGravity(0, 0, -9.81)
        sim.setPhysicsEngineParameter(
            fixedTimeStep=self.config.time_step,
            numSolverIterations=self.config.solver_iterations,
            contactBreakingThreshold=self.config.contact_threshold,
            deterministicOverlappingPairs=1,
        )
        table_shape = sim.createCollisionShape(pybullet.GEOM_BOX, halfExtents=[0.75, 0.7, 0.02])
        table_look = sim.createVisualShape(
            pybullet.GEOM_BOX, halfExtents=[0.75, 0.7, 0.02], rgbaColor=[0.82, 0.78, 0.72, 1]
        )
        self.table = sim.createMultiBody(0, table_shape, table_look, [0.45, 0, -0.02])
        sim.changeDynamics(self.table, -1, lateralFriction=0.8)
        self.robot = sim.loadURDF("franka_panda/panda.urdf", [0, 0, 0], useFixedBase=True)
        for joint, value in zip(ARM_JOINTS, HOME_Q, strict=True):
            sim.resetJointState(self.robot, joint, value)
        for joint in FINGER_JOINTS:
            sim.resetJointState(self.robot, joint, 0.0)
            sim.setJointMotorControl2(self.robot, joint, pybullet.POSITION_CONTROL, 0.0, force=40)
        self._command(np.array(HOME_Q))
        self.bodies = {}
        self.grasp = None
        self._touch_allowed: set[int] = set()
        self.steps = 0
        self._stopped = False
        shapes: dict[tuple[str, tuple[float, float, float], str], tuple[int, int]] = {}
        nudge = np.random.default_rng([seed, perturb]) if perturb else None
        for placed in layout(scene, seed):
            if nudge is not None:
                dx, dy = nudge.uniform(-1e-6, 1e-6, 2)
                placed = placed.model_copy(update={"x": placed.x + dx, "y": placed.y + dy})
            key = (placed.kind, placed.size, placed.color)
            if key not in shapes:
                shapes[key] = self._make_shapes(placed)
            collision, visual = shapes[key]
            uid = sim.createMultiBody(
                placed.mass,
                collision,
                visual,
                [placed.x, placed.y, placed.z],
                pybullet.getQuaternionFromEuler((0, 0, placed.yaw)),
                # A free object as a rigid body takes Bullet's rigid-body solver, about twice as
                # fast per contact as the multibody one that a link-less multibody goes through.
                useMaximalCoordinates=True,
            )
            # Objects at rest fall asleep and leave the solver until something touches them: a
            # standing tower then costs nothing, which makes stepping several times faster.
            # No rolling friction: a box resists tipping through its contact points. Bullet's
            # rolling-friction rows doubled the solver's work per iteration and kept it from
            # stopping early; without them the final hold of a house costs a quarter as much.
            sim.changeDynamics(
                uid,
                -1,
                lateralFriction=0.8,
                spinningFriction=0.001,
                restitution=0.0,
                activationState=pybullet.ACTIVATION_STATE_ENABLE_SLEEPING,
            )
            self.bodies[placed.name] = _Body(uid, placed)
        self.settle()

    def _make_shapes(self, placed: PlacedObject) -> tuple[int, int]:
        sim = self.sim
        half = [s / 2 for s in placed.size]
        rgba = [*COLORS[placed.color], 1.0]
        if placed.kind == "zone":
            # A zone is a flat marker on the table: seen, never touched.
            return -1, sim.createVisualShape(pybullet.GEOM_BOX, halfExtents=half, rgbaColor=rgba)
        if placed.kind != "bowl":
            return (
                sim.createCollisionShape(pybullet.GEOM_BOX, halfExtents=half),
                sim.createVisualShape(pybullet.GEOM_BOX, halfExtents=half, rgbaColor=rgba),
            )
        # A bowl is an open box: a floor and four walls, 5 mm thick.
        wall = 0.005
        hx, hy, hz = half
        parts = [
            ([hx, hy, wall / 2], [0, 0, -hz + wall / 2]),
            ([wall / 2, hy, hz], [hx - wall / 2, 0, 0]),
            ([wall / 2, hy, hz], [-hx + wall / 2, 0, 0]),
            ([hx, wall / 2, hz], [0, hy - wall / 2, 0]),
            ([hx, wall / 2, hz], [0, -hy + wall / 2, 0]),
        ]
        extents = [p[0] for p in parts]
        offsets = [p[1] for p in parts]
        collision = sim.createCollisionShapeArray(
            [pybullet.GEOM_BOX] * 5, halfExtents=extents, collisionFramePositions=offsets
        )
        visual = sim.createVisualShapeArray(
            [pybullet.GEOM_BOX] * 5,
            halfExtents=extents,
            visualFramePositions=offsets,
            rgbaColors=[rgba] * 5,
        )
        return collision, visual

    @property
    def sim_time(self) -> float:
        """Simulated seconds since the last reset."""
        return self.steps * self.config.time_step

    def stop(self) -> None:
        """Preempt the running motion at its next physics step; motions fail until a reset.

        Safe to call from any thread: it only sets a flag the stepping thread reads.
        """
        self._stopped = True

    def hold(self, seconds: float) -> None:
        """Let the world run for ``seconds`` of simulated time with the arm where it is.

        Every object is simulated awake throughout: asleep, a structure would stand by
        definition, and the hold would test nothing.
        """
        # Two calls: given both flags at once, a rigid body is woken but may sleep again.
        self._set_sleeping(pybullet.ACTIVATION_STATE_WAKE_UP)
        self._set_sleeping(pybullet.ACTIVATION_STATE_DISABLE_SLEEPING)
        try:
            for _ in range(round(seconds / self.config.time_step)):
                self._step()
        finally:
            self._set_sleeping(pybullet.ACTIVATION_STATE_ENABLE_SLEEPING)

    def _set_sleeping(self, state: int) -> None:
        for body in self.bodies.values():
            if body.placed.kind != "zone":
                self.sim.changeDynamics(body.uid, -1, activationState=state)

    def close(self) -> None:
        """Disconnect both physics clients (again is fine)."""
        if self.sim.isConnected():
            self.sim.disconnect()
            self.kinematics.close()

    # -- inspection ------------------------------------------------------------------------

    def _body(self, name: str) -> _Body:
        body = self.bodies.get(name)
        if body is None:
            raise UnknownObjectError(name, self.bodies)
        return body

    def object_names(self, kind: str | None = None, color: str | None = None) -> list[str]:
        """Names of the objects in the scene, optionally only those of a kind and colour."""
        return sorted(
            name
            for name, body in self.bodies.items()
            if (kind is None or body.placed.kind == kind)
            and (color is None or body.placed.color == color)
        )

    def object_pose(self, name: str) -> Pose:
        """Pose of an object's centre."""
        position, orientation = self.sim.getBasePositionAndOrientation(self._body(name).uid)
        return Pose(Point.of(position), tuple(orientation))

    def object_size(self, name: str) -> Size:
        """Extents of an object along its own axes."""
        return Size(*self._body(name).placed.size)

    def bounding_box(self, name: str) -> tuple[Point, Point]:
        """World-aligned box around an object, computed from its pose and size (no margins)."""
        return aligned_box(self.object_pose(name), self.object_size(name))

    def ee_pose(self) -> Pose:
        """Pose of the tool point (the closed fingertips), gripper pointing down."""
        state = self.sim.getLinkState(self.robot, TOOL_LINK, computeForwardKinematics=True)
        position, orientation = np.asarray(state[4]), tuple(state[5])
        tip = position + _tip_offset(orientation)
        return Pose(Point.of(tip), orientation)

    def topmost_at(self, x: float, y: float) -> str:
        """Name of the highest object whose footprint covers the point (x, y)."""
        found = [
            (self.bounding_box(name)[1].z, name)
            for name, body in self.bodies.items()
            if body.placed.kind != "zone" and self._covers(name, x, y)
        ]
        if not found:
            raise GraspError(f"no object lies at ({x:.3f}, {y:.3f}): pick where an object is")
        return max(found)[1]

    def _covers(self, name: str, x: float, y: float) -> bool:
        pose = self.object_pose(name)
        size = self.bodies[name].placed.size
        dx, dy = x - pose.position.x, y - pose.position.y
        c, s = math.cos(pose.yaw), math.sin(pose.yaw)
        return abs(c * dx + s * dy) <= size[0] / 2 and abs(-s * dx + c * dy) <= size[1] / 2

    def held_object(self) -> str | None:
        """Name of the object in the gripper, if any."""
        return self.grasp.name if self.grasp else None

    def workspace(self) -> WorkspaceBox:
        """The box the tool point may move in; the table top is z = 0."""
        return WorkspaceBox(Point(*self.config.box_low), Point(*self.config.box_high), 0.0)

    def world_state(self) -> dict[str, ObjectState]:
        """Every object's state."""
        return {
            name: ObjectState(
                name,
                body.placed.kind,
                body.placed.color,
                self.object_pose(name),
                Size(*body.placed.size),
            )
            for name, body in self.bodies.items()
        }

    # -- actions ---------------------------------------------------------------------------

    def home(self) -> None:
        """Lift clear of the scene and return to the home posture, out of the camera's way."""
        self._touch_allowed = set()
        home = self.kinematics.home_tip
        self._transit(home, HOME_TOOL_YAW)

    def move_ee(self, pose: Pose) -> None:
        """Move the tool point along a straight line to a pose; only the pose's yaw is used."""
        self._check_box(pose.position, "the end-effector target")
        self._line(pose.position, pose.yaw, self.config.transit_speed, precise=True)

    def pick(self, name: str) -> None:
        """Descend onto an object from above until the tip touches it, hold it and lift it."""
        body = self._body(name)
        if self.grasp is not None:
            raise GraspError(
                f"already holding '{self.grasp.name}': place it before picking '{name}'"
            )
        if body.placed.kind == "zone":
            raise GraspError(f"'{name}' is a zone marked on the table and cannot be picked")
        above = self._objects_on(name)
        if above:
            raise GraspError(
                f"cannot pick '{name}': {', '.join(repr(a) for a in above)} "
                f"{'lies' if len(above) == 1 else 'lie'} on top of it; move "
                f"{'it' if len(above) == 1 else 'them'} first"
            )
        self._touch_allowed = set()
        pose = self.object_pose(name)
        low, high = self.bounding_box(name)
        target = pose.position.with_z(high.z)
        self._check_box(target, f"'{name}'")
        yaw = self._grasp_yaw(name)
        self._transit(target.with_z(high.z + 0.01), yaw)
        self._touch_allowed = {body.uid}
        touched = self._line(
            target.with_z(high.z - 0.005),
            yaw,
            self.config.contact_speed,
            guard=lambda: self._robot_touches(body.uid),
            precise=True,
        )
        if not touched:
            raise MotionError(f"the tool did not reach '{name}' to pick it")
        self._attach(name)
        # At approach speed until the object's bottom is the clearance above its old top (clear
        # of neighbours as tall as it), then at transit speed up to the transit height, which a
        # tall structure raises.
        clear = min(2 * high.z - low.z + self.config.clearance, self._transit_height())
        self._line(target.with_z(clear), yaw, self.config.approach_speed)
        if self._transit_height() > clear + 1e-3:
            self._line(target.with_z(self._transit_height()), yaw, self.config.transit_speed)

    def place(self, pose: Pose) -> None:
        """Lower the held object until its centre reaches the pose or it rests on something."""
        if self.grasp is None:
            raise GraspError("nothing is held: pick an object before placing it")
        name = self.grasp.name
        self._check_box(pose.position, f"the place pose for '{name}'")
        tip, tool_yaw = self._tool_target_for(pose)
        self._check_box(tip, f"the tool target for placing '{name}'")
        uid = self.bodies[name].uid
        self._transit(tip + Point(0, 0, 0.01), tool_yaw)
        self._line(
            tip, tool_yaw, self.config.contact_speed, guard=lambda: self._resting(uid), precise=True
        )
        self._release()
        # Nothing is held and the tip only leaves the top of what it let go of, so it may rise
        # at transit speed: at approach speed this was a sixth of a tower's stepping time, with
        # the structure below awake all the while.
        self._line(self.ee_pose().position + Point(0, 0, 0.05), tool_yaw, self.config.transit_speed)
        self.settle()

    def put_first_on_second(self, obj: str, target: str | Pose, yaw: float | None) -> None:
        """Pick ``obj`` and set it down centred on ``target``, on top of whatever is there."""
        if isinstance(target, str):
            if target == obj:
                raise GraspError(f"cannot put '{obj}' on itself: name a different target")
            target_pose = self.object_pose(target)
            if self._body(target).placed.kind in ("zone", "bowl"):
                # Zones and bowls are where things go, not what they are aligned with.
                target_pose = Pose(target_pose.position)
        else:
            target_pose = target
        self._body(obj)
        # Refuse an unreachable destination before picking, not with the object in the air.
        spot = target_pose.position.with_z(self.config.box_low[2])
        self._check_box(spot, f"the destination of '{obj}'")
        if self.grasp is None or self.grasp.name != obj:
            self.pick(obj)
        final_yaw = target_pose.yaw if yaw is None else yaw
        size = np.array(self.bodies[obj].placed.size)
        x, y = target_pose.position.x, target_pose.position.y
        support = self._support_height(x, y, final_yaw, size[:2], exclude=obj)
        # Aim half a millimetre into the support: the guarded descent stops at first contact.
        centre = Point(x, y, support + size[2] / 2 - 0.0005)
        self.place(Pose(centre, pybullet.getQuaternionFromEuler((0, 0, final_yaw))))

    # -- motion ----------------------------------------------------------------------------

    def _check_box(self, point: Point, what: str) -> None:
        low, high = self.config.box_low, self.config.box_high
        for axis, value, lo, hi in zip("xyz", (point.x, point.y, point.z), low, high, strict=True):
            if value < lo - 1e-9 or value > hi + 1e-9:
                side, bound = ("lower", lo) if value < lo else ("upper", hi)
                raise UnreachablePoseError(
                    f"{what} at ({point.x:.3f}, {point.y:.3f}, {point.z:.3f})",
                    f"{axis}={value:.3f} is {abs(value - bound) * 1000:.1f} mm beyond the "
                    f"workspace's {side} {axis} bound {bound:.3f}; targets must lie in "
                    f"x [{low[0]:.2f}, {high[0]:.2f}], "
                    f"y [{low[1]:.2f}, {high[1]:.2f}], z [{low[2]:.2f}, {high[2]:.2f}]",
                )

    def _joints(self) -> np.ndarray:
        return np.array([s[0] for s in self.sim.getJointStates(self.robot, ARM_JOINTS)])

    def _command(self, q: np.ndarray) -> None:
        self.sim.setJointMotorControlArray(
            self.robot,
            ARM_JOINTS,
            pybullet.POSITION_CONTROL,
            targetPositions=q.tolist(),
            forces=JOINT_FORCES,
        )

    def _step(self) -> None:
        if self._stopped:
            self._command(self._joints())
            raise StoppedError(
                "the motion was stopped because its run was given up; reset the scene to go on"
            )
        self.sim.stepSimulation()
        self.steps += 1

    def _ik(self, seed: np.ndarray, tip: Point, yaw: float) -> np.ndarray:
        orientation = _tool_orientation(yaw)
        link = tip.as_array() - _tip_offset(orientation)
        q, error = self.kinematics.solve(seed, link, orientation)
        if error > self.config.ik_tolerance:
            raise UnreachablePoseError(
                f"the tool target ({tip.x:.3f}, {tip.y:.3f}, {tip.z:.3f})",
                f"out of the arm's reach (the closest it gets is {error * 1000:.1f} mm away); "
                "move the target closer to the robot base at (0, 0, 0)",
            )
        return q

    def _line(
        self,
        tip: Point,
        yaw: float,
        speed: float,
        guard: Callable[[], bool] | None = None,
        precise: bool = False,
    ) -> bool:
        """Drive the tool point along a straight line; see :meth:`_path`."""
        return self._path([tip], yaw, speed, guard, precise)

    def _path(
        self,
        corners: list[Point],
        yaw: float,
        speed: float,
        guard: Callable[[], bool] | None = None,
        precise: bool = False,
    ) -> bool:
        """Drive the tool point through straight segments; return True if ``guard`` stopped it.

        One minimum-jerk time law spans the whole polyline, so the arm does not stop at its
        corners. With ``precise``, the last target is held until the tool is within 0.3 mm of
        it; motions on the way to somewhere else skip that wait.
        """
        start = self.ee_pose().position
        start_yaw = self._tool_yaw()
        points = np.array([start.as_array(), *(c.as_array() for c in corners)])
        lengths = np.linalg.norm(np.diff(points, axis=0), axis=1)
        distance = float(lengths.sum())
        turn = wrap_angle(yaw - start_yaw)
        count = max(1, math.ceil(distance / 0.02), math.ceil(abs(turn) / 0.1))
        arc = np.concatenate([[0.0], np.cumsum(lengths)])
        q = self._joints()
        waypoints = [q]
        try:
            for i in range(1, count + 1):
                s = i / count
                along = s * distance
                segment = min(int(np.searchsorted(arc, along, side="right")) - 1, len(lengths) - 1)
                local = (along - arc[segment]) / lengths[segment] if lengths[segment] > 0 else 1.0
                point = points[segment] + (points[segment + 1] - points[segment]) * local
                q = self._ik(q, Point.of(point), start_yaw + turn * s)
                waypoints.append(q)
        except UnreachablePoseError:
            # An unreachable destination is reported as itself rather than as the first
            # waypoint that falls out of reach on the way. It is solved only then: solved
            # before every motion, it was one solve in seven.
            self._ik(waypoints[0], corners[-1], yaw)
            raise
        path = np.array(waypoints)
        # A minimum-jerk time law peaks at 1.875x the mean speed: size the duration so the
        # peak stays at ``speed``.
        duration = max(1.875 * distance / speed, 1.875 * abs(turn) / self.config.turn_speed, 0.02)
        steps = max(2, round(duration / self.config.time_step))
        tip = corners[-1]
        t = np.arange(1, steps + 1) / steps
        along_path = (10 * t**3 - 15 * t**4 + 6 * t**5) * count
        i = np.minimum(along_path.astype(int), count - 1)
        # Every step's joint target at once: computed one step at a time in Python, they were
        # a twentieth of a motion's time.
        for command in path[i] + (path[i + 1] - path[i]) * (along_path - i)[:, None]:
            self._command(command)
            self._step()
            self._check_collisions(tip)
            if guard is not None and guard():
                self._command(self._joints())
                return True
        for _ in range(120 if precise else 0):
            self._step()
            self._check_collisions(tip)
            if guard is not None and guard():
                self._command(self._joints())
                return True
            if self.ee_pose().position.distance_to(tip) < 3e-4:
                break
        return False

    def _tool_yaw(self) -> float:
        orientation = self.sim.getLinkState(self.robot, TOOL_LINK)[5]
        return float(pybullet.getEulerFromQuaternion(orientation)[2])

    def _transit_height(self) -> float:
        """Tool height at which the held object clears every other object by the clearance."""
        tops = [
            self.bounding_box(name)[1].z
            for name in self.bodies
            if self.grasp is None or name != self.grasp.name
        ]
        below_tip = 0.0
        if self.grasp is not None:
            below_tip = self.ee_pose().position.z - self.bounding_box(self.grasp.name)[0].z
        height = max([0.0, *tops]) + below_tip + self.config.clearance
        return min(max(height, self.config.min_transit_height), self.config.box_high[2])

    def _transit(self, tip: Point, yaw: float) -> None:
        """Rise to the transit height and cross above the target in one motion, then descend.

        The descent is a motion of its own: blended into the crossing, the arm's tracking lag
        cuts the corner and a held object clips whatever stands beside its destination.
        """
        height = max(self._transit_height(), tip.z)
        here = self.ee_pose().position
        corners = [tip.with_z(height)]
        if here.z < height - 1e-3:
            corners.insert(0, here.with_z(height))
        # Above everything, only the arm and what it holds move and the structures are asleep:
        # the iterations that stacks of contacts need would only refine the arm's motors, and
        # they made each of these steps (half of a house's) half as dear again.
        self.sim.setPhysicsEngineParameter(
            numSolverIterations=self.config.transit_solver_iterations
        )
        try:
            self._path(corners, yaw, self.config.transit_speed)
            # A minimum-jerk segment comes to rest at its end, so it may run at transit speed.
            self._line(tip, yaw, self.config.transit_speed)
        finally:
            self.sim.setPhysicsEngineParameter(numSolverIterations=self.config.solver_iterations)

    def _preferred_yaw(self, candidates: list[float]) -> float:
        """Of equivalent tool yaws, the one nearest home (ties go to the nearest current yaw).

        Staying within a quarter turn of home keeps the wrist joint far from its limits.
        """
        current = self._tool_yaw()
        return min(
            (wrap_angle(c) for c in candidates),
            key=lambda c: abs(wrap_angle(c - HOME_TOOL_YAW)) + 0.01 * abs(wrap_angle(c - current)),
        )

    def _grasp_yaw(self, name: str) -> float:
        """Tool yaw for picking an object whose hand and fingers clear every neighbour.

        Suction holds at any yaw, so when the yaw that lines the fingers up with the object
        would sweep the wide hand through a taller neighbour, another yaw is taken.
        """
        size = self._body(name).placed.size
        pose = self.object_pose(name)
        base = pose.yaw + (math.pi / 2 if size[0] >= size[1] else 0.0)
        aligned = [base + k * math.pi / 2 for k in range(4)]
        others = [base + math.radians(d) for d in np.arange(7.5, 180, 7.5)]
        top = self.bounding_box(name)[1].z
        for group in (aligned[:: 1 if abs(size[0] - size[1]) < 1e-6 else 2], aligned, others):
            clear = [y for y in group if not self._hand_hits(pose.position, top, y, name)]
            if clear:
                return self._preferred_yaw(clear)
        blockers = self._hand_hits(pose.position, top, self._preferred_yaw(aligned), name)
        raise GraspError(
            f"cannot pick '{name}': the gripper would hit {', '.join(map(repr, blockers))} "
            "beside it at any angle; move that out of the way first"
        )

    def _hand_hits(self, centre: Point, tip_z: float, yaw: float, ignore: str) -> list[str]:
        """Objects the hand or fingers would touch with the tip lowered to ``tip_z`` at ``yaw``."""
        c, s = abs(math.cos(yaw)), abs(math.sin(yaw))
        hits = []
        for other in self.bodies:
            if other == ignore or self.bodies[other].placed.kind == "zone":
                continue
            low, high = self.bounding_box(other)
            for across, along, above in (HAND_BOX, FINGER_BOX):
                # The tool's y axis is the finger axis; its x axis points across the fingers.
                half_x, half_y = c * across + s * along, s * across + c * along
                if (
                    high.z > tip_z + above + 0.002
                    and low.x < centre.x + half_x + 0.005
                    and high.x > centre.x - half_x - 0.005
                    and low.y < centre.y + half_y + 0.005
                    and high.y > centre.y - half_y - 0.005
                ):
                    hits.append(other)
                    break
        return hits

    def _tool_target_for(self, pose: Pose) -> tuple[Point, float]:
        """The tip position and tool yaw that bring the held object's centre to a pose."""
        assert self.grasp is not None
        inv_pos, inv_orn = pybullet.invertTransform(self.grasp.offset_pos, self.grasp.offset_orn)
        links = {}
        for turn in (0.0, math.pi):
            object_orn = pybullet.getQuaternionFromEuler((0, 0, pose.yaw + turn))
            link_pos, link_orn = pybullet.multiplyTransforms(
                pose.position.as_array().tolist(), object_orn, inv_pos, inv_orn
            )
            links[pybullet.getEulerFromQuaternion(link_orn)[2]] = link_pos
        tool_yaw = self._preferred_yaw(list(links))
        link_pos = min(links.items(), key=lambda item: abs(wrap_angle(item[0] - tool_yaw)))[1]
        orientation = _tool_orientation(tool_yaw)
        tip = np.asarray(link_pos) + _tip_offset(orientation)
        return Point.of(tip), float(tool_yaw)

    # -- contact and support ---------------------------------------------------------------

    def _check_collisions(self, tip: Point) -> None:
        """Stop the arm when it touches an object other than the one it is meant to touch.

        A silent knock is the worst failure a long plan can have: every later step then works on
        a scene that is not what the plan believes.
        """
        for contact in self.sim.getContactPoints(bodyA=self.robot):
            other = contact[2]
            if other in self._touch_allowed or other == self.table:
                continue
            name = next(n for n, b in self.bodies.items() if b.uid == other)
            self._command(self._joints())
            raise MotionError(
                f"the arm touched '{name}' (link {contact[3]}) on its way to "
                f"({tip.x:.3f}, {tip.y:.3f}, {tip.z:.3f}) and stopped; the arm reaches over "
                "whatever stands between its base at (0, 0, 0) and the target, so build tall "
                "stacks farther from the base than the objects still to move, or to one side"
            )

    def _robot_touches(self, uid: int) -> bool:
        return bool(self.sim.getContactPoints(self.robot, uid))

    def _resting(self, uid: int) -> bool:
        """True once the held object presses down on something below it (not on a side)."""
        for contact in self.sim.getContactPoints(uid):
            other = contact[2]
            if other == self.robot:
                continue
            # contact[7] is the normal on the other body, pointing towards the held object.
            if contact[7][2] > 0.7:
                return True
        return False

    def _objects_on(self, name: str) -> list[str]:
        # Geometry rather than contact points: bodies asleep in a stack report no contacts.
        state = self.world_state()
        return sorted(
            other
            for other, body in self.bodies.items()
            if other != name and body.placed.kind != "zone" and on_top(state, other, name)
        )

    def _support_height(
        self, x: float, y: float, yaw: float, footprint: np.ndarray, exclude: str
    ) -> float:
        """Height of the highest surface under a footprint, by casting rays straight down."""
        c, s = math.cos(yaw), math.sin(yaw)
        grid = np.linspace(-0.45, 0.45, 5)
        starts, ends = [], []
        top = self.bounding_box(exclude)[0].z - 0.002 if self.grasp else 1.0
        for u in grid:
            for v in grid:
                dx, dy = u * footprint[0], v * footprint[1]
                px, py = x + c * dx - s * dy, y + s * dx + c * dy
                starts.append([px, py, top])
                ends.append([px, py, -0.05])
        hits = self.sim.rayTestBatch(starts, ends)
        skip = {self.robot, self.bodies[exclude].uid}
        heights = [h[3][2] for h in hits if h[0] >= 0 and h[0] not in skip]
        return max([0.0, *heights])

    # -- suction ---------------------------------------------------------------------------

    def _attach(self, name: str) -> None:
        uid = self.bodies[name].uid
        link = self.sim.getLinkState(self.robot, TOOL_LINK, computeForwardKinematics=True)
        obj_pos, obj_orn = self.sim.getBasePositionAndOrientation(uid)
        inv_pos, inv_orn = pybullet.invertTransform(link[4], link[5])
        offset_pos, offset_orn = pybullet.multiplyTransforms(inv_pos, inv_orn, obj_pos, obj_orn)
        constraint = self.sim.createConstraint(
            self.robot,
            TOOL_LINK,
            uid,
            -1,
            pybullet.JOINT_FIXED,
            [0, 0, 0],
            parentFramePosition=offset_pos,
            childFramePosition=[0, 0, 0],
            parentFrameOrientation=offset_orn,
            childFrameOrientation=[0, 0, 0, 1],
        )
        self.sim.changeConstraint(constraint, maxForce=200)
        for link_index in GRIPPER_LINKS:
            self.sim.setCollisionFilterPair(self.robot, uid, link_index, -1, 0)
        self.grasp = _Grasp(name, constraint, tuple(offset_pos), tuple(offset_orn))
        self._touch_allowed = {uid}

    def _release(self) -> None:
        assert self.grasp is not None
        uid = self.bodies[self.grasp.name].uid
        self.sim.removeConstraint(self.grasp.constraint)
        # The tip still rests on the object it let go of until it has retreated.
        self._touch_allowed = {uid}
        for link_index in GRIPPER_LINKS:
            self.sim.setCollisionFilterPair(self.robot, uid, link_index, -1, 1)
        self.grasp = None

    def settle(self) -> None:
        """Step until every object is still (or the step bound is reached), then let them sleep.

        Bullet would put still objects to sleep only after two seconds; doing it as soon as they
        are still keeps a standing structure out of the solver during the next motion.
        """
        for i in range(self.config.settle_max_steps):
            self._step()
            if i % 10 == 9 and self._still():
                for body in self.bodies.values():
                    if body.placed.kind != "zone" and (
                        not self.grasp or body.placed.name != self.grasp.name
                    ):
                        self.sim.changeDynamics(
                            body.uid, -1, activationState=pybullet.ACTIVATION_STATE_SLEEP
                        )
                return

    def _still(self) -> bool:
        for body in self.bodies.values():
            if body.placed.kind == "zone":
                continue
            linear, angular = self.sim.getBaseVelocity(body.uid)
            if np.linalg.norm(linear) > 2e-3 or np.linalg.norm(angular) > 2e-2:
                return False
        return True
