import math

from lyra.api import Point, ee_pose, held_object, move_ee, object_pose, object_size, pick, place, push, workspace


_MIN_MOVE = 0.002  # metres; fingertip motions shorter than this are skipped

_WORKSPACE_MARGIN = 0.001  # metres kept inside the reachable box when a target lies on or past its edge


def _unit_horizontal(v: Point) -> tuple[float, float]:
    """Return the horizontal unit vector (x, y) along v, ignoring its z."""
    length = math.hypot(v.x, v.y)
    if length < 1e-9:
        raise ValueError("direction must have a non-zero horizontal part")
    return v.x / length, v.y / length


def _long_axis(obj: str) -> tuple[float, float]:
    """Return the world angle in radians of obj's longer horizontal side, and half its length."""
    size = object_size(obj)
    yaw = object_pose(obj).yaw
    if size.x >= size.y:
        return yaw, size.x / 2
    return yaw + math.pi / 2, size.y / 2


def _misalignment(axis_angle: float, ux: float, uy: float) -> float:
    """Return the signed angle in radians from the direction's line to the axis line, in [-pi/2, pi/2)."""
    diff = axis_angle - math.atan2(uy, ux)
    return (diff + math.pi / 2) % math.pi - math.pi / 2


def _leading_end(obj: str, ux: float, uy: float) -> Point:
    """Return the centre of obj's end that faces along the horizontal direction (ux, uy)."""
    angle, half = _long_axis(obj)
    ax, ay = math.cos(angle), math.sin(angle)
    if ax * ux + ay * uy < 0:
        ax, ay = -ax, -ay
    centre = object_pose(obj).position
    return Point(centre.x + half * ax, centre.y + half * ay, centre.z)


def _move_tip(x: float, y: float, z: float) -> None:
    """Move the fingertips straight to (x, y, z), kept just inside the reachable box, unless they are already there."""
    box = workspace()
    x = _clamp(x, box.low.x, box.high.x)
    y = _clamp(y, box.low.y, box.high.y)
    z = _clamp(z, box.low.z, box.high.z)
    tip = ee_pose().position
    if math.dist((tip.x, tip.y, tip.z), (x, y, z)) > _MIN_MOVE:
        move_ee(Point(x, y, z))


def _align_on_table(obj: str, ux: float, uy: float, tolerance: float) -> None:
    """Turn obj where it lies so that its long side runs along (ux, uy), if it is off by more than tolerance radians."""
    angle, _ = _long_axis(obj)
    turn = _misalignment(angle, ux, uy)
    if abs(turn) <= tolerance:
        return
    pose = object_pose(obj)
    pick(obj)
    place(pose.position, yaw_deg=math.degrees(pose.yaw - turn))


def insert_into(
    obj: str,
    hole: str,
    direction: Point,
    *,
    entry_distance: float = 0.1,
    align_tolerance_deg: float = 10.0,
) -> None:
    """Pick up a peg-like object and push it straight into a hole in the side of another object, along the hole's axis, without letting go.

    Every fingertip target is kept just inside the box the fingertips can reach, as
    workspace() gives it: a target on or past its edge (such as a hole right at the
    reach's near edge) is moved the least way inside it, so obj may end up a millimetre
    or so off the hole's centre there instead of the move failing.

    Args:
        obj: name of the object to insert, as listed by object_names() (for example the
            peg). If the gripper is empty, obj is grasped from above and lifted clear of
            the scene first. If the gripper already holds obj, it is used as it is held.
            Its leading end is its end that faces along direction, worked out from its
            pose and object_size(). At the end, obj is left held in the closed gripper
            inside the hole. It is not released.
        hole: name of the object that marks the hole, as listed by object_names() (for
            example the goal inside the box's side hole). The leading end of obj ends up
            at the centre of hole, as object_pose() gives it when the skill starts, x, y
            and z alike (as near as the reachable box allows).
        direction: the horizontal direction in which obj moves into the hole, as a
            vector that need not be of unit length. Its z is ignored. For example,
            Point(-1, 0, 0) is for a hole that opens towards +x (the robot's right). obj
            is carried with its long side along this direction.
        entry_distance: distance in metres back from the hole's centre, against
            direction, at which the leading end of obj is first lined up with the hole,
            at the hole's height. obj is carried there from above, lowered to that
            height and then moved straight in along direction. It must be more than the
            depth of the hole, so that obj starts outside the object the hole is in.
        align_tolerance_deg: when the gripper starts empty and obj's long side is off
            direction by more than this many degrees, obj is first picked up and put
            back where it lay, turned so that its long side runs along direction (the
            gripper cannot turn while holding it). An obj already held is used as held.
    """
    if entry_distance <= 0:
        raise ValueError("entry_distance must be positive")
    ux, uy = _unit_horizontal(direction)

    # The hole's centre as it is at the start, and the point the leading end lines up at.
    goal = object_pose(hole).position
    entry = Point(goal.x - entry_distance * ux, goal.y - entry_distance * uy, goal.z)

    held = held_object()
    if held is None:
        _align_on_table(obj, ux, uy, math.radians(align_tolerance_deg))
        pick(obj)
    elif held != obj:
        raise ValueError(f"the gripper holds {held!r}, not {obj!r}")

    # Where the fingertips must go so that the leading end is at the entry point.
    tip = ee_pose().position
    lead = _leading_end(obj, ux, uy)
    ex = entry.x - (lead.x - tip.x)
    ey = entry.y - (lead.y - tip.y)
    ez = entry.z - (lead.z - tip.z)

    # Carry obj across from above, then lower it straight down to the hole's height.
    carry_z = max(tip.z, ez)
    _move_tip(tip.x, tip.y, carry_z)
    _move_tip(ex, ey, carry_z)
    _move_tip(ex, ey, ez)

    # Correct for any slip in the grasp, so the leading end is lined up with the hole.
    lead = _leading_end(obj, ux, uy)
    tip = ee_pose().position
    _move_tip(
        tip.x + entry.x - lead.x,
        tip.y + entry.y - lead.y,
        tip.z + entry.z - lead.z,
    )

    # Move straight in along the hole's axis; push() does not fail on light contact.
    push(Point(ux, uy, 0.0), entry_distance)


def _clamp(value: float, low: float, high: float) -> float:
    """Return value limited to [low + margin, high - margin] (to the middle if that range is empty)."""
    lo, hi = low + _WORKSPACE_MARGIN, high - _WORKSPACE_MARGIN
    if lo > hi:
        return (low + high) / 2
    return min(max(value, lo), hi)
