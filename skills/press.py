import math

from lyra.api import Point, bounding_box, close_gripper, ee_pose, held_object, object_pose, push


_EPS = 1e-4  # moves shorter than this (metres) are skipped


def _push_to(target: Point) -> float:
    """Move the fingertips in a straight line to a point, without failing when blocked.

    Args:
        target: where the fingertips' centre should go.

    Returns:
        How far the fingertips got along the line, in metres.
    """
    here = ee_pose().position
    delta = Point(target.x - here.x, target.y - here.y, target.z - here.z)
    length = math.sqrt(delta.x ** 2 + delta.y ** 2 + delta.z ** 2)
    if length <= _EPS:
        return 0.0
    return push(delta, length)


def press(
    button: str,
    depth: float,
    *,
    clearance: float = 0.02,
    lift: bool = False,
    direction: Point | None = None,
) -> float:
    """Press a button with the closed fingertips, straight down from above or along a given direction, by a given depth or until it bottoms out, and keep it pressed.

    Args:
        button: name of the button, as listed by object_names(). The gripper, which must
            be empty, is closed to a narrow tip before it moves, so the button cannot
            slip up between open fingers. The tip is first moved to a small clearance
            above the top of the button's box, as bounding_box() gives it, directly over
            the button's centre as object_pose() puts it (only its x and y are used). It
            then comes straight down onto the top of the button and pushes it down along
            -z. At the end the closed fingertips stay where the push left them, on the
            button, holding it pressed down, so it does not spring back up. None of these
            moves fail when blocked, like push(). With direction, everything is measured
            along that direction instead of down -z: the tip arrives a clearance short
            of the button box's near face (the face first met when moving along
            direction), on the line through the button's centre along direction, and
            pushes along direction. To get there it rises, where need be, to the
            clearance height above the top of the button's box, goes across at that
            height and comes down to that point.
        depth: the furthest in metres that the button is pushed down: how far the
            fingertips travel downwards from the top of the button's box as it was before
            the press. The push stops early, without failing, where the button meets its
            end stop, so a value larger than the button's travel presses it all the way.
            With direction, how far they travel along it past the box's near face.
        clearance: height in metres above the top of the button's box at which the tip
            arrives over the button (and to which it is lifted at the end with lift).
            With direction, the gap in metres short of the box's near face, along
            direction, at which the tip arrives (and to which it is drawn back with lift).
        lift: False (the default) keeps the closed fingertips pressing on the button at
            the end. True instead draws them straight back up to the clearance height
            above where the button's top was at the start, so they no longer touch it
            and the button may spring back up. With direction, they are drawn straight
            back against direction to the clearance short of where the near face was.
        direction: the way the button is pressed, as a vector (it need not be of unit
            length), such as Point(0, 1, 0) for a button on the front of a machine that
            is pushed in away from the robot. It must not point upwards. None (the
            default) presses straight down, Point(0, 0, -1).

    Returns:
        How far the fingertips actually went down past the top of the button's box, in
        metres: at most depth, and less where the button bottomed out first. With
        direction, how far they went along it past the box's near face.
    """
    if depth < 0.0:
        raise ValueError(f"depth must not be negative, got {depth}")
    if clearance < 0.0:
        raise ValueError(f"clearance must not be negative, got {clearance}")
    d = _unit(direction) if direction is not None else Point(0.0, 0.0, -1.0)
    if d.z > _EPS:
        raise ValueError(f"direction must not point upwards, got {direction}")
    held = held_object()
    if held is not None:
        raise RuntimeError(f"the gripper must be empty to press, but it holds {held!r}")

    # Close the fingers first, so that a narrow closed tip, not the gap between open
    # fingers, comes down onto the button.
    close_gripper()

    low, high = bounding_box(button)
    face = _near_face(low, high, d)  # where the near face lies along d
    centre = object_pose(button).position
    hover = _along(centre, d, face - clearance)

    # Rise first where need be, so the sideways move passes over the button rather than
    # through it, then go across and settle at the clearance short of its near face.
    here = ee_pose().position
    travel_z = max(here.z, high.z + clearance, hover.z)
    _push_to(Point(here.x, here.y, travel_z))
    _push_to(Point(hover.x, hover.y, travel_z))
    _push_to(hover)

    # Come straight onto the near face and press on by depth, or until the end stop.
    push(d, clearance + depth)
    pressed = _dot(ee_pose().position, d) - face
    pressed = min(max(pressed, 0.0), depth)

    # Keep pressing: the closed tip stays on the button unless asked to draw back.
    if lift:
        here = ee_pose().position
        _push_to(_along(here, d, face - clearance))

    return pressed


def _dot(a: Point, b: Point) -> float:
    """Return the dot product of two vectors.

    Args:
        a: the first vector.
        b: the second vector.
    """
    return a.x * b.x + a.y * b.y + a.z * b.z


def _unit(direction: Point) -> Point:
    """Return a vector of unit length along a direction.

    Args:
        direction: the direction; it must not be of zero length.
    """
    length = math.sqrt(_dot(direction, direction))
    if length <= _EPS:
        raise ValueError(f"direction must not be of zero length, got {direction}")
    return Point(direction.x / length, direction.y / length, direction.z / length)


def _near_face(low: Point, high: Point, d: Point) -> float:
    """Return where a box's face first met when moving along a unit direction lies along it.

    Args:
        low: the box's lowest corner.
        high: the box's highest corner.
        d: the unit direction.

    Returns:
        The smallest value of dot(corner, d) over the box's corners.
    """
    return (
        min(low.x * d.x, high.x * d.x)
        + min(low.y * d.y, high.y * d.y)
        + min(low.z * d.z, high.z * d.z)
    )


def _along(point: Point, d: Point, level: float) -> Point:
    """Return the point reached from a point along a unit direction where dot(p, d) is a level.

    Args:
        point: the point to start from.
        d: the unit direction to move along (either sense).
        level: the value dot(p, d) is to take at the result.
    """
    k = level - _dot(point, d)
    return Point(point.x + k * d.x, point.y + k * d.y, point.z + k * d.z)
