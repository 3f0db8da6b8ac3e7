"""The tabletop's benchmark tasks (a 6-block pyramid and a 10-block tower) and its sample scene.

The plans are task code over :mod:`lyra.api`, run by the episode runner as any learnt plan is,
so ``lyra bench tabletop`` measures what a user's plans cost.
"""

from __future__ import annotations

from typing import Any

from lyra.backend import BenchTask, Sample

SITE: dict[str, Any] = {
    "type": "zone",
    "name": "site",
    "size": [0.16, 0.16, 0.001],
    "poses": [{"x": 0.64, "y": 0.0}],
}
# Blocks wait nearer the robot than the site: reaching past a tall tower, the Panda's elbow
# would sweep it.
STAGING = {"x": [0.3, 0.54], "y": [-0.3, 0.3]}

PYRAMID_PLAN = """# task
from lyra.api import object_names, object_pose, put_first_on_second, relative_point

blocks = object_names(kind="block")
centre = object_pose("site").position
pitch = 0.04 + 0.005
# Offsets along y, bottom row first: each block lands on whatever is already under it.
offsets = [-pitch, 0.0, pitch, -pitch / 2, pitch / 2, 0.0]
for block, offset in zip(blocks, offsets, strict=True):
    target = relative_point(centre, abs(offset), 90.0 if offset >= 0 else -90.0)
    put_first_on_second(block, target, yaw_deg=0.0)
"""

TOWER_PLAN = """# task
from lyra.api import object_names, put_first_on_second

below = "site"
for block in object_names(kind="block"):
    put_first_on_second(block, below)
    below = block
"""


def _pyramid_success() -> list[dict[str, Any]]:
    b = [f"yellow_block_{i}" for i in range(6)]
    return [
        *({"on_table": name} for name in b[:3]),
        {"next_to": {"a": b[0], "b": b[1], "gap": 0.005}},
        {"next_to": {"a": b[1], "b": b[2], "gap": 0.005}},
        *(
            {"on_top": {"upper": b[upper], "lower": b[lower]}}
            for upper, lower in ((3, 0), (3, 1), (4, 1), (4, 2), (5, 3), (5, 4))
        ),
    ]


TASKS = {
    "pyramid": BenchTask(
        "pyramid-6",
        {"objects": [SITE, {"type": "block", "color": "yellow", "count": 6}], "area": STAGING},
        PYRAMID_PLAN,
        _pyramid_success(),
    ),
    "tower": BenchTask(
        "tower-10",
        {"objects": [SITE, {"type": "block", "color": "yellow", "count": 10}], "area": STAGING},
        TOWER_PLAN,
        [{"stacked": [f"yellow_block_{i}" for i in range(10)]}],
        hold_seconds=5.0,
    ),
}

SAMPLE = Sample(
    scene={
        "objects": [
            {"type": "block", "color": "red", "poses": [{"x": 0.45, "y": -0.1}]},
            {"type": "block", "color": "blue", "poses": [{"x": 0.55, "y": 0.12}]},
        ]
    },
    objects=("red_block", "blue_block"),
    free=(0.5, 0.25, 0.02),
)
