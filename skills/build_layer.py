from lyra.api import Point, object_pose, object_size, put_first_on_second


def _offsets(extents: list[float], gap: float) -> list[float]:
    """Return centre offsets, relative to the middle of the run, of items packed in a line.

    Args:
        extents: length of each item along the line, in order.
        gap: free space in metres between neighbouring items.
    """
    total = sum(extents) + gap * max(len(extents) - 1, 0)
    offsets = []
    edge = -total / 2.0
    for extent in extents:
        offsets.append(edge + extent / 2.0)
        edge += extent + gap
    return offsets


def build_layer(rows: list[list[str]], site: str, gap: float) -> None:
    """Lay objects flat on the table as a grid centred on a site, leaving a set gap between neighbours.

    Args:
        rows: names of the objects to lay, as listed by object_names(), as a list of rows.
            The front row (nearest the robot, smallest world x) comes first, and each row
            runs from left to right (+y to -y). For example, [["block_0", "block_1"],
            ["block_2", "block_3"]] puts block_0 front left, block_1 front right, block_2
            back left and block_3 back right. Each object rests on the table, lying flat
            and square to the world axes.
        site: name of the object the grid is centred on, in the horizontal plane, as listed
            by object_names().
        gap: free space in metres between the facing sides of neighbouring objects, both
            within a row and between rows. Each object's own footprint sets the grid
            spacing, so the gap holds even when the objects differ in size.
    """
    rows = [list(row) for row in rows if row]
    if not rows:
        return

    # With yaw 0 each object's own x and y extents lie along the world x and y axes.
    sizes = {name: object_size(name) for row in rows for name in row}
    centre = object_pose(site).position

    # Rows are packed front to back (+x); each row is as deep as its deepest object.
    row_depths = [max(sizes[name].x for name in row) for row in rows]
    row_offsets = _offsets(row_depths, gap)

    for row, row_offset in zip(rows, row_offsets):
        row_x = centre.x + row_offset
        # Within a row, objects are packed left (+y) to right (-y) by their own widths.
        widths = [sizes[name].y for name in row]
        for name, offset in zip(row, _offsets(widths, gap)):
            target = Point(row_x, centre.y - offset, centre.z)
            put_first_on_second(name, target, yaw_deg=0.0)
