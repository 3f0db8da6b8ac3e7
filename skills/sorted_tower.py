from lyra.api import object_size
from skills.stack_tower import stack_tower


def _volume(name: str) -> float:
    """Return an object's volume: the product of its three extents."""
    size = object_size(name)
    return size.x * size.y * size.z


def sorted_tower(names: list[str], *, smallest_first: bool = False) -> None:
    """Stack objects into a single tower sorted by size, biggest at the bottom and smallest on top by default.

    Args:
        names: names of the objects to stack, as listed by object_names(), in any order.
            They are sorted by volume, the product of the three extents from
            object_size(), largest first. The largest object stays where it is and
            forms the base. The others are then stacked in order of decreasing size,
            each one centred on top of the object before it and aligned with it. For
            example, if block_2 is the largest, then block_0, then block_3, and block_1
            is the smallest, ["block_0", "block_1", "block_2", "block_3"] leaves block_2
            in place, puts block_0 on block_2, then block_3 on block_0 and block_1 on
            block_3. If two objects have the same volume, they keep their order in names.
        smallest_first: if True, the tower goes the other way round: the objects are
            sorted smallest first, so the smallest object stays where it is and forms the
            base, and the others are stacked in order of increasing size, with the
            largest on top. With the example above, it leaves block_1 in place, puts
            block_3 on block_1, then block_0 on block_3 and block_2 on block_0. Objects
            of equal volume still keep their order in names. The default, False, puts
            the biggest at the bottom.

    Raises:
        ValueError: if the same object is named more than once.
    """
    if len(set(names)) != len(names):
        raise ValueError(f"objects named more than once: {names}")
    volumes = {name: _volume(name) for name in names}
    # sorted() is stable, so objects of equal volume keep their order in names.
    if smallest_first:
        ordered = sorted(names, key=lambda name: volumes[name])
    else:
        ordered = sorted(names, key=lambda name: -volumes[name])
    stack_tower(ordered)
