"""What the prompts say about the tabletop: its frame, its scene listing, its object kinds."""

from __future__ import annotations

from pathlib import Path

import yaml

from lyra.prompts import PromptPack

HERE = Path(__file__).parent

PACK = PromptPack(
    # Worded and wrapped as the recorded sessions saw it, so that they still replay.
    frame=(
        "The table top is z = 0; the robot\n"
        "  base is at (0, 0, 0), x points away from it, y to its left."
    ),
    scene_legend=(
        "name, kind, colour, centre x/y/z in metres, size x/y/z in metres, yaw in degrees"
    ),
    primitive_docs={
        "object_names": (
            "List the objects in the scene, sorted by name.\n\n"
            "Args:\n"
            '    kind: keep only objects of this type ("block", "plate", "tile", "beam", '
            '"plank", "bowl",\n'
            '        "zone"); None keeps all.\n'
            '    color: keep only objects of this colour name ("red", "blue", ...); None keeps '
            "all."
        ),
        "move_ee": (
            "Move the end effector in a straight line to a target, gripper pointing down.\n\n"
            "Args:\n"
            "    target: where the tool point goes; a Point keeps the current yaw unless yaw_deg "
            "is given.\n"
            "    yaw_deg: rotation of the gripper about the vertical axis, in degrees."
        ),
    },
    templates={"task_setup": (HERE / "task_setup.md").read_text(encoding="utf-8")},
    cap_examples=tuple(
        (item["instruction"], item["code"])
        for item in yaml.safe_load((HERE / "cap_examples.yaml").read_text(encoding="utf-8"))
    ),
)
