from lyra.api import Point, bounding_box, object_pose, object_size, pick, place
from skills.build_layer import build_layer


def _check_levels(levels: list[list[list[str]]]) -> None:
    """Raise ValueError if the levels do not describe a stepped pyramid."""
    if not levels:
        raise ValueError("levels must hold at least one level")
    seen: set[str] = set()
    for k, rows in enumerate(levels):
        widths = {len(row) for row in rows}
        if len(widths) > 1:
            raise ValueError(f"the rows of level {k} do not all hold the same number of names")
        if k > 0:
            below = levels[k - 1]
            if len(rows) != len(below) - 1:
                raise ValueError(f"level {k} must have one row fewer than the level below it")
            if rows and len(rows[0]) != len(below[0]) - 1:
                raise ValueError(
                    f"each row of level {k} must hold one name fewer than the rows below it"
                )
        for row in rows:
            for name in row:
                if name in seen:
                    raise ValueError(f"{name} is named more than once")
                seen.add(name)


def _place_over_four(name: str, supports: list[str]) -> None:
    """Set an object square to the world axes on the tops of four objects, above the mean of their centres."""
    centres = [object_pose(s).position for s in supports]
    x = sum(c.x for c in centres) / len(centres)
    y = sum(c.y for c in centres) / len(centres)
    top = max(bounding_box(s)[1].z for s in supports)
    height = object_size(name).z
    pick(name)
    place(Point(x, y, top + height / 2.0), yaw_deg=0.0)


def build_stepped_pyramid(levels: list[list[list[str]]], site: str, gap: float) -> None:
    """Build a stepped block pyramid on a site: a grid laid flat on the table, then smaller grids on top, each block of a higher level sitting over the point where four blocks of the level below meet.

    Args:
        levels: names of the objects, as listed by object_names(), as a list of levels,
            bottom level first. Each level is a list of rows. The front row (nearest the
            robot, smallest world x) comes first, and each row runs from left to right
            (+y to -y). Levels are built in order: the whole bottom level, then the next,
            and each level is laid row by row. The bottom level is laid as a grid centred
            on the site, and each object rests on the table, lying flat and square to the
            world axes. Each level above has one row fewer than the level below it, and
            one object fewer in each row. The object at row i, position j of an upper
            level goes over the point where four objects of the level below meet: those
            at row i, positions j and j + 1, and row i + 1, positions j and j + 1. Its
            centre goes above the mean of their four centres. It rests on their top faces
            and is square to the world axes. For example, [[["block_0", "block_1",
            "block_2"], ["block_3", "block_4", "block_5"]], [["block_6", "block_7"]]]
            lays block_0 to block_2 as the front row and block_3 to block_5 as the back
            row. It then puts block_6 over the point where block_0, block_1, block_3 and
            block_4 meet, and block_7 over the point where block_1, block_2, block_4 and
            block_5 meet.
        site: name of the object the pyramid is centred on, in the horizontal plane, as
            listed by object_names().
        gap: free space in metres between the facing sides of neighbouring objects in the
            bottom level, both within a row and between rows. Each object's own footprint
            sets the grid spacing, so the gap holds even when the objects differ in size.
            With objects of equal size, the same gap is left between neighbours in every
            level above.

    Raises:
        ValueError: if levels is empty, the rows of a level do not all hold the same
            number of names, a level above the bottom does not have one row fewer and
            one name fewer in each row than the level below it, or the same object is
            named more than once.
    """
    _check_levels(levels)
    build_layer(levels[0], site, gap)
    for k in range(1, len(levels)):
        below = levels[k - 1]
        for i, row in enumerate(levels[k]):
            for j, name in enumerate(row):
                supports = [below[i][j], below[i][j + 1], below[i + 1][j], below[i + 1][j + 1]]
                _place_over_four(name, supports)
