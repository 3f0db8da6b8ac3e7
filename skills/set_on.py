from lyra.api import Point, bounding_box, held_object, object_names, object_pose, pick, place


_PICK_LIFT = 0.10


def _base_height(obj: str, burner: str, held: bool) -> float:
    """Return the height at which obj's base is to be set down.

    Args:
        obj: name of the object to set down.
        burner: name of the burner it goes on.
        held: whether obj was already in the gripper when the skill started.
    """
    bottom = bounding_box(obj)[0].z
    if not held:
        # obj still stands where it was: set it down at that same height.
        return bottom
    # obj was already lifted: it stood about one pick lift lower, and never below
    # the top of the burner it is to rest on.
    burner_top = bounding_box(burner)[1].z
    return max(burner_top, bottom - _PICK_LIFT)


def set_on(obj: str, burner: str) -> None:
    """Pick up the kettle by its handle and set it down standing on a burner, centred on it, then let go of it.

    Args:
        obj: name of the object to move, as listed by object_names(kind="kettle") (the
            kettle, the only part free to move). The gripper must be empty when the skill
            starts, unless it already holds obj, in which case obj is carried as it is
            held. Otherwise obj is taken by its handle with pick(), which lifts it 10 cm
            clear of the stove top. At the end obj is set down with place(), which
            releases it and draws the gripper back, so the gripper is left open and
            empty and obj stands on the burner.
        burner: name of the burner to set obj on, as listed by object_names(kind="burner")
            (for example the back left one: the caller chooses which, from the burners'
            positions, back being further along +y, away from the robot, and left along
            -x). The centre of obj's base ends up at the x and y of the burner's point,
            as object_pose() gives it when the skill starts; the base is set down at the
            height it stood at before it was picked up (the bottom of obj's box as
            bounding_box() gives it at the start), so obj rests on the stove top, neither
            dropped onto it nor pushed into it.
    """
    if obj not in object_names():
        raise ValueError(f"unknown object {obj!r}")
    if burner not in object_names(kind="burner"):
        raise ValueError(f"{burner!r} is not a burner")

    holding = held_object()
    if holding is not None and holding != obj:
        raise RuntimeError(f"the gripper holds {holding!r}, not {obj!r}")
    already_held = holding == obj

    # Read everything at the start, before anything moves.
    spot = object_pose(burner).position
    z = _base_height(obj, burner, already_held)
    target = Point(spot.x, spot.y, z)

    if not already_held:
        pick(obj)
    place(target)
