import math

from lyra.api import Point, object_pose, put_first_on_second


def stack_tower(
    names: list[str],
    *,
    offset_x: float = 0.0,
    offset_y: float = 0.0,
    turn_deg: float = 0.0,
) -> None:
    """Stack objects into a single tower, in the given order from bottom to top.

    Args:
        names: names of the objects to stack, as listed by object_names(), bottom first.
            The first object stays where it is and forms the base. Each later object is
            put centred on top of the one before it. By default it is also aligned with
            that object.
        offset_x: shift in metres along the world x axis of each object's centre from the
            centre of the object below it. The default, 0, keeps objects centred.
        offset_y: shift in metres along the world y axis of each object's centre from the
            centre of the object below it. The default, 0, keeps objects centred.
        turn_deg: how many degrees further each object is turned about the vertical axis
            than the object below it, counter-clockwise seen from above. The default, 0,
            aligns each object with the one below it. For example, 45 stacks cubes corner
            to corner: each cube's corners stand over the middles of the lower cube's edges.

    Raises:
        ValueError: if the same object is named more than once.
    """
    if len(set(names)) != len(names):
        raise ValueError(f"stack_tower needs distinct objects, got {names}")
    for below, above in zip(names, names[1:]):
        if offset_x == 0.0 and offset_y == 0.0 and turn_deg == 0.0:
            put_first_on_second(above, below)
        else:
            _put_on_shifted(above, below, offset_x, offset_y, turn_deg)


def _put_on_shifted(
    obj: str, target: str, dx: float, dy: float, turn_deg: float = 0.0
) -> None:
    """Put obj on top of target, its centre shifted by (dx, dy) in the world and turned turn_deg further than target."""
    target_pose = object_pose(target)
    yaw = _wrap_deg(math.degrees(target_pose.yaw) + turn_deg)
    if dx == 0.0 and dy == 0.0:
        put_first_on_second(obj, target, yaw_deg=yaw)
        return
    centre = target_pose.position
    spot = Point(centre.x + dx, centre.y + dy, centre.z)
    put_first_on_second(obj, spot, yaw_deg=yaw)


def _wrap_deg(angle: float) -> float:
    """Return an angle in degrees wrapped into [-180, 180)."""
    return (angle + 180.0) % 360.0 - 180.0
