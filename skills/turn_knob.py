import math

from lyra.api import grasp, held_object, joint_value, release, turn


_TOLERANCE_DEG = 1.0   # the knob counts as turned the whole angle within this many degrees

_STILL_DEG = 0.2       # a turn that moves the joint less than this did not move it at all

_MAX_TURN_DEG = 179.0  # each turn() is kept under half a turn

_MAX_STILL = 2         # this many turns in a row that do not move the joint: it is at its end stop


def turn_knob(
    knob: str,
    joint: str,
    angle_deg: float,
    *,
    max_turns: int = 3,
) -> float:
    """Turn a knob, such as a stove's burner knob, about its own axis by a given angle: grasp it, turn it, make up for any slip, and let go.

    Args:
        knob: name of the knob, as listed by object_names(kind="knob"). The gripper must
            be empty. grasp() takes the knob's fin at its point, as object_pose() gives
            it, coming in from the front (from -y). At the end the knob is released with
            release(), so the gripper is left empty and drawn back from the knob.
        joint: name of the knob's joint, as listed by joint_names(). Its value is read
            before the turn and before and after each turn to tell how far the knob
            really turned. Which way a turn() moves the joint is read off the first turn
            that moves it, since the knob turns with the fingers.
        angle_deg: how far to turn the knob, in degrees, in the sense turn() uses:
            positive turns it clockwise as seen from behind the gripper, looking where it
            points (that is, from the robot's side, looking at the knob's face). Which
            sign turns a burner on depends on the stove, so the caller chooses it. It
            must be under half a turn in size.
        max_turns: the most turns to make. A stiff knob may slip in the fingers, so that
            it turns less than the fingers do: when its joint has moved less than asked,
            the knob is released, grasped again and turned by the part still missing plus
            the slip seen on the last turn (the fingers' turn, as turn() returns it, less
            how far the knob went), until it has turned the whole angle (to within a
            degree) or past it, or max_turns turns have been made. A turn that does not
            move the joint at all is tried once more, further; the skill stops early,
            without failing, when two turns in a row do not move it, as at the knob's end
            stop.

    Returns:
        How far the knob actually turned from the start to the end of the skill, in
        degrees, measured from its joint and counted in the sense of angle_deg: about
        angle_deg itself when the turn went fully, less in size where the knob slipped or
        stopped, and of the opposite sign if it turned the other way (0.0 if it never
        moved).
    """
    if held_object() is not None:
        raise RuntimeError(f"turn_knob needs an empty gripper, but it holds {held_object()}")
    if abs(angle_deg) >= 180.0:
        raise ValueError(f"angle_deg must be under half a turn in size, got {angle_deg}")

    start = joint_value(joint)
    sense = 0.0   # +1/-1 once seen: how a positive turn() moves the joint's value
    turned = 0.0  # degrees the knob has turned so far, in the sense of angle_deg
    slip = 0.0    # degrees the fingers turned without the knob on the last turn
    still = 0     # turns in a row that did not move the joint

    for _ in range(max_turns):
        missing = angle_deg - turned
        if abs(missing) <= _TOLERANCE_DEG or missing * angle_deg < 0.0:
            break  # turned the whole angle, or past it
        ask = missing + math.copysign(slip, missing)
        ask = max(-_MAX_TURN_DEG, min(_MAX_TURN_DEG, ask))

        grasp(knob)
        before = joint_value(joint)
        fingers = turn(ask)
        moved = math.degrees(joint_value(joint) - before)
        release()

        if abs(moved) < _STILL_DEG:
            still += 1
            if still >= _MAX_STILL:
                break  # at its end stop: turning again will not help
            slip = abs(fingers)  # the whole turn slipped: turn further next time
            continue
        still = 0
        if sense == 0.0:
            sense = math.copysign(1.0, moved * ask)
        progress = sense * moved * math.copysign(1.0, ask)  # how far the knob went the way asked
        slip = max(0.0, abs(fingers) - progress)
        turned = sense * math.degrees(joint_value(joint) - start)

    return sense * math.degrees(joint_value(joint) - start)
