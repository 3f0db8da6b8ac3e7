import math

import numpy as np

from lyra.api import Point, grasp, held_object, joint_axis, joint_value, object_pose, push, release


_DONE_TOL_DEG = 0.5      # the door counts as opened by angle_deg once within this

_STALL_DEG = 0.3         # a pull from a fresh grasp that turns the hinge less than this has met the end stop

_SLIP_FRACTION = 0.5     # a step that turns the hinge less than this share of what was asked has slipped


def _vec(p: Point) -> np.ndarray:
    return np.array([p.x, p.y, p.z], dtype=float)


def _tangent(handle: str, origin: np.ndarray, axis: np.ndarray) -> tuple[np.ndarray, float]:
    """Unit tangent (positive sense about axis) and radius of the handle's circle."""
    p = _vec(object_pose(handle).position)
    r = p - origin
    r_perp = r - np.dot(r, axis) * axis
    radius = float(np.linalg.norm(r_perp))
    if radius < 1e-6:
        raise ValueError(f"handle {handle!r} lies on the hinge's axis; it cannot be pulled round it")
    t = np.cross(axis, r_perp)
    return t / np.linalg.norm(t), radius


def _regrasp(handle: str) -> None:
    """Let go of whatever the fingers still have and take the handle again where it is now."""
    release()
    grasp(handle)


def pull_open(
    handle: str,
    joint: str,
    angle_deg: float,
    *,
    step_deg: float = 10.0,
    max_steps: int = 20,
) -> float:
    """Open a hinged door, such as a microwave's, by grasping its handle and pulling it round the hinge towards the robot in short steps, taking it again wherever it slips, by a given angle or until it stops, then let go of it.

    Args:
        handle: name of the door's handle, as listed by object_names(kind="handle")
            (for example the microwave door's handle). The gripper, which must be
            empty, takes it with grasp(), coming at it from the front (from -y) onto
            its point as object_pose() gives it, and keeps hold of it while the door
            turns. Should the handle slip out of the fingers, it is taken again where
            it now is: the gripper is opened and drawn back with release(), then the
            handle is grasped afresh, and the pull goes on from there; each such grasp
            counts as one of max_steps. A slip is told either by held_object() being
            None, or by a step turning the hinge less than half of what it was asked
            to, since the fingers may come off a handle held only by friction while
            held_object() still names it. At the end the handle is let go with
            release(), so the gripper is left open and empty, drawn back from the
            handle.
        joint: name of the door's hinge, as listed by joint_names(). Its axis, as
            joint_axis() gives it (upright for a side-hinged door, level for one hinged
            at the bottom), is what the handle is pulled round. The door is turned the
            way that first brings the handle towards the robot (along -y), so no
            direction need be given. The joint's value is read before the pull and
            after each step, to tell how far the door has really opened.
        angle_deg: how far to open the door from where it starts, in degrees, as a
            positive angle about the hinge. The pull stops early, without failing,
            where the door meets its end stop (a pull made straight after a fresh
            grasp that hardly turns the hinge), so a value larger than its travel
            opens it all the way.
        step_deg: the most the door is turned in one step, in degrees. Each step is one
            slow straight push() of the held handle along the tangent of the circle
            through its current point round the hinge's axis, as long as the chord of
            that many degrees (or of what is left to go, if less); the handle's point
            is read again before the next step, so the fingertips keep to the arc.
        max_steps: most steps (and re-grasps) to make; the skill stops after them even
            if the door has not yet opened by angle_deg.

    Returns:
        How far the door actually opened, in degrees: how far its hinge turned (in
        either sense) from the start to the end of the skill.
    """
    if step_deg <= 0.0:
        raise ValueError("step_deg must be positive")

    start = joint_value(joint)
    if angle_deg <= _DONE_TOL_DEG or max_steps <= 0:
        return 0.0

    axis_point, axis_dir = joint_axis(joint)
    origin = _vec(axis_point)
    axis = _vec(axis_dir)
    axis = axis / np.linalg.norm(axis)

    grasp(handle)

    # Pick, once, the sense about the axis that first brings the handle towards the robot (-y).
    tangent, _ = _tangent(handle, origin, axis)
    sense = -1.0 if tangent[1] > 0.0 else 1.0

    steps = 0
    fresh = True  # the handle has just been taken afresh
    while steps < max_steps:
        opened_deg = math.degrees(abs(joint_value(joint) - start))
        remaining_deg = angle_deg - opened_deg
        if remaining_deg <= _DONE_TOL_DEG:
            break

        if held_object() is None:
            _regrasp(handle)  # it slipped: take it again where it now is
            fresh = True
            steps += 1
            continue

        tangent, radius = _tangent(handle, origin, axis)
        asked_deg = min(step_deg, remaining_deg)
        step = math.radians(asked_deg)
        chord = 2.0 * radius * math.sin(step / 2.0)
        direction = sense * tangent

        before = joint_value(joint)
        push(Point(*(float(c) for c in direction)), chord)
        steps += 1
        turned_deg = math.degrees(abs(joint_value(joint) - before))

        if turned_deg >= _SLIP_FRACTION * asked_deg:
            fresh = False
            continue  # the door followed the fingers: pull on

        if fresh and turned_deg < _STALL_DEG and held_object() is not None:
            break  # freshly taken, yet the door will not turn: it is at its end stop

        # The door lagged behind the fingers: they have slipped off the handle.
        # Take it again where it is now and keep pulling.
        if steps < max_steps:
            _regrasp(handle)
            fresh = True
            steps += 1

    release()
    return math.degrees(abs(joint_value(joint) - start))
