"""Two piers 10 cm apart across y, the plank turned to span them, the green block on its middle."""

from lyra.api import Point, object_size, pick, place, put_first_on_second

pick("red_block")
place(Point(0.5, -0.05, 0.02))
pick("blue_block")
place(Point(0.5, 0.05, 0.02))
height = object_size("red_block").z
thickness = object_size("wood_plank").z
pick("wood_plank")
place(Point(0.5, 0.0, height + thickness / 2), yaw_deg=90)
put_first_on_second("green_block", "wood_plank")
