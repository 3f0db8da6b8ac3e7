from lyra.api import Point, bounding_box, object_size, pick, place


def _yaw_long_side_along_x(name: str) -> float:
    """Return the yaw in degrees that turns an object's longer horizontal side along world x."""
    size = object_size(name)
    return 0.0 if size.x >= size.y else 90.0


def _set_down(name: str, target: Point, yaw_deg: float) -> None:
    """Pick an object and put its centre exactly at a target with a given yaw."""
    pick(name)
    place(target, yaw_deg=yaw_deg)


def build_roof(base: str, beam: str, left_tiles: list[str], right_tiles: list[str], center: Point, wall_height: float, tile_spacing: float, tile_offset: float) -> None:
    """Put a roof on a house: a roof base laid flat on top of the walls, a beam along its middle and a row of tiles lying flat on each side of the beam.

    Args:
        base: name of the roof base, as listed by object_names(). It is placed first,
            lying flat on top of the walls and centred on center in the horizontal plane.
            It is turned so that its longer horizontal side runs along world x.
        beam: name of the beam, as listed by object_names(). It is placed second, resting
            on the top of the roof base and centred on it. It is turned so that its longer
            horizontal side runs along world x, so that its centre line lies at the world
            y of center.
        left_tiles: names of the tiles for the left (+y) side of the beam, as listed by
            object_names(). They are laid in order along +x, away from the robot, after
            the beam. Each tile rests on the top of the roof base, lying flat and not
            turned (square to the world axes). For example, ["tile_0", "tile_1",
            "tile_2"] with center (0.58, 0.0), tile_spacing 0.072 and tile_offset 0.0455
            puts tile_0 at (0.508, 0.0455), tile_1 at (0.58, 0.0455) and tile_2 at
            (0.652, 0.0455).
        right_tiles: names of the tiles for the right (-y) side of the beam, laid in
            order along +x after all of left_tiles, in the same way. For example,
            ["tile_3", "tile_4", "tile_5"] with the same values puts tile_3 at
            (0.508, -0.0455), tile_4 at (0.58, -0.0455) and tile_5 at (0.652, -0.0455).
        center: the centre of the walls; only its x and y are used, and z is ignored.
            The roof base, the beam and each row of tiles are centred on it along x.
        wall_height: height in metres of the tops of the walls above the table. The
            underside of the roof base rests at this height.
        tile_spacing: distance in metres along world x between the centres of
            neighbouring tiles in a row.
        tile_offset: distance in metres along world y from the beam's centre line to
            the centres of the tiles on either side.
    """
    # Roof base: flat on the walls, centred on center, long side along x.
    base_thickness = object_size(base).z
    _set_down(
        base,
        Point(center.x, center.y, wall_height + base_thickness / 2.0),
        _yaw_long_side_along_x(base),
    )
    base_top = bounding_box(base)[1].z

    # Beam: on the middle of the roof base, long side along x.
    beam_height = object_size(beam).z
    _set_down(
        beam,
        Point(center.x, center.y, base_top + beam_height / 2.0),
        _yaw_long_side_along_x(beam),
    )

    # Tiles: one row on each side of the beam, centred on center along x.
    for names, side in ((left_tiles, 1.0), (right_tiles, -1.0)):
        y = center.y + side * tile_offset
        first_x = center.x - (len(names) - 1) * tile_spacing / 2.0
        for i, tile in enumerate(names):
            tile_height = object_size(tile).z
            _set_down(
                tile,
                Point(first_x + i * tile_spacing, y, base_top + tile_height / 2.0),
                0.0,
            )
