from lyra.api import Point, object_size, pick, place


def _slot(start: Point, spacing: float, row_index: int, column_index: int, height: float) -> Point:
    """Return the target centre of one object in the line-up grid, resting on the table."""
    return Point(
        start.x + column_index * spacing,
        start.y + row_index * spacing,
        height / 2.0,
    )


def line_up(rows: list[list[str]], start: Point, spacing: float) -> None:
    """Line objects up on the table in straight parallel rows, with a set centre-to-centre spacing.

    Args:
        rows: names of the objects to line up, as listed by object_names(), as a list of
            rows, laid in order: the whole first row, then the next. Each row runs along
            +x, away from the robot, starting at the smallest x. Each row after the first
            is one spacing further along +y (to the robot's left). For example,
            [["block_0", "block_1"], ["block_2", "block_3"]] with start (0.30, 0.33) and
            spacing 0.05 puts block_0 at (0.30, 0.33), block_1 at (0.35, 0.33), block_2 at
            (0.30, 0.38) and block_3 at (0.35, 0.38). Each object rests on the table,
            lying flat and square to the world axes.
        start: where the centre of the first object of the first row goes; only its x
            and y are used, and z is ignored.
        spacing: distance in metres between the centres of neighbouring objects, both
            within a row (along x) and between rows (along y).
    """
    for row_index, row in enumerate(rows):
        for column_index, name in enumerate(row):
            target = _slot(start, spacing, row_index, column_index, object_size(name).z)
            pick(name)
            place(target, yaw_deg=0.0)
