from lyra.api import Point, put_first_on_second
from skills.put_on import put_on


_RING_SIZE = 7


def _wall_spots(center: Point, spacing: float) -> list[Point]:
    """Return the seven wall spots of a 3 x 3 ring, row by row, front row first, left to right.

    The centre spot and the door (the front middle spot) are skipped.

    Args:
        center: the centre of the ring; only its x and y are used.
        spacing: distance in metres between the centres of neighbouring spots.
    """
    spots = []
    for row in range(3):  # 0 front (smallest x), 1 middle, 2 back
        x = center.x + (row - 1) * spacing
        for col in range(3):  # 0 left (+y), 1 middle, 2 right (-y)
            if col == 1 and row in (0, 1):  # door, then empty centre
                continue
            y = center.y - (col - 1) * spacing
            spots.append(Point(x, y, 0.0))
    return spots


def build_walls(bottom: list[str], top: list[str], center: Point, spacing: float) -> None:
    """Build the two-layer block walls of a house around a centre point: a square ring of 3 x 3 spots with the middle spot empty and the front middle spot left open as a door, and a second ring stacked on the first.

    Args:
        bottom: names of the seven objects in the bottom layer, as listed by
            object_names(), laid in order on the seven wall spots. The spots are taken
            row by row. The front row (nearest the robot, smallest world x) comes first,
            and each row runs from left to right (+y to -y). The empty centre spot and
            the door (the front middle spot) are skipped. For example, ["block_0",
            "block_1", "block_2", "block_3", "block_4", "block_5", "block_6"] puts
            block_0 front left, block_1 front right, block_2 middle left, block_3 middle
            right, block_4 back left, block_5 back middle and block_6 back right. Each
            object rests on the table, lying flat and square to the world axes.
        top: names of the seven objects in the top layer, placed in order after the
            whole bottom layer, in the same spot order as bottom. Each object is put
            centred on top of the bottom object at the same position and aligned with
            it. For example, ["block_7", ..., "block_13"] puts block_7 on block_0,
            block_8 on block_1 and so on, up to block_13 on block_6.
        center: where the empty centre spot of the ring goes; only its x and y are
            used, and z is ignored. For example, with center (0.58, 0.0) and spacing
            0.045, the door is left open at (0.535, 0.0).
        spacing: distance in metres between the centres of neighbouring spots, both
            along x (between rows) and along y (within a row).

    Raises:
        ValueError: if bottom or top does not hold exactly seven names.
    """
    if len(bottom) != _RING_SIZE:
        raise ValueError(f"bottom must hold {_RING_SIZE} names, got {len(bottom)}")
    if len(top) != _RING_SIZE:
        raise ValueError(f"top must hold {_RING_SIZE} names, got {len(top)}")

    for name, spot in zip(bottom, _wall_spots(center, spacing)):
        put_first_on_second(name, spot, yaw_deg=0.0)

    for upper, lower in zip(top, bottom):
        put_on(upper, lower)
