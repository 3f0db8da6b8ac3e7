"""Set yellow to the left of blue (left is +y), then stack red on blue and green on red."""

from lyra.api import Point, object_pose, pick, place, relative_point

spot = relative_point("blue_block", 0.06, angle_deg=90)
pick("yellow_block")
place(Point(spot.x, spot.y, 0.02))
blue = object_pose("blue_block").position
pick("red_block")
place(Point(blue.x, blue.y, blue.z + 0.04))
red = object_pose("red_block").position
pick("green_block")
place(Point(red.x, red.y, red.z + 0.04))
