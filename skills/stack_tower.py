import math

from skills.put_on import put_on
from lyra.api import Point, object_pose, put_first_on_second


def stack_tower(names: list[str], *, offset_x: float = 0.0, offset_y: float = 0.0) -> None:
    """Stack objects into a single tower, in the given order from bottom to top.

    Args:
        names: names of the objects to stack, as listed by object_names(), bottom first.
            The first object stays where it is and forms the base. Each later object is
            put centred on top of the one before it and aligned with it.
        offset_x: shift in metres along the world x axis of each object's centre from the
            centre of the object below it. The default, 0, keeps objects centred.
        offset_y: shift in metres along the world y axis of each object's centre from the
            centre of the object below it. The default, 0, keeps objects centred.
    """
    if len(set(names)) != len(names):
        raise ValueError(f"stack_tower needs distinct objects, got {names}")
    for below, above in zip(names, names[1:]):
        if offset_x == 0.0 and offset_y == 0.0:
            put_on(above, below)
        else:
            _put_on_shifted(above, below, offset_x, offset_y)


def _put_on_shifted(obj: str, target: str, dx: float, dy: float) -> None:
    """Put obj on top of target, aligned with it, its centre shifted by (dx, dy) in the world."""
    target_pose = object_pose(target)
    centre = target_pose.position
    spot = Point(centre.x + dx, centre.y + dy, centre.z)
    put_first_on_second(obj, spot, yaw_deg=math.degrees(target_pose.yaw))
