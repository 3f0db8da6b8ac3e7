from lyra.api import Point, bounding_box, object_pose, object_size, pick, place, put_first_on_second
from skills.build_layer import build_layer


def _top_height(name: str) -> float:
    """Return the height of an object's top face above the table."""
    _, high = bounding_box(name)
    return high.z


def _height(name: str) -> float:
    """Return an object's vertical extent in metres."""
    low, high = bounding_box(name)
    return high.z - low.z


def _bridge(name: str, first: str, second: str) -> None:
    """Set an object square to the world axes over the gap between two resting objects."""
    a = object_pose(first).position
    b = object_pose(second).position
    support = max(_top_height(first), _top_height(second))
    half_height = _height(name) / 2.0
    target = Point((a.x + b.x) / 2.0, (a.y + b.y) / 2.0, support + half_height)
    pick(name)
    place(target, yaw_deg=0.0)


def build_pyramid(
    bottom: list[list[str]],
    top: list[tuple[str, str, str]],
    site: str,
    gap: float,
    *,
    row_gap: float | None = None,
) -> None:
    """Build a two-layer block pyramid on a site: a grid laid flat on the table with each upper object bridging the gap between two neighbouring bottom objects.

    Args:
        bottom: names of the objects in the bottom layer, as listed by object_names(), as a
            list of rows, laid in order: the whole first row, then the next. The front row
            (nearest the robot, smallest world x) comes first, and each row runs from left
            to right (+y to -y). For example, [["block_0", "block_1", "block_2"],
            ["block_3", "block_4", "block_5"]] puts block_0 front left, block_1 front
            middle, block_2 front right, block_3 back left, block_4 back middle and block_5
            back right. Each object rests on the table, lying flat and square to the world
            axes.
        top: the objects of the top layer, placed in the given order after the whole
            bottom layer. Each entry is (name, first, second): the object to place and two
            neighbouring bottom-layer objects that it goes over. The object's centre goes
            above the midpoint between the centres of first and second, so it sits over the
            gap between them. It rests on their top faces and is square to the world axes.
            For example, [("block_6", "block_0", "block_1"), ("block_7", "block_4",
            "block_5")] puts block_6 over the gap between block_0 and block_1, and block_7
            over the gap between block_4 and block_5.
        site: name of the object the bottom layer is centred on, in the horizontal plane,
            as listed by object_names().
        gap: free space in metres between the facing sides of neighbouring objects in the
            bottom layer within a row, and also between rows unless row_gap is given. Each
            object's own footprint sets the grid spacing, so the gap holds even when the
            objects differ in size.
        row_gap: free space in metres between neighbouring rows of the bottom layer (along
            x, front to back). None uses gap, as before.
    """
    if row_gap is None:
        build_layer(bottom, site, gap)
    else:
        _lay_grid(bottom, site, gap, row_gap)
    for name, first, second in top:
        _bridge(name, first, second)


def _lay_grid(rows: list[list[str]], site: str, gap: float, row_gap: float) -> None:
    """Lay objects flat on the table as a grid centred on a site, with one gap within rows and another between rows.

    Args:
        rows: object names as a list of rows, front row (smallest x) first, each row
            running from left to right (+y to -y).
        site: name of the object the grid is centred on, in the horizontal plane.
        gap: free space in metres between neighbouring objects within a row.
        row_gap: free space in metres between neighbouring rows.
    """
    rows = [row for row in rows if row]
    if not rows:
        return
    sizes = {name: object_size(name) for row in rows for name in row}
    # Each row is as deep as its deepest object; each column as wide as its widest one.
    depths = [max(sizes[name].x for name in row) for row in rows]
    n_cols = max(len(row) for row in rows)
    widths = [
        max(sizes[row[col]].y for row in rows if col < len(row))
        for col in range(n_cols)
    ]
    total_depth = sum(depths) + row_gap * (len(rows) - 1)
    total_width = sum(widths) + gap * (n_cols - 1)
    centre = object_pose(site).position

    row_start = centre.x - total_depth / 2.0
    for row, depth in zip(rows, depths):
        row_x = row_start + depth / 2.0
        col_start = centre.y + total_width / 2.0
        for name, width in zip(row, widths):
            target = Point(row_x, col_start - width / 2.0, 0.0)
            put_first_on_second(name, target, yaw_deg=0.0)
            col_start -= width + gap
        row_start += depth + row_gap
