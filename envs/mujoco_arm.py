"""The arm that lyra's MuJoCo backends (MetaWorld, the Kitchen) move one environment step at a time.

Each backend says how a step is commanded (MetaWorld steers a mocap target, the Kitchen its
joints' servos), where the fingertips are and how far they reach; the rest is the same on both:
a step budget and a stop, the reach check, the straight line the fingertips follow, the fingers,
and pick, place, release and push on top of the backend's own grasp.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel

from envs.mujoco_parts import ArmParts, MujocoBackend, StepBudgetError
from lyra.embodiment import WorkspaceBox, WorldState
from lyra.errors import GraspError, LyraError, MotionError, StoppedError, UnreachablePoseError
from lyra.geometry import Point, Pose

PUSH_REACHED = 0.005  # a push ends when the fingertips are this close to its end
PRESS_LEAD = 0.01  # how far past a blocked hand its target stays, pressing on
CLEARANCE = 0.05  # how far release() draws the fingertips back
LIFT = 0.1  # how far pick() lifts what it grasped
SLIPPED = 0.05  # a picked object that rose less than this slipped out of the fingers
SHORT = 0.01  # a motion that ends further than this from its target stopped short


class MujocoArm(ArmParts):
    """A MuJoCo backend's arm: the motions it makes of the steps its backend commands.

    A backend sets the numbers below and supplies one step (its ``step``), the fingertips
    (:meth:`_tcp`), the box they reach (``workspace``), its straight line (built on
    :meth:`_follow` and :meth:`_settle`) and its grasp.
    """

    follow = 0.0  # the waypoint waits while the fingertips are this far behind it
    blocked_steps = 0  # steps held back in a row: something blocks the fingertips
    settle_steps = 0  # steps a motion may take to close the last gap
    grip_steps = 0  # steps to close or open the fingers
    open_grip, closed_grip = 0.0, 0.0  # the fingers' commands
    budget_digits = 1  # decimals of the simulated seconds the step budget's refusal shows
    reach_words = ""  # what the reach check's refusal adds after the bound it broke
    fixed_where = ""  # where a part pick() refuses is fixed ("to its part")

    def __init__(self) -> None:
        self.env: Any = None
        self.grip = self.open_grip
        self.held: str | None = None
        self.steps = 0
        self.max_steps = 0
        self._stop = threading.Event()

    def _begin(self, max_steps: int) -> None:
        """Start an episode of ``max_steps`` budgeted steps: fingers open, holding nothing."""
        self.grip, self.held, self.steps, self.max_steps = self.open_grip, None, 0, max_steps
        self._stop.clear()

    def _dt(self) -> float:
        """Simulated seconds a step takes."""
        raise NotImplementedError

    @property
    def sim_time(self) -> float:
        """Simulated seconds since the reset."""
        return self.steps * self._dt() if self.env is not None else 0.0

    def stop(self) -> None:
        """Make the next step fail: another thread preempts the running motion."""
        self._stop.set()

    def _may_step(self, budgeted: bool) -> None:
        """Refuse the next step once stopped, or past the budget where it counts."""
        if self._stop.is_set():
            raise StoppedError("the motion was stopped; nothing moves until the next reset")
        if budgeted and self.steps >= self.max_steps:
            raise StepBudgetError(
                f"the episode's {self.max_steps} environment steps are used up "
                f"({self.max_steps * self._dt():.{self.budget_digits}f} simulated seconds): "
                "take fewer or shorter motions"
            )

    # --- measuring -------------------------------------------------------------------------

    def _tcp(self) -> np.ndarray:
        """The fingertips' centre."""
        raise NotImplementedError

    def _position(self, thing: Any) -> np.ndarray:
        """Where the backend measures a thing."""
        raise NotImplementedError

    def workspace(self) -> WorkspaceBox:
        """The box the fingertips may be sent into."""
        raise NotImplementedError

    def ee_pose(self) -> Pose:
        """The fingertips' centre and the gripper's orientation."""
        raise NotImplementedError

    @staticmethod
    def _length(v: np.ndarray) -> float:
        """A vector's length, as the backend's motions have always measured it."""
        return float(np.linalg.norm(v))

    @staticmethod
    def _dot(a: np.ndarray, b: np.ndarray) -> float:
        """Two vectors' dot product, as the backend's motions have always measured it."""
        return float(np.dot(a, b))

    def _check_box(self, target: np.ndarray) -> None:
        """UnreachablePoseError, naming the bound, for a target outside the workspace box."""
        box = self.workspace()
        low, high = box.low.as_array(), box.high.as_array()
        for axis, name in enumerate("xyz"):
            if not low[axis] - 1e-9 <= target[axis] <= high[axis] + 1e-9:
                raise UnreachablePoseError(
                    f"({target[0]:.3f}, {target[1]:.3f}, {target[2]:.3f})",
                    f"{name} must lie in [{low[axis]:.3f}, {high[axis]:.3f}]{self.reach_words}",
                )

    def _check_yaw(self, pose: Pose, why: str) -> None:
        """UnreachablePoseError for a pose that would turn the gripper about the vertical."""
        if abs(math.remainder(pose.yaw - self.ee_pose().yaw, 2 * math.pi)) > math.radians(1):
            raise UnreachablePoseError("that yaw", why)

    def _is_robot(self, body: int) -> bool:
        """Whether a MuJoCo body is part of the arm or its gripper."""
        raise NotImplementedError

    def _thing_body(self, thing: Any) -> int | None:
        """The MuJoCo body a named thing hangs from; None for a marker with no body."""
        raise NotImplementedError

    def _scenery(self, body: int) -> str:
        """What to call a body the arm touches that belongs to no named thing."""
        raise NotImplementedError

    def _in_the_way(self) -> str:
        """What the arm touches, in the words the scene uses, for a motion that stopped short."""
        model, data = self.env.model, self.env.data
        names: dict[int, str] = {}
        for thing in self._things():
            body = self._thing_body(thing)
            if body is not None:
                names.setdefault(body, thing.name)
        touched = set()
        for contact in data.contact[: data.ncon]:
            bodies = [int(model.geom_bodyid[g]) for g in (contact.geom1, contact.geom2)]
            robot = [b for b in bodies if self._is_robot(b)]
            if len(robot) == 1:
                touched_body = other = bodies[1 - bodies.index(robot[0])]
                # A part's subtree: the first named thing above the body touched.
                while other and other not in names:
                    other = int(model.body_parentid[other])
                touched.add(names[other] if other in names else self._scenery(touched_body))
        held = {self.held} if self.held else set()
        touched -= held
        if not touched:
            return "the arm cannot follow the line there (its joints are at their limits)"
        return "the arm touches " + ", ".join(sorted(touched))

    def _check_arrived(self, left: float, where: str) -> None:
        """MotionError for a motion that ended ``left`` metres short of ``where``."""
        if left > SHORT:
            raise MotionError(
                f"the gripper stopped {left * 1000:.0f} mm short of {where}: {self._in_the_way()}"
            )

    # --- the straight line -----------------------------------------------------------------

    def _held_back(self, here: np.ndarray, last: np.ndarray) -> bool:
        """Whether fingertips behind their waypoint, at ``here`` after ``last``, are held back."""
        return True

    def _follow(
        self,
        start: np.ndarray,
        target: np.ndarray,
        count: int,
        advance: Callable[[np.ndarray, np.ndarray, float], None],
        press: Callable[[], None],
    ) -> bool:
        """Lead the fingertips from ``start`` to ``target`` by ``count`` waypoints; True if blocked.

        ``advance(previous, waypoint, share)`` takes one step toward the next waypoint, ``share``
        of the way. The waypoint waits while the fingertips are ``follow`` behind it; when they
        are held back more than ``blocked_steps`` steps in a row, something blocks them:
        ``press()`` keeps them pressing on it, and the line ends there.
        """
        done, behind = 0, 0
        waypoint, last = start, start
        while done < count:
            here = self._tcp()
            if self._length(waypoint - here) < self.follow:
                done, behind = done + 1, 0
            elif self._held_back(here, last):
                behind += 1
            last = here
            if behind > self.blocked_steps:
                press()
                return True
            share = done / count
            previous, waypoint = waypoint, start + (target - start) * share
            advance(previous, waypoint, share)
        return False

    def _keep(self, hold: np.ndarray | None) -> None:
        """One step with the fingertips kept at ``hold`` (None: where they are)."""
        raise NotImplementedError

    def _settle(self, target: np.ndarray, reached: float) -> float:
        """Close the last gap to the target, up to ``settle_steps``; the distance left."""
        for _ in range(self.settle_steps):
            if self._length(target - self._tcp()) < reached:
                break
            self._keep(target)
        return self._length(target - self._tcp())

    # --- the fingers, and what they do ----------------------------------------------------

    def _fingers(self, command: float, hold: np.ndarray | None = None) -> None:
        """Open or close the fingers, keeping the fingertips at ``hold`` meanwhile."""
        self.grip = command
        for _ in range(self.grip_steps):
            self._keep(hold)

    def close_gripper(self) -> None:
        """Close the empty fingers where they are, holding the fingertips still meanwhile."""
        if self.held is not None:
            raise GraspError(f"the gripper holds '{self.held}': release it first")
        self._fingers(self.closed_grip, hold=self._tcp())

    def move_ee(self, pose: Pose) -> None:
        """Move the fingertips in a straight line to a pose."""
        raise NotImplementedError

    def grasp(self, name: str) -> None:
        """Close the gripper on an object where it is."""
        raise NotImplementedError

    def _to_grasp(self, name: str) -> Any:
        """The thing grasp() closes on; GraspError while the gripper holds another."""
        thing = self._thing(name)
        if self.held is not None:
            raise GraspError(f"the gripper already holds '{self.held}': release it first")
        return thing

    def _back(self) -> Point:
        """The way release() draws the fingertips."""
        raise NotImplementedError

    def release(self) -> None:
        """Open the gripper and draw the fingertips back 5 cm (see :meth:`_back`)."""
        self._fingers(self.open_grip)
        self.held = None
        self.push(self._back(), CLEARANCE)

    def _may_pick(self, name: str, thing: Any) -> None:
        """GraspError for a thing that cannot be picked up."""
        if not thing.movable:
            raise GraspError(
                f"'{name}' is a {thing.kind}, fixed {self.fixed_where}: use grasp() and push() "
                "to move it"
            )

    def _lift(self) -> None:
        """Raise what was just grasped by ``LIFT``."""
        raise NotImplementedError

    def pick(self, name: str) -> None:
        """Grasp a free object and lift it 10 cm; a grasp that slips raises GraspError."""
        thing = self._thing(name)
        self._may_pick(name, thing)
        start = self._position(thing)
        self.grasp(name)
        self._lift()
        if self._position(thing)[2] < start[2] + SLIPPED:
            self._fingers(self.open_grip)
            self.held = None
            raise GraspError(f"the grasp on '{name}' slipped: it did not rise with the gripper")

    def _lowest(self, target: np.ndarray) -> np.ndarray:
        """Where the fingertips carrying an object can go, for a place() aiming at ``target``."""
        return target

    def _set_down(self, thing: Any, pose: Pose, target: np.ndarray) -> None:
        """Bring the held thing, above its place, down to it (the fingertips to ``target``)."""
        raise NotImplementedError

    def place(self, pose: Pose) -> None:
        """Carry the held object so its measured point reaches the pose, open, and draw back."""
        if self.held is None:
            raise GraspError("the gripper holds nothing: pick something first")
        thing = self._thing(self.held)
        offset = self._tcp() - self._position(thing)
        target = self._lowest(pose.position.as_array() + offset)
        above = np.array([target[0], target[1], max(target[2], float(self._tcp()[2]))])
        self.move_ee(Pose(Point.of(above), self.ee_pose().orientation))
        self._set_down(thing, pose, target)
        self.release()

    def _push_line(self, target: np.ndarray) -> None:
        """Follow a push's straight line to its end (``PUSH_REACHED``)."""
        raise NotImplementedError

    def push(self, direction: Point, distance: float) -> float:
        """Move the fingertips along a direction up to a distance; how far they got along it."""
        vector = direction.as_array()
        norm = self._length(vector)
        if norm < 1e-9 or distance < 0:
            raise LyraError("push needs a non-zero direction and a distance of 0 or more")
        unit = vector / norm
        start = self._tcp()
        box = self.workspace()
        target = np.clip(start + unit * distance, box.low.as_array(), box.high.as_array())
        self._push_line(target)
        return self._dot(self._tcp() - start, unit)


class MujocoArmBackend(MujocoBackend):
    """A :class:`MujocoArm` behind the lyra Backend protocol: its scene, reset and world state.

    A backend names its scene model (``scene_type``), lays a scene out on its arm and says
    what its success signals are.
    """

    scene_type: ClassVar[type[BaseModel]]

    def reset(self, scene: Any, seed: int, perturb: int = 0) -> None:
        """Lay the scene out from a seed (``perturb`` nudges it by a micrometre)."""
        kind = self.scene_type
        spec = scene if isinstance(scene, kind) else kind.model_validate(scene)
        self._lay_out(spec, seed, perturb)

    def _lay_out(self, scene: Any, seed: int, perturb: int) -> None:
        raise NotImplementedError

    def world_state(self) -> WorldState:
        """Objects, joints, and the backend's success signals."""
        return WorldState(self.arm.world_state(), self.arm.joints(), self._success())

    def _success(self) -> dict[str, float]:
        raise NotImplementedError

    def park(self) -> None:
        """Leave the arm where the plan left it."""
