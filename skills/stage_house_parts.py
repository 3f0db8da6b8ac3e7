from lyra.api import Point, put_first_on_second
from skills.line_up import line_up


def _set_down_on_table(name: str, x: float, y: float, yaw_deg: float) -> None:
    """Pick an object and set it down centred at (x, y) with a given final yaw.

    Args:
        name: the object to move, as listed by object_names().
        x: world x in metres of where its centre goes.
        y: world y in metres of where its centre goes.
        yaw_deg: its final rotation about the vertical axis, in degrees from world x.
    """
    put_first_on_second(name, Point(x, y, 0.0), yaw_deg=yaw_deg)


def stage_house_parts(block_rows: list[list[str]], block_start: Point, block_spacing: float, tile_rows: list[list[str]], tile_xs: list[float], tile_ys: list[float], parts: list[tuple[str, Point, float]]) -> None:
    """Clear the middle of the table by staging building parts at its edges: blocks lined up in rows, tiles laid in a grid of given coordinates, and larger parts set down at given spots and turns.

    Args:
        block_rows: names of the blocks to line up, as listed by object_names(), as a list
            of rows, laid in order: the whole first row, then the next. Each row runs along
            +x, away from the robot, starting at the smallest x. Each row after the first
            is one block_spacing further along +y (to the robot's left). For example,
            [["block_0", "block_1"], ["block_2", "block_3"]] with block_start (0.30, 0.33)
            and block_spacing 0.05 puts block_0 at (0.30, 0.33), block_1 at (0.35, 0.33),
            block_2 at (0.30, 0.38) and block_3 at (0.35, 0.38). Each block rests on the
            table, lying flat and square to the world axes. The blocks are staged first.
        block_start: where the centre of the first block of the first row goes; only its
            x and y are used, and z is ignored.
        block_spacing: distance in metres between the centres of neighbouring blocks, both
            within a row (along x) and between rows (along y).
        tile_rows: names of the tiles to lay, as listed by object_names(), as a list of
            rows, laid in order after the blocks: the whole first row, then the next. The
            object at position j of row i goes to (tile_xs[j], tile_ys[i]). Each tile rests
            on the table, lying flat and not turned (square to the world axes). For example,
            [["tile_0", "tile_1", "tile_2"], ["tile_3", "tile_4", "tile_5"]] with tile_xs
            [0.34, 0.42, 0.50] and tile_ys [-0.33, -0.40] puts tile_0 at (0.34, -0.33),
            tile_2 at (0.50, -0.33) and tile_3 at (0.34, -0.40).
        tile_xs: world x in metres of the tile centres, one for each position in a row;
            every row must have this many tiles.
        tile_ys: world y in metres of the tile centres, one for each row, in the same order
            as tile_rows.
        parts: the larger parts to set down last, in the given order. Each entry is
            (name, spot, yaw_deg): the object's name as listed by object_names(), where its
            centre goes (only x and y are used; it rests on the table) and its final
            rotation about the vertical axis in degrees, measured from the world x axis.
            For example, ("beam_0", Point(0.29, -0.19, 0.0), 90.0) sets beam_0 down
            centred at (0.29, -0.19) and turned so that its own x axis (its long side)
            runs along world y.

    Raises:
        ValueError: if tile_rows does not have one row per entry of tile_ys, or a row does
            not have one tile per entry of tile_xs.
    """
    if len(tile_rows) != len(tile_ys):
        raise ValueError(
            f"tile_rows has {len(tile_rows)} rows but tile_ys has {len(tile_ys)} entries"
        )
    for i, row in enumerate(tile_rows):
        if len(row) != len(tile_xs):
            raise ValueError(
                f"tile row {i} has {len(row)} tiles but tile_xs has {len(tile_xs)} entries"
            )

    # 1. Blocks, in rows along the edge.
    if block_rows:
        line_up(block_rows, block_start, block_spacing)

    # 2. Tiles, flat and not turned, on the given grid of coordinates.
    for row, y in zip(tile_rows, tile_ys):
        for name, x in zip(row, tile_xs):
            _set_down_on_table(name, x, y, 0.0)

    # 3. Larger parts, at their spots and turns.
    for name, spot, yaw_deg in parts:
        _set_down_on_table(name, spot.x, spot.y, yaw_deg)
