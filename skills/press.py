import math

from lyra.api import Point, bounding_box, close_gripper, ee_pose, held_object, object_pose, push


_EPS = 1e-4  # moves shorter than this (metres) are skipped

_DOWN = Point(0.0, 0.0, -1.0)  # the default way to press: straight down from above


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
    """Press a button straight down from above, or along another given direction, with the closed fingertips, by a given depth or until it bottoms out, and keep it pressed down.

    Args:
        button: name of the button, as listed by object_names(). The gripper, which must
            be empty, is closed to a narrow tip before it moves, so the button cannot
            slip up between open fingers. The tip is first moved to a small clearance
            above the top of the button's box, as bounding_box() gives it, directly over
            the button's centre as object_pose() puts it (only its x and y are used). It
            then comes straight down onto the top of the button and pushes it down along
            -z. At the end the closed fingertips stay where the push left them, on the
            button, holding it pressed down, so it does not spring back up. None of these
            moves fail when blocked, like push(). With direction, "top", "above" and
            "down" are all taken along direction instead: the tip arrives a clearance
            short of the side of the button's box that it meets first, on the line
            through the button's centre along direction, and pushes along direction.
        depth: the furthest in metres that the button is pushed down: how far the
            fingertips travel downwards from the top of the button's box as it was before
            the press. The push stops early, without failing, where the button meets its
            end stop, so a value larger than the button's travel presses it all the way.
            With direction, how far they travel along it past that side of the box.
        clearance: height in metres above the top of the button's box at which the tip
            arrives over the button (and to which it is lifted at the end with lift).
            With direction, the distance short of that side of the box, along direction.
        lift: False (the default) keeps the closed fingertips pressing on the button at
            the end. True instead draws them straight back up to the clearance height
            above where the button's top was at the start, so they no longer touch it
            and the button may spring back up. With direction, they are drawn straight
            back against direction, to the clearance short of the box's side.
        direction: the way the button is pressed, as a vector (it need not be of unit
            length), for a button set in an upright face such as the front of a coffee
            machine: Point(0, 1, 0) presses it away from the robot on MetaWorld. The tip
            gets there by first backing off against direction, where it is not already
            short of the clearance, then moving across to the line through the button's
            centre, then along that line to the clearance. None (the default) presses
            straight down, as Point(0, 0, -1) would.

    Returns:
        How far the fingertips actually went down past the top of the button's box, in
        metres: at most depth, and less where the button bottomed out first. With
        direction, how far they went along it past the side of the box they met first.
    """
    if depth < 0.0:
        raise ValueError(f"depth must not be negative, got {depth}")
    if clearance < 0.0:
        raise ValueError(f"clearance must not be negative, got {clearance}")
    way = _DOWN if direction is None else _unit(direction)
    held = held_object()
    if held is not None:
        raise RuntimeError(f"the gripper must be empty to press, but it holds {held!r}")

    # Close the fingers first, so that a narrow closed tip, not the gap between open
    # fingers, comes down onto the button.
    close_gripper()

    # Coordinates along the pressing direction: the side of the button's box that the
    # tip meets first (its top when pressing down) is the smallest one over its corners.
    low, high = bounding_box(button)
    corners = [
        Point(x, y, z)
        for x in (low.x, high.x)
        for y in (low.y, high.y)
        for z in (low.z, high.z)
    ]
    face = min(_dot(corner, way) for corner in corners)
    centre = object_pose(button).position
    start_s = face - clearance
    start = _along(centre, way, start_s)  # a clearance short of the face, on the centre's line

    # Back off first where need be (rise, when pressing down), so the move across passes
    # clear of the button rather than through it, then go across and settle at the
    # clearance short of the button's face.
    here = ee_pose().position
    travel_s = min(_dot(here, way), start_s)
    _push_to(_along(here, way, travel_s))
    _push_to(_along(start, way, travel_s))
    _push_to(start)

    # Come straight onto the face and press on by depth, or until the end stop.
    push(way, clearance + depth)
    pressed = _dot(ee_pose().position, way) - face
    pressed = min(max(pressed, 0.0), depth)

    # Keep pressing: the closed tip stays on the button unless asked to lift.
    if lift:
        _push_to(_along(ee_pose().position, way, start_s))

    return pressed


def _dot(a: Point, b: Point) -> float:
    """Return the dot product of two vectors.

    Args:
        a: the first vector.
        b: the second vector.
    """
    return a.x * b.x + a.y * b.y + a.z * b.z


def _unit(vector: Point) -> Point:
    """Return a vector scaled to unit length.

    Args:
        vector: the vector to scale; it must not be of (near) zero length.
    """
    length = math.sqrt(_dot(vector, vector))
    if length <= _EPS:
        raise ValueError(f"direction must not be a zero vector, got {vector}")
    return Point(vector.x / length, vector.y / length, vector.z / length)


def _along(point: Point, direction: Point, s: float) -> Point:
    """Return a point shifted along a unit direction so that its coordinate along it is s.

    Args:
        point: the point to shift.
        direction: the unit direction to shift it along.
        s: the coordinate along direction (its dot product with it) that the result has.
    """
    shift = s - _dot(point, direction)
    return Point(
        point.x + shift * direction.x,
        point.y + shift * direction.y,
        point.z + shift * direction.z,
    )
