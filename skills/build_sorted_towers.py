from lyra.api import object_size
from skills.put_on import put_on


def _volume(name: str) -> float:
    """Return an object's volume, the product of its three extents."""
    size = object_size(name)
    return size.x * size.y * size.z


def build_sorted_towers(towers: list[tuple[list[str], str]]) -> None:
    """Build one tower per site, each with its objects sorted by size so the biggest is at the bottom and the smallest on top.

    Args:
        towers: the towers to build, built in the given order (the whole first tower,
            then the next). Each entry is (names, site). names are the objects for that
            tower, as listed by object_names(), in any order. site is the name of the
            object that the tower stands on, as listed by object_names(). The objects
            in a tower are sorted by volume, largest first. Volume is the product of the
            three extents from object_size(). The largest object is put first, centred
            on top of the site and aligned with it. The others follow in order of
            decreasing size, each one centred on top of the object before it and aligned
            with it. If two objects have the same volume, they keep their order in
            names. For example, [(["block_0", "block_1", "block_2"], "zone_red"),
            (["block_3", "block_4", "block_5"], "zone_blue")] first builds the tower on
            zone_red. If block_1 is the largest of the three red blocks, then block_2,
            and block_0 is the smallest, block_1 goes centred on zone_red, then block_2
            on block_1 and block_0 on block_2. The same is then done with block_3,
            block_4 and block_5 on zone_blue.

    Raises:
        ValueError: if a tower has no objects, or the same object is named more than
            once, within one tower or across towers.
    """
    seen: set[str] = set()
    for names, _site in towers:
        if not names:
            raise ValueError("each tower needs at least one object")
        for name in names:
            if name in seen:
                raise ValueError(f"object named more than once: {name}")
            seen.add(name)

    for names, site in towers:
        volumes = {name: _volume(name) for name in names}
        # sorted() is stable, so objects of equal volume keep their order in names.
        ordered = sorted(names, key=lambda name: -volumes[name])
        below = site
        for name in ordered:
            put_on(name, below)
            below = name
