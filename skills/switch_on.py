import math

from lyra.api import Point, bounding_box, close_gripper, ee_pose, held_object, joint_value, move_ee, object_pose, push


_FRONT_GAP = 0.05

_EPS = 1e-9


def _unit(v: Point) -> tuple[float, float, float]:
    """Return a vector scaled to unit length, refusing a zero vector."""
    norm = math.sqrt(v.x * v.x + v.y * v.y + v.z * v.z)
    if norm < _EPS:
        raise ValueError("direction must not be a zero vector")
    return v.x / norm, v.y / norm, v.z / norm


def _entry_offset(
    point: tuple[float, float, float],
    u: tuple[float, float, float],
    lo: tuple[float, float, float],
    hi: tuple[float, float, float],
) -> float:
    """Return where, along u from point, the line through point first meets the box.

    The box is the axis-aligned one from lo to hi. Where the line misses the box, the
    plane across u that touches the box on its near side is used instead.
    """
    t_in, t_out = -math.inf, math.inf
    hits = True
    for p_i, u_i, lo_i, hi_i in zip(point, u, lo, hi):
        if abs(u_i) < _EPS:
            if p_i < lo_i or p_i > hi_i:
                hits = False
                break
            continue
        t1, t2 = (lo_i - p_i) / u_i, (hi_i - p_i) / u_i
        t_in = max(t_in, min(t1, t2))
        t_out = min(t_out, max(t1, t2))
    if hits and t_in <= t_out:
        return t_in
    corners = [
        (x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])
    ]
    return min(sum((c - p) * d for c, p, d in zip(corner, point, u)) for corner in corners)


def switch_on(
    switch: str,
    joint: str,
    direction: Point,
    distance: float,
    *,
    clearance: float = 0.02,
) -> float:
    """Switch a switch on by pushing its lever sideways with the closed fingertips along a given direction, by a given distance or until it stops, then draw the fingertips back off it.

    Args:
        switch: name of the switch, as listed by object_names(kind="switch") (for
            example the light switch). The gripper, which must be empty, is closed to a
            narrow tip before it moves, so the lever cannot slip between open fingers.
            The tip is first brought to a point in front of the switch (towards the
            robot, along -y), clear of the front face of its box as bounding_box() gives
            it, and then moved straight in along +y to its starting point: a clearance
            short of the box's near face (the face first met when moving along
            direction), on the line through the switch's point, as object_pose() gives
            it, along direction. It then pushes the lever along direction with push(),
            which does not fail when the switch stops at the end of its travel. At the
            end the tip is drawn straight back along -y until it is clear of the front
            of the switch's box, so it no longer touches the switch; the gripper is left
            closed and empty.
        joint: name of the switch's joint, as listed by joint_names(). Its value is read
            before and after the push, to tell how far the switch really moved.
        direction: the way the lever is pushed to switch it on, as a vector (it need not
            be of unit length), for example Point(-1, 0, 0) for a switch that slides on
            towards the robot's left (-x). Which way turns the switch on depends on the
            kitchen, and the caller chooses it. It must not point towards or away from
            the robot (along y), since the tip comes in from the front.
        distance: the furthest in metres that the lever is pushed: how far the
            fingertips travel along direction past the near face of the switch's box as
            it was before the push. The push stops early, without failing, where the
            switch meets its end stop, so a value larger than the switch's travel pushes
            it all the way on.
        clearance: gap in metres, along direction, left between the tip and the near face
            of the switch's box when the tip comes in beside it, before the push.

    Returns:
        How far the switch actually moved: the change in its joint's value (in either
        sense) from the start to the end of the push, in metres for a slide and radians
        for a hinge.
    """
    if held_object() is not None:
        raise RuntimeError(f"switch_on needs an empty gripper, but it holds {held_object()}")
    if distance < 0.0:
        raise ValueError("distance must not be negative")
    if clearance < 0.0:
        raise ValueError("clearance must not be negative")
    u = _unit(direction)
    if math.hypot(u[0], u[2]) < 1e-3:
        raise ValueError("direction must not point towards or away from the robot (along y)")

    # Where the tip starts: a clearance short of the near face, on the line through
    # the switch's point along direction.
    lo, hi = bounding_box(switch)
    lo_t, hi_t = (lo.x, lo.y, lo.z), (hi.x, hi.y, hi.z)
    centre = object_pose(switch).position
    c = (centre.x, centre.y, centre.z)
    t_start = _entry_offset(c, u, lo_t, hi_t) - clearance
    start = Point(c[0] + t_start * u[0], c[1] + t_start * u[1], c[2] + t_start * u[2])
    front_y = min(start.y, lo.y - _FRONT_GAP)
    approach = Point(start.x, front_y, start.z)

    close_gripper()
    # Step straight back first where the tip is further in than the approach point,
    # so it does not cut across the switch on its way there.
    here = ee_pose().position
    if here.y > front_y:
        move_ee(Point(here.x, front_y, here.z))
    move_ee(approach)
    if start.y > approach.y:
        move_ee(start)

    before = joint_value(joint)
    push(Point(*u), clearance + distance)
    after = joint_value(joint)

    # Draw the tip straight back along -y until it is clear of the switch's box, as it
    # was before the push and as it is now.
    lo_now, _ = bounding_box(switch)
    back_y = min(lo.y, lo_now.y) - _FRONT_GAP
    tip = ee_pose().position
    if tip.y > back_y:
        move_ee(Point(tip.x, back_y, tip.z))
    return abs(after - before)
