"""Which pair of faces the FR3's fingers grip a cube by: the one with room for them.

The fingers are 16 mm thick and open 4 mm clear of the faces; blocks laid 5 mm apart leave a
finger no room. The backend chooses, where the cube is set down, the axis whose fingers come
down on no neighbour, and refuses, naming them, where neither has room.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import lyra

pytest.importorskip("franky", reason="the fr3 tests need franky: pip install '.[fr3]'")
pytest.importorskip("franky_sim", reason="the fr3 tests need franky-sim: pip install '.[fr3]'")

from envs.fr3.backend import FR3Backend
from lyra import api
from lyra.errors import GraspError
from lyra.geometry import Point

SPOT = Point(0.55, 0.0, 0.0)  # where the moving cube goes; its neighbours stand 5 mm off
LEFT = {"name": "left", "position": [0.55, 0.055]}  # beside SPOT along +y
BACK = {"name": "back", "position": [0.605, 0.0]}  # beside SPOT along +x
MOVING = {"name": "moving", "position": [0.42, -0.2]}


def test_no_room_for_the_fingers_on_either_axis_is_refused_before_anything_moves(
    fr3: FR3Backend,
) -> None:
    fr3.reset({"objects": [MOVING, LEFT, BACK]}, 0)
    before, clock = np.asarray(fr3.arm.robot.current_joint_positions), fr3.sim_time
    with lyra.use(fr3), pytest.raises(GraspError) as refused:
        api.put_first_on_second("moving", SPOT)
    assert str(refused.value) == (
        "cannot set 'moving' down at (0.550, 0.000): the fingers have no room beside it "
        "(closing along y, a finger would come down on 'left', 5 mm from the cube's face; "
        "closing along x, a finger would come down on 'back', 5 mm from the cube's face). A "
        "finger needs 20 mm between the cube and its neighbours on both sides along x or along "
        "y: leave that gap there"
    )
    # Refused before the pick: the arm never moved, and nor did the cube.
    assert fr3.sim_time == clock
    assert np.abs(np.asarray(fr3.arm.robot.current_joint_positions) - before).max() < 1e-3
    moving = fr3.world_state()["moving"].pose.position
    assert moving.distance_to(Point(0.42, -0.2, 0.025)) < 0.001


@pytest.mark.slow
def test_the_fingers_close_along_the_axis_with_room_and_push_no_neighbour(
    fr3: FR3Backend,
) -> None:
    fr3.reset({"objects": [MOVING, LEFT]}, 0)
    with lyra.use(fr3):
        api.put_first_on_second("moving", SPOT)
        # Set down closing along x: the neighbour 5 mm away along y had no finger beside it.
        closing = api.ee_pose().yaw
    assert abs(math.cos(closing)) < 0.05
    state = fr3.world_state()
    assert state["moving"].pose.position.distance_to(Point(0.55, 0.0, 0.025)) < 0.005
    assert state["left"].pose.position.distance_to(Point(0.55, 0.055, 0.025)) < 0.002
