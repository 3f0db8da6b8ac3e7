from skills.put_on import put_on


def stack_tower(names: list[str]) -> None:
    """Stack objects into a single tower, in the given order from bottom to top.

    Args:
        names: names of the objects to stack, as listed by object_names(), bottom first.
            The first object stays where it is and forms the base. Each later object is
            put centred on top of the one before it and aligned with it.
    """
    if len(set(names)) != len(names):
        raise ValueError(f"stack_tower needs distinct objects, got {names}")
    for below, above in zip(names, names[1:]):
        put_on(above, below)
