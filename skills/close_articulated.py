import math

from lyra.api import Point, bounding_box, close_gripper, ee_pose, held_object, joint_value, move_ee, object_pose, push


_LIFT_MARGIN = 0.05  # metres kept above the handle's top when moving over or off it

_CLEARANCE = 0.03  # metres between the fingertips and the handle's near face when coming down

_TOLERANCE = 0.005  # metres a retreating move may fall short by and still count as done


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
) -> float:
    """Close a drawer or sliding window by pushing its handle along its slide with the closed fingertips until it reaches its end stop or has gone a given distance.

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
            again, and like push() they do not fail when blocked.
        joint: name of the slide joint, as listed by joint_names(). Its value is read
            before and after the push, to tell how far the drawer or window has closed.
        direction: the direction in which the drawer or window closes, along its slide,
            as a vector in the horizontal plane (it need not be of unit length); only its
            x and y are used, and z is ignored. For example, Point(0, 1, 0) pushes a
            drawer in, away from the robot, as on MetaWorld, and Point(-1, 0, 0) slides a
            window shut sideways towards -x.
        distance: the furthest in metres that the handle is pushed: how far the
            fingertips travel along direction from where they first touch the handle.
            The push stops early, without failing, where the slide meets its end stop,
            so a value larger than the opening closes it all the way.

    Returns:
        How far the drawer or window actually closed, in metres: how far the slide joint
        moved (in either sense) from the start to the end of the push.
    """
    if held_object() is not None:
        raise ValueError("close_articulated needs an empty gripper")
    if distance < 0.0:
        raise ValueError("distance must not be negative")

    ux, uy = _unit_xy(direction)
    centre = object_pose(handle).position

    # Come down just in front of the handle's near face, on the side away from
    # direction, leaving only a small clearance so the point stays within reach.
    standoff = _near_face_offset(handle, centre, ux, uy) + _CLEARANCE
    start = Point(centre.x - ux * standoff, centre.y - uy * standoff, centre.z)
    over_z = max(_clear_height(handle), centre.z + _LIFT_MARGIN)

    # Rise straight up first, so the fingers leave anything they sit at (such as the
    # handle after open_articulated) before closing and travelling over.
    here = ee_pose().position
    if here.z < over_z:
        move_ee(Point(here.x, here.y, over_z))
    close_gripper()
    move_ee(Point(start.x, start.y, over_z))
    move_ee(start)

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
