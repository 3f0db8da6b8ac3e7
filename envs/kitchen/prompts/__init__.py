"""What the prompts say about the Franka Kitchen: its frame, its scene listing, its gripper."""

from __future__ import annotations

from lyra.prompts import PromptPack

PACK = PromptPack(
    frame=(
        "The robot's base is at (0, 0, 1.8), facing +y; x points to its right, z up.\n"
        "  The stove's top is z = 1.6; the cabinets hang above it up to z = 2.8. The gripper\n"
        "  points forward (+y), its fingers opening left and right; it cannot reach far behind\n"
        "  or above itself, and tells you so before it moves."
    ),
    scene_legend=(
        "name, kind, the point that matters (a handle's bar, a knob's fin, the switch's tip, "
        "the kettle's and a burner's base) x/y/z in metres, size x/y/z of its box; then each "
        "joint's value (radians, or metres for the slide cabinet)"
    ),
    primitive_docs={
        "object_names": (
            "List the kitchen's parts, sorted by name.\n\n"
            "Args:\n"
            '    kind: keep only parts of this kind ("kettle", "handle", "knob", "switch", '
            '"burner");\n'
            "        None keeps all.\n"
            "    color: the kitchen's parts have no colour names: None."
        ),
        "move_ee": (
            "Move the fingertips in a straight line to a point; the gripper keeps pointing as "
            "it does.\n\n"
            "Args:\n"
            "    target: where the fingertips' centre goes.\n"
            "    yaw_deg: must be None: grasp() and turn() set where the gripper points."
        ),
        "grasp": (
            "Close the gripper on a part where it is (a handle's bar, a knob's fin, the "
            "kettle's handle),\nwithout lifting it.\n\n"
            "The gripper comes at the part from the front (from -y), pointing forward, tilted "
            "down as far as it\nmust to reach it; the fingers close on the part's point, as "
            "object_pose() gives it (the\nkettle's: its handle). What is grasped moves with "
            "push() and turn(); a handle grasped only by\nfriction may slip out of the fingers "
            "when pulled hard.\n\n"
            "Args:\n"
            "    name: the part to grasp; the gripper must be empty."
        ),
        "push": (
            "Move the fingertips in a straight line along a direction, pushing or pulling what "
            "they meet.\n\n"
            "Unlike move_ee it does not fail when blocked: a door at its end stop, a switch "
            "pushed as far as it goes.\nWhile the fingers hold a fixed part (a handle, a "
            "knob), they move slowly, so as not to slip off it.\n\n"
            "Args:\n"
            "    direction: the direction as a vector (it need not be of unit length): "
            "Point(0, -1, 0)\n"
            "        pulls towards the robot.\n"
            "    distance: how far to go, in metres.\n\n"
            "Returns:\n"
            "    How far the fingertips got along the direction, in metres."
        ),
        "release": (
            "Open the gripper and draw the fingertips back 5 cm from where it points (less "
            "where something is\nin the way)."
        ),
        "pick": (
            "Grasp the kettle by its handle and lift it 10 cm.\n\n"
            "Args:\n"
            "    name: the part to pick (only the kettle is free to move); the gripper must "
            "be empty."
        ),
        "place": (
            "Carry the held kettle so that its base's point reaches a target, set it down, "
            "release it and draw\nback.\n\n"
            "Args:\n"
            "    target: where the kettle's base goes (a burner's point, at the kettle's "
            "height).\n"
            "    yaw_deg: must be None."
        ),
    },
)
