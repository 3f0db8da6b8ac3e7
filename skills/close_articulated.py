import math

from lyra.api import Point, bounding_box, close_gripper, ee_pose, held_object, joint_axis, joint_value, move_ee, object_pose, object_size, push


_LIFT_MARGIN = 0.05  # metres kept above the handle's top when moving over or off it

_CLEARANCE = 0.03  # metres between the fingertips and the handle's near face when coming down

_TOLERANCE = 0.005  # metres a retreating move may fall short by and still count as done

_ARC_STEP = 0.02  # metres of arc covered by each straight push when turning a hinged handle

_MIN_UPRIGHT = 0.9  # least |z| of a hinge's unit axis for it to count as upright

_MIN_TANGENT = 0.1  # least share of direction across the radius for it to pick a way round


def _unit_xy(direction: Point) -> tuple[float, float]:
    """Return the horizontal unit vector of a direction, ignoring its z."""
    norm = math.hypot(direction.x, direction.y)
    if norm < 1e-9:
        raise ValueError("direction must have a non-zero horizontal part")
    return direction.x / norm, direction.y / norm


def _near_face_offset(name: str, centre: Point, ux: float, uy: float) -> float:
    """Return how far behind a point, along a horizontal unit direction, an object's box begins."""
    low, high = bounding_box(name)
    corners = [(x, y) for x in (low.x, high.x) for y in (low.y, high.y)]
    nearest = min(x * ux + y * uy for x, y in corners)
    return max(0.0, centre.x * ux + centre.y * uy - nearest)


def _clear_height(name: str) -> float:
    """Return a fingertip height safely above an object's top."""
    return bounding_box(name)[1].z + _LIFT_MARGIN


def close_articulated(
    handle: str,
    joint: str,
    direction: Point,
    distance: float,
    *,
    hinged: bool = False,
    arc_step: float = _ARC_STEP,
    radius: float | None = None,
) -> float:
    """Close a drawer or sliding window by pushing its handle along its slide with the closed fingertips until it reaches its end stop or has gone a given distance, or turn a hinged handle such as a faucet's back round its arc.

    Args:
        handle: name of the drawer's (or window's) handle, as listed by object_names().
            The gripper, which must be empty, is closed to a narrow tip. It comes down
            from above just in front of the handle, on the side away from direction (the
            robot's side for a MetaWorld drawer), a small clearance short of the near
            face of the handle's box as bounding_box() gives it. It comes down to the
            height of the handle's point as object_pose() puts it, then pushes the handle
            along direction. At the end the closed fingertips are lifted straight up
            clear of the handle; where something above them (such as a window's frame)
            stops them, they first step sideways, across the slide to the robot's side
            and clear of the handle's box, and rise from there. These moves go across
            the slide, never back along it, so they do not move the drawer or window
            again, and like push() they do not fail when blocked. With hinged, the tip
            instead comes down beside the handle: on the circle through the grip point
            round the hinge's axis, at the grip point's height, on the side the handle
            turns away from, half the handle's narrower horizontal extent (as
            object_size() gives it) plus the small clearance back along the arc. It then
            pushes the handle round, and is lifted off in the same way, stepping across
            the arc (along its radius, to the robot's side) only if blocked above. With
            hinged and radius, the tip comes down and pushes nearer the hinge instead,
            on the door's outer face, as told under radius.
        joint: name of the slide joint, as listed by joint_names(). Its value is read
            before and after the push, to tell how far the drawer or window has closed.
            With hinged, the name of a hinge that turns about an upright axis instead.
        direction: the direction in which the drawer or window closes, along its slide,
            as a vector in the horizontal plane (it need not be of unit length); only its
            x and y are used, and z is ignored. For example, Point(0, 1, 0) pushes a
            drawer in, away from the robot, as on MetaWorld, and Point(-1, 0, 0) slides a
            window shut sideways towards -x. With hinged, the way the grip point starts
            to move: it picks which way round the axis the handle is turned, and must
            not point towards or away from the axis.
        distance: the furthest in metres that the handle is pushed: how far the
            fingertips travel along direction from where they first touch the handle.
            The push stops early, without failing, where the slide meets its end stop,
            so a value larger than the opening closes it all the way. With hinged, the
            distance is measured along the arc through the grip point, and must be under
            half a turn.
        hinged: False (the default) pushes in a straight line along a slide. True turns
            the handle about the hinge's axis, as given by joint_axis(), by pushing its
            side: the fingertips follow the circle through the grip point in short
            straight steps, each ending back on the circle, and stop early where the
            handle will not turn further.
        arc_step: only with hinged: the longest straight push, in metres, when
            following the arc. Each push goes along the chord to the next point on the
            circle, and where the fingertips are is read again before the next. The
            default, 2 cm, keeps close to the arc; a longer step, such as 8 cm, takes
            far fewer pushes, as suits a wide door whose handle travels far round its
            hinge where the episode has few steps to spare. Ignored without hinged.
        radius: only with hinged: how far from the hinge's axis, in metres, the tip
            pushes. None (the default) pushes beside the handle, on the circle through
            the grip point, as above. A number instead pushes on the door's outer face
            nearer the hinge, for a door open so wide that its handle lies out of the
            tip's reach: the tip comes down on the circle of that radius round the
            axis, at the grip point's height and at the same bearing from the axis as
            it would beside the handle (the grip point's bearing, turned back by the
            angle that half the handle's narrower horizontal extent plus the small
            clearance makes along the arc through the grip point). It then goes round
            the axis through the same angle as it would at the handle, in chords of at
            most arc_step on its own, smaller circle, and stops early in the same way.
            Where the handle stands out from the door, the door's face lies ahead of
            the grip point's bearing, so the door lags the tip by that angle; the
            caller allows for it in distance. Ignored without hinged.

    Returns:
        How far the drawer or window actually closed, in metres: how far the slide joint
        moved (in either sense) from the start to the end of the push. With hinged, how
        far the hinge turned (in either sense), in radians.
    """
    if held_object() is not None:
        raise ValueError("close_articulated needs an empty gripper")
    if distance < 0.0:
        raise ValueError("distance must not be negative")
    if hinged:
        if arc_step <= 0.0:
            raise ValueError("arc_step must be positive")
        if radius is not None and radius <= 0.0:
            raise ValueError("radius must be positive")
        return _close_hinged(handle, joint, direction, distance, arc_step, radius)

    ux, uy = _unit_xy(direction)
    centre = object_pose(handle).position

    # Come down just in front of the handle's near face, on the side away from
    # direction, leaving only a small clearance so the point stays within reach.
    standoff = _near_face_offset(handle, centre, ux, uy) + _CLEARANCE
    start = Point(centre.x - ux * standoff, centre.y - uy * standoff, centre.z)
    over_z = max(_clear_height(handle), centre.z + _LIFT_MARGIN)
    _come_down(start, over_z)

    # The fingertips first touch the handle after the clearance gap; push on from
    # there by distance along the slide, stopping early at the end stop.
    before = joint_value(joint)
    push(Point(ux, uy, 0.0), _CLEARANCE + distance)
    after = joint_value(joint)

    # Where the push ended the fingertips can be hemmed in: drawing them back along
    # the slide was blocked, and straight above a window's frame may be in the way.
    # Leave with push(), which does not fail, going only across the slide so the
    # drawer or window stays where it was pushed: up, or if that is blocked, out
    # sideways to the robot's side first and then up.
    _retreat(handle, ux, uy, over_z)

    return abs(after - before)


def _across_towards_robot(ux: float, uy: float, here: Point) -> tuple[float, float]:
    """Return the horizontal unit vector across a direction that points to the robot's side of a point."""
    sx, sy = -uy, ux
    if sx * here.x + sy * here.y > 0.0:
        sx, sy = -sx, -sy
    return sx, sy


def _rise_to(z: float) -> bool:
    """Push the fingertips straight up to a height, without failing if blocked; return whether they got there."""
    rise = z - ee_pose().position.z
    if rise <= _TOLERANCE:
        return True
    return push(Point(0.0, 0.0, 1.0), rise) >= rise - _TOLERANCE


def _retreat(handle: str, ux: float, uy: float, over_z: float) -> None:
    """Lift the fingertips off a pushed handle, stepping across its slide to the robot's side if blocked above."""
    if _rise_to(over_z):
        return
    here = ee_pose().position
    sx, sy = _across_towards_robot(ux, uy, here)
    step = _near_face_offset(handle, here, -sx, -sy) + _LIFT_MARGIN
    push(Point(sx, sy, 0.0), step)
    _rise_to(over_z)


def _come_down(start: Point, over_z: float) -> None:
    """Rise, close the gripper to a narrow tip, travel over a start point and come down onto it."""
    # Rise straight up first, so the fingers leave anything they sit at (such as the
    # handle after open_articulated) before closing and travelling over.
    here = ee_pose().position
    if here.z < over_z:
        move_ee(Point(here.x, here.y, over_z))
    close_gripper()
    move_ee(Point(start.x, start.y, over_z))
    move_ee(start)


def _on_circle(cx: float, cy: float, radius: float, angle: float, z: float) -> Point:
    """Return the point on a horizontal circle at an angle (radians, counter-clockwise from +x)."""
    return Point(cx + radius * math.cos(angle), cy + radius * math.sin(angle), z)


def _close_hinged(
    handle: str,
    joint: str,
    direction: Point,
    distance: float,
    arc_step: float = _ARC_STEP,
    push_radius: float | None = None,
) -> float:
    """Turn a handle about an upright hinge by pushing its side round its arc; return how far the hinge turned."""
    axis_at, axis_dir = joint_axis(joint)
    if abs(axis_dir.z) < _MIN_UPRIGHT:
        raise ValueError("hinged needs a hinge that turns about an upright axis")

    grip = object_pose(handle).position
    cx, cy = axis_at.x, axis_at.y
    radius = math.hypot(grip.x - cx, grip.y - cy)
    if radius < 1e-6:
        raise ValueError("the handle's grip point must lie off the hinge's axis")
    if distance / radius >= math.pi:
        raise ValueError("a hinged turn must stay under half a turn")

    # Which way round: the horizontal cross product of the radius and direction
    # (positive is counter-clockwise seen from above).
    ux, uy = _unit_xy(direction)
    across = ((grip.x - cx) * uy - (grip.y - cy) * ux) / radius
    if abs(across) < _MIN_TANGENT:
        raise ValueError("direction must not point towards or away from the hinge's axis")
    sense = math.copysign(1.0, across)

    # Come down on the circle, behind the handle's side along the arc, with a clearance;
    # with push_radius, at the same bearing on a circle nearer the hinge, behind the
    # door's outer face, where the handle itself is out of reach.
    size = object_size(handle)
    back = min(size.x, size.y) / 2.0 + _CLEARANCE
    grip_angle = math.atan2(grip.y - cy, grip.x - cx)
    start_angle = grip_angle - sense * back / radius
    tip_radius = radius if push_radius is None else push_radius
    scale = 1.0 if push_radius is None else push_radius / radius
    start = _on_circle(cx, cy, tip_radius, start_angle, grip.z)
    over_z = max(_clear_height(handle), grip.z + _LIFT_MARGIN)
    _come_down(start, over_z)

    # Cross the clearance gap, then push the handle round by distance along the arc in
    # chords of at most arc_step, each aimed back at the circle so errors do not build
    # up; stop early where a chord is blocked (the handle's end stop). Nearer the hinge
    # the tip goes round the same angle along a shorter arc.
    before = joint_value(joint)
    travel = _CLEARANCE + distance
    steps = max(1, math.ceil(travel * scale / arc_step))
    for i in range(1, steps + 1):
        angle = start_angle + sense * (travel * i / steps) / radius
        target = _on_circle(cx, cy, tip_radius, angle, grip.z)
        here = ee_pose().position
        dx, dy = target.x - here.x, target.y - here.y
        length = math.hypot(dx, dy)
        if length < 1e-6:
            continue
        if push(Point(dx, dy, 0.0), length) < length - _TOLERANCE:
            break
    after = joint_value(joint)

    # Lift off without turning the handle back: up, or if blocked, across the arc
    # (along the radius, to the robot's side) first and then up.
    end = ee_pose().position
    tx, ty = _unit_xy(Point(-sense * (end.y - cy), sense * (end.x - cx), 0.0))
    _retreat(handle, tx, ty, over_z)

    return abs(after - before)
