"""Close the fingers to a tip, rise, go over the button and press it down until it bottoms out."""

from lyra.api import Point, bounding_box, close_gripper, ee_pose, move_ee, object_pose, push

close_gripper()
low, high = bounding_box("button")
centre = object_pose("button").position
here = ee_pose().position
move_ee(Point(here.x, here.y, high.z + 0.05))
move_ee(Point(centre.x, centre.y, high.z + 0.05))
move_ee(Point(centre.x, centre.y, high.z + 0.02))
push(Point(0.0, 0.0, -1.0), 0.12)
