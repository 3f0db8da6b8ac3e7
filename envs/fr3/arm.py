"""The FR3 driven through franky: the primitives, in the robot's base frame.

Frame: the robot's base, z up, x away from the robot, y to its left; the table is z = 0. The
end effector is franky's: the tool point between the fingertips, 0.1034 m beyond the flange,
its z axis pointing down (at home it sits at (0.554, 0, 0.521) with rotation diag(1, -1, -1)).
Every motion is a straight Cartesian line with the gripper pointing down, turned only about
the vertical, and passes :mod:`envs.fr3.safety` before franky sends anything.
"""

from __future__ import annotations

import functools
import math
import operator
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from envs.fr3.perception import Perception
from envs.fr3.safety import Limits, check_box, check_path, clamp_speed
from lyra.embodiment import ObjectState, WorkspaceBox
from lyra.errors import GraspError, MotionError, StoppedError, UnknownObjectError
from lyra.geometry import Point, Pose, Size, aligned_box, quat_from_yaw, wrap_angle

T = TypeVar("T")
TABLE_Z = 0.0
CLEARANCE = 0.05  # above the highest thing on the table while carrying, and before descending
FINGER_DEPTH = 0.02  # the fingertips reach this far below an object's top (at most to its centre)
GRIP_SLACK = 0.005  # the measured finger width may differ this much from the object's width
GRIP_SPEED = 0.05  # m/s, the FR3 hand's fastest
GRIP_FORCE = 40.0  # newtons
OPEN_WIDTH = 0.08
OPEN_CLEAR = 0.004  # each finger opens this far clear of an object's face, and no further
DROP = 0.002  # a placed object is let go this far above where it comes to rest
RETREAT = 0.1  # the tool point draws back this far up after letting go
QUARTER = math.pi / 2
# The space each finger's lowest 3 cm take beside what it grips (the franky-sim FR3 hand's
# collision shapes: 16 mm thick, 18 mm wide, 9 mm below the tool point), beyond OPEN_CLEAR.
# Another object there is pushed by the finger: a finger needs a gap of at least 20 mm.
FINGER_THICKNESS = 0.016
FINGER_WIDTH = 0.02
FINGER_TIP = 0.01
# The gap a finger needs between a gripped cube's face and a neighbour's.
FINGER_ROOM = OPEN_CLEAR + FINGER_THICKNESS
# The hand's turn, less joint 1's, with joint 7 in the middle of its range (0): at yaw 0 and
# joint 1 at 0, franky's home, joint 7 stands at 45 degrees and turns the hand against it.
WRIST_MIDDLE_YAW = math.pi / 4
JOIN_SLICE = 0.05  # seconds a motion is waited for at a time


class FrankyModel:
    """franky's model of the arm as :class:`envs.fr3.safety.Kinematics` of the tool point."""

    def __init__(self, franky: Any, robot: Any) -> None:
        state = robot.state
        self._model, self._frame = robot.model, franky.Frame.EndEffector
        self._f_t_ee, self._ee_t_k = state.F_T_EE, state.EE_T_K

    def pose(self, q: np.ndarray) -> np.ndarray:
        """The tool point's 4x4 pose."""
        affine = self._model.pose(self._frame, q, self._f_t_ee, self._ee_t_k)
        return np.asarray(affine.matrix)

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """Its 6x7 Jacobian in the base frame."""
        jacobian = self._model.zero_jacobian(self._frame, q, self._f_t_ee, self._ee_t_k)
        return np.asarray(jacobian)


class FR3Arm:
    """The primitives over a connected ``franky.Robot`` and ``franky.Gripper``."""

    def __init__(
        self, franky: Any, host: str, perception: Perception, limits: Limits, speed: float
    ) -> None:
        self._franky = franky
        # franky.Robot raises the thread that makes it to SCHED_FIFO 99 (as root it can, even
        # told to ignore real time), and the thread keeps it: all of lyra, the simulators and
        # the tests after it would run at real-time priority. Motions run asynchronously, in
        # franky's own thread, which raises itself; this one goes back to what it was.
        policy, priority = os.sched_getscheduler(0), os.sched_getparam(0)
        self.robot = franky.Robot(host, realtime_config=franky.RealtimeConfig.Ignore)
        os.sched_setscheduler(0, policy, priority)
        self.gripper = franky.Gripper(host)
        self.perception = perception
        self.limits = limits
        self.set_speed(speed)
        self._kinematics = FrankyModel(franky, self.robot)
        self.held: str | None = None
        self._held_offset = 0.0  # the held object's centre above the tool point
        self._stop = threading.Event()
        self._elapsed = 0.0  # robot seconds of motion since the reset, before the running one
        self._since: float | None = None  # robot time the running motion started at
        # What renders the world: franky-sim's simulator (MuJoCo model and data); None on
        # the real arm.
        self.env: Any = None

    # --- time, speed, stop -----------------------------------------------------------

    def _robot_time(self) -> float:
        return float(self.robot.state.time.to_sec())

    @property
    def sim_time(self) -> float:
        """Seconds of the robot's own clock spent moving or holding since the reset."""
        since = self._since
        return self._elapsed + (self._robot_time() - since if since is not None else 0.0)

    def restart_clock(self) -> None:
        """Count from zero, and let motions run again after a stop."""
        self._elapsed, self._since = 0.0, None
        self._stop.clear()

    def _timed(self, action: Callable[[], T]) -> T:
        if self._stop.is_set():
            raise StoppedError("the robot was stopped: nothing moves until the next reset")
        self._since = self._robot_time()
        try:
            return action()
        finally:
            self._elapsed += self._robot_time() - self._since
            self._since = None

    def set_speed(self, factor: float) -> float:
        """Run motions at ``factor`` of full speed, at most the cap; the factor set."""
        self.robot.relative_dynamics_factor = clamp_speed(self.limits, factor)
        return float(self.robot.relative_dynamics_factor.velocity)

    def stop(self) -> None:
        """Stop the running motion (from any thread); motions fail until the next reset."""
        self._stop.set()
        self.robot.stop()

    def hold(self, seconds: float) -> None:
        """Let ``seconds`` of the robot's clock pass with the arm still."""

        def wait() -> None:
            end = self._robot_time() + seconds
            while self._robot_time() < end:
                self._stop.wait(0.001)

        self._timed(wait)

    # --- reading the world -----------------------------------------------------------

    def world_state(self) -> dict[str, ObjectState]:
        """Every object's state, as perception sees it now."""
        return self.perception.objects()

    def _state(self, name: str) -> ObjectState:
        objects = self.perception.objects()
        if name not in objects:
            raise UnknownObjectError(name, objects)
        return objects[name]

    def object_names(self, kind: str | None = None, color: str | None = None) -> list[str]:
        """The objects' names, sorted, optionally of one kind and colour."""
        return sorted(
            name
            for name, state in self.perception.objects().items()
            if kind in (None, state.kind) and color in (None, state.color)
        )

    def object_pose(self, name: str) -> Pose:
        """The pose of an object's centre."""
        return self._state(name).pose

    def object_size(self, name: str) -> Size:
        """Its extents along its own axes."""
        return self._state(name).size

    def bounding_box(self, name: str) -> tuple[Point, Point]:
        """Its world-aligned box."""
        return _box(self._state(name))

    def ee_pose(self) -> Pose:
        """The tool point's pose (its orientation x, y, z, w: z points down)."""
        affine = self.robot.current_pose.end_effector_pose
        x, y, z, w = (float(v) for v in affine.quaternion)
        return Pose(Point.of(affine.translation), (x, y, z, w))

    def joints(self) -> dict[str, float]:
        """The scene's articulated joints: cubes have none."""
        return {}

    def close(self) -> None:
        """Nothing to release: the backend owns the connection and the simulator."""

    def held_object(self) -> str | None:
        """The object the fingers closed on with ``pick``, until it is placed."""
        return self.held

    def workspace(self) -> WorkspaceBox:
        """The box the tool point is kept in, and the table's height."""
        return WorkspaceBox(self.limits.low, self.limits.high, TABLE_Z)

    # --- moving ----------------------------------------------------------------------

    def move_ee(self, pose: Pose) -> None:
        """The tool point in a straight line to a pose, pointing down, turned to its yaw."""
        self._move(pose.position, pose.yaw)

    def _move(self, position: Point, yaw: float) -> None:
        what = f"the point ({position.x:.3f}, {position.y:.3f}, {position.z:.3f})"
        check_box(self.limits, position, what)
        c, s = math.cos(yaw), math.sin(yaw)
        target = np.eye(4)
        # Turned by yaw about the vertical, from pointing down (x forward, y and z flipped).
        target[:3, :3] = np.array([[c, s, 0.0], [s, -c, 0.0], [0.0, 0.0, -1.0]])
        target[:3, 3] = position.as_array()
        check_path(self.limits, self._kinematics, self.robot.current_joint_positions, target, what)
        franky = self._franky
        motion = franky.CartesianMotion(franky.Affine(target))
        felt = self._guard(motion)
        self._timed(lambda: self._run(motion, what))
        if felt:
            # Something pressed on the hand: the motion stopped there, and nothing more moves
            # until a person has looked, as after the arm's own reflexes.
            self._stop.set()
            force, limit = felt[0], self.limits.max_force
            raise MotionError(
                f"the arm felt {np.linalg.norm(force):.0f} N on the hand (x {force[0]:.0f}, "
                f"y {force[1]:.0f}, z {force[2]:.0f} N; it stops at {limit:.0f} N along any axis) "
                f"on its way to {what}, and stopped there. Look at the arm and the table (the "
                "hand against an object or the table, a person), set the objects back as the "
                "scene says, and run the plan again"
            )

    def _guard(self, motion: Any) -> list[np.ndarray]:
        """Make ``motion`` stop where the hand feels the force limit.

        Returns the list the force felt (x, y, z in the base frame) is added to if it does.
        """
        franky, limit = self._franky, self.limits.max_force
        axes = (franky.Measure.FORCE_X, franky.Measure.FORCE_Y, franky.Measure.FORCE_Z)
        over = functools.reduce(operator.or_, [(f >= limit) | (f <= -limit) for f in axes])
        reaction = franky.Reaction(over, franky.CartesianStopMotion())
        felt: list[np.ndarray] = []
        # Called in franky's control thread: it only records.
        reaction.register_callback(lambda state, _rel, _abs: felt.append(state.O_F_ext_hat_K[:3]))
        motion.add_reaction(reaction)
        return felt

    def _run(self, motion: Any, what: str) -> None:
        self.robot.move(motion, asynchronous=True)
        try:
            # Waited for in slices: a Ctrl-C reaches Python only between them, and then stops
            # the arm (the sandbox's server stops its target) instead of waiting for the end.
            while not self.robot.join_motion(JOIN_SLICE):
                pass
        except Exception as error:  # franky's exceptions share no base but Exception
            self.robot.recover_from_errors()
            if self._stop.is_set():
                raise StoppedError("the robot was stopped during the motion") from None
            if isinstance(error, self._franky.ControlException):
                # A reflex, a collision, the user stop: nothing more moves until a person has
                # looked at the arm and the run starts again from a reset.
                self._stop.set()
                raise MotionError(
                    f"the arm stopped with a control error on its way to {what} ({error}); "
                    "lyra called recover_from_errors() and the arm holds still. Look at the "
                    "arm and the table (a collision, the user stop, an object in the way), set "
                    "the objects back as the scene says, and run the plan again"
                ) from None
            raise MotionError(f"the arm could not move to {what}: {error}") from None
        if self._stop.is_set():
            raise StoppedError("the robot was stopped during the motion")

    def _grip(self, width: float | None) -> float:
        """Open to ``width``, or close on what is between the fingers (None); the width."""

        def act() -> None:
            if width is None:
                # franky-sim's grasp does not squeeze toward a given width, and reports success
                # even on nothing: close fully and let the measured width tell.
                self.gripper.grasp(0.0, GRIP_SPEED, GRIP_FORCE, epsilon_outer=1.0)
            else:
                self.gripper.move(width, GRIP_SPEED)

        self._timed(act)
        return float(self.gripper.width)

    def _carry_z(self, held: float) -> float:
        """How high the tool point carries an object ``held`` tall over everything else."""
        tops = [_box(s)[1].z for n, s in self.perception.objects().items() if n != self.held]
        return min(max([TABLE_Z, *tops]) + held + CLEARANCE, self.limits.high.z)

    def pick(self, name: str) -> None:
        """Close the fingers on an object from above and lift it clear of everything.

        Of the turns with room for the fingers, the hand takes the one nearest joint 7's
        middle. A cube is the same after a quarter turn, so any of them leaves the hand free
        to set it down across whichever faces have room there.
        """
        if self.held is not None:
            raise GraspError(f"the gripper holds '{self.held}': place it before picking '{name}'")
        state = self._state(name)
        centre, size = state.pose.position, state.size
        top = _box(state)[1].z
        grip_z = _grip_z(state)
        tool = centre.with_z(grip_z)
        turns = self._clear_turns(tool, size.y / 2, state.pose.yaw, name, f"pick '{name}' up")
        middle = self._wrist_middle(tool)
        yaw = min(turns, key=lambda turn: abs(wrap_angle(turn - middle)))
        # Open just clear of its faces: opened wide, a finger would push a neighbour.
        self._grip(_opening(size.y))
        self._move(centre.with_z(max(top + CLEARANCE, self._carry_z(0.0))), yaw)
        self._move(tool, yaw)
        width = self._grip(None)
        if abs(width - size.y) > GRIP_SLACK:
            self._grip(_opening(size.y))
            self._move(centre.with_z(top + CLEARANCE), yaw)
            raise GraspError(
                f"the fingers closed to {width * 1000:.0f} mm on '{name}', which is "
                f"{size.y * 1000:.0f} mm wide: it was not between them (look at where it is now)"
            )
        self.held, self._held_offset = name, centre.z - grip_z
        self._move(centre.with_z(self._carry_z(size.z)), yaw)

    def _place_turn(self, name: str, where: Pose, tool_z: float) -> float:
        """The hand's turn to set ``name`` (held, or about to be) down at ``where``.

        The turn of the two that leave the fingers room (the nearer the wrist's middle if
        both do), facing whichever way keeps joint 7 nearer its middle: the fingers are alike.
        """
        tool = where.position.with_z(tool_z)
        half = self._state(name).size.y / 2
        doing = f"set '{name}' down at ({tool.x:.3f}, {tool.y:.3f})"
        turns = self._clear_turns(tool, half, where.yaw, name, doing)
        middle = self._wrist_middle(tool)
        return min(turns, key=lambda turn: abs(wrap_angle(turn - middle)))

    def _clear_turns(
        self, tool: Point, half: float, yaw: float, moving: str, doing: str
    ) -> list[float]:
        """The hand's turns that grip a cube turned ``yaw`` with no finger on a neighbour.

        A cube can be gripped across either pair of faces, so the hand may take ``yaw`` or a
        quarter turn from it, each facing either way (four turns). A finger comes down beside
        the cube from the carry height to ``tool``: each axis is clear when no other object
        stands in that swept box, since one there would be pushed aside (blocks laid 5 mm
        apart leave a 16 mm finger no room).

        Raises:
            GraspError: neither axis is clear; the message names each neighbour in the way,
                how far it is from the cube's face and the gap a finger needs.
        """
        others = {
            name: _box(state)
            for name, state in self.perception.objects().items()
            if name != moving and state.kind != "zone" and _box(state)[1].z > tool.z - FINGER_TIP
        }
        clear, blocked = [], []
        for axis in (yaw, yaw + QUARTER):
            in_way = [
                (n, gap)
                for n, b in others.items()
                if (gap := _finger_clash(tool, half, axis, b)) is not None
            ]
            if in_way:
                blocked.append((axis, min(in_way, key=lambda hit: hit[1])))
            else:
                clear += [wrap_angle(axis), wrap_angle(axis + math.pi)]
        if clear:
            return clear
        reasons = "; ".join(
            f"closing along {_closing(axis)}, a finger would come down on '{name}', "
            f"{max(gap, 0.0) * 1000:.0f} mm from the cube's face"
            for axis, (name, gap) in blocked
        )
        raise GraspError(
            f"cannot {doing}: the fingers have no room beside it ({reasons}). A finger needs "
            f"{FINGER_ROOM * 1000:.0f} mm between the cube and its neighbours on both sides "
            "along x or along y: leave that gap there"
        )

    def _wrist_middle(self, tool: Point) -> float:
        """The hand's turn at ``tool`` with joint 7 in the middle of its range (at q7 = 0).

        Pointing down, the hand turns with joint 1 and against joint 7 (at yaw 0 and the base
        facing forward, joint 7 stands at 45 degrees).
        """
        return wrap_angle(math.atan2(tool.y, tool.x) + WRIST_MIDDLE_YAW)

    def place(self, pose: Pose) -> None:
        """Set the held object's centre down at a pose, let go and draw back up."""
        if self.held is None:
            raise GraspError("nothing is held: pick an object before placing it")
        held = self.held
        where = pose.position
        tool_z = where.z - self._held_offset
        yaw = self._place_turn(held, pose, tool_z)
        self._move(where.with_z(self._carry_z(self._state(held).size.z)), yaw)
        self._move(where.with_z(tool_z), yaw)
        self._grip(_opening(self._state(held).size.y))
        self.held = None
        self.perception.placed(held, Pose(where, quat_from_yaw(yaw)))
        self._move(where.with_z(min(tool_z + RETREAT, self.limits.high.z)), yaw)

    def put_first_on_second(self, obj: str, target: str | Pose, yaw: float | None) -> None:
        """Pick an object and set it on another (centred on its top) or at a pose's x, y.

        Either way it lands on the highest surface under that point: an occupied target gets
        it on top of what is there.
        """
        where = self._state(target).pose if isinstance(target, str) else target
        x, y = where.position.x, where.position.y
        surface = max(
            [TABLE_Z]
            + [
                high.z
                for name, state in self.perception.objects().items()
                if name != obj
                for low, high in [_box(state)]
                if low.x <= x <= high.x and low.y <= y <= high.y
            ]
        )
        state = self._state(obj)
        centre = Point(x, y, surface + state.size.z / 2 + DROP)
        spot = Pose(centre, quat_from_yaw(where.yaw if yaw is None else yaw))
        # Refused now, before anything moves, if the fingers have no room where it goes. The
        # pick keeps its own turn: gripped at the place's turn instead, the cube swung in the
        # fingers as much, better on one task and worse on others (docs/fr3.md, the grasp).
        self._place_turn(obj, spot, centre.z - (state.pose.position.z - _grip_z(state)))
        self.pick(obj)
        self.place(spot)


def _closing(turn: float) -> str:
    """The direction the fingers close along with the hand turned ``turn``, as a person says it."""
    # The fingers close along the tool's y axis: (sin, -cos) of the turn in the world.
    degrees = math.degrees(math.atan2(-math.cos(turn), math.sin(turn))) % 180
    for name, along in (("x", 0.0), ("y", 90.0), ("x", 180.0)):
        if abs(degrees - along) < 1:
            return name
    return f"{degrees:.0f} degrees from x"


def _opening(width: float) -> float:
    """How wide the fingers open around an object ``width`` wide."""
    return min(width + 2 * OPEN_CLEAR, OPEN_WIDTH)


def _finger_clash(tool: Point, half: float, turn: float, box: tuple[Point, Point]) -> float | None:
    """How far ``box`` is from the gripped cube's face, if a finger comes down inside it.

    The hand at ``tool`` turned ``turn`` grips a cube ``half`` wide to each side; each finger
    stands OPEN_CLEAR off a face and is FINGER_THICKNESS thick along the closing axis and
    FINGER_WIDTH wide across it. Compared as world-aligned boxes; None when neither finger
    touches the box.
    """
    low, high = box
    # The fingers close along the tool's y axis: (sin, -cos) of the turn in the world.
    along = np.array([math.sin(turn), -math.cos(turn)])
    across = np.array([math.cos(turn), math.sin(turn)])
    reach = np.abs(along) * FINGER_THICKNESS / 2 + np.abs(across) * FINGER_WIDTH / 2
    centre = tool.as_array()[:2]
    for side in (1.0, -1.0):
        middle = centre + side * along * (half + OPEN_CLEAR + FINGER_THICKNESS / 2)
        if np.all(middle - reach < [high.x, high.y]) and np.all(middle + reach > [low.x, low.y]):
            corners = np.array([[low.x, low.y], [low.x, high.y], [high.x, low.y], [high.x, high.y]])
            # The box's nearest point toward that finger, along the closing axis.
            return float(min(side * (corners - centre) @ along)) - half
    return None


def _grip_z(state: ObjectState) -> float:
    """The tool point's height gripping an object: FINGER_DEPTH under its top, or its centre."""
    return max(state.pose.position.z, _box(state)[1].z - FINGER_DEPTH)


def _box(state: ObjectState) -> tuple[Point, Point]:
    return aligned_box(state.pose, state.size)
