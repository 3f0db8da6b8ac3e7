from skills.put_on import put_on


def put_in_zone(obj: str, zone: str) -> None:
    """Put one object inside a zone, centred on it.

    Args:
        obj: name of the object to move, as listed by object_names().
        zone: name of the zone to put it in, as listed by object_names(). obj is centred
            on the zone's centre in the horizontal plane, so its whole footprint lies
            inside the zone when it is small enough to fit. obj rests on the zone's top
            surface, or on top of anything already stacked there. It is also aligned
            with the zone, so its sides stay square to the zone's edges. For example,
            put_in_zone("block_red", "zone_green") sets block_red down in the middle of
            zone_green.
    """
    # put_on centres obj on the zone's top (or on whatever is stacked there) and,
    # with yaw_deg left as None, aligns obj with the zone.
    put_on(obj, zone)
