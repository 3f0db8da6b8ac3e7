from __future__ import annotations

from collections.abc import Iterator

import pytest

from envs.ravens.scene import load_scene
from envs.ravens.tabletop import Tabletop
from lyra.geometry import Point
from lyra.sandbox import run_code

pytestmark = pytest.mark.slow


@pytest.fixture
def tabletop() -> Iterator[Tabletop]:
    env = Tabletop()
    yield env
    env.close()


def test_plan_stacks_red_on_blue_in_physics(tabletop: Tabletop) -> None:
    scene = load_scene(
        {
            "objects": [
                {"type": "block", "color": "red", "poses": [{"x": 0.45, "y": 0.15}]},
                {"type": "block", "color": "blue", "poses": [{"x": 0.5, "y": -0.1, "yaw_deg": 20}]},
            ]
        }
    )
    tabletop.reset(scene, seed=0)
    result = run_code(
        "from lyra.api import put_first_on_second\nput_first_on_second('red_block', 'blue_block')",
        tabletop,
        timeout_s=120,
    )
    assert (result.ok, result.feedback, result.primitive_calls) == (True, "", 1)
    red = tabletop.object_pose("red_block").position
    blue = tabletop.object_pose("blue_block").position
    red_bottom_centre = red - Point(0, 0, tabletop.object_size("red_block").z / 2)
    blue_top_centre = blue + Point(0, 0, tabletop.object_size("blue_block").z / 2)
    assert red_bottom_centre.distance_to(blue_top_centre) < 0.005
