from lyra.api import Point, object_pose, object_size, put_first_on_second
from skills.arrange_in_circle import arrange_in_circle


def _site_spot(site: str, dx: float, dy: float) -> Point:
    """Return the table point offset from a site's centre by world dx and dy."""
    centre = object_pose(site).position
    return Point(centre.x + dx, centre.y + dy, 0.0)


def _long_side_along_y_yaw(name: str) -> float:
    """Return the yaw in degrees that turns an object's longer horizontal side along world y."""
    size = object_size(name)
    return 90.0 if size.x >= size.y else 0.0


def build_face(
    outline: list[str],
    eyes: tuple[str, str],
    mouth: str,
    site: str,
    radius: float,
    eye_back: float,
    eye_spread: float,
    mouth_front: float,
) -> None:
    """Make a face on the table around a site, looking at the robot: a ring of objects as its outline, two eyes behind the centre and a mouth lying flat in front of it.

    Args:
        outline: names of the outline objects, as listed by object_names(), laid first.
            They are spaced evenly on a circle of the given radius around the site's
            centre, in the given order, so neighbouring objects are
            360 / len(outline) degrees apart. The first object goes on the +x side of
            the circle (the back, away from the robot). The others follow
            counter-clockwise seen from above (towards +y), with angles measured from
            the world x axis. For example, with 12 names and radius 0.13, outline[0]
            goes 0.13 m from the site's centre along +x and outline[3] goes 0.13 m
            along +y. outline[6] goes 0.13 m along -x, towards the robot. Each object
            rests on the table, lying flat and square to the world axes.
        eyes: names of the two eye objects, as listed by object_names(), as
            (left, right). They are placed in that order after the whole outline. Each
            eye's centre goes eye_back along +x from the site's centre (away from the
            robot) and eye_spread to one side of it. The first eye goes to the left
            (+y) and the second to the right (-y). For example, with the site's centre
            at (0.58, 0.0), eye_back 0.04 and eye_spread 0.045, eyes[0] goes to
            (0.62, 0.045) and eyes[1] goes to (0.62, -0.045). Each eye rests on the
            table, lying flat and square to the world axes.
        mouth: name of the mouth object, as listed by object_names(), placed last. Its
            centre goes mouth_front along -x from the site's centre (towards the robot),
            at the world y of the site's centre. It lies flat on the table, turned so
            that its longer horizontal side runs along world y. For example, with the
            site's centre at (0.58, 0.0) and mouth_front 0.05, the mouth is centred at
            (0.53, 0.0).
        site: name of the object the face is centred on, in the horizontal plane, as
            listed by object_names().
        radius: distance in metres in the horizontal plane from the site's centre to
            the centre of each outline object.
        eye_back: distance in metres along world +x from the site's centre to the
            centres of both eyes.
        eye_spread: distance in metres along world y from the site's centre to the
            centre of each eye.
        mouth_front: distance in metres along world -x from the site's centre to the
            mouth's centre.
    """
    arrange_in_circle(list(outline), site, radius, start_angle_deg=0.0)

    left_eye, right_eye = eyes
    put_first_on_second(left_eye, _site_spot(site, eye_back, eye_spread), yaw_deg=0.0)
    put_first_on_second(right_eye, _site_spot(site, eye_back, -eye_spread), yaw_deg=0.0)

    put_first_on_second(
        mouth,
        _site_spot(site, -mouth_front, 0.0),
        yaw_deg=_long_side_along_y_yaw(mouth),
    )
