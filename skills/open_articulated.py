import math

from lyra.api import Point, bounding_box, ee_pose, held_object, joint_value, move_ee, object_pose, push, release


_TOLERANCE = 0.001  # metres of opening that count as "done"

_MIN_PROGRESS = 0.002  # a pull that gains less than this has met the end stop

_CLEARANCE = 0.05  # metres above the handle's box from which the fingers come down


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
    safe_z = max(bounding_box(handle)[1].z, grip.z) + _CLEARANCE
    here = ee_pose().position
    if here.z < safe_z:
        move_ee(Point(here.x, here.y, safe_z))
    move_ee(Point(grip.x, grip.y, max(here.z, safe_z)))
    move_ee(grip)


def open_articulated(
    handle: str,
    joint: str,
    direction: Point,
    amount: float,
    *,
    max_pulls: int = 5,
) -> float:
    """Open a drawer by hooking its handle between the open fingers and pulling it along its slide by a given amount, leaving the fingers there.

    Args:
        handle: name of the drawer's handle, as listed by object_names(). The gripper,
            which must be empty, comes down from above with its fingers open so that they
            straddle the handle where object_pose() puts it and pulls it without closing.
            At the end the open fingers stay where the pull left them, at the handle;
            they are not drawn up off it.
        joint: name of the drawer's slide joint, as listed by joint_names(). Its value is
            read before and after the pull, to tell how far the drawer has opened.
        direction: the direction in which the drawer opens, as a vector in the horizontal
            plane (it need not be of unit length); only its x and y are used, and z is
            ignored. For example, Point(0, -1, 0) pulls the drawer out towards the robot,
            as on MetaWorld.
        amount: how far in metres to open the drawer: how far the handle's grip point is
            to travel along direction from where it starts. The fingertips never go
            further than this from the grip point, and the pull stops early, without
            failing, where the drawer meets its end stop or stops following.
        max_pulls: most pulls to make; after each one the handle is read again and the
            rest of the way is pulled, so a hook that lags behind is made up for, as
            long as the fingertips stay within amount of where they started.

    Returns:
        How far the drawer actually opened, in metres: how far the slide joint moved
        (in either sense) from the start to the end of the pull.
    """
    if held_object() is not None:
        raise RuntimeError(f"the gripper must be empty to open {handle!r}")
    pull = _horizontal_unit(direction)
    start = joint_value(joint)
    if amount <= _TOLERANCE:
        return 0.0

    handle_start = _along(handle, pull)
    _hook(handle)
    travelled = 0.0  # how far the fingertips have been pulled along the direction
    for _ in range(max_pulls):
        opened = _along(handle, pull) - handle_start
        step = min(amount - opened, amount - travelled)
        if step <= _TOLERANCE:
            break  # the handle, or the fingertips, have reached the goal
        moved = push(pull, step)
        travelled += moved
        gained = _along(handle, pull) - handle_start - opened
        if moved < _MIN_PROGRESS or gained < _MIN_PROGRESS:
            break  # end stop reached, or the handle is no longer moving
    return abs(joint_value(joint) - start)
