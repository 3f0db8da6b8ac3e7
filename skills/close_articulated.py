import math

from lyra.api import Point, bounding_box, close_gripper, ee_pose, held_object, joint_value, move_ee, object_pose, push


_LIFT_MARGIN = 0.05  # metres kept above the handle's top when moving over or off it

_CLEARANCE = 0.03  # metres between the fingertips and the handle's near face when coming down


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
    """Close a drawer by pushing its handle along its slide with the closed fingertips until it reaches its end stop or has gone a given distance.

    Args:
        handle: name of the drawer's handle, as listed by object_names(). The gripper,
            which must be empty, is closed to a narrow tip. It comes down from above just
            in front of the handle, on the side away from direction (the robot's side on
            MetaWorld), a small clearance short of the near face of the handle's box as
            bounding_box() gives it. It comes down to the height of the handle's point
            as object_pose() puts it, then pushes the handle along direction. At the end
            the closed fingertips are drawn straight up clear of the handle.
        joint: name of the drawer's slide joint, as listed by joint_names(). Its value is
            read before and after the push, to tell how far the drawer has closed.
        direction: the direction in which the drawer closes, along its slide, as a vector
            in the horizontal plane (it need not be of unit length); only its x and y are
            used, and z is ignored. For example, Point(0, 1, 0) pushes the drawer in, away
            from the robot, as on MetaWorld.
        distance: the furthest in metres that the drawer is pushed: how far the
            fingertips travel along direction from where they first touch the handle.
            The push stops early, without failing, where the drawer meets its end stop,
            so a value larger than the drawer's opening closes it all the way.

    Returns:
        How far the drawer actually closed, in metres: how far the slide joint moved
        (in either sense) from the start to the end of the push.
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

    # Draw the closed fingertips straight up, clear of the handle where it now is.
    tip = ee_pose().position
    move_ee(Point(tip.x, tip.y, max(_clear_height(handle), tip.z + _LIFT_MARGIN)))

    return abs(after - before)
