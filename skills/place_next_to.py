import math

from lyra.api import Pose, held_object, object_pose, object_size, pick, place, relative_point


def _half_extent(size_x: float, size_y: float, angle_deg: float) -> float:
    """Return how far a box reaches from its centre along a direction in its own frame."""
    a = math.radians(angle_deg)
    return abs(size_x / 2.0 * math.cos(a)) + abs(size_y / 2.0 * math.sin(a))


def place_next_to(obj: str, reference: str, gap: float, *, angle_deg: float = 0.0) -> None:
    """Place one object on the table beside another, leaving a given gap between them.

    Args:
        obj: name of the object to move, as listed by object_names().
        reference: name of the object to place it next to; obj ends up aligned with it,
            resting on the same surface.
        gap: free space in metres between the facing sides of the two objects.
        angle_deg: which side of the reference to use, in degrees around it in the
            horizontal plane, counter-clockwise from the reference's own x axis
            (0 along +x, 90 along +y). The default, 0, keeps the original +x side.
    """
    ref_size = object_size(reference)
    obj_size = object_size(obj)
    ref_yaw_deg = math.degrees(object_pose(reference).yaw)

    # obj is aligned with the reference, so both boxes are measured along the same
    # direction in the reference's frame.
    distance = (
        _half_extent(ref_size.x, ref_size.y, angle_deg)
        + gap
        + _half_extent(obj_size.x, obj_size.y, angle_deg)
    )
    # Same supporting surface: both bottoms are level, so the centres differ by half the height difference.
    dz = (obj_size.z - ref_size.z) / 2.0
    target = relative_point(reference, distance, angle_deg, dz)

    if held_object() != obj:
        pick(obj)
    place(Pose.from_yaw(target, math.radians(ref_yaw_deg)), yaw_deg=ref_yaw_deg)
