import math

from lyra.api import Point, ee_pose, grasp, held_object, joint_axis, joint_names, joint_value, object_names, object_pose, push, release


_ANGLE_TOL_DEG = 1.0  # the pull counts as done this close to angle_deg

_STALL_DEG = 0.5  # a step that turns the door less than this (or a quarter of its aim) did not move it

_MAX_STALLS = 2  # this many stalled steps in a row, the last one right after a fresh grasp, mean the end stop

_LAG = 0.5  # a step that turns the door less than this share of its aim leaves it lagging behind the fingers

_SLIP_M = 0.01  # metres the fingertips may drift from where they took the handle before they take it again

_MIN_RADIUS = 1e-3  # metres: a grip point this close to the axis cannot be drawn round it

_MIN_TOWARDS = 0.05  # the tangent's y must be at least this far from 0 to tell which way is out


def _unit(v: tuple[float, float, float]) -> tuple[float, float, float] | None:
    """Return v scaled to unit length, or None where it has no length."""
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if n < 1e-9:
        return None
    return (v[0] / n, v[1] / n, v[2] / n)


def _circle(
    point: Point, axis_point: Point, axis: tuple[float, float, float]
) -> tuple[tuple[float, float, float], tuple[float, float, float], float]:
    """Return the unit radius (out from the axis), the unit tangent (axis cross radius) and the radius of the circle about the axis through a point.

    Args:
        point: the point on the circle.
        axis_point: a point on the axis.
        axis: the axis's unit direction.
    """
    rx, ry, rz = point.x - axis_point.x, point.y - axis_point.y, point.z - axis_point.z
    along = rx * axis[0] + ry * axis[1] + rz * axis[2]
    rx, ry, rz = rx - along * axis[0], ry - along * axis[1], rz - along * axis[2]
    radius = math.sqrt(rx * rx + ry * ry + rz * rz)
    if radius < _MIN_RADIUS:
        raise RuntimeError("the grip point lies on the hinge's axis: it cannot be drawn round it")
    ax, ay, az = axis
    radial = (rx / radius, ry / radius, rz / radius)
    # axis is a unit vector at right angles to the radius, so the cross product has the radius's length.
    tangent = ((ay * rz - az * ry) / radius, (az * rx - ax * rz) / radius, (ax * ry - ay * rx) / radius)
    return radial, tangent, radius


def _offset(handle: str) -> tuple[float, float, float]:
    """Return where the fingertips are from the handle's point, as a vector.

    Args:
        handle: name of the handle.
    """
    ee = ee_pose().position
    p = object_pose(handle).position
    return (ee.x - p.x, ee.y - p.y, ee.z - p.z)


def pull_open(
    handle: str,
    joint: str,
    angle_deg: float,
    *,
    step_deg: float = 5.0,
    max_grasps: int = 3,
) -> float:
    """Pull a hinged door, such as a microwave's, open by its handle: grasp the handle, draw it round the hinge's axis by a given angle, grasp it again wherever it slips or lags, and let go.

    Args:
        handle: name of the door's handle, as listed by object_names(kind="handle"). The
            gripper must be empty when the skill starts. grasp() takes the handle's bar at
            its point, as object_pose() gives it, coming in from the front (from -y).
            The door is then pulled with push(), which moves the grasped handle along
            with the fingers. At the end the handle is let go with release(), so the
            gripper is left empty and drawn back from the handle, and the door stays
            open where the pull left it.
        joint: name of the door's hinge, as listed by joint_names(). The grip point is
            drawn round the hinge's axis, as joint_axis() gives it, in short straight
            push() steps. Each step runs along the chord of the circle about the axis
            through the handle's current point, as object_pose() gives it again after the
            last step, from that point to the point step_deg further round, so each
            step ends back on the door's arc. The door is turned the way in which the
            grip point first moves towards the robot (the tangent whose y is negative),
            out of the door's front face. So the door must face the robot and start
            less than a quarter turn open. The axis may be upright, as for a
            microwave's side-hinged door, or level, as for a drop-down door, but it
            must not pass through the grip point. The joint's value is read before the
            pull and before and after each step, to tell how far the door has opened.
        angle_deg: how far to open the door, in degrees, counted as the hinge's change
            from its value at the start, whichever sign the joint uses. It must be
            positive and under half a turn (180). The pull stops once the hinge has
            turned this far, to within a degree. It stops early, without failing, where
            two steps in a row do not turn the door, the second one right after the
            handle was grasped afresh, as at the door's end stop.
        step_deg: the largest angle in degrees that the door is turned by one straight
            push() step before the handle's point is read again and the next step aimed
            afresh. Smaller steps pull less hard on the grip but take more moves.
        max_grasps: the most times the handle is grasped, counting the first grasp. A
            handle held only by friction may slip in or out of the fingers when pulled.
            After a step the handle is grasped again where it now is (the gripper first
            opened with release()) and the rest of the angle is pulled from there,
            when held_object() no longer gives handle, when the door turned less than
            half the step's aim, or when the fingertips (as ee_pose() gives them) have
            drifted more than a centimetre from where they were on the handle's point
            just after the last grasp. The skill stops, without failing, once max_grasps
            grasps are used up, even if the door is not yet open by angle_deg.

    Returns:
        How far the door actually opened, in degrees: how far the hinge's joint turned,
        in either sense, from the start to the end of the skill. This is about angle_deg
        when the pull went all the way and less where the door met its end stop or
        the handle slipped too often (0.0 if it never moved).
    """
    if handle not in object_names(kind="handle"):
        raise ValueError(f"{handle!r} is not a handle; handles are {object_names(kind='handle')}")
    if joint not in joint_names():
        raise ValueError(f"{joint!r} is not a joint; joints are {joint_names()}")
    if not 0.0 < angle_deg < 180.0:
        raise ValueError(f"angle_deg must be positive and under 180, not {angle_deg}")
    if not 0.0 < step_deg < 90.0:
        raise ValueError(f"step_deg must be positive and under 90, not {step_deg}")
    if max_grasps < 1:
        raise ValueError(f"max_grasps must be at least 1, not {max_grasps}")
    if held_object() is not None:
        raise RuntimeError(f"the gripper holds {held_object()}; it must be empty to take {handle}")

    axis_point, axis_dir = joint_axis(joint)
    axis = _unit((axis_dir.x, axis_dir.y, axis_dir.z))
    if axis is None:
        raise RuntimeError(f"the axis of {joint} has no direction")

    # Which way round the axis opens the door: the sense in which the grip point first
    # moves towards the robot (-y). It is fixed now, so that past a quarter turn, where the
    # tangent's y changes sign, the door keeps turning the same way.
    _, first, _ = _circle(object_pose(handle).position, axis_point, axis)
    if abs(first[1]) < _MIN_TOWARDS:
        raise RuntimeError(
            f"{handle} does not move towards the robot round {joint}: the door must face the robot"
            " and be less than a quarter turn open"
        )
    sense = 1.0 if first[1] < 0.0 else -1.0

    start = joint_value(joint)
    grasps = 0
    stalls = 0
    offset = None  # the fingertips' offset from the handle's point just after the last grasp; None: take it again
    # Each step either turns the door or uses up a grasp or ends the pull; this only bounds
    # a door that keeps lagging far behind its steps.
    max_steps = 4 * math.ceil(angle_deg / step_deg) + 2 * max_grasps + 2

    for _ in range(max_steps):
        rest = angle_deg - math.degrees(abs(joint_value(joint) - start))
        if rest <= _ANGLE_TOL_DEG:
            break  # open by angle_deg

        if offset is None:
            if grasps >= max_grasps:
                break  # it slipped once too often
            if grasps > 0:
                release()  # open the fingers that lost (or lag behind) the handle before taking it again
            grasp(handle)
            grasps += 1
            offset = _offset(handle)

        # One straight step along the chord from where the handle is now to the point
        # aim further round the circle, so that the fingers end back on the door's arc.
        radial, tangent, radius = _circle(object_pose(handle).position, axis_point, axis)
        aim_deg = min(step_deg, rest)
        aim = math.radians(aim_deg)
        chord = [
            radius * ((math.cos(aim) - 1.0) * radial[i] + sense * math.sin(aim) * tangent[i])
            for i in range(3)
        ]
        before = joint_value(joint)
        push(Point(chord[0], chord[1], chord[2]), 2.0 * radius * math.sin(aim / 2.0))
        moved = math.degrees(abs(joint_value(joint) - before))

        if moved < min(_STALL_DEG, 0.25 * aim_deg):
            stalls += 1
            if stalls >= _MAX_STALLS:
                break  # even a fresh grasp does not turn the door: it is at its end stop
        else:
            stalls = 0

        # Take the handle afresh where it slipped out, where the door lags behind the
        # fingers, or where the fingers have slid along the handle.
        if (
            held_object() != handle
            or moved < _LAG * aim_deg
            or math.dist(_offset(handle), offset) > _SLIP_M
        ):
            offset = None

    if grasps > 0:
        release()

    return math.degrees(abs(joint_value(joint) - start))
