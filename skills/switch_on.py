import math

from lyra.api import Point, bounding_box, close_gripper, ee_pose, held_object, joint_names, joint_value, move_ee, object_names, object_pose, push


_EPS = 1e-9

_MIN_MOVE = 1e-4  # metres: moves shorter than this are skipped


def _unit(v: Point) -> Point:
    """Return v scaled to unit length."""
    n = math.sqrt(v.x * v.x + v.y * v.y + v.z * v.z)
    if n < _EPS:
        raise ValueError("direction must not be the zero vector")
    return Point(v.x / n, v.y / n, v.z / n)


def _along(p: Point, t: float, u: Point) -> Point:
    """Return the point t metres from p along the unit vector u."""
    return Point(p.x + t * u.x, p.y + t * u.y, p.z + t * u.z)


def _entry(p: Point, u: Point, lo: Point, hi: Point) -> float:
    """Return t where the line p + t*u first meets the box [lo, hi], going along the unit vector u."""
    t = -math.inf
    for pi, ui, low, high in zip((p.x, p.y, p.z), (u.x, u.y, u.z), (lo.x, lo.y, lo.z), (hi.x, hi.y, hi.z)):
        if abs(ui) > _EPS:
            t = max(t, min((low - pi) / ui, (high - pi) / ui))
    return t


def _move_to(target: Point) -> None:
    """Move the fingertips straight to target, unless they are already there."""
    here = ee_pose().position
    if math.dist((here.x, here.y, here.z), (target.x, target.y, target.z)) > _MIN_MOVE:
        move_ee(target)


def switch_on(
    switch: str,
    joint: str,
    direction: Point,
    distance: float,
    *,
    clearance: float = 0.02,
) -> float:
    """Flip a switch, such as a light switch, by pushing it along a given direction with the closed fingertips until it reaches its end stop or the tip has gone a given distance, then draw the tip back off it.

    Args:
        switch: name of the switch, as listed by object_names(kind="switch"). The
            gripper, which must be empty, is closed to a narrow tip before it moves, and
            keeps pointing forward (+y). The tip's start point lies on the line through
            the switch's point, as object_pose() gives it, along direction: a clearance
            short of the side of the switch's box (as bounding_box() gives it) that the
            tip meets first going along direction. For a lever flipped up, that is just
            below the box; for a switch pressed into the wall, just in front of it. The
            tip gets there from the front: it first goes to a point a clearance in front
            of the box's near (-y) face, at the start point's x and z, then straight in
            along +y to the start point. It then pushes along direction. At the end it
            is drawn back the same way, straight out along -y to a clearance in front of
            the box's near face, so it no longer touches the switch. Like push(), the
            push and the drawing back do not fail when blocked.
        joint: name of the switch's joint, as listed by joint_names(). Its value is read
            before and after the push, to tell how far the switch moved.
        direction: the way the switch is pushed to turn it on, as a vector (it need not
            be of unit length). Which way turns a light on depends on the switch, so
            the caller chooses it: for example, Point(0, 0, 1) flips a lever up and
            Point(0, 1, 0) presses a rocker or button in, away from the robot.
        distance: the furthest in metres that the switch is pushed: how far the
            fingertips travel along direction past the side of the switch's box they
            meet first, as it was before the push. The push stops early, without
            failing, where the switch meets its end stop, so a value larger than the
            switch's travel flips it all the way.
        clearance: distance in metres short of the switch's box at which the tip arrives
            before the push, along direction, and in front of its near face (along -y)
            on the way in and out.

    Returns:
        How far the switch actually moved: how far its joint moved (in either sense)
        from the start to the end of the push, in radians for a hinge and metres for a
        slide (0.0 if it never moved).
    """
    if switch not in object_names():
        raise ValueError(f"no object named {switch!r}")
    if joint not in joint_names():
        raise ValueError(f"no joint named {joint!r}")
    if distance < 0.0 or clearance < 0.0:
        raise ValueError("distance and clearance must not be negative")
    held = held_object()
    if held is not None:
        raise RuntimeError(f"the gripper must be empty, but it holds {held!r}")
    u = _unit(direction)

    # Where the tip starts and where the push may take it, on the line through the
    # switch's point along direction, measured from the side of the box met first.
    point = object_pose(switch).position
    lo, hi = bounding_box(switch)
    contact = _entry(point, u, lo, hi)
    start = _along(point, contact - clearance, u)
    end = _along(point, contact + distance, u)
    front_y = lo.y - clearance

    # A narrow tip, brought in from the front: first in front of the near face, at
    # the start point's x and z, then straight in along +y to the start point.
    close_gripper()
    _move_to(Point(start.x, front_y, start.z))
    _move_to(start)

    # Push along direction up to the end point; push() stops without failing at the
    # switch's end stop.
    before = joint_value(joint)
    tip = ee_pose().position
    reach = (end.x - tip.x) * u.x + (end.y - tip.y) * u.y + (end.z - tip.z) * u.z
    if reach > _MIN_MOVE:
        push(u, reach)
    after = joint_value(joint)

    # Draw the tip straight out along -y, clear of the box's near face as it was at the
    # start and as it is now, whichever is nearer the robot.
    lo_now, _ = bounding_box(switch)
    out_y = min(front_y, lo_now.y - clearance)
    tip = ee_pose().position
    if tip.y - out_y > _MIN_MOVE:
        push(Point(0.0, -1.0, 0.0), tip.y - out_y)

    return abs(after - before)
