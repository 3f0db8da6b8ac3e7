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


def press(button: str, depth: float, *, clearance: float = 0.02, lift: bool = False) -> float:
    """Press a button straight down from above with the closed fingertips, by a given depth or until it bottoms out, and keep it pressed down.

    Args:
        button: name of the button, as listed by object_names(). The gripper, which must
            be empty, is closed to a narrow tip before it moves, so the button cannot
            slip up between open fingers. The tip is first moved to a small clearance
            above the top of the button's box, as bounding_box() gives it, directly over
            the button's centre as object_pose() puts it (only its x and y are used). It
            then comes straight down onto the top of the button and pushes it down along
            -z. At the end the closed fingertips stay where the push left them, on the
            button, holding it pressed down, so it does not spring back up. None of these
            moves fail when blocked, like push().
        depth: the furthest in metres that the button is pushed down: how far the
            fingertips travel downwards from the top of the button's box as it was before
            the press. The push stops early, without failing, where the button meets its
            end stop, so a value larger than the button's travel presses it all the way.
        clearance: height in metres above the top of the button's box at which the tip
            arrives over the button (and to which it is lifted at the end with lift).
        lift: False (the default) keeps the closed fingertips pressing on the button at
            the end. True instead draws them straight back up to the clearance height
            above where the button's top was at the start, so they no longer touch it
            and the button may spring back up.

    Returns:
        How far the fingertips actually went down past the top of the button's box, in
        metres: at most depth, and less where the button bottomed out first.
    """
    if depth < 0.0:
        raise ValueError(f"depth must not be negative, got {depth}")
    if clearance < 0.0:
        raise ValueError(f"clearance must not be negative, got {clearance}")
    held = held_object()
    if held is not None:
        raise RuntimeError(f"the gripper must be empty to press, but it holds {held!r}")

    # Close the fingers first, so that a narrow closed tip, not the gap between open
    # fingers, comes down onto the button.
    close_gripper()

    _, high = bounding_box(button)
    top = high.z
    centre = object_pose(button).position
    hover_z = top + clearance

    # Rise first where need be, so the sideways move passes over the button rather than
    # through it, then go across and settle at the clearance height above its centre.
    here = ee_pose().position
    travel_z = max(here.z, hover_z)
    _push_to(Point(here.x, here.y, travel_z))
    _push_to(Point(centre.x, centre.y, travel_z))
    _push_to(Point(centre.x, centre.y, hover_z))

    # Come straight down onto the top and press on by depth, or until the end stop.
    push(Point(0.0, 0.0, -1.0), clearance + depth)
    pressed = top - ee_pose().position.z
    pressed = min(max(pressed, 0.0), depth)

    # Keep pressing: the closed tip stays down on the button unless asked to lift.
    if lift:
        here = ee_pose().position
        _push_to(Point(here.x, here.y, hover_z))

    return pressed
