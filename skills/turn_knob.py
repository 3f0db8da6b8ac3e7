import math

from lyra.api import grasp, joint_axis, joint_value, release, turn


def _turn_sign(joint: str) -> float:
    """Return +1 when turn()'s positive sense raises the joint's value, else -1.

    turn() rotates the fingers about the way the gripper points (+y), clockwise as
    seen looking along +y, which is a positive (right-handed) rotation about +y. A
    hinge's value grows with a right-handed rotation about its own axis, so the two
    agree when the axis points along +y and are opposite when it points along -y.
    """
    _, direction = joint_axis(joint)
    return -1.0 if direction.y < 0.0 else 1.0


def _turned_deg(joint: str, start: float, sign: float) -> float:
    """How far the knob has turned since start, in degrees, in turn()'s sense."""
    return math.degrees(joint_value(joint) - start) * sign


def turn_knob(
    knob: str,
    joint: str,
    angle_deg: float,
    *,
    tolerance_deg: float = 5.0,
    max_turns: int = 6,
) -> float:
    """Turn a knob about its own axis by a given angle, taking hold of it once by its fin and turning on, without letting go, where it slips, then let go of it.

    Args:
        knob: name of the knob, as listed by object_names(kind="knob") (for example the
            knob of the burner to turn on). The gripper, which must be empty, grasps it
            once with grasp(), coming at it from the front (from -y) onto its point as
            object_pose() gives it, and keeps hold of it for every turn: it is not
            grasped afresh between turns, since closing the fingers square on a fin
            that has already turned would turn it back. At the end the knob is let go
            with release(), so the gripper is left open and empty, drawn back from the
            knob. Nothing is grasped when the knob is already within tolerance_deg.
        joint: name of the knob's joint, as listed by joint_names(). Its value is read
            before the turn and after each turn, to tell how far the knob has really
            gone, since a stiff knob may slip in the fingers.
        angle_deg: how far to turn the knob from where it starts, in degrees. Positive
            turns it clockwise as seen from the robot, looking at the knob's front
            along +y (as turn() measures it); negative turns it counter-clockwise. Which
            sign turns a burner on depends on the stove, and the caller chooses it.
        tolerance_deg: how close, in degrees, the knob's joint must come to angle_deg
            from its start for the turning to stop.
        max_turns: most turns to make; after each one the joint is read again and, if
            the knob lagged behind the gripper, the gripper, still holding it, turns on
            by the rest of the way. The skill stops after these turns even if the knob
            has not reached angle_deg (for example when it is at its end stop).

    Returns:
        How far the knob actually turned, in degrees: the change in its joint's value
        from the start to the end of the skill, with the same sign convention as
        angle_deg.
    """
    sign = _turn_sign(joint)
    start = joint_value(joint)

    if abs(angle_deg) <= tolerance_deg:
        return 0.0

    # Take hold of the knob once, and keep hold of it while turning it the rest of the
    # way: a fresh grasp would square the fingers on the fin and undo the turn so far.
    grasp(knob)
    for _ in range(max(0, max_turns)):
        remaining = angle_deg - _turned_deg(joint, start, sign)
        if abs(remaining) <= tolerance_deg:
            break
        turn(remaining)

    release()

    return _turned_deg(joint, start, sign)
