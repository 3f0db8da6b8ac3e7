import math

from lyra.api import Point, bounding_box, close_gripper, ee_pose, grasp, held_object, joint_axis, joint_value, move_ee, object_pose, object_size, push, release


_TOLERANCE = 0.001  # metres of opening that count as "done"

_MIN_PROGRESS = 0.002  # a pull that gains less than this has met the end stop

_CLEARANCE = 0.05  # metres above the handle's box from which the fingers come down

_SIDE_CLEARANCE = 0.02  # metres left between a hinged handle's side and the fingertips

_ARC_STEP = 0.02  # longest straight step, in metres, when following a hinge's arc

_PUSH_GAP = 0.03  # metres back along a slide from the grip point where a pushing tip comes down


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
    gap: float | None = None,
    grasped: bool = False,
    arc_step: float | None = None,
    pushed: bool = False,
    front: float = 0.03,
) -> float:
    """Open a drawer or sliding window by drawing or pushing its handle along its slide, or turn a hinged handle such as a faucet's or a door's by pushing or pulling it round its arc, by a given amount, leaving the fingers there.

    Args:
        handle: name of the drawer's handle, as listed by object_names(). The gripper,
            which must be empty, comes down from above with its fingers open so that they
            straddle the handle where object_pose() puts it and pulls it without closing.
            At the end the open fingers stay where the pull left them, at the handle;
            they are not drawn up off it. With hinged, the fingers are instead closed to
            a narrow tip that comes down beside the handle, not onto it: on the circle
            through the grip point, at the grip point's height, on the side the handle
            turns away from, half the handle's narrower horizontal extent (as
            object_size() gives it) plus a small clearance back along the arc (or gap
            back along it, where gap is given). It then pushes the handle round, and
            stays closed where the push left it. With grasped, the handle is instead
            taken hold of with grasp() at its point and pulled (round its arc, with
            hinged), and the fingers stay closed on it at the end, still holding it, so
            it stays where it was drawn to. With pushed, the fingers are instead closed
            to a narrow tip that comes down beside the handle, not onto it: gap back
            along the slide from the grip point (on the side away from direction) and
            front across the slide towards the robot, at the grip point's height, so
            that it comes down in front of the window or panel the handle stands on,
            not on top of it. It then pushes the handle along direction, and stays
            closed where the push left it.
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
            point's start (with hinged or pushed, counting from where they come down,
            along the arc with hinged: at most amount plus the gap behind the handle,
            which is 0 with grasped), and the pull stops early, without failing, where the drawer meets
            its end stop or stops following.
        max_pulls: most pulls to make; after each one the handle is read again and the
            rest of the way is pulled, so a hook that lags behind is made up for, as
            long as the fingertips stay within amount of where they started.
        hinged: False (the default) pulls in a straight line along a slide. True turns
            the handle about the hinge's axis, as given by joint_axis(), by pushing its
            side: the fingertips follow the circle through the grip point in short
            straight steps, each along the circle's tangent where they are. Turns must
            stay under half a turn.
        gap: only with hinged or pushed: how far in metres back along the arc (with
            pushed, along the slide) from the grip point the closed tip comes down, at
            least 0. Give it for a handle whose box is much wider than its bar, such as
            a door's pull handle that stands off the door with a narrow space behind
            it, so the tip comes down in that space rather than inside the door. None
            (the default) uses half the handle's narrower horizontal extent plus a
            small clearance with hinged, and 3 cm with pushed. Not used with grasped.
        grasped: False (the default) hooks the open fingers round the handle (or, with
            hinged, pushes its side with the closed tip). True takes hold of the handle
            with grasp() and pulls it, keeping hold of it at the end, as for a door
            that would otherwise swing on or back once let go.
        arc_step: only with hinged: the longest straight step in metres along the
            circle's tangent before the fingertips' place is read again and the next
            step aimed afresh; longer steps take fewer moves. None (the default) uses
            2 cm.
        pushed: only for a slide (not with hinged or grasped): False (the default)
            hooks the open fingers round the handle from above. True instead pushes
            the handle along direction with the closed tip, brought down beside it as
            described for handle, as for a sliding window whose handle sits on the
            window's face, where open fingers coming down onto the grip point would
            land on top of the window.
        front: only with pushed: how far in metres across the slide from the grip
            point, towards the robot, the closed tip comes down, at least 0. 0 brings
            it down in line with the grip point, right against the handle's side and
            as close to the window as the handle itself, for a handle that stands only
            a little off the window's face, which a tip further out would sweep past.

    Returns:
        How far the drawer actually opened: how far the joint moved (in either sense)
        from the start to the end of the pull, in metres for a slide and radians for
        a hinge.
    """
    if held_object() is not None:
        raise RuntimeError(f"the gripper must be empty to open {handle!r}")
    if gap is not None and gap < 0.0:
        raise ValueError("gap must not be negative")
    if arc_step is not None and arc_step <= 0.0:
        raise ValueError("arc_step must be positive")
    if pushed and (hinged or grasped):
        raise ValueError("pushed is only for a slide, without hinged or grasped")
    if front < 0.0:
        raise ValueError("front must not be negative")
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
        step_length = _ARC_STEP if arc_step is None else arc_step
        if grasped:
            slack = 0.0
        elif gap is None:
            size = object_size(handle)
            slack = min(size.x, size.y) / 2.0 + _SIDE_CLEARANCE
        else:
            slack = gap

        def opened() -> float:
            angle = _angle_about(object_pose(handle).position, centre) - start_angle
            return sense * math.remainder(angle, 2.0 * math.pi) * radius

        def draw(step: float) -> float:
            return _follow_arc(centre, radius, sense, step, step_length)

        def approach() -> None:
            if grasped:
                grasp(handle)
            else:
                _come_beside(handle, centre, radius, sense, slack)

    else:
        handle_start = _along(handle, pull)
        if pushed:
            slack = _PUSH_GAP if gap is None else gap

        def opened() -> float:
            return _along(handle, pull) - handle_start

        def draw(step: float) -> float:
            return push(pull, step)

        def approach() -> None:
            if grasped:
                grasp(handle)
            elif pushed:
                _come_behind(handle, pull, slack, front)
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
    centre: Point, radius: float, sense: float, length: float, step_length: float = _ARC_STEP
) -> float:
    """Move the fingertips round an upright axis in straight steps, pushing what they meet.

    Args:
        centre: a point on the axis; only its x and y are used.
        radius: the circle's radius in metres; each step also steers back onto it.
        sense: +1.0 to go counter-clockwise seen from above, -1.0 to go clockwise.
        length: the furthest in metres to go along the arc.
        step_length: the longest straight step in metres, along the circle's tangent.

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
        step = min(step_length, length - got)
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


def _come_behind(handle: str, pull: Point, gap: float, front: float) -> None:
    """Bring the closed fingertips down beside a slide's handle, ready to push it along the slide.

    Args:
        handle: the handle's name; the fingertips end at the height of its grip point.
        pull: the horizontal unit direction in which the handle is to be pushed.
        gap: how far in metres back along the slide, behind the grip point, they come down.
        front: how far in metres across the slide, towards the robot, they come down.
    """
    close_gripper()  # a narrow tip to push with
    grip = object_pose(handle).position
    across = Point(-pull.y, pull.x, 0.0)
    if across.x * grip.x + across.y * grip.y > 0.0:
        across = Point(-across.x, -across.y, 0.0)  # point towards the robot
    spot = Point(
        grip.x - pull.x * gap + across.x * front,
        grip.y - pull.y * gap + across.y * front,
        grip.z,
    )
    _come_down(spot, max(bounding_box(handle)[1].z, grip.z) + _CLEARANCE)
