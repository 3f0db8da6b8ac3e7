import math

from lyra.api import Point, object_pose, put_first_on_second


def arrange_in_circle(
    names: list[str], site: str, radius: float, *, start_angle_deg: float = 0.0
) -> None:
    """Lay objects flat on the table, evenly spaced on a circle centred on a site.

    Args:
        names: names of the objects to arrange, as listed by object_names(), placed in
            the given order. They are spaced evenly, so neighbouring objects are
            360 / len(names) degrees apart around the circle. The first object goes at
            start_angle_deg around the circle. The others follow counter-clockwise seen
            from above (towards +y), with angles measured from the world x axis. For
            example, with 12 names, radius 0.13 and the default start_angle_deg,
            names[0] goes 0.13 m from the site's centre along +x and names[3] goes
            0.13 m along +y. names[6] goes 0.13 m along -x, towards the robot. Each
            object rests on the table, lying flat and square to the world axes.
        site: name of the object the circle is centred on, in the horizontal plane, as
            listed by object_names().
        radius: distance in metres in the horizontal plane from the site's centre to
            the centre of each object.
        start_angle_deg: where the first object goes on the circle, in degrees,
            counter-clockwise seen from above from the world +x axis (the back of the
            circle, away from the robot). The default, 0, puts the first object on the
            +x side; 90 puts it on the +y side (to the robot's left).
    """
    if not names:
        return
    centre = object_pose(site).position
    start = math.radians(start_angle_deg)
    step = 2.0 * math.pi / len(names)
    for index, name in enumerate(names):
        angle = start + index * step
        spot = Point(
            centre.x + radius * math.cos(angle),
            centre.y + radius * math.sin(angle),
            0.0,
        )
        put_first_on_second(name, spot, yaw_deg=0.0)
