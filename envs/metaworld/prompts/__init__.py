"""What the prompts say about MetaWorld: its frame, its scene listing, its gripper."""

from __future__ import annotations

from lyra.prompts import PromptPack

PACK = PromptPack(
    frame=(
        "The table top is z = 0; the robot stands at y = 0 facing +y, x points to its\n"
        "  right. The gripper always points down and cannot turn."
    ),
    scene_legend=(
        "name, kind, the point that matters (a handle's grip, a puck's centre, the goal) x/y/z "
        "in metres, size x/y/z of its box; then each joint's value (radians or metres)"
    ),
    primitive_docs={
        "object_names": (
            "List the objects in the scene, sorted by name.\n\n"
            "Args:\n"
            '    kind: keep only objects of this kind ("puck", "handle", "button", "lever", '
            '"dial",\n'
            '        "plate", "ball", "peg", "goal"); None keeps all.\n'
            "    color: MetaWorld's objects have no colour names: None."
        ),
        "move_ee": (
            "Move the fingertips in a straight line to a point; the gripper points down.\n\n"
            "Args:\n"
            "    target: where the fingertips' centre goes.\n"
            "    yaw_deg: must be None: the gripper cannot turn."
        ),
    },
)
