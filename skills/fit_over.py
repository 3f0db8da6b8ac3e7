import math

from lyra.api import Point, bounding_box, ee_pose, held_object, move_ee, object_pose, pick, push, release


_EPS = 1e-4

_ALIGN_PASSES = 3


def fit_over(
    obj: str,
    peg: str,
    *,
    hole_offset: Point | None = None,
    clearance: float = 0.03,
    seat_height: float | None = None,
    align_tolerance: float = 0.003,
) -> None:
    """Pick up an object with a hole through it (such as a ring) and lower it straight down over an upright peg so that the peg passes through the hole, then let it go there.

    Args:
        obj: name of the object with the hole, as listed by object_names() (for
            example the ring). If the gripper is empty, obj is picked from above and
            lifted clear of the scene first (pick() grasps it at its point as
            object_pose() gives it, e.g. a ring's handle). If the gripper already
            holds obj, it is used as it is held. The gripper cannot turn, so obj
            keeps the yaw it has when it is picked up. At the end obj is released on
            the peg and the fingertips are drawn up clear of it; the gripper is left
            open and empty.
        peg: name of the upright peg, as listed by object_names(kind="peg"). Its
            vertical axis is taken to run through its centre, as object_pose() gives
            it when the skill starts, and its top is the top of its box, as
            bounding_box() gives it.
        hole_offset: where the centre of the hole lies relative to obj's centre (as
            object_pose() gives it), in metres in world axes as obj lies when the skill
            starts; only its x and y are used, and z is ignored. None (the default)
            takes the hole to be at obj's centre. Use it for an object whose hole is
            off its centre, such as a ring with a handle on one side.
        clearance: height in metres above the top of the peg at which the bottom of
            obj is carried over the peg and lined up with it, the hole's centre
            straight above the peg's axis, before it is lowered straight down.
        seat_height: height in metres above the table at which the bottom of obj is
            let go, once the peg is through the hole. None (the default) lowers obj
            until its bottom reaches the bottom of the peg's box (the table or the
            peg's base), so it comes to rest at the foot of the peg.
        align_tolerance: once over the peg, how far in metres (horizontally) the
            hole's centre, measured again from where obj now is, may be from the
            peg's axis before it is lowered; if it is further off, the fingertips
            are moved to correct it (a few tries at most).

    Raises:
        ValueError: if clearance or align_tolerance is negative, the seat is above
            the peg's top, or the gripper holds something other than obj.
    """
    if clearance < 0.0:
        raise ValueError(f"clearance must not be negative, got {clearance}")
    if align_tolerance < 0.0:
        raise ValueError(f"align_tolerance must not be negative, got {align_tolerance}")

    # The peg is read once, as it stands when the skill starts.
    axis = object_pose(peg).position
    peg_low, peg_high = bounding_box(peg)
    peg_top = peg_high.z
    seat = peg_low.z if seat_height is None else seat_height
    if seat > peg_top:
        raise ValueError(
            f"seat_height {seat:.3f} m is above the top of {peg} ({peg_top:.3f} m)"
        )
    off_x, off_y = (0.0, 0.0) if hole_offset is None else (hole_offset.x, hole_offset.y)

    held = held_object()
    if held is None:
        pick(obj)
    elif held != obj:
        raise ValueError(f"the gripper holds {held}, not {obj}")

    # How the fingertips hold obj: their offset from the hole's centre, and their
    # height above obj's bottom. The gripper cannot turn, so these stay fixed.
    tip = ee_pose().position
    centre = object_pose(obj).position
    obj_low, obj_high = bounding_box(obj)
    grip_dx = tip.x - (centre.x + off_x)
    grip_dy = tip.y - (centre.y + off_y)
    grip_dz = tip.z - obj_low.z
    obj_height = obj_high.z - obj_low.z

    # Fingertip positions that put the hole's centre on the peg's axis.
    over_x = axis.x + grip_dx
    over_y = axis.y + grip_dy
    line_up_z = peg_top + clearance + grip_dz
    travel_z = max(tip.z, line_up_z)

    # Rise (if needed), cross over the peg, come down to the line-up height.
    if travel_z > tip.z + _EPS:
        move_ee(Point(tip.x, tip.y, travel_z))
    move_ee(Point(over_x, over_y, travel_z))
    if travel_z > line_up_z + _EPS:
        move_ee(Point(over_x, over_y, line_up_z))

    # The held object may have shifted in the grip on the way: check where the
    # hole really is and bring it right above the peg's axis before lowering.
    for _ in range(_ALIGN_PASSES):
        hole = object_pose(obj).position
        err_x = axis.x - (hole.x + off_x)
        err_y = axis.y - (hole.y + off_y)
        if math.hypot(err_x, err_y) <= align_tolerance:
            break
        now = ee_pose().position
        move_ee(Point(now.x + err_x, now.y + err_y, now.z))

    # Lower straight down over the peg; push() stops rather than fails if it snags.
    drop = ee_pose().position.z - (seat + grip_dz)
    if drop > _EPS:
        push(Point(0.0, 0.0, -1.0), drop)

    release()

    # Draw the fingertips straight up, clear of obj and of the peg's top.
    now = ee_pose().position
    clear_z = max(now.z, peg_top + clearance, seat + obj_height + clearance)
    if clear_z > now.z + _EPS:
        move_ee(Point(now.x, now.y, clear_z))
