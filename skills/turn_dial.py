import math

from lyra.api import Point, bounding_box, close_gripper, ee_pose, held_object, joint_axis, joint_value, object_pose, object_size, push


_ON_AXIS = 0.01  # a pointer nearer the axis than this (m) gives no bearing: the robot's side is used

_TOLERANCE_DEG = 1.0  # the turn is done once it is this close to angle_deg

_STALL_DEG = 0.2  # a step that turns the dial less than this has not turned it

_MIN_MOVE = 1e-6  # moves shorter than this (m) are skipped

_UPRIGHT = 0.1  # largest horizontal part of the unit axis still taken as upright (about 6 degrees)


def _on_circle(centre: Point, radius: float, bearing: float, z: float) -> Point:
    """Return the point on a horizontal circle round an upright axis at a given bearing.

    Args:
        centre: a point on the axis; only its x and y are used.
        radius: the circle's radius in metres.
        bearing: the point's direction from the axis, in radians, counter-clockwise from +x.
        z: the point's height.
    """
    return Point(centre.x + radius * math.cos(bearing), centre.y + radius * math.sin(bearing), z)


def _push_to(target: Point, *, horizontal: bool = False) -> float:
    """Move the fingertips in a straight line to a point with push(), so the move does not fail when blocked.

    Args:
        target: where the fingertips' centre goes.
        horizontal: True keeps the fingertips' current height and moves them only in x and y.
    """
    here = ee_pose().position
    dx = target.x - here.x
    dy = target.y - here.y
    dz = 0.0 if horizontal else target.z - here.z
    distance = math.sqrt(dx * dx + dy * dy + dz * dz)
    if distance < _MIN_MOVE:
        return 0.0
    return push(Point(dx, dy, dz), distance)


def turn_dial(
    dial: str,
    joint: str,
    angle_deg: float,
    *,
    step_deg: float = 10.0,
    clearance: float = 0.02,
    behind: float = 0.01,
    height: float = 0.02,
    max_pushes: int | None = None,
) -> float:
    """Turn a dial about its upright axis by a given angle by pushing the closed fingertips, held low against its rim just behind its pointer, round the axis, then draw the tip off it.

    Args:
        dial: name of the dial, as listed by object_names(kind="dial"). The gripper,
            which must be empty, is closed to a narrow tip before it moves. The dial's
            pointer is its point as object_pose() gives it; where that point lies on
            the axis (less than a centimetre from it), the pointer is taken to be on
            the robot's side (towards -y). The dial's rim is the circle round the axis
            of half the dial's wider horizontal extent, as object_size() gives it. The
            tip rises to a clearance above the top of the dial's box (as bounding_box()
            gives it), goes across to a clearance outside the rim, just behind the
            pointer (on the side the dial turns away from), comes straight down there
            to a low height, and then moves in towards the axis until it is against
            the rim. It then pushes the rim round, staying at that height. At the end
            the tip steps straight out from the axis to a clearance outside the rim and
            is drawn straight up to a clearance above the top of the dial's box, so it
            no longer touches the dial; like push(), none of these moves fail when
            blocked.
        joint: name of the dial's hinge, as listed by joint_names(). Its axis, as
            joint_axis() gives it, must be upright; the tip follows the rim's circle
            round it. The joint's value is read before the turn and after each step,
            to tell how far the dial has turned.
        angle_deg: how far to turn the dial, in degrees: positive turns it
            counter-clockwise seen from above, negative clockwise. Its size must be
            under half a turn (180). The turn stops once the hinge has changed by this
            much from its value at the start, to within a degree, and stops early,
            without failing, where a step does not turn the dial, as at an end stop,
            or once max_pushes steps have been made.
        step_deg: the largest angle in degrees the dial is turned by one straight
            push() step, along the chord of the rim's circle, before the joint is read
            again and the next step aimed afresh, one step further round than the
            pointer now is.
        clearance: height in metres above the top of the dial's box at which the tip
            goes across to and away from the dial, and distance outside the rim at
            which it comes down and to which it steps out at the end.
        behind: distance in metres along the rim, behind the pointer, at which the tip
            comes down and is put against the rim.
        height: height in metres above the bottom of the dial's box at which the tip
            pushes the rim; at most half the box's height is used.
        max_pushes: the most push() steps made round the dial, at least 1; None (the
            default) makes as many as the turn needs. A dial that spins easily runs
            on after a push, so a single push of a quarter turn (max_pushes=1 with
            step_deg=90) can be enough, and saves moves where the episode is short.

    Returns:
        How far the dial actually turned, in degrees: how far its hinge moved, in
        either sense, from the start to the end of the turn (0.0 if it never moved),
        as read right after the last push.
    """
    holding = held_object()
    if holding is not None:
        raise ValueError(f"turn_dial needs an empty gripper, but it holds {holding!r}")
    if not abs(angle_deg) < 180.0:
        raise ValueError(f"angle_deg must be under half a turn (180), got {angle_deg}")
    if step_deg <= 0.0:
        raise ValueError(f"step_deg must be positive, got {step_deg}")
    if clearance < 0.0:
        raise ValueError(f"clearance must not be negative, got {clearance}")
    if behind < 0.0:
        raise ValueError(f"behind must not be negative, got {behind}")
    if height < 0.0:
        raise ValueError(f"height must not be negative, got {height}")
    if max_pushes is not None and max_pushes < 1:
        raise ValueError(f"max_pushes must be at least 1, got {max_pushes}")

    centre, axis = joint_axis(joint)
    axis_length = math.sqrt(axis.x * axis.x + axis.y * axis.y + axis.z * axis.z)
    if axis_length == 0.0 or math.hypot(axis.x, axis.y) > _UPRIGHT * axis_length:
        raise ValueError(f"the axis of {joint!r} is not upright")
    # By the right-hand rule a rising joint value turns the dial counter-clockwise seen
    # from above when the axis points up, and clockwise when it points down.
    joint_sense = 1.0 if axis.z > 0.0 else -1.0

    size = object_size(dial)
    rim = 0.5 * max(size.x, size.y)
    if rim < _MIN_MOVE:
        raise ValueError(f"{dial!r} has no rim to push round its axis")
    pointer = object_pose(dial).position
    if math.hypot(pointer.x - centre.x, pointer.y - centre.y) < _ON_AXIS:
        start_bearing = -0.5 * math.pi  # the robot's side
    else:
        start_bearing = math.atan2(pointer.y - centre.y, pointer.x - centre.x)

    start_value = joint_value(joint)
    target = abs(angle_deg)
    if target <= _TOLERANCE_DEG:
        return 0.0
    sense = 1.0 if angle_deg > 0.0 else -1.0  # + counter-clockwise seen from above

    low_corner, high_corner = bounding_box(dial)
    above = high_corner.z + clearance
    level = low_corner.z + min(height, 0.5 * (high_corner.z - low_corner.z))
    back = start_bearing - sense * behind / rim  # just behind the pointer

    # Come down outside the rim, just behind the pointer, low, and move in against the rim.
    close_gripper()
    outside = _on_circle(centre, rim + clearance, back, level)
    here = ee_pose().position
    if here.z < above:
        _push_to(Point(here.x, here.y, above))  # rise first, so the way across clears the dial
    _push_to(Point(outside.x, outside.y, above))
    _push_to(outside)
    _push_to(_on_circle(centre, rim, back, level), horizontal=True)

    # Push the rim round in straight steps, each from where the tip is to the point on
    # the rim one step further round than the pointer now is. The steps stay level at
    # the tip's height.
    turned = 0.0  # degrees turned so far, in the sense of the turn
    max_steps = 10 * math.ceil(target / step_deg) + 10
    if max_pushes is not None:
        max_steps = min(max_steps, max_pushes)
    for _ in range(max_steps):
        remaining = target - turned
        if remaining <= _TOLERANCE_DEG:
            break
        bearing = start_bearing + math.radians(sense * turned)  # where the pointer now is
        step = math.radians(min(step_deg, remaining))
        _push_to(_on_circle(centre, rim, bearing + sense * step, level), horizontal=True)
        now = sense * joint_sense * math.degrees(joint_value(joint) - start_value)
        stalled = now - turned < _STALL_DEG
        turned = now
        if stalled:
            break  # the dial does not follow, as at an end stop
    end_value = joint_value(joint)

    # Step straight out from the axis, off the rim, then draw the tip straight up.
    here = ee_pose().position
    away = math.atan2(here.y - centre.y, here.x - centre.x)
    _push_to(_on_circle(centre, rim + clearance, away, here.z), horizontal=True)
    top = bounding_box(dial)[1].z + clearance
    here = ee_pose().position
    if here.z < top:
        push(Point(0.0, 0.0, 1.0), top - here.z)

    return abs(math.degrees(end_value - start_value))
