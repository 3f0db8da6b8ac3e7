import math

from lyra.api import Point, bounding_box, close_gripper, ee_pose, grasp, held_object, joint_axis, joint_value, move_ee, object_pose, object_size, push, release


_TOLERANCE = 0.001  # metres of opening that count as "done"

_MIN_PROGRESS = 0.002  # a pull that gains less than this has met the end stop

_CLEARANCE = 0.05  # metres above the handle's box from which the fingers come down

_SIDE_CLEARANCE = 0.02  # metres left between a hinged handle's side and the fingertips

_ARC_STEP = 0.02  # default longest straight step, in metres, when following a hinge's arc

_BESIDE_GAP = 0.03  # metres back along a slide from the grip point at which the closed tip comes in


def _horizontal_unit(direction: Point) -> Point:
    """Return the horizontal unit vector of a direction (its z ignored)."""
    norm = math.hypot(direction.x, direction.y)
    if norm < 1e-9:
        raise ValueError("direction must have a non-zero horizontal part")
    return Point(direction.x / norm, direction.y / norm, 0.0)


def _along(handle: str, pull: Point) -> float:
    """Return where the handle's grip point lies along a horizontal unit direction."""
    p = object_pose(handle).position
    return p.x * pull.x + p.y * pull.y


def _hook(handle: str) -> None:
    """Bring the open fingers down from above so that they straddle the handle's grip point."""
    release()  # make sure the fingers are open; nothing is held
    grip = object_pose(handle).position
    _come_down(grip, max(bounding_box(handle)[1].z, grip.z) + _CLEARANCE)


def open_articulated(
    handle: str,
    joint: str,
    direction: Point,
    amount: float,
    *,
    max_pulls: int = 5,
    hinged: bool = False,
    hook: bool = False,
    hold: bool = False,
    arc_step: float = _ARC_STEP,
    beside: bool = False,
) -> float:
    """Open a drawer by drawing its handle along its slide, or turn a hinged handle such as a faucet's by pushing it round its arc, by a given amount, leaving the fingers there.

    Args:
        handle: name of the drawer's handle, as listed by object_names(). The gripper,
            which must be empty, comes down from above with its fingers open so that they
            straddle the handle where object_pose() puts it and pulls it without closing.
            At the end the open fingers stay where the pull left them, at the handle;
            they are not drawn up off it. With hinged, the fingers are instead closed to
            a narrow tip that comes down beside the handle, not onto it: on the circle
            through the grip point, at the grip point's height, on the side the handle
            turns away from, half the handle's narrower horizontal extent (as
            object_size() gives it) plus a small clearance back along the arc. It then
            pushes the handle round, and stays closed where the push left it. With
            hinged and hook, the open fingers come down to straddle the grip point as
            for a drawer, and draw the handle round its arc without closing, staying
            open at the handle at the end. With hinged and hold, the handle is instead
            taken hold of with grasp(), from above onto its grip point, pulled round
            its arc while held, and still held in the closed gripper at the end, so
            the door stays where it was pulled to. With beside (and not hinged), the
            fingers are instead closed to a narrow tip that comes down in front of the
            handle's box (on the robot's side of the slide, -y for a window that slides
            along x), not onto it, and then pushes the handle along its slide from
            beside it; it stays closed where the push left it.
        joint: name of the drawer's slide joint, as listed by joint_names(). Its value is
            read before and after the pull, to tell how far the drawer has opened. With
            hinged, the name of a hinge that turns about an upright axis instead.
        direction: the direction in which the drawer opens, as a vector in the horizontal
            plane (it need not be of unit length); only its x and y are used, and z is
            ignored. For example, Point(0, -1, 0) pulls the drawer out towards the robot,
            as on MetaWorld. With hinged, the way the grip point starts to move: it picks
            which way round the axis the handle is turned, and must not point towards or
            away from the axis.
        amount: how far in metres to open the drawer: how far the handle's grip point is
            to travel along direction from where it starts (with hinged, along its arc
            round the axis). The fingertips never end further than this past the grip
            point's start (with hinged, along the arc, counting from where they come
            down: at most amount plus the gap behind the handle, which is nil with
            hook or hold; without hinged, at most amount plus the gap behind the grip
            point with beside, and amount otherwise), and the pull stops early, without failing, where the drawer meets its
            end stop or stops following.
        max_pulls: most pulls to make; after each one the handle is read again and the
            rest of the way is pulled, so a hook that lags behind is made up for, as
            long as the fingertips stay within amount of where they started.
        hinged: False (the default) pulls in a straight line along a slide. True turns
            the handle about the hinge's axis, as given by joint_axis(), by pushing its
            side: the fingertips follow the circle through the grip point in short
            straight steps, each along the circle's tangent where they are. Turns must
            stay under half a turn.
        hook: only with hinged. False (the default) pushes the handle's side with the
            closed tip, as above. True instead hooks the handle between the open fingers,
            as for a drawer, and draws it round the arc, as for a door whose handle
            stands out from it, where there is no room beside the handle for the tip to
            come down. Ignored without hinged.
        hold: only with hinged. False (the default) leaves the approach to hook. True
            takes hold of the handle with grasp() instead (hook is then ignored) and
            pulls it round the arc held in the gripper, so it cannot run away from or
            bounce off the fingers, and keeps holding it at the end. Ignored without
            hinged.
        arc_step: only with hinged: the longest straight push, in metres, when
            following the arc. Each push goes along the circle's tangent where the
            fingertips are (steering back onto the circle), and where they are is read
            again before the next. The default, 2 cm, keeps close to the arc; a longer
            step, such as 8 cm, takes far fewer pushes, as suits a held handle on a
            wide door where the episode has few steps to spare.
        beside: only without hinged. False (the default) hooks the handle between the
            open fingers from above, as above. True is for a handle on the front of
            something that stands over it, such as a sliding window, where the fingers
            cannot come down onto the handle: the gripper is closed to a narrow tip
            and brought down from above in front of the handle's box as bounding_box()
            gives it (a small clearance outside its face on the robot's side, across
            the slide), 3 cm back along direction from the grip point, on the side
            away from where the handle is to go, at the grip point's height. It is
            then moved straight in towards the grip point's line along direction,
            stopping where it meets something (the window itself), so that it lies
            just beside the handle, and pushes the handle along direction. Ignored
            with hinged.

    Returns:
        How far the drawer actually opened: how far the joint moved (in either sense)
        from the start to the end of the pull, in metres for a slide and radians for
        a hinge.
    """
    if held_object() is not None:
        raise RuntimeError(f"the gripper must be empty to open {handle!r}")
    pull = _horizontal_unit(direction)
    start = joint_value(joint)
    if amount <= _TOLERANCE:
        return 0.0

    slack = 0.0  # how far the fingertips travel before they meet the handle
    if hinged:
        centre = _hinge_centre(joint)
        grip = object_pose(handle).position
        radius = math.hypot(grip.x - centre.x, grip.y - centre.y)
        turn = (grip.x - centre.x) * pull.y - (grip.y - centre.y) * pull.x
        if radius < 1e-6 or abs(turn) < 0.1 * radius:
            raise ValueError("direction must go round the hinge, not towards or away from its axis")
        sense = math.copysign(1.0, turn)  # +1 counter-clockwise seen from above
        start_angle = _angle_about(grip, centre)
        if not hook and not hold:
            size = object_size(handle)
            slack = min(size.x, size.y) / 2.0 + _SIDE_CLEARANCE

        def opened() -> float:
            angle = _angle_about(object_pose(handle).position, centre) - start_angle
            return sense * math.remainder(angle, 2.0 * math.pi) * radius

        def draw(step: float) -> float:
            return _follow_arc(centre, radius, sense, step, longest=arc_step)

        def approach() -> None:
            if hold:
                grasp(handle)
            elif hook:
                _hook(handle)
            else:
                _come_beside(handle, centre, radius, sense, slack)

    else:
        handle_start = _along(handle, pull)

        def opened() -> float:
            return _along(handle, pull) - handle_start

        def draw(step: float) -> float:
            return push(pull, step)

        if beside:
            slack = _BESIDE_GAP

        def approach() -> None:
            if beside:
                _come_in_front(handle, pull, slack)
            else:
                _hook(handle)

    approach()
    travelled = 0.0  # how far the fingertips have been pulled along the direction or arc
    for _ in range(max_pulls):
        done = opened()
        gap_left = max(slack - travelled, 0.0)
        step = min(amount - done + gap_left, amount + slack - travelled)
        if step <= _TOLERANCE:
            break  # the handle, or the fingertips, have reached the goal
        moved = draw(step)
        travelled += moved
        gained = opened() - done
        if moved < _MIN_PROGRESS or gained < _MIN_PROGRESS:
            break  # end stop reached, or the handle is no longer moving
    return abs(joint_value(joint) - start)


def _come_down(target: Point, safe_z: float) -> None:
    """Move the fingertips up to safe_z where needed, across above target, then down onto it."""
    here = ee_pose().position
    if here.z < safe_z:
        move_ee(Point(here.x, here.y, safe_z))
    move_ee(Point(target.x, target.y, max(here.z, safe_z)))
    move_ee(target)


def _come_beside(handle: str, centre: Point, radius: float, sense: float, gap: float) -> None:
    """Bring the closed fingertips down beside a hinged handle, a gap back along its arc.

    Args:
        handle: the handle's name; the fingertips end at the height of its grip point.
        centre: a point on the hinge's upright axis; only its x and y are used.
        radius: the radius in metres of the circle through the grip point.
        sense: +1.0 if the handle is to turn counter-clockwise seen from above, else -1.0;
            the fingertips come down on the side it turns away from.
        gap: how far in metres, along the arc, behind the grip point they come down.
    """
    close_gripper()  # a narrow tip to push with
    grip = object_pose(handle).position
    behind = _angle_about(grip, centre) - sense * gap / radius
    spot = Point(
        centre.x + radius * math.cos(behind),
        centre.y + radius * math.sin(behind),
        grip.z,
    )
    _come_down(spot, max(bounding_box(handle)[1].z, grip.z) + _CLEARANCE)


def _angle_about(point: Point, centre: Point) -> float:
    """Return the bearing in radians of a point seen from an upright axis through centre."""
    return math.atan2(point.y - centre.y, point.x - centre.x)


def _hinge_centre(joint: str) -> Point:
    """Return a point on a hinge's axis, which must be upright (a door, a faucet)."""
    centre, axis = joint_axis(joint)
    if abs(axis.z) < 0.9:
        raise ValueError(f"the hinge {joint!r} must turn about an upright axis")
    return centre


def _follow_arc(
    centre: Point, radius: float, sense: float, length: float, *, longest: float = _ARC_STEP
) -> float:
    """Move the fingertips round an upright axis in short straight steps, pushing what they meet.

    Args:
        centre: a point on the axis; only its x and y are used.
        radius: the circle's radius in metres; each step also steers back onto it.
        sense: +1.0 to go counter-clockwise seen from above, -1.0 to go clockwise.
        length: the furthest in metres to go along the arc.
        longest: the longest straight step in metres.

    Returns:
        How far the fingertips got along the arc, in metres.
    """
    got = 0.0
    while length - got > _TOLERANCE:
        here = ee_pose().position
        rx, ry = here.x - centre.x, here.y - centre.y
        r = math.hypot(rx, ry)
        if r < 1e-6:
            break
        ux, uy = rx / r, ry / r
        step = min(longest, length - got)
        drift = radius - r  # back onto the circle
        dx = -sense * uy * step + ux * drift
        dy = sense * ux * step + uy * drift
        before = _angle_about(here, centre)
        push(Point(dx, dy, 0.0), math.hypot(dx, dy))
        after = _angle_about(ee_pose().position, centre)
        gained = sense * math.remainder(after - before, 2.0 * math.pi) * radius
        got += max(gained, 0.0)
        if gained < _MIN_PROGRESS:
            break  # blocked: the hinge is at its stop
    return got


def _come_in_front(handle: str, pull: Point, gap: float) -> None:
    """Bring the closed fingertips down in front of a sliding handle's box, then in beside the handle.

    Args:
        handle: the handle's name; the fingertips end at the height of its grip point.
        pull: the horizontal unit direction in which the handle is to slide.
        gap: how far in metres back along pull from the grip point they come in.
    """
    close_gripper()  # a narrow tip to push with
    grip = object_pose(handle).position
    low, high = bounding_box(handle)
    front = _front_of(pull)
    # how far the box's face on the robot's side lies in front of the grip point
    reach = max(
        (x - grip.x) * front.x + (y - grip.y) * front.y
        for x in (low.x, high.x)
        for y in (low.y, high.y)
    )
    out = max(reach, 0.0) + _SIDE_CLEARANCE
    spot = Point(
        grip.x - pull.x * gap + front.x * out,
        grip.y - pull.y * gap + front.y * out,
        grip.z,
    )
    _come_down(spot, max(high.z, grip.z) + _CLEARANCE)
    # in towards the grip point's line, stopping where the window (or handle) is met
    push(Point(-front.x, -front.y, 0.0), out)


def _front_of(pull: Point) -> Point:
    """Return the horizontal unit vector across a slide that points to the robot's side (-y)."""
    fx, fy = pull.y, -pull.x
    if fy > 1e-9 or (abs(fy) <= 1e-9 and fx > 0.0):
        fx, fy = -fx, -fy
    return Point(fx, fy, 0.0)
