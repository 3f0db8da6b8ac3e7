import math

import numpy as np

from lyra.api import Point, ee_pose, grasp, held_object, joint_axis, joint_value, move_ee, object_pose, push, release


def _vec(p: Point) -> np.ndarray:
    """Turn a Point into a numpy vector."""
    return np.array([p.x, p.y, p.z], dtype=float)


def _point(v: np.ndarray) -> Point:
    """Turn a numpy vector into a Point."""
    return Point(float(v[0]), float(v[1]), float(v[2]))


def _radial(point: np.ndarray, origin: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """Vector from the hinge's axis to a point, at right angles to the axis."""
    offset = point - origin
    return offset - np.dot(offset, axis) * axis


def _rotate(v: np.ndarray, k: np.ndarray, angle: float) -> np.ndarray:
    """Rotate a vector about the unit vector k by an angle in radians (Rodrigues)."""
    c, s = math.cos(angle), math.sin(angle)
    return v * c + np.cross(k, v) * s + k * np.dot(k, v) * (1.0 - c)


def _angle_between(a: np.ndarray, b: np.ndarray, k: np.ndarray) -> float:
    """Signed angle in degrees from a to b about the unit vector k."""
    return math.degrees(math.atan2(float(np.dot(k, np.cross(a, b))), float(np.dot(a, b))))


def _regrasp(lever: str) -> None:
    """Open the gripper, draw it back and take the lever again where it now is."""
    release()
    grasp(lever)


def _come_under(place: np.ndarray, clearance: float) -> None:
    """Bring the fingertips to clearance below a place: straight down (or up) where they are, then level across."""
    tip = _vec(ee_pose().position)
    low = float(place[2]) - clearance
    move_ee(Point(float(tip[0]), float(tip[1]), low))
    across = np.array([place[0] - tip[0], place[1] - tip[1], 0.0])
    length = float(np.linalg.norm(across))
    if length > 1e-6:
        push(_point(across), length)


def pull_up(
    lever: str,
    joint: str,
    angle_deg: float,
    *,
    step_deg: float = 10.0,
    max_steps: int = 20,
    target: Point | None = None,
    tolerance_deg: float = 2.0,
    lift_from: Point | None = None,
    lift_clearance: float = 0.05,
) -> float:
    """Pull a lever up by carrying its end round the arc about its hinge in short steps, grasping it (taking it again wherever it slips) or lifting it from below, by a given angle, until it reaches a target or until it stops.

    Args:
        lever: name of the lever, as listed by object_names(kind="lever"). Unless
            lift_from is given, the gripper, which must be empty, takes it with grasp(),
            coming down from above onto its point as object_pose() gives it, and keeps
            hold of it while the lever turns. Should the lever slip out of the fingers,
            it is taken again where it now is: the gripper is opened and drawn back
            with release(), then the lever is grasped afresh and the pull goes on from
            there; each such grasp counts as one of max_steps. A slip is told either by
            held_object() being None, or by a step turning the hinge less than half of
            what it was asked to, since the fingers may come off a lever held only by
            friction while held_object() still names it. At the end the lever is let go
            with release(), so the gripper is left open and empty, drawn up off the
            lever.
        joint: name of the lever's hinge, as listed by joint_names(). Its axis, as
            joint_axis() gives it (level for a lever that swings up and down), is the
            pivot the lever's end is carried round. The lever is turned the way that
            first raises its point (along +z), so no direction need be given. The joint's
            value is read before the pull and after each step, to tell how far the lever
            has really turned.
        angle_deg: how far to raise the lever from where it starts, in degrees, as a
            positive angle about the hinge. Without a target, the pull stops early,
            without failing, where the lever meets its end stop (a pull made straight
            after a fresh grasp that hardly turns the hinge), so a value larger than its
            travel pulls it all the way up. Not used when target is given.
        step_deg: the most the lever is turned in one step, in degrees. Each step is one
            straight push() of the fingertips along the chord of the circle they lie on
            round the hinge's axis, to the point that many degrees (or what is left to
            go, if less) further round it; the fingertips' position is read again before
            each step, so they keep to the arc about the pivot rather than rising
            straight up.
        max_steps: most steps (and re-grasps) to make; the skill stops after them even
            if the lever has not yet turned far enough.
        target: a point the lever's point should be brought to, such as a goal above
            it. When given, the lever is carried round its hinge until its point comes
            round to the target's direction from the axis (within tolerance_deg), and a
            pull that fails straight after a fresh grasp leads to a new grasp rather than
            to stopping. None keeps the behaviour set by angle_deg.
        tolerance_deg: with a target, how close in angle about the hinge the lever's
            point must come to the target's direction, in degrees.
        lift_from: where to hold the fingertips, as an offset in world axes (metres)
            from the lever's point, so that the gripper's body comes under the lever
            and lifts it, instead of the fingers grasping it: for a lever the fingers
            cannot carry. The fingertips first go straight down (or up) where they are
            to lift_clearance below that place, then level across to under it; each
            step then pushes them to that offset from where the lever's point is to be
            after the step, so the gripper keeps under the lever and pushes it round
            its hinge. The lever is never grasped, no re-grasp is made, and two steps
            running that hardly turn the hinge end the pull. At the end the gripper is
            left where it is, holding the lever up. None grasps the lever as before.
        lift_clearance: with lift_from, how far below its place, in metres, the gripper
            comes in under the lever, so as to pass beneath it without touching it.

    Returns:
        How far the lever actually turned, in degrees: how far its hinge turned (in
        either sense) from the start to the end of the skill.
    """
    axis_point, axis_dir = joint_axis(joint)
    origin = _vec(axis_point)
    axis = _vec(axis_dir)
    axis = axis / np.linalg.norm(axis)

    def lever_point() -> np.ndarray:
        return _vec(object_pose(lever).position)

    # Turn the way that first raises the lever's point; k is the axis of that turn.
    sense = 1.0 if np.cross(axis, _radial(lever_point(), origin, axis))[2] >= 0.0 else -1.0
    k = sense * axis
    goal = None if target is None else _radial(_vec(target), origin, axis)
    lift = None if lift_from is None else _vec(lift_from)

    def remaining_deg() -> float:
        if goal is None:
            return angle_deg - math.degrees(abs(joint_value(joint) - start))
        return _angle_between(_radial(lever_point(), origin, axis), goal, k)

    start = joint_value(joint)
    if lift is None:
        grasp(lever)
    else:
        _come_under(lever_point() + lift, lift_clearance)
    fresh = lift is None
    steps = 0
    while steps < max_steps:
        remaining = remaining_deg()
        if remaining <= (1e-3 if goal is None else tolerance_deg):
            break
        step = min(step_deg, remaining)
        tip = _vec(ee_pose().position)
        if lift is None:
            if held_object() != lever:
                _regrasp(lever)
                steps += 1
                fresh = True
                continue
            # Carry the fingertips round their own circle about the pivot.
            if np.linalg.norm(_radial(tip, origin, axis)) < 1e-6:
                break
            chord = origin + _rotate(tip - origin, k, math.radians(step)) - tip
        else:
            # Bring the gripper to lift_from from where the lever's point is to go next.
            chord = origin + _rotate(lever_point() - origin, k, math.radians(step)) + lift - tip
        length = float(np.linalg.norm(chord))
        if length < 1e-6:
            break

        before = joint_value(joint)
        push(_point(chord), length)
        steps += 1
        moved = math.degrees(abs(joint_value(joint) - before))

        if moved < step / 2.0:
            if lift is not None:
                if fresh:
                    break  # twice running it hardly turned: at its end stop, or out of reach
                fresh = True
                continue
            if fresh and goal is None:
                break  # end stop: a fresh grasp could not turn it
            if steps < max_steps:
                _regrasp(lever)
                steps += 1
            fresh = True
            continue
        fresh = False

    if lift is None:
        release()
    return math.degrees(abs(joint_value(joint) - start))
