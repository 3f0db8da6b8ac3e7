from lyra.api import put_first_on_second
from skills.build_layer import build_layer


def build_wall(rows: list[list[str]], site: str, gap: float) -> None:
    """Build a wall one object deep on a site: rows of objects side by side along world y, with each row stacked directly on the one below it and the wall centred on the site.

    Args:
        rows: names of the objects in the wall, as listed by object_names(), as a list
            of rows, bottom row first. The rows are built in order: the whole first row,
            then the next. Each row runs from left to right (+y to -y). Each object in
            the bottom row rests on the table, lying flat and square to the world axes.
            The bottom row lies along world y and is centred on the site in the
            horizontal plane, so with three objects the middle one is centred on the
            site. Each object in a later row is put centred on top of the object at the
            same position in the row below, and aligned with it. For example,
            [["block_0", "block_1", "block_2"], ["block_3", "block_4", "block_5"],
            ["block_6", "block_7", "block_8"]] puts block_0 on the left (+y), block_1
            centred on the site and block_2 on the right (-y). It then puts block_3 on
            block_0, block_4 on block_1 and block_5 on block_2. Finally it puts block_6
            on block_3, block_7 on block_4 and block_8 on block_5.
        site: name of the object the wall is centred on, in the horizontal plane, as
            listed by object_names().
        gap: free space in metres along world y between the facing sides of
            neighbouring objects in the bottom row, which sets the gap between
            neighbouring columns. Each object's own width sets the spacing, so the gap
            holds even when the objects differ in size.

    Raises:
        ValueError: if rows is empty, the rows do not all hold the same number of
            names, or the same object is named more than once.
    """
    _check_rows(rows)

    # Bottom row: a single row laid flat along world y, centred on the site.
    build_layer([list(rows[0])], site, gap)

    # Every later row: each object centred and aligned on the one below it.
    for below, row in zip(rows, rows[1:]):
        for name, base in zip(row, below):
            put_first_on_second(name, base)


def _check_rows(rows: list[list[str]]) -> None:
    """Check that rows is a non-empty rectangle of distinct names.

    Args:
        rows: the rows of object names to check.

    Raises:
        ValueError: if rows is empty, the rows differ in length, or a name repeats.
    """
    if not rows or not rows[0]:
        raise ValueError("rows is empty")
    width = len(rows[0])
    for index, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(
                f"row {index} holds {len(row)} names, but the first row holds {width}"
            )
    seen: set[str] = set()
    for row in rows:
        for name in row:
            if name in seen:
                raise ValueError(f"{name} is named more than once")
            seen.add(name)
