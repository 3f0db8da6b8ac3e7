import math

from lyra.api import Point, bounding_box, close_gripper, ee_pose, move_ee, object_pose, push, release


def _move_via_above(point: Point, travel_z: float) -> None:
    """Move the fingertips to a point by rising to a travel height, crossing over and going straight down.

    Args:
        point: where the fingertips' centre goes.
        travel_z: height in metres at which the fingertips cross over to above point;
            if they are already higher, they cross at their current height.
    """
    tip = ee_pose().position
    cross_z = max(tip.z, travel_z)
    if tip.z < cross_z:
        move_ee(Point(tip.x, tip.y, cross_z))
    move_ee(Point(point.x, point.y, cross_z))
    move_ee(point)


def _move_round(centre: Point, point: Point, radius: float, max_step_deg: float = 30.0) -> None:
    """Move the fingertips round an object at their pushing height, staying outside a circle about its centre.

    The fingertips first back straight away from centre out to the circle, then follow
    it in short straight steps to the side of point, then go straight in to point.
    They never rise, so nothing above them (a cabinet's roof) gets in the way.

    Args:
        centre: the centre of the circle to keep outside of; only its x and y are used.
        point: where the fingertips' centre goes; its z is the height they move at.
        radius: radius in metres of the circle, large enough that the object and the
            fingertips stay clear of each other.
        max_step_deg: the largest angle in degrees about centre covered by one straight
            step along the circle.
    """
    tip = ee_pose().position
    a0 = math.atan2(tip.y - centre.y, tip.x - centre.x)
    a1 = math.atan2(point.y - centre.y, point.x - centre.x)
    turn = (a1 - a0 + math.pi) % (2.0 * math.pi) - math.pi
    steps = max(1, math.ceil(abs(turn) / math.radians(max_step_deg)))
    for i in range(steps + 1):
        a = a0 + turn * i / steps
        move_ee(Point(centre.x + radius * math.cos(a), centre.y + radius * math.sin(a), point.z))
    move_ee(point)


def _half_extent_along(low: Point, high: Point, dx: float, dy: float) -> float:
    """Return how far a world-aligned box reaches from its centre along a horizontal unit direction.

    Args:
        low: the box's lowest corner.
        high: the box's highest corner.
        dx: x component of the unit direction.
        dy: y component of the unit direction.
    """
    return 0.5 * (high.x - low.x) * abs(dx) + 0.5 * (high.y - low.y) * abs(dy)


def slide_to(
    obj: str,
    target: str,
    *,
    tolerance: float = 0.02,
    step: float = 0.15,
    standoff: float = 0.03,
    tip_radius: float = 0.01,
    clearance: float = 0.05,
    max_pushes: int = 12,
) -> None:
    """Slide an object across the table until its centre is over another object's centre, without ever lifting it.

    The gripper is closed once, at the start, so that its fingers make one narrow tip;
    nothing afterwards opens it until the end, so the fingers never go round obj or
    push it spread apart. The closed fingertips are first brought down from above onto
    the table behind obj, on the side facing away from the target, at half obj's
    height. From then on they stay down on the table and push obj along it in a few
    long straight pushes. After each push obj's position is read again and the next
    push is aimed from there, so drift and rotation are corrected. When the push
    direction only turns a little, the fingertips move straight to the new pushing
    point; otherwise they go round obj at pushing height, in as few straight steps as
    keep them clear of it. Going round needs free room all round obj, so it is never
    done once obj is so close to the target that the target lies inside the circle the
    fingertips would go round on: there, whatever surrounds the target (a goal's net,
    a cabinet's walls) may leave no room beside obj. A correction that would need it
    is not made; the skill stops instead, with obj already that close to the target.
    The fingertips never rise over obj, so the skill also works where obj is pushed
    under something, such as into a cabinet. Motions are kept few and short, so that
    the whole slide fits in the episode's limited number of steps.

    Args:
        obj: name of the object to slide, as listed by object_names() (for example the
            plate). It stays on the table the whole time: it is pushed along the table
            top in the horizontal plane, never lifted, so its height does not change.
            The gripper must be empty when the skill starts, and it is left empty
            (opened, a standoff behind obj, and drawn up as far as release() can) when
            the skill ends.
        target: name of the object to slide it to, as listed by object_names() (for
            example the goal). The centre of obj ends up at the x and y of the centre of
            target, as object_pose() gives it when the skill starts; the z of target is
            ignored. target may lie in any direction from obj, not only away from the
            robot.
        tolerance: horizontal distance in metres between the centre of obj and the
            target's x and y at which the sliding stops (it also stops earlier, close
            to the target, where a correction would need going round obj).
        step: the longest distance in metres obj is pushed in one straight push before
            its position is read again and the aim corrected.
        standoff: free space in metres left between the fingertips and obj's side before
            each push, and backed off to after it.
        tip_radius: half the width of the closed fingertips in metres, used to work out
            how far to push and how wide to go round obj.
        clearance: height in metres above the top of obj at which the fingertips come in
            from above to the first pushing point, before they go down onto the table.
        max_pushes: the most pushes made; the skill stops after them even if obj is not
            yet within tolerance (for example when it is stuck).
    """
    goal = object_pose(target).position
    low, high = bounding_box(obj)
    push_z = 0.5 * (low.z + high.z)
    top_z = high.z
    travel_z = top_z + clearance
    cos_max_turn = math.cos(math.radians(30.0))

    centre = object_pose(obj).position
    if math.hypot(goal.x - centre.x, goal.y - centre.y) <= tolerance:
        return

    # Close the fingers once, so that they make one narrow tip to push with; nothing
    # below opens them again before release(), and every close costs steps.
    close_gripper()
    last_dir = None
    for _ in range(max_pushes):
        centre = object_pose(obj).position
        ex, ey = goal.x - centre.x, goal.y - centre.y
        dist = math.hypot(ex, ey)
        if dist <= tolerance:
            break
        dx, dy = ex / dist, ey / dist

        # Pushing point: behind obj as seen from the target, a standoff clear of its side.
        low, high = bounding_box(obj)
        back = _half_extent_along(low, high, dx, dy) + standoff
        start = Point(centre.x - dx * back, centre.y - dy * back, push_z)

        if last_dir is None:
            # First approach: come down from above onto the table behind obj.
            _move_via_above(start, travel_z)
        elif dx * last_dir[0] + dy * last_dir[1] >= cos_max_turn:
            move_ee(start)  # stays clear of obj's side: the aim only turned a little
        else:
            # Go round obj on the table, never over it, in the widest straight steps
            # whose chords still keep the fingertips clear of obj.
            half_diagonal = 0.5 * math.hypot(high.x - low.x, high.y - low.y)
            radius = half_diagonal + standoff + tip_radius
            if dist < radius:
                # The target lies inside the circle the fingertips would go round on, so
                # what surrounds it (a goal's net, a cabinet's walls) may leave no room
                # beside obj: stop here, with obj already this close to the target.
                break
            widest_deg = 2.0 * math.degrees(math.acos(min(1.0, (half_diagonal + tip_radius) / radius)))
            _move_round(centre, start, radius, max(30.0, min(90.0, widest_deg)))

        # Close the standoff, then move obj by at most one step, and back off again.
        push(Point(dx, dy, 0.0), min(step, dist) + standoff - tip_radius)
        push(Point(-dx, -dy, 0.0), standoff)
        last_dir = (dx, dy)

    # The fingertips are a standoff behind obj; open and draw up only as far as is free
    # (obj may now be under a roof, so no further rise is forced).
    release()
