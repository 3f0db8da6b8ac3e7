from skills.build_layer import build_layer
from skills.put_on import put_on


def _check_same_shape(bottom: list[list[str]], top: list[list[str]]) -> None:
    """Raise ValueError unless the two layers have the same row layout."""
    if len(bottom) != len(top) or any(
        len(bottom_row) != len(top_row) for bottom_row, top_row in zip(bottom, top)
    ):
        raise ValueError("bottom and top layers must have the same shape")


def build_cube(bottom: list[list[str]], top: list[list[str]], site: str, gap: float) -> None:
    """Build a two-layer block cube on a site: a grid laid flat on the table with a second grid stacked directly on top of it.

    Args:
        bottom: names of the objects in the bottom layer, as listed by object_names(), as a
            list of rows. The front row (nearest the robot, smallest world x) comes first,
            and each row runs from left to right (+y to -y). For example,
            [["block_0", "block_1"], ["block_2", "block_3"]] puts block_0 front left,
            block_1 front right, block_2 back left and block_3 back right. Each object
            rests on the table, lying flat and square to the world axes.
        top: names of the objects in the top layer, in the same row layout as bottom,
            which must have the same shape. Each object is put centred on top of the
            bottom object at the same row and position, and aligned with it. For example,
            [["block_4", "block_5"], ["block_6", "block_7"]] puts block_4 on block_0,
            block_5 on block_1, block_6 on block_2 and block_7 on block_3.
        site: name of the object the cube is centred on, in the horizontal plane, as
            listed by object_names().
        gap: free space in metres between the facing sides of neighbouring objects in the
            bottom layer, both within a row and between rows. Each object's own footprint
            sets the grid spacing, so the gap holds even when the objects differ in size.
    """
    _check_same_shape(bottom, top)
    build_layer(bottom, site, gap)
    for bottom_row, top_row in zip(bottom, top):
        for below, above in zip(bottom_row, top_row):
            put_on(above, below)
