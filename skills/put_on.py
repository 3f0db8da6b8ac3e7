from lyra.api import held_object, put_first_on_second


def put_on(obj: str, target: str, *, yaw_deg: float | None = None) -> None:
    """Put one object on top of another, centred on it.

    Args:
        obj: name of the object to move, as listed by object_names().
        target: name of the object to put it on; obj lands centred on its top, or on top of
            whatever is already stacked there.
        yaw_deg: obj's final rotation about the vertical axis, in degrees; None aligns it
            with the target.
    """
    if obj == target:
        raise ValueError(f"cannot put {obj!r} on itself")
    held = held_object()
    if held is not None and held != obj:
        raise RuntimeError(f"gripper already holds {held!r}; cannot pick {obj!r}")
    put_first_on_second(obj, target, yaw_deg=yaw_deg)
