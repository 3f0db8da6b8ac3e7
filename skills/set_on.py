from lyra.api import Point, bounding_box, held_object, object_names, object_pose, pick, place


def set_on(obj: str, target: str) -> None:
    """Pick an object up, carry it over another object such as a burner and set it down there, centred on it, then let go.

    Args:
        obj: name of the object to move, as listed by object_names() (for example the
            kettle, the only part free to move). It must be resting on the stove top,
            and the gripper must be empty when the skill starts. It is taken with
            pick(), by its handle, and lifted 10 cm. It is carried as it is held and
            not turned on the way. It is set down with place(), which releases it and
            draws the gripper back, so the gripper is left empty when the skill ends.
        target: name of the object to set obj on, as listed by object_names() (for
            example a burner, from object_names(kind="burner")). The caller chooses it:
            for "the back left burner", that is the burner furthest from the robot
            (largest y) and to its left (smallest x), as object_pose() gives them. The
            point of obj's base ends up at the x and y of target's point, as
            object_pose() gives it when the skill starts. Its z is the height obj's base
            had before it was picked up (the bottom of obj's box, as bounding_box()
            gives it), so obj is set down on the same surface it stood on.
    """
    names = object_names()
    for name in (obj, target):
        if name not in names:
            raise ValueError(f"no object named {name!r} in the scene")
    if obj == target:
        raise ValueError(f"cannot set {obj!r} on itself")
    held = held_object()
    if held is not None:
        raise RuntimeError(f"the gripper holds {held}; it must be empty to pick {obj}")

    # Read where obj goes before anything moves: target's point in x and y, and the
    # height of the surface obj stands on (the bottom of its box) in z.
    goal = object_pose(target).position
    base_z = bounding_box(obj)[0].z

    pick(obj)
    if held_object() is None:
        raise RuntimeError(f"pick() did not take hold of {obj}")

    # Carried as held, not turned; place() sets it down, lets go and draws back.
    place(Point(goal.x, goal.y, base_z))
