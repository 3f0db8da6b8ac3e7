"""The Franka arm of gymnasium-robotics' Kitchen, moved in Cartesian space on its joint actuators.

The Kitchen's action is a joint velocity: the joint targets its position servos track are the
observed (noisy) joint values plus ``2 * a * dt`` (dt = 80 ms). The arm solves inverse kinematics
for each waypoint of a straight line (damped least squares on the end-effector site's Jacobian,
on a scratch copy of the model) and commands that solution plus an integral term that takes up
the servos' sag under gravity: the fingertips end within a millimetre of the target. Every
motion is a sequence of ``env.step`` calls, and the Kitchen's task-completion rule is read at
every step.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from envs.kitchen.tasks import JOINTS, TASKS, THINGS, Thing
from envs.mujoco_arm import LIFT, PRESS_LEAD, PUSH_REACHED, MujocoArm
from envs.mujoco_parts import rotation_error, subtree_box
from lyra.embodiment import WorkspaceBox
from lyra.errors import GraspError, UnknownJointError, UnreachablePoseError
from lyra.geometry import Point, Pose

# MuJoCo picks its GL backend at import: EGL renders offscreen on a machine with no display.
os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco  # (after MUJOCO_GL)

ARM_JOINTS = 7
# The end-effector site's frame: z is where the gripper points, y the line the fingers open on.
# Pointing forward (+y) with the fingers opening left and right.
FORWARD = np.array([[0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]])
# Pointing forward with the fingers opening up and down: on a bar that runs left to right.
UPRIGHT = np.array([[-1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
TOOL_OFFSET = 0.04  # the fingertips' centre, this far beyond the end-effector site
STEP_SPEED = 0.02  # metres a step (80 ms) along a line
PULL_SPEED = 0.005  # and while the fingers hold a part of the kitchen: they hold it by friction
TURN_SPEED = 0.1  # radians a step the gripper turns by on the way to a motion's target
KNOB_SPEED = 0.02  # and when it turns where it is: a knob's damping makes a faster one slip
JOINT_SPEED = 0.08  # radians a step each joint moves by, on a motion made joint by joint
JOINT_FOLLOW = 0.15  # radians behind their targets: something holds the arm back
REACHED = 0.002  # a motion ends when the fingertips are this close to the target
SETTLE_STEPS = 12  # steps a motion may take to close the last gap
GRIP_STEPS = 6  # steps to close or open the fingers
OPEN, CLOSED = 0.04, 0.0  # the fingers' joint targets
INTEGRAL = 0.4  # share of the joints' error added to their targets, each step
MAX_BIAS = 0.15  # radians: the integral term's bound (a blocked arm must not wind it up)
FOLLOW = 0.03  # the waypoint waits while the fingertips are this far behind it
BLOCKED_STEPS = 5  # steps behind and stalled: something blocks the fingertips
STALLED = 0.003  # metres a step the fingertips move by, at most, when something holds them
TILTS = (0, 10, 20, 30)  # degrees the gripper may tilt down to take a part from the front
# How far in front of a grip point the fingers line up to take it: the first the arm reaches.
STANDOFFS = (0.08, 0.06, 0.04, 0.02)
DROP = 0.005  # metres above its target the kettle is let go
SWING_SECONDS = 0.4  # a carried kettle comes to rest in the fingers in this long
IK_TOLERANCE = 0.003  # metres: a target the solver ends further from is out of reach
DAMPING = 0.02  # of the least-squares steps, in metres: it keeps them short near singularities
# The posture the arm starts from and leans toward: the fingertips at (-0.30, 0.45, 2.05),
# pointing forward, elbow up, every joint well inside its range (found by solving for it).
READY = np.array([0.326, 0.056, 0.604, -2.658, -2.175, 0.234, -0.374])
MAX_JOINT_STEP = 0.1  # radians a joint may move in one solver iteration
POSTURE = 0.05  # share of the way back to the ready posture the spare joint moves, per iteration
# The box the fingertips may be sent into; inverse kinematics says which points in it they reach.
BOX_LOW, BOX_HIGH = np.array([-0.9, 0.05, 1.55]), np.array([0.5, 0.9, 2.85])
COUNTER_Z = 1.603  # the stove's top, where the kettle stands


@dataclass(frozen=True)
class Plan:
    """The joints' solution at a motion's target, and whether the motion goes there by joints."""

    joints: np.ndarray
    by_joints: bool


def _turn_between(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, float]:
    """The unit axis and the angle (radians) of the turn from one frame to another."""
    turn = rotation_error(end, start)
    angle = float(np.linalg.norm(turn))
    return (turn / angle if angle > 1e-9 else np.array([0.0, 0.0, 1.0])), angle


def _about(axis: np.ndarray, angle: float) -> np.ndarray:
    """The rotation matrix of a turn by ``angle`` radians about a unit axis."""
    quat = np.zeros(4)
    mujoco.mju_axisAngle2Quat(quat, axis, angle)
    matrix = np.zeros(9)
    mujoco.mju_quat2Mat(matrix, quat)
    return matrix.reshape(3, 3)


def _xyzw(matrix: np.ndarray) -> tuple[float, float, float, float]:
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, matrix.flatten())
    w, x, y, z = (float(v) for v in quat)
    return (x, y, z, w)


class KitchenArm(MujocoArm):
    """The Kitchen's world and its Franka, reused across scenes and seeds (it is one scene)."""

    backend_name = "kitchen"
    follow = FOLLOW
    blocked_steps = BLOCKED_STEPS
    settle_steps = SETTLE_STEPS
    grip_steps = GRIP_STEPS
    open_grip, closed_grip = OPEN, CLOSED
    fixed_where = "in the kitchen"

    def __init__(self) -> None:
        super().__init__()
        self.tasks: list[str] = []
        self.done_tasks: set[str] = set()
        self._ever_done: set[str] = set()
        self._orientation = FORWARD
        self._qdes = np.zeros(ARM_JOINTS)
        self._bias = np.zeros(ARM_JOINTS)
        self._scratch: Any = None
        self._site = -1
        self._limits = (np.zeros(ARM_JOINTS), np.zeros(ARM_JOINTS))

    # --- the world ---------------------------------------------------------------------

    def reset(
        self, tasks: list[str], seed: int, max_steps: int, perturb: int = 0, jitter: float = 0.0
    ) -> None:
        """Lay the Kitchen out; the seed draws the joints' reading noise and the kettle's jitter."""
        if self.env is None:
            self._build()
        env = self.env
        # The Kitchen's reset keeps the previous episode's velocities (its initial qvel is the
        # live array): clear MuJoCo's state so that a reused env starts as a fresh one does.
        mujoco.mj_resetData(env.model, env.data)
        env.reset(seed=seed)
        mujoco.mj_forward(env.model, env.data)
        if jitter:
            self._move_kettle(np.random.default_rng(seed).uniform(-jitter, jitter, 2))
        if perturb:
            self._move_kettle(np.random.default_rng(perturb).uniform(-1e-6, 1e-6, 2))
        self.tasks = list(tasks)
        self._begin(max_steps)
        self._qdes = self._q()
        self._bias = np.zeros(ARM_JOINTS)
        # The Kitchen starts its arm folded back against a shoulder limit, a posture from which
        # the solver cannot reach much of the kitchen: the arm first goes to its ready posture.
        self._by_joints(READY, budgeted=False)
        self._orientation = FORWARD
        self.steps = 0
        self.done_tasks = self._completed()
        self._ever_done = set(self.done_tasks)

    def _build(self) -> None:
        # gymnasium-robotics prints a notice about its Adroit hands' rewards on import, on
        # every run: it does not concern the Kitchen.
        with contextlib.redirect_stderr(io.StringIO()):
            from gymnasium_robotics.envs.franka_kitchen.kitchen_env import KitchenEnv

        # Every task judged at every step and none removed once done: success is lyra's to
        # read, held at the end or at some step; the step limit is lyra's to keep.
        self.env = KitchenEnv(
            tasks_to_complete=list(TASKS),
            terminate_on_tasks_completed=False,
            remove_task_when_completed=False,
        )
        self._scratch = mujoco.MjData(self.env.model)
        self._site = int(self.env.model.site("end_effector").id)
        # The Kitchen clips its joint targets to its own bounds as well as the model's (the
        # sixth joint's target never goes below 0): the solver keeps inside both.
        model, bounds = self.env.model, self.env.robot_env.robot_pos_bound[:ARM_JOINTS]
        self._limits = (
            np.maximum(model.jnt_range[:ARM_JOINTS, 0], bounds[:, 0]),
            np.minimum(model.jnt_range[:ARM_JOINTS, 1], bounds[:, 1]),
        )

    def _move_kettle(self, shift: np.ndarray) -> None:
        """Move the kettle along x and y by ``shift`` metres."""
        model, data = self.env.model, self.env.data
        address = model.jnt_qposadr[model.joint("kettle").id]
        data.qpos[address : address + 2] += shift
        mujoco.mj_forward(model, data)

    def _completed(self) -> set[str]:
        """The tasks within the Kitchen's threshold of their goals now (its own rule)."""
        env = self.env
        achieved = env._get_obs(env.robot_env._get_obs())["achieved_goal"]
        env.compute_reward(achieved, env.goal, {})
        return set(env.step_task_completions)

    @property
    def success(self) -> float:
        """1.0 when every task of the scene is done at the last step."""
        return float(all(task in self.done_tasks for task in self.tasks))

    @property
    def success_any(self) -> float:
        """1.0 when every task of the scene was done at some step since the reset."""
        return float(all(task in self._ever_done for task in self.tasks))

    def _dt(self) -> float:
        """A step is 80 ms."""
        return float(self.env.robot_env.dt)

    def _q(self) -> np.ndarray:
        return np.asarray(self.env.data.qpos[:ARM_JOINTS], dtype=float).copy()

    def step(self, *, budgeted: bool = True) -> None:
        """One environment step toward the commanded joints and fingers."""
        self._may_step(budgeted)
        robot = self.env.robot_env
        # The Kitchen adds its action to the joints' noisy reading: aim from that reading.
        observed = np.asarray(robot._last_robot_qpos, dtype=float)
        targets = np.append(self._qdes + self._bias, [self.grip, self.grip])
        action = (targets - observed[: ARM_JOINTS + 2]) / (2.0 * float(robot.dt))
        _, _, _, _, info = self.env.step(np.clip(action, -1.0, 1.0))
        self.steps += 1
        self._bias = np.clip(self._bias + INTEGRAL * (self._qdes - self._q()), -MAX_BIAS, MAX_BIAS)
        self.done_tasks = set(info["step_task_completions"])
        self._ever_done |= self.done_tasks

    def hold(self, seconds: float) -> None:
        """Step with the arm and fingers held where they were commanded."""
        for _ in range(round(seconds / self._dt())):
            self.step(budgeted=False)

    def close(self) -> None:
        """Close the environment."""
        if self.env is not None:
            self.env.close()
        self.env = None

    # --- reading the world ---------------------------------------------------------------

    def _things(self) -> tuple[Thing, ...]:
        return THINGS

    def _position(self, thing: Thing, site: str | None = None) -> np.ndarray:
        data = self.env.data
        site = site or thing.site
        if site is not None:
            return np.asarray(data.site(site).xpos, dtype=float).copy()
        return np.asarray(data.body(thing.body).xpos, dtype=float).copy()

    def _box(self, thing: Thing) -> tuple[np.ndarray, np.ndarray]:
        model, data = self.env.model, self.env.data
        root = int(model.body(thing.body).id)

        def bar(geom: int) -> bool:
            return not thing.bars or int(model.geom_type[geom]) in thing.bars

        def solid(geom: int) -> bool:
            return bar(geom) and bool(model.geom_contype[geom] or model.geom_conaffinity[geom])

        # The visual meshes overlap the parts they dress: colliding geoms bound a part, where
        # it has any (a burner's plate is only drawn).
        try:
            low, high = subtree_box(model, data, root, solid)
        except ValueError:
            low, high = subtree_box(model, data, root, bar)
        centre = self._position(thing)
        return np.minimum(low, centre), np.maximum(high, centre)

    def object_pose(self, name: str) -> Pose:
        """A handle's bar, a knob's face, the switch's tip; the kettle's and a burner's base."""
        thing = self._thing(name)
        w, x, y, z = (float(v) for v in self.env.data.body(thing.body).xquat)
        return Pose(Point.of(self._position(thing)), (x, y, z, w))

    def joint_names(self) -> list[str]:
        """The articulated joints, sorted."""
        return sorted(JOINTS)

    def _joint(self, name: str) -> int:
        if name not in JOINTS:
            raise UnknownJointError(name, JOINTS)
        return int(self.env.model.joint(JOINTS[name]).id)

    def _frame(self) -> np.ndarray:
        return np.asarray(self.env.data.site_xmat[self._site], dtype=float).reshape(3, 3).copy()

    def _tcp(self) -> np.ndarray:
        frame = self._frame()
        return (
            np.asarray(self.env.data.site_xpos[self._site], dtype=float) + TOOL_OFFSET * frame[:, 2]
        )

    def ee_pose(self) -> Pose:
        """The fingertips' centre and the gripper's orientation (z where it points)."""
        return Pose(Point.of(self._tcp()), _xyzw(self._frame()))

    def workspace(self) -> WorkspaceBox:
        """The box the fingertips may be sent into, and the stove's top."""
        return WorkspaceBox(Point.of(BOX_LOW), Point.of(BOX_HIGH), COUNTER_Z)

    # --- moving ----------------------------------------------------------------------------

    def _solve(
        self, tool: np.ndarray, frame: np.ndarray, start: np.ndarray
    ) -> tuple[np.ndarray, float]:
        """Joint values that put the fingertips at ``tool`` with the gripper in ``frame``.

        Returns:
            The solution, and how far from ``tool`` it leaves the fingertips.
        """
        model, scratch = self.env.model, self._scratch
        site_target = tool - TOOL_OFFSET * frame[:, 2]
        scratch.qpos[:] = self.env.data.qpos
        scratch.qpos[:ARM_JOINTS] = start
        low, high = self._limits
        jac_position, jac_rotation = np.zeros((3, model.nv)), np.zeros((3, model.nv))
        miss = math.inf
        for _ in range(100):
            mujoco.mj_kinematics(model, scratch)
            mujoco.mj_comPos(model, scratch)
            error = np.concatenate(
                [
                    site_target - scratch.site_xpos[self._site],
                    rotation_error(frame, scratch.site_xmat[self._site].reshape(3, 3)),
                ]
            )
            miss = float(np.linalg.norm(error[:3])) + 0.03 * float(np.linalg.norm(error[3:]))
            if miss < 1e-5:
                break
            mujoco.mj_jacSite(model, scratch, jac_position, jac_rotation, self._site)
            jacobian = np.vstack([jac_position[:, :ARM_JOINTS], jac_rotation[:, :ARM_JOINTS]])
            q = scratch.qpos[:ARM_JOINTS].copy()
            free = np.ones(ARM_JOINTS, dtype=bool)
            for _ in range(ARM_JOINTS):
                # A joint at its limit that the step would push past is held there, and the
                # others make up for it: clipping alone leaves the solver stuck at the limit.
                step = self._step(jacobian * free, error, q, free)
                over = ((q + step < low) | (q + step > high)) & free
                if not over.any():
                    break
                free &= ~over
            scratch.qpos[:ARM_JOINTS] = np.clip(q + step, low, high)
        return np.asarray(scratch.qpos[:ARM_JOINTS], dtype=float).copy(), miss

    def _step(
        self, jacobian: np.ndarray, error: np.ndarray, q: np.ndarray, free: np.ndarray
    ) -> np.ndarray:
        """One damped least-squares step toward the error, leaning toward the ready posture.

        The arm has a joint to spare: in the null space of the task it leans toward the ready
        posture, away from the joint limits a long reach would wander into.
        """
        inverse = jacobian.T @ np.linalg.inv(jacobian @ jacobian.T + DAMPING**2 * np.eye(6))
        spare = (np.eye(ARM_JOINTS) - inverse @ jacobian) @ (POSTURE * (READY - q))
        step: np.ndarray = (inverse @ error + spare) * free
        # Small steps: a long one near a singularity flips the wrist.
        largest = float(np.abs(step).max())
        return step * (MAX_JOINT_STEP / largest) if largest > MAX_JOINT_STEP else step

    def _plan(self, target: np.ndarray, frame: np.ndarray) -> Plan | None:
        """How the joints get the fingertips to the target from here; None: no way found.

        Solved along the line first, as the motion will go (each waypoint from the last); where
        that folds the arm against its limits, solved from the ready posture instead,
        and the motion then goes there joint by joint (a curved path, not a line).
        """
        start, start_frame = self._tcp(), self._orientation
        axis, angle = _turn_between(start_frame, frame)
        parts = max(
            1, math.ceil(float(np.linalg.norm(target - start)) / 0.05), math.ceil(angle / 0.3)
        )
        q, miss = self._qdes, 0.0
        for part in range(1, parts + 1):
            share = part / parts
            q, miss = self._solve(
                start + (target - start) * share, _about(axis, angle * share) @ start_frame, q
            )
        if miss <= IK_TOLERANCE:
            return Plan(q, by_joints=False)
        q, miss = self._solve(target, frame, READY)
        return Plan(q, by_joints=True) if miss <= IK_TOLERANCE else None

    def _check_reach(self, target: np.ndarray, frame: np.ndarray) -> Plan:
        """The joints that put the fingertips at the target; UnreachablePoseError if none."""
        self._check_box(target)
        goal = self._plan(target, frame)
        if goal is None:
            raise UnreachablePoseError(
                f"({target[0]:.3f}, {target[1]:.3f}, {target[2]:.3f})",
                "the arm cannot reach it with the gripper pointing that way",
            )
        return goal

    def _line(
        self,
        target: np.ndarray,
        frame: np.ndarray | None = None,
        reached: float = REACHED,
        plan: Plan | None = None,
        turn_speed: float = TURN_SPEED,
        speed: float = STEP_SPEED,
    ) -> float:
        """Steer the fingertips along a straight line to a target; the distance left at the end.

        The gripper turns to ``frame`` (None: as it is) on the way; ``plan`` is the joints'
        solution at the target (:meth:`_plan`'s). The waypoint waits while the fingertips are
        ``FOLLOW`` behind it; when they stay behind ``BLOCKED_STEPS`` steps, something blocks
        them, and the motion ends where they are, pressing on ``PRESS_LEAD``.
        """
        frame = self._orientation if frame is None else frame
        if plan is None:
            plan = self._plan(target, frame)
        if plan is not None and plan.by_joints:
            self._by_joints(plan.joints)
            self._orientation = frame
            return float(np.linalg.norm(target - self._tcp()))
        start, start_frame = self._tcp(), self._orientation
        axis, angle = _turn_between(start_frame, frame)
        count = max(
            1,
            math.ceil(float(np.linalg.norm(target - start)) / speed),
            math.ceil(angle / turn_speed),
        )

        def press() -> None:
            direction = target - start
            norm = float(np.linalg.norm(direction))
            lead = PRESS_LEAD * direction / norm if norm > 1e-9 else np.zeros(3)
            self._qdes, _ = self._solve(self._tcp() + lead, self._orientation, self._q())
            self.step()

        def advance(previous: np.ndarray, waypoint: np.ndarray, share: float) -> None:
            self._orientation = _about(axis, angle * share) @ start_frame
            self._qdes, _ = self._solve(waypoint, self._orientation, self._qdes)
            self.step()

        if self._follow(start, target, count, advance, press):
            return float(np.linalg.norm(target - self._tcp()))
        self._orientation = frame
        return self._settle(target, reached)

    def _held_back(self, here: np.ndarray, last: np.ndarray) -> bool:
        # Behind and not moving: held back (a turning wrist lags, moving).
        return bool(np.linalg.norm(here - last) < STALLED)

    def _is_robot(self, body: int) -> bool:
        return bool(self.env.model.body(body).name.startswith("panda"))

    def _thing_body(self, thing: Thing) -> int | None:
        return int(self.env.model.body(thing.body).id)

    def _scenery(self, body: int) -> str:
        return "the kitchen's counter or walls"

    def _by_joints(self, goal: np.ndarray, *, budgeted: bool = True) -> None:
        """Move every joint in step to a solution; stop where something holds the arm back."""
        start = self._qdes
        count = max(1, math.ceil(float(np.abs(goal - start).max()) / JOINT_SPEED))
        behind = 0
        for done in range(1, count + 1):
            self._qdes = start + (goal - start) * (done / count)
            self.step(budgeted=budgeted)
            behind = behind + 1 if np.abs(self._qdes - self._q()).max() > JOINT_FOLLOW else 0
            if behind > BLOCKED_STEPS:
                self._qdes = self._q()
                return
        for _ in range(SETTLE_STEPS):
            self.step(budgeted=budgeted)
            if np.abs(goal - self._q()).max() < 0.002:
                return

    def move_ee(self, pose: Pose) -> None:
        """Move the fingertips in a straight line to a pose, the gripper keeping its orientation."""
        target = pose.position.as_array()
        self._check_yaw(
            pose,
            "in the Kitchen the gripper points where grasp() and turn() leave it: give a Point",
        )
        left = self._line(target, plan=self._check_reach(target, self._orientation))
        self._check_arrived(left, f"({target[0]:.3f}, {target[1]:.3f}, {target[2]:.3f})")

    def _keep(self, hold: np.ndarray | None) -> None:
        """One step: the servos keep the joints where the last motion commanded them."""
        self.step()

    def grasp(self, name: str) -> None:
        """Close the gripper on a part where it is, coming at it from the front."""
        thing = self._to_grasp(name)
        if thing.kind == "burner":
            raise GraspError(f"'{name}' is a burner's plate: there is nothing on it to hold")
        frame = self._front(self._position(thing, thing.grip), name, thing.across)
        point = self._position(thing, thing.grip) - thing.short * frame[:, 2]
        self._fingers(OPEN)
        self._check_reach(point, frame)
        # Line up in front of the part first: draw back to the stand-off's depth if the
        # fingertips are deeper, so that they never cross in front of other parts to get there.
        # A part near the robot (a door swung open towards it) leaves less room in front.
        approach, here = frame[:, 2], self._tcp()
        for standoff in STANDOFFS:
            back = standoff * -approach
            deeper = float(np.dot(here - (point + back), approach))
            way = [here - deeper * approach] if deeper > 0.005 else []
            if all(self._plan(target, frame) is not None for target in (*way, point + back)):
                break
        for target in (*way, point + back, point):
            left = self._line(target, frame, plan=self._check_reach(target, frame))
            self._check_arrived(left, f"'{name}'")
        self._fingers(CLOSED)
        self.held = name

    def _front(self, point: np.ndarray, name: str, across: bool) -> np.ndarray:
        """Pointing forward, tilted down as far as it takes to reach the point (at most 30°).

        The Kitchen's Franka cannot point straight ahead at the stove's lower knobs. With
        ``across``, the fingers open up and down instead of left and right.
        """
        for tilt in TILTS:
            frame = _about(np.array([1.0, 0.0, 0.0]), -math.radians(tilt)) @ (
                UPRIGHT if across else FORWARD
            )
            if self._solve(point, frame, READY)[1] <= IK_TOLERANCE:
                return frame
        raise UnreachablePoseError(f"'{name}'", "the arm cannot reach it from the front")

    def _back(self) -> Point:
        """Away from where the gripper points."""
        return Point.of(-self._orientation[:, 2])

    def _lift(self) -> None:
        self.push(Point(0.0, 0.0, 1.0), LIFT)

    def _set_down(self, thing: Thing, pose: Pose, target: np.ndarray) -> None:
        # The kettle swings a little in the fingers on the way: aim again from where it hangs.
        self.hold(SWING_SECONDS)
        # It is let go of just above the target: pressed onto the stove, it slides.
        goal = pose.position.as_array()
        self._line(goal + self._tcp() - self._position(thing) + [0, 0, DROP])
        # Swinging on the way down, it hangs a few millimetres off: shift it over once.
        miss = goal - self._position(thing)
        miss[2] = 0.0
        if np.linalg.norm(miss) > REACHED:
            self._line(self._tcp() + miss)
            self.hold(SWING_SECONDS)

    def _push_line(self, target: np.ndarray) -> None:
        # A door or a drawer held by friction alone slips out of fingers that pull it fast.
        fixed = self.held is not None and not self._thing(self.held).movable
        self._line(target, reached=PUSH_REACHED, speed=PULL_SPEED if fixed else STEP_SPEED)

    def turn(self, angle_deg: float) -> float:
        """Turn the gripper about where it points, fingertips in place; the degrees it turned."""
        axis = self._orientation[:, 2]
        before = self._frame()
        self._line(
            self._tcp(),
            _about(axis, math.radians(angle_deg)) @ self._orientation,
            turn_speed=KNOB_SPEED,
        )
        turned = rotation_error(self._frame(), before)
        return math.degrees(float(np.dot(turned, axis)))
