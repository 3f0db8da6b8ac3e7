from skills.build_jenga_layer import build_jenga_layer


def build_jenga_tower(layers: list[list[str]], site: str, gap: float) -> None:
    """Build a Jenga tower on a site: layers of planks laid side by side, each layer turned 90 degrees from the one below it, resting on it and centred on the site.

    Args:
        layers: names of the planks, as listed by object_names(), as a list of layers,
            bottom layer first. Layers are built in order: the whole first layer, then
            the next. Each plank lies flat and rests on top of whatever is under it
            there, such as the site or the layer below. Every layer is centred on the
            site in the horizontal plane. In the bottom layer the planks' long sides run
            along world x, and the planks are laid in order from left to right (+y to -y).
            Each later layer is turned a further 90 degrees counter-clockwise, seen from
            above, about the vertical axis through the site's centre. This means the
            second layer's long sides run along world y, and its planks go from front to
            back (-x to +x). After that the turns alternate. For example,
            [["plank_0", "plank_1", "plank_2"], ["plank_3", "plank_4", "plank_5"]] puts
            plank_0 on the left, plank_1 centred on the site and plank_2 on the right.
            Then it lays plank_3, plank_4 and plank_5 across them, from front to back.
        site: name of the object that the tower is centred on, in the horizontal plane,
            as listed by object_names().
        gap: free space in metres between the facing long sides of neighbouring planks
            in a layer. Each plank's own width sets the spacing, so the gap holds even
            when the planks differ in size.
    """
    for index, planks in enumerate(layers):
        turn_deg = (90.0 * index) % 360.0
        build_jenga_layer(planks, site, gap, turn_deg=turn_deg)
