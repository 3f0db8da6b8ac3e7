import math

from lyra.api import Point, bounding_box, close_gripper, ee_pose, held_object, joint_axis, joint_value, object_pose, object_size, push, workspace


_ON_AXIS = 0.01  # a dial point closer than this to the axis is taken to lie on it

_ABOVE = 0.02  # height above the top of the dial's box for coming in and leaving

_TOLERANCE = math.radians(0.2)  # close enough to the asked angle

_MAX_STEPS = 100  # a guard only; the turn normally ends long before

_MAX_CHORD = math.radians(150.0)  # the furthest round one push goes, so it stays on the right side of the axis


def _push_to(target: Point) -> float:
    """Move the fingertips in a straight line to a point with push(), never failing when blocked."""
    here = ee_pose().position
    delta = Point(target.x - here.x, target.y - here.y, target.z - here.z)
    length = math.sqrt(delta.x ** 2 + delta.y ** 2 + delta.z ** 2)
    if length > 1e-6:
        return push(delta, length)
    return 0.0


def turn_dial(
    dial: str,
    joint: str,
    direction: Point,
    angle_deg: float,
    *,
    low: float = 1.0 / 3.0,
    clearance: float = 0.025,
    standoff: float = 0.025,
    step_deg: float = 30.0,
    max_pushes: int | None = None,
) -> float:
    """Turn a dial about its upright axis by pushing the closed fingertips round it, low against its rim just behind its pointer, by a given angle or until it stops, then draw them clear of it.

    Args:
        dial: name of the dial, as listed by object_names(kind="dial"). The gripper,
            which must be empty, is closed to a narrow tip before it moves. The pointer
            is taken to be at the dial's point as object_pose() gives it; where that
            point lies on the axis (less than 1 cm from it), at half the dial's wider
            horizontal extent (as object_size() gives it) from the axis, on the robot's
            side (-y). The tip is first brought 2 cm above the top of the dial's box, as
            bounding_box() gives it, over a point outside the box (clearance beyond its
            side furthest from the axis), standoff back along the arc from the pointer
            (on the side the pointer turns away from). It is lowered straight down
            there, outside the dial, to the low height, and then moved straight in
            towards the axis until it meets the dial's rim (or at most to half the
            pointer's distance from the axis). It then goes round the axis on the
            circle through where it met the rim. At the end it is drawn straight out,
            away from the axis, and up to 2 cm above the top of the box, to where it
            came down, so it no longer touches the dial; the gripper is left closed and
            empty. Like push(), none of these moves fail when blocked.
        joint: name of the dial's hinge, as listed by joint_names(). Its axis, as
            joint_axis() gives it, is what the tip goes round. Its value is read before
            the turn and after each step, to tell how far the dial has really turned.
        direction: the way the pointer starts to move, as a vector in the horizontal
            plane (it need not be of unit length); only its x and y are used, and z is
            ignored. It picks which way round the axis the dial is turned: for example,
            with the pointer at the front of the dial (towards the robot, -y),
            Point(-1, 0, 0) turns it clockwise seen from above and Point(1, 0, 0)
            counter-clockwise. Which way the task needs is chosen by the caller. It must
            not point towards or away from the axis.
        angle_deg: how far to turn the dial from where it starts, in degrees, as a
            positive angle under one full turn. The turn stops early, without failing,
            where the dial meets an end stop or stops following: once the tip has
            caught up with the pointer, a step that turns the hinge less than a quarter
            of that step's angle ends it. So a value larger than the dial's travel turns
            it all the way.
        low: the height at which the tip pushes against the rim, as a fraction of the
            height of the dial's box above its bottom (never below the lowest height
            the fingertips can reach, as workspace() gives it).
        clearance: distance in metres outside the side of the dial's box furthest from
            the axis at which the tip comes down, so that it comes down beside the dial
            and not on it.
        standoff: distance in metres along the arc through the pointer, back from the
            pointer's centre line, at which the tip comes in against the rim, so that it
            lands just behind the pointer and not on it. The tip first closes this gap,
            then pushes the pointer round.
        step_deg: the most the tip goes round the axis in one step, in degrees. Each
            step is one straight push() along the chord of the circle, ending back on
            the circle, so the tip keeps to the rim; the hinge's value is read again
            before the next step.
        max_pushes: the most pushes made round the axis. None (the default) makes as
            many steps of at most step_deg as the turn needs. A number instead makes at
            most that many, and lengthens them where need be so that they still reach
            angle_deg: each goes round step_deg, or an equal share of what is still to
            go (the gap behind the pointer included) where that is more, so 1 goes round
            in a single straight push along one chord. No push goes further round than
            150 degrees, so the turn stops short where there are too few pushes for it.
            This suits a dial that spins easily and runs on after each push, where the
            episode has few steps to spare. The early stop above still applies.

    Returns:
        How far the dial actually turned, in degrees: how far its hinge turned (in
        either sense) from the start to the end of the skill.
    """
    if held_object() is not None:
        raise ValueError(f"turn_dial needs an empty gripper, but it holds {held_object()!r}")
    if not 0.0 < angle_deg < 360.0:
        raise ValueError(f"angle_deg must be a positive angle under a full turn, not {angle_deg}")
    if step_deg <= 0.0:
        raise ValueError(f"step_deg must be positive, not {step_deg}")
    if standoff < 0.0:
        raise ValueError(f"standoff must not be negative, not {standoff}")
    if clearance < 0.0:
        raise ValueError(f"clearance must not be negative, not {clearance}")
    if max_pushes is not None and max_pushes < 1:
        raise ValueError(f"max_pushes must be at least 1, not {max_pushes}")

    # Where the axis and the pointer are, seen from above.
    axis_point, _ = joint_axis(joint)
    cx, cy = axis_point.x, axis_point.y
    pointer = object_pose(dial).position
    rx, ry = pointer.x - cx, pointer.y - cy
    if math.hypot(rx, ry) < _ON_AXIS:
        size = object_size(dial)
        rx, ry = 0.0, -0.5 * max(size.x, size.y)
    pointer_radius = math.hypot(rx, ry)
    if pointer_radius < 1e-6:
        raise ValueError(f"cannot tell where the pointer of {dial!r} is")

    # Which way round the axis: the sign of the turn from the radius to direction.
    ux, uy = direction.x, direction.y
    cross = rx * uy - ry * ux
    if math.hypot(ux, uy) < 1e-9 or abs(cross) < 1e-6 * pointer_radius * math.hypot(ux, uy):
        raise ValueError("direction must be horizontal and must not point towards or away from the axis")
    sense = 1.0 if cross > 0.0 else -1.0  # +1 counter-clockwise seen from above

    # The tip comes in standoff back along the arc from the pointer's centre line.
    pointer_angle = math.atan2(ry, rx)
    gap = standoff / pointer_radius  # angle the tip goes before it bears on the pointer
    tip_angle = pointer_angle - sense * gap

    low_corner, top_corner = bounding_box(dial)
    outer = max(top_corner.x - cx, cx - low_corner.x, top_corner.y - cy, cy - low_corner.y)
    outside = max(outer, pointer_radius) + clearance
    above_z = top_corner.z + _ABOVE
    work_z = low_corner.z + low * (top_corner.z - low_corner.z)
    work_z = max(work_z, workspace().low.z + 0.001)

    def on_circle(angle: float, radius: float, z: float) -> Point:
        return Point(cx + radius * math.cos(angle), cy + radius * math.sin(angle), z)

    # Come in from above: rise first where the tip is lower, then across to a point
    # outside the dial, down beside it, and straight in until the rim stops the tip.
    close_gripper()
    here = ee_pose().position
    if here.z < above_z:
        _push_to(Point(here.x, here.y, above_z))
    _push_to(on_circle(tip_angle, outside, above_z))
    _push_to(on_circle(tip_angle, outside, work_z))
    _push_to(on_circle(tip_angle, 0.5 * pointer_radius, work_z))
    here = ee_pose().position
    radius = max(math.hypot(here.x - cx, here.y - cy), 1e-3)
    work_z = here.z

    # Push the tip round the rim in short chords of the circle, reading the hinge each time.
    target = math.radians(angle_deg)
    step_max = math.radians(step_deg)
    start_value = joint_value(joint)
    last_value = start_value
    travelled = 0.0  # how far round the tip has been sent so far
    pushes = 0
    for _ in range(_MAX_STEPS):
        if max_pushes is not None and pushes >= max_pushes:
            break
        turned = abs(last_value - start_value)
        remaining = target - turned
        if remaining <= _TOLERANCE:
            break
        caught_up = travelled >= gap - 1e-9
        closing = max(gap - travelled, 0.0)
        step = min(step_max, remaining + closing)
        if max_pushes is not None:
            share = (remaining + closing) / (max_pushes - pushes)
            step = min(max(step, share), _MAX_CHORD)
        pushes += 1
        tip_angle += sense * step
        travelled += step
        _push_to(on_circle(tip_angle, radius, work_z))
        value = joint_value(joint)
        moved = abs(value - last_value)
        last_value = value
        if caught_up and moved < 0.25 * step:
            break  # end stop, or the dial no longer follows the tip

    # Draw the tip straight out from the axis and up, clear of the dial; the gripper
    # stays closed and empty.
    here = ee_pose().position
    out_angle = math.atan2(here.y - cy, here.x - cx)
    _push_to(on_circle(out_angle, max(outside, math.hypot(here.x - cx, here.y - cy)), above_z))

    return math.degrees(abs(joint_value(joint) - start_value))
