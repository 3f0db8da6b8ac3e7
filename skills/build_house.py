from lyra.api import Point
from skills.build_roof import build_roof
from skills.build_walls import build_walls
from skills.stage_house_parts import stage_house_parts


def _check_inputs(
    tile_rows: list[list[str]],
    tile_xs: list[float],
    tile_ys: list[float],
    wall_bottom: list[str],
    wall_top: list[str],
) -> None:
    """Raise ValueError before anything moves if the layouts do not fit together."""
    if len(tile_rows) != len(tile_ys):
        raise ValueError(
            f"tile_rows has {len(tile_rows)} rows but tile_ys has {len(tile_ys)} entries"
        )
    for i, row in enumerate(tile_rows):
        if len(row) != len(tile_xs):
            raise ValueError(
                f"tile row {i} has {len(row)} tiles but tile_xs has {len(tile_xs)} entries"
            )
    if len(wall_bottom) != 7:
        raise ValueError(f"wall_bottom must hold exactly 7 names, got {len(wall_bottom)}")
    if len(wall_top) != 7:
        raise ValueError(f"wall_top must hold exactly 7 names, got {len(wall_top)}")


def build_house(block_rows: list[list[str]], block_start: Point, block_spacing: float, tile_rows: list[list[str]], tile_xs: list[float], tile_ys: list[float], parts: list[tuple[str, Point, float]], wall_bottom: list[str], wall_top: list[str], base: str, beam: str, left_tiles: list[str], right_tiles: list[str], center: Point, wall_spacing: float, wall_height: float, tile_spacing: float, tile_offset: float) -> None:
    """Build a house from scattered parts: first stage every part at the edges of the table, then build two-layer block walls with a door towards the robot around a centre point, then put a roof on them.

    Args:
        block_rows: names of the wall blocks to stage first, as listed by object_names(),
            as a list of rows, laid in order: the whole first row, then the next. Each row
            runs along +x, away from the robot, starting at the smallest x. Each row after
            the first is one block_spacing further along +y (to the robot's left). For
            example, [["block_0", "block_1"], ["block_2", "block_3"]] with block_start
            (0.30, 0.33) and block_spacing 0.05 puts block_0 at (0.30, 0.33), block_1 at
            (0.35, 0.33), block_2 at (0.30, 0.38) and block_3 at (0.35, 0.38). Each block
            rests on the table, lying flat and square to the world axes.
        block_start: where the centre of the first staged block of the first row goes;
            only its x and y are used, and z is ignored.
        block_spacing: distance in metres between the centres of neighbouring staged
            blocks, both within a row (along x) and between rows (along y).
        tile_rows: names of the roof tiles to stage after the blocks, as listed by
            object_names(), as a list of rows, laid in order: the whole first row, then
            the next. The tile at position j of row i goes to (tile_xs[j], tile_ys[i]).
            Each tile rests on the table, lying flat and not turned (square to the world
            axes). For example, [["tile_0", "tile_1", "tile_2"], ["tile_3", "tile_4",
            "tile_5"]] with tile_xs [0.34, 0.42, 0.50] and tile_ys [-0.33, -0.40] puts
            tile_0 at (0.34, -0.33), tile_2 at (0.50, -0.33) and tile_3 at (0.34, -0.40).
        tile_xs: world x in metres of the staged tile centres, one for each position in a
            row; every row must have this many tiles.
        tile_ys: world y in metres of the staged tile centres, one for each row, in the
            same order as tile_rows.
        parts: the larger parts (such as the roof base and the beam) to stage last, in
            the given order. Each entry is (name, spot, yaw_deg): the object's name as
            listed by object_names(), where its centre goes (only x and y are used; it
            rests on the table) and its final rotation about the vertical axis in
            degrees, measured from the world x axis. For example, ("beam_0",
            Point(0.29, -0.19, 0.0), 90.0) sets beam_0 down centred at (0.29, -0.19) and
            turned so that its own x axis (its long side) runs along world y.
        wall_bottom: names of the seven blocks in the bottom layer of the walls, as listed
            by object_names(), laid in order after all the staging on the seven wall spots
            of a 3 x 3 square ring around center. The spots are taken row by row. The front
            row (nearest the robot, smallest world x) comes first, and each row runs from
            left to right (+y to -y). The empty centre spot and the door (the front middle
            spot) are skipped. For example, ["block_0", "block_1", "block_2", "block_3",
            "block_4", "block_5", "block_6"] puts block_0 front left, block_1 front right,
            block_2 middle left, block_3 middle right, block_4 back left, block_5 back
            middle and block_6 back right. Each block rests on the table, lying flat and
            square to the world axes.
        wall_top: names of the seven blocks in the top layer of the walls, placed in order
            after the whole bottom layer, in the same spot order as wall_bottom. Each block
            is put centred on top of the bottom block at the same position and aligned
            with it. For example, ["block_7", ..., "block_13"] puts block_7 on block_0,
            block_8 on block_1 and so on, up to block_13 on block_6.
        base: name of the roof base, as listed by object_names(). It is placed after the
            walls, lying flat on top of them and centred on center in the horizontal
            plane, turned so that its longer horizontal side runs along world x.
        beam: name of the beam, as listed by object_names(). It is placed after the roof
            base, resting on its top and centred on it, turned so that its longer
            horizontal side runs along world x, so that its centre line lies at the world
            y of center.
        left_tiles: names of the tiles for the left (+y) side of the beam, as listed by
            object_names(). They are laid in order along +x, away from the robot, after
            the beam. Each tile rests on the top of the roof base, lying flat and not
            turned (square to the world axes). For example, ["tile_0", "tile_1",
            "tile_2"] with center (0.58, 0.0), tile_spacing 0.072 and tile_offset 0.0455
            puts tile_0 at (0.508, 0.0455), tile_1 at (0.58, 0.0455) and tile_2 at
            (0.652, 0.0455).
        right_tiles: names of the tiles for the right (-y) side of the beam, laid in order
            along +x after all of left_tiles, in the same way. For example, ["tile_3",
            "tile_4", "tile_5"] with the same values puts tile_3 at (0.508, -0.0455),
            tile_4 at (0.58, -0.0455) and tile_5 at (0.652, -0.0455).
        center: the centre of the house, where the empty centre spot of the walls goes;
            only its x and y are used, and z is ignored. The roof base, the beam and each
            row of tiles are centred on it along x. For example, with center (0.58, 0.0)
            and wall_spacing 0.045, the door is left open at (0.535, 0.0).
        wall_spacing: distance in metres between the centres of neighbouring wall spots,
            both along x (between rows) and along y (within a row).
        wall_height: height in metres of the tops of the finished walls above the table.
            The underside of the roof base rests at this height.
        tile_spacing: distance in metres along world x between the centres of
            neighbouring roof tiles in a row.
        tile_offset: distance in metres along world y from the beam's centre line to the
            centres of the roof tiles on either side.

    Raises:
        ValueError: if tile_rows does not have one row per entry of tile_ys, a row does
            not have one tile per entry of tile_xs, or wall_bottom or wall_top does not
            hold exactly seven names.
    """
    # Check everything first so a bad layout fails before any part is moved.
    _check_inputs(tile_rows, tile_xs, tile_ys, wall_bottom, wall_top)

    stage_house_parts(
        block_rows, block_start, block_spacing, tile_rows, tile_xs, tile_ys, parts
    )
    build_walls(wall_bottom, wall_top, center, wall_spacing)
    build_roof(
        base,
        beam,
        left_tiles,
        right_tiles,
        center,
        wall_height,
        tile_spacing,
        tile_offset,
    )
