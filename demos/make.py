"""Write the demonstrations in this folder again, with their checks, and say how each ends.

Run from the repository root: ``.venv/bin/python demos/make.py [NAME ...]``. Each demonstration
is made by lyra's own commands, as a person would run them: ``lyra demo record`` fed the
``.keys`` file (what the person typed, line by line), or ``lyra demo from-plan`` on the
``.plan.py`` file with injected mistakes, each given the check (the success predicate of the
task) to write into the file and judge on the world the demonstration ends in. Frames are
re-saved as 64-colour PNGs to keep the repository small.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LYRA = [sys.executable, "-m", "lyra.cli"]

# name -> how it is made and the check it is judged by.
DEMOS: dict[str, dict[str, Any]] = {
    "ravens/sort_by_colour": {
        "record": "ravens/sort_scene.yaml",
        "frames": True,
        "check": [
            {"inside": {"name": "red_block_0", "zone": "red_zone"}},
            {"inside": {"name": "red_block_1", "zone": "red_zone"}},
            {"inside": {"name": "blue_block_0", "zone": "blue_zone"}},
            {"inside": {"name": "blue_block_1", "zone": "blue_zone"}},
        ],
    },
    "ravens/line_up_front": {
        "record": "ravens/line_up_scene.yaml",
        "check": [
            {"at_point": {"name": "red_block", "point": [0.35, 0.1, 0.02], "tolerance": 0.02}},
            {"at_point": {"name": "green_block", "point": [0.35, 0.0, 0.02], "tolerance": 0.02}},
            {"at_point": {"name": "blue_block", "point": [0.35, -0.1, 0.02], "tolerance": 0.02}},
        ],
    },
    "ravens/tower_and_neighbour": {
        "plan": "ravens/tower_scene.yaml",
        "instruction": "put the yellow block just to the left of the blue one, then stack the "
        "red block on the blue one and the green block on the red one",
        "noise": "wrong-object,offset,missing-step",
        "mistakes": 2,
        "noise_seed": 4,
        "check": [
            {"side_of": {"name": "yellow_block", "reference": "blue_block", "side": "left"}},
            {"stacked": ["blue_block", "red_block", "green_block"]},
        ],
    },
    "ravens/bridge": {
        "plan": "ravens/bridge_scene.yaml",
        "instruction": "build a bridge in the middle of the table: stand the red and blue "
        "blocks a little apart, lay the plank across them, and put the green block on the plank",
        "noise": "wrong-object,offset,missing-step",
        "mistakes": 2,
        "noise_seed": 0,
        "check": [
            {"on_table": "red_block"},
            {"on_table": "blue_block"},
            {"on_top": {"upper": "wood_plank", "lower": "red_block"}},
            {"on_top": {"upper": "wood_plank", "lower": "blue_block"}},
            {"on_top": {"upper": "green_block", "lower": "wood_plank"}},
        ],
    },
    "metaworld/close_drawer": {
        "record": "metaworld/drawer_close_scene.yaml",
        "check": [{"done": {}}],
    },
    "metaworld/press_button": {
        "plan": "metaworld/button_scene.yaml",
        "instruction": "press the button on top of the box all the way down",
        "noise": "offset,missing-step",
        "mistakes": 2,
        "noise_seed": 0,
        "check": [{"done": {}}],
    },
}


def make(name: str, how: dict[str, Any]) -> None:
    """Make one demonstration, its check with it, with lyra's command."""
    out = HERE / f"{name}.json"
    if "record" in how:
        command = [*LYRA, "demo", "record", "--scene", how["record"], "-o", f"{name}.json"]
        keys = (HERE / f"{name}.keys").read_text(encoding="utf-8")
    else:
        command = [
            *LYRA, "demo", "from-plan", f"{name}.plan.py",
            "--scene", how["plan"], "-o", f"{name}.json",
            "--instruction", how["instruction"],
            "--noise", how["noise"], "--mistakes", str(how["mistakes"]),
            "--noise-seed", str(how["noise_seed"]),
        ]  # fmt: skip
        keys = ""
    if how.get("frames"):
        command.append("--frames")
    command += ["--check", json.dumps(how["check"])]  # JSON is YAML
    done = subprocess.run(
        command, input=keys, text=True, capture_output=True, check=False, cwd=HERE
    )
    print(done.stdout.splitlines()[-1] if done.stdout else done.stderr.strip())
    if how.get("frames"):
        shrink(out.with_name(out.stem + "-frames"))


def shrink(folder: Path) -> None:
    """Re-save the frames as 64-colour PNGs."""
    from PIL import Image

    for png in sorted(folder.glob("*.png")):
        Image.open(png).convert("RGB").quantize(64).save(png, "PNG", optimize=True)


def main(names: list[str]) -> None:
    """Make the demonstrations named (default: all) and say how each ends."""
    for name in names or list(DEMOS):
        make(name, DEMOS[name])


if __name__ == "__main__":
    main(sys.argv[1:])
