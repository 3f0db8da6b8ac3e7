import math

from lyra.api import Point, object_pose, object_size, put_first_on_second


def _footprint(name: str) -> tuple[float, float]:
    """Return (width across world y, yaw in degrees) for a plank turned so its long side runs along world x."""
    size = object_size(name)
    if size.x >= size.y:
        return size.y, 0.0
    return size.x, 90.0


def build_jenga_layer(planks: list[str], site: str, gap: float, *, turn_deg: float = 0.0) -> None:
    """Lay planks flat on a site as one Jenga layer: side by side in a row, long sides parallel, with a set gap between neighbours and the row centred on the site.

    Args:
        planks: names of the planks in the layer, as listed by object_names(), in order
            from left to right (+y to -y when turn_deg is 0). Each plank lies flat with
            its long side along world x (turned by turn_deg) and rests on the top of
            whatever is under it there, such as the site or a layer below. The row is
            centred on the site in the horizontal plane, so with three planks the middle
            one is centred on the site. For example, ["plank_2", "plank_1", "plank_0"]
            puts plank_2 on the left (+y), plank_1 centred on the site and plank_0 on
            the right (-y).
        site: name of the object that the layer is centred on, in the horizontal plane,
            as listed by object_names().
        gap: free space in metres between the facing long sides of neighbouring planks.
            Each plank's own width sets the spacing, so the gap holds even when the
            planks differ in size.
        turn_deg: rotation in degrees of the whole layer, planks and spacing together,
            about the vertical axis through the site's centre, counter-clockwise seen
            from above. The default, 0, lays the long sides along world x; 90 lays them
            along world y, across a layer built with 0, as in a Jenga tower.
    """
    if not planks:
        return
    footprints = [_footprint(name) for name in planks]
    total = sum(width for width, _ in footprints) + gap * (len(planks) - 1)
    centre = object_pose(site).position
    turn = math.radians(turn_deg)
    cos_t, sin_t = math.cos(turn), math.sin(turn)
    edge = total / 2.0  # left edge of the row, as an offset along the layer's own y
    for name, (width, yaw) in zip(planks, footprints):
        offset = edge - width / 2.0
        x = centre.x - offset * sin_t
        y = centre.y + offset * cos_t
        put_first_on_second(name, Point(x, y, 0.0), yaw_deg=yaw + turn_deg)
        edge -= width + gap
