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
from typing import Any

import numpy as np

from envs.metaworld.tasks import Task, Thing, env_name, find_task, is_robot
from envs.mujoco_arm import CLEARANCE, LIFT, PRESS_LEAD, PUSH_REACHED, MujocoArm
from envs.mujoco_parts import dot3, norm3, subtree_box
from lyra.embodiment import WorkspaceBox
from lyra.errors import GraspError, UnknownJointError, UnsupportedPrimitiveError
from lyra.geometry import Point, Pose, Size

# MuJoCo picks its GL backend at import: EGL renders offscreen on a machine with no display.
os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco  # (after MUJOCO_GL)

# The gripper points down; skills see the tabletop's "down" quaternion (x, y, z, w).
DOWN = (1.0, 0.0, 0.0, 0.0)
STEP_SPEED = 0.008  # metres a step along a line (an action moves the target at most 1 cm)
REACHED = 0.003  # a motion ends when the fingertips are this close to the target
GRASP_REACHED = 0.001  # and this close where they close on something
PRESS = 0.015  # how far below where they came down the fingertips are steered while closing
SETTLE_STEPS = 60  # steps a motion may take to close the last gap
GRIP_STEPS = 25  # steps to close or open the fingers (measured: 20 close on a 3 cm peg)
CORRECTION = 0.3  # share of the fingertips' error the hand's target moves by, each step
FOLLOW = 0.02  # the waypoint waits while the fingertips are this far behind it
BLOCKED_STEPS = 10  # steps behind in a row: something blocks the fingertips
UNWIND_STEPS = 6  # steps to bring a wound-up target back to PRESS_LEAD (at most 1 cm a step)
# How far aside of the hand its target may lead while the fingers close. Unbounded, it ran 13 cm
# aside on bin-picking seed 20 (a finger on the bin's wall) and the lift then tore the hand 9 cm
# off its line; normal grasps lead 5-7 cm, and a 3 cm bound lost held-out hand-insert seeds
# (16 of 20 to 10) and two replays. Bringing every closed grasp's target back onto the hand,
# not only one this held back, changed five MetaWorld replays.
GRIP_LEAD = 0.08
MARKER = Size(0.02, 0.02, 0.02)  # the extent reported for a goal, which has none


class MetaWorldArm(MujocoArm):
    """One MetaWorld task's world, reused across seeds (building an environment costs 0.5 s)."""

    backend_name = "metaworld"
    follow = FOLLOW
    blocked_steps = BLOCKED_STEPS
    settle_steps = SETTLE_STEPS
    grip_steps = GRIP_STEPS
    open_grip, closed_grip = -1.0, 1.0  # MetaWorld's gripper action
    budget_digits = 2
    reach_words = ", the box the fingertips reach"
    fixed_where = "to its part"

    def __init__(self) -> None:
        super().__init__()
        self._envs: dict[str, Any] = {}
        self._tasks: dict[str, Task] = {}
        self.task: Task | None = None
        self.success = 0.0
        self.success_any = 0.0
        self._box_reached = WorkspaceBox(Point(0, 0, 0), Point(0, 0, 0), 0.0)

    # --- the world ---------------------------------------------------------------------

    def reset(self, task: str, seed: int, max_steps: int, perturb: int = 0) -> None:
        """Lay the task out from a seed, MetaWorld's way (its reset samples from its own rng)."""
        self.env = self._envs.get(task) or self._build(task)
        self._envs[task] = self.env
        env = self.env
        # A reused environment keeps MuJoCo's warm start and contacts: clear them, so that a
        # seed lays out the same world on a fresh environment and on a reused one.
        mujoco.mj_resetData(env.model, env.data)
        env.seed(seed)
        env.reset()
        # Some tasks move a body in the model after their last forward pass (drawer-open sets
        # the drawer's position last): without this the first reads show the previous layout.
        mujoco.mj_forward(env.model, env.data)
        # The rule reads the laid-out model once: a seed moves the task's parts, never swaps them
        # (it finds the same on seeds 0-9 of all 50 tasks).
        self.task = self._tasks.get(task) or find_task(task, env)
        self._tasks[task] = self.task
        if perturb:
            self._nudge(perturb)
        self._begin(max_steps)
        self.success = self._success_now()
        self.success_any = self.success
        self._box_reached = self._reach_box()

    @staticmethod
    def _build(task: str) -> Any:
        from metaworld.env_dict import ALL_V3_ENVIRONMENTS

        env = ALL_V3_ENVIRONMENTS[env_name(task)]()
        # Sample a layout from the env's seeded rng at each reset, as MetaWorld's own benchmarks
        # do when they make tasks; the step limit is lyra's to keep (see ``max_steps``).
        env._freeze_rand_vec = False
        env.seeded_rand_vec = True
        env._set_task_called = True
        env._partially_observable = False
        # The observation bounds were computed (and cached) with the goal hidden: recompute,
        # or every step's observation clips the goal to zeros.
        env.__dict__.pop("sawyer_observation_space", None)
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

    def _dt(self) -> float:
        """A step is 12.5 ms."""
        return float(self.env.dt)

    def step(self, move: np.ndarray, *, budgeted: bool = True) -> None:
        """One environment step steering the hand by ``move`` (an action, clipped to +-1)."""
        self._may_step(budgeted)
        action = np.append(np.clip(move, -1.0, 1.0), self.grip)
        _, _, _, _, info = self.env.step(action)
        self.steps += 1
        self.success = float(info["success"])
        self.success_any = max(self.success_any, self.success)

    def hold(self, seconds: float) -> None:
        """Step with the fingertips held where they are and the gripper as it was.

        The hand's target is steered onto them as a motion's is: a motion can end with it
        wound up ahead of a hand still moving, and left there it carried the hand on (a handle
        pressed to its goal and left ran 25 mm past it).
        """
        here = self._tcp()
        for _ in range(round(seconds / self._dt())):
            self._steer(np.zeros(3), here, budgeted=False)

    def close(self) -> None:
        """Close every environment built."""
        for env in self._envs.values():
            env.close()
        self._envs.clear()
        self.env = None

    # --- reading the world ---------------------------------------------------------------

    def _things(self) -> tuple[Thing, ...]:
        assert self.task is not None, "reset the arm before using it"
        return self.task.things

    def _position(self, thing: Thing) -> np.ndarray:
        env = self.env
        if thing.where == "goal":
            goal = np.asarray(env._target_pos, dtype=float).copy()
            if self.task is not None and self.task.goal_z is not None:
                goal[2] = self.task.goal_z
            return goal
        slot = 1 if thing.where == "object2" else 0
        return np.asarray(env._get_pos_objects()[3 * slot : 3 * slot + 3], dtype=float).copy()

    def _orientation(self, thing: Thing) -> tuple[float, float, float, float]:
        if thing.body is None:
            return (0.0, 0.0, 0.0, 1.0)
        w, x, y, z = (float(v) for v in self.env.data.xquat[self._body_id(thing.body)])
        return (x, y, z, w)

    def _body_id(self, body: str) -> int:
        model = self.env.model
        if body.startswith("geom:"):
            return int(model.geom_bodyid[model.geom(body[5:]).id])
        return int(model.body(body).id)

    def _is_robot(self, body: int) -> bool:
        return is_robot(self.env.model, body)

    def _thing_body(self, thing: Thing) -> int | None:
        return None if thing.body is None else self._body_id(thing.body)

    def _scenery(self, body: int) -> str:
        # The table, walls and bins are no task's objects, so MetaWorld's own names say which:
        # the nearest named body up the tree (a mesh's body is often unnamed).
        model = self.env.model
        while body and not model.body(body).name:
            body = int(model.body_parentid[body])
        name = model.body(body).name
        return "the table" if name in ("tablelink", "world") else f"the scene's fixed {name!r}"

    def _box(self, thing: Thing) -> tuple[np.ndarray, np.ndarray]:
        """The world-aligned box around the geoms of the thing's body and the bodies below it."""
        centre = self._position(thing)
        if thing.body is None:
            half = np.array([MARKER.x, MARKER.y, MARKER.z]) / 2
            return centre - half, centre + half
        low, high = subtree_box(self.env.model, self.env.data, self._body_id(thing.body))
        # The measured point (a handle's grip) lies in its box even where geoms are meshes.
        return np.minimum(low, centre), np.maximum(high, centre)

    def object_pose(self, name: str) -> Pose:
        """Where MetaWorld measures the object (a handle's grip point, a puck's centre)."""
        thing = self._thing(name)
        return Pose(Point.of(self._position(thing)), self._orientation(thing))

    def joint_names(self) -> list[str]:
        """The articulated joints of the task, sorted."""
        assert self.task is not None, "reset the arm before using it"
        return sorted(self.task.joints)

    def _joint(self, name: str) -> int:
        assert self.task is not None, "reset the arm before using it"
        if name not in self.task.joints:
            raise UnknownJointError(name, self.task.joints)
        source, model = self.task.joints[name], self.env.model
        if source.startswith("body:"):
            return int(model.body_jntadr[model.body(source[5:]).id])
        return int(model.joint(source).id)

    def ee_pose(self) -> Pose:
        """The fingertips' centre, gripper pointing down."""
        return Pose(Point.of(self.env.tcp_center), DOWN)

    def workspace(self) -> WorkspaceBox:
        """The box the fingertips reach: MetaWorld's hand box, shifted by the fingers' length."""
        return self._box_reached

    def _reach_box(self) -> WorkspaceBox:
        # Measured once a reset: the fingers' offset from the hand moves a little as they work.
        offset = -self._rest_offset()
        low = np.asarray(self.env.mocap_low) + offset
        high = np.asarray(self.env.mocap_high) + offset
        return WorkspaceBox(Point.of(low), Point.of(high), 0.0)

    # --- moving ----------------------------------------------------------------------------

    def _tcp(self) -> np.ndarray:
        return np.asarray(self.env.tcp_center, dtype=float).copy()

    # MetaWorld's motions measure with these, the same on every CPU (see ``dot3``).
    _length = staticmethod(norm3)
    _dot = staticmethod(dot3)

    def _mocap(self) -> np.ndarray:
        return np.asarray(self.env.data.mocap_pos[0], dtype=float).copy()

    def _toward(self, mocap: np.ndarray) -> None:
        """One step moving the hand's target toward a point (at most 1 cm a step)."""
        self.step((mocap - self._mocap()) / float(self.env.action_scale))

    def _line(self, target: np.ndarray, reached: float = REACHED) -> float:
        """Steer the fingertips along a straight line to a target; the distance left at the end.

        Each step moves the hand's target with the waypoint and by a share of the fingertips'
        error (the weld that pulls the hand sags by up to 5 cm with the arm stretched out, so
        no fixed lead would do). The waypoint waits while the fingertips are ``FOLLOW`` behind
        it; when they stay behind ``BLOCKED_STEPS`` steps, something blocks them and the motion
        ends where they are.
        """
        start = self._tcp()
        # How far the hand's target sits from the hand when nothing but gravity pulls on it.
        sag = self._mocap() - self._hand()
        count = max(1, math.ceil(norm3(target - start) / STEP_SPEED))

        def press() -> None:
            # The fingers keep pressing on what stopped them (a button let go springs back up),
            # but no harder than PRESS_LEAD: a target wound up further would hold the next
            # motion back.
            direction = (target - start) / norm3(target - start)
            pressing = self._hand() + sag + PRESS_LEAD * direction
            for _ in range(UNWIND_STEPS):
                self._toward(pressing)

        def advance(previous: np.ndarray, waypoint: np.ndarray, share: float) -> None:
            self._steer(waypoint - previous, waypoint)

        if self._follow(start, target, count, advance, press):
            return norm3(target - self._tcp())
        return self._settle(target, reached)

    def _steer(
        self,
        feed: np.ndarray,
        waypoint: np.ndarray,
        *,
        budgeted: bool = True,
        lead: float = math.inf,
    ) -> bool:
        """One step: the hand's target moves by ``feed`` and a share of the fingertips' error.

        Returns:
            Whether ``lead`` held the target back: it ends no further aside of the hand than
            that (horizontally).
        """
        move = feed + CORRECTION * (waypoint - self._tcp())
        aside = self._mocap() + move - self._hand()
        aside[2] = 0.0
        length = norm3(aside)
        held = length > lead
        if held:
            move -= aside * (1.0 - lead / length)
        self.step(move / float(self.env.action_scale), budgeted=budgeted)
        return held

    def _hand(self) -> np.ndarray:
        return np.asarray(self.env.data.body("hand").xpos, dtype=float).copy()

    def _rest_offset(self) -> np.ndarray:
        """Where the hand's target sits above the fingertips with nothing pulling: the hand's."""
        return self._hand() - self._tcp()

    def move_ee(self, pose: Pose, reached: float = REACHED) -> None:
        """Move the fingertips in a straight line to a pose (the gripper keeps pointing down)."""
        target = pose.position.as_array()
        self._check_box(target)
        self._check_yaw(pose, "the gripper's orientation is fixed on MetaWorld: give a Point")
        left = self._line(target, reached)
        self._check_arrived(left, f"({target[0]:.3f}, {target[1]:.3f}, {target[2]:.3f})")

    def _fingers(self, command: float, hold: np.ndarray | None = None) -> None:
        """Open or close the fingers; closing on ``hold``, the hand's target leads it boundedly.

        A finger that lands on something beside the object (a bin's wall) holds the fingertips
        off ``hold``, and the target steered onto them winds up aside: it is kept within
        ``GRIP_LEAD`` of the hand and, where that held it back, brought back onto the hand once
        the fingers have closed, so that the lift starts from where the hand is.
        """
        if hold is None:
            super()._fingers(command)
            return
        self.grip = command
        wound = False
        for _ in range(self.grip_steps):
            wound = self._steer(np.zeros(3), hold, lead=GRIP_LEAD) or wound
        if wound:
            hand = self._hand()
            far = float(np.abs(hand - self._mocap()).max())
            for _ in range(math.ceil(far / float(self.env.action_scale))):
                self._toward(hand)

    def _keep(self, hold: np.ndarray | None) -> None:
        """One step steering the fingertips to ``hold``, or leaving the hand's target as it is."""
        if hold is None:
            self.step(np.zeros(3))
        else:
            self._steer(np.zeros(3), hold)

    def _approach(self, thing: Thing) -> np.ndarray:
        """Open, go above the thing and come down onto its point (or as low as the fingers go).

        Returns:
            Where the fingertips came to rest, to hold them there while the fingers close.
        """
        point = self._position(thing)
        top = float(self._box(thing)[1][2])
        self._fingers(-1.0)
        here = self._tcp()
        above = max(top + CLEARANCE, float(here[2]))
        low, high = self.workspace().low.as_array(), self.workspace().high.as_array()
        for target in (np.array([here[0], here[1], above]), np.array([*point[:2], above])):
            self.move_ee(Pose(Point.of(np.clip(target, low, high)), DOWN))
        # A small object's centre lies below where the fingertips can go (they meet the table):
        # they come down as far as they can, and close there.
        self._line(np.clip(point, low, high), GRASP_REACHED)
        return self._tcp()

    def grasp(self, name: str) -> None:
        """Close the gripper on an object where it is, coming from above; nothing is lifted."""
        thing = self._to_grasp(name)
        if thing.kind == "goal":
            raise GraspError(f"'{name}' marks where to go: it is not a thing to hold")
        # Closing, the fingers ride up on what they close on unless the hand presses down.
        self._fingers(1.0, hold=self._approach(thing) - np.array([0.0, 0.0, PRESS]))
        self.held = name

    def _back(self) -> Point:
        """Up, or as far as the fingertips go."""
        return Point(0.0, 0.0, 1.0)

    def _may_pick(self, name: str, thing: Thing) -> None:
        if thing.kind == "goal":
            raise GraspError(f"'{name}' marks where to go: it is not a thing to pick")
        super()._may_pick(name, thing)

    def _lift(self) -> None:
        self.move_ee(Pose(Point.of(self._tcp() + np.array([0.0, 0.0, LIFT])), DOWN))

    def _lowest(self, target: np.ndarray) -> np.ndarray:
        # Grasped low, the fingertips sit below the object's centre: on the table they can go
        # no lower, and the object comes to rest on it all the same.
        target[2] = max(target[2], self.workspace().low.z)
        return target

    def _set_down(self, thing: Thing, pose: Pose, target: np.ndarray) -> None:
        # Coming down, the object may meet the table (or what it is set on) a little before its
        # point reaches the target: it is put down where it comes to rest.
        self._line(target)

    def turn(self, angle_deg: float) -> float:
        """Not a MetaWorld primitive: the Sawyer cannot turn its gripper (the facade refuses it)."""
        from lyra.backend import backends_with

        raise UnsupportedPrimitiveError("turn", "metaworld", backends_with("turn"))

    def _push_line(self, target: np.ndarray) -> None:
        # What is pushed holds the fingertips back: closing the last millimetres costs steps
        # and buys nothing.
        self._line(target, PUSH_REACHED)
