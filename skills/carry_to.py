import math

from lyra.api import Point, ee_pose, held_object, move_ee, object_pose, pick


def _move_if_needed(point: Point, tolerance: float = 1e-4) -> None:
    """Move the fingertips to a point unless they are already there.

    Args:
        point: where the fingertips' centre goes.
        tolerance: distance in metres under which no move is made.
    """
    tip = ee_pose().position
    if math.dist((tip.x, tip.y, tip.z), (point.x, point.y, point.z)) > tolerance:
        move_ee(point)


def carry_to(
    obj: str,
    target: str,
    *,
    clearance: float = 0.0,
    entry_distance: float = 0.0,
) -> None:
    """Pick an object up and carry it so that its centre is held at another object's centre, without letting go.

    Args:
        obj: name of the object to carry, as listed by object_names() (for example the
            puck). It is grasped from above and lifted clear of the scene first, so the
            gripper must be empty when the skill starts, unless it already holds obj, in
            which case obj is carried as it is held.
        target: name of the object to carry it to, as listed by object_names() (for
            example the goal, which may float above the table). The centre of obj ends
            up at the centre of target as object_pose() gives it when the skill starts,
            x, y and z alike. obj is left held in the closed gripper there, not released.
        clearance: extra height in metres above the target at which obj is brought in,
            before it is lowered straight down onto the target, for example so that it
            clears the front edge of a shelf. The default, 0, brings it in at the
            target's own height (or higher, if it is already carried higher).
        entry_distance: distance in metres in front of the target (towards the robot,
            along -y) from which obj is moved straight in along +y, as into a shelf or
            cupboard open towards the robot. obj is first brought to that point and set
            to the entry height (the target's height plus clearance) there, so nothing
            above the opening is crossed. The default, 0, carries obj straight across
            to the target.
    """
    if clearance < 0.0 or entry_distance < 0.0:
        raise ValueError("clearance and entry_distance must not be negative")

    goal = object_pose(target).position

    held = held_object()
    if held is None:
        pick(obj)
        if held_object() != obj:
            raise RuntimeError(f"could not pick up {obj!r}")
    elif held != obj:
        raise ValueError(f"the gripper holds {held!r}, not {obj!r}")

    # Where obj's centre sits relative to the fingertips, as it is actually held.
    tip = ee_pose().position
    centre = object_pose(obj).position
    offset = (centre.x - tip.x, centre.y - tip.y, centre.z - tip.z)

    # Fingertip position that puts obj's centre on the goal.
    dest = Point(goal.x - offset[0], goal.y - offset[1], goal.z - offset[2])

    # Travel at a height clear of the scene: rise first if needed, cross over to the
    # entry point (in front of the target, or above it), set the entry height there,
    # move straight in, then go straight down (or up) onto the goal.
    entry_z = dest.z + clearance
    travel_z = max(tip.z, entry_z)
    front = Point(dest.x, dest.y - entry_distance, travel_z)
    _move_if_needed(Point(tip.x, tip.y, travel_z))
    _move_if_needed(front)
    _move_if_needed(Point(front.x, front.y, entry_z))
    _move_if_needed(Point(dest.x, dest.y, entry_z))
    _move_if_needed(dest)
