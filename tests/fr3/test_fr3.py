"""The fr3 backend against franky-sim over the libfranka protocol: motions really run.

Each pick-and-place takes about 4 s of the robot's clock (the sim runs at ~0.7-0.9x real time).
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import numpy as np
import pytest

import lyra

# Skipped, saying what to install, where franky or franky-sim is missing.
pytest.importorskip("franky", reason="the fr3 tests need franky: pip install '.[fr3]'")
pytest.importorskip("franky_sim", reason="the fr3 tests need franky-sim: pip install '.[fr3]'")

from envs.fr3.backend import FR3Backend
from envs.fr3.perception import PerceptionFileError, SimPerception, StaticPerception
from envs.fr3.safety import Limits
from envs.fr3.sim import FrankySim
from envs.ravens.predicates import stacked
from lyra import api
from lyra.errors import GraspError, MotionError, StoppedError, UnreachablePoseError
from lyra.geometry import Point, Pose
from tests.fr3.conftest import CUBES


def joints(backend: FR3Backend) -> np.ndarray:
    return np.asarray(backend.arm.robot.current_joint_positions)


def test_a_target_outside_the_workspace_box_is_refused_before_any_motion(
    robot: FR3Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[object] = []
    monkeypatch.setattr(robot.arm, "_run", lambda motion, what: sent.append(motion))
    before, clock = joints(robot), robot.sim_time
    with lyra.use(robot), pytest.raises(UnreachablePoseError) as caught:
        api.move_ee(Point(0.9, 0.0, 0.3))
    assert str(caught.value) == (
        "cannot reach the point (0.900, 0.000, 0.300): x = 0.900 m is above 0.750: the FR3's "
        "workspace box is x 0.25-0.75, y -0.40-0.40, z 0.01-0.60 m"
    )
    assert sent == []
    assert robot.sim_time == clock
    assert np.abs(joints(robot) - before).max() < 1e-3


def test_reach_and_joint_limits_are_checked_along_the_line(
    franky_sim: FrankySim, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A box wider than the arm's reach: only the solved line can refuse.
    wide = Limits(low=Point(-1.5, -1.5, -0.5), high=Point(1.5, 1.5, 1.5))
    backend = FR3Backend(franky_sim.host, SimPerception(franky_sim.sim, CUBES), limits=wide)
    backend.reset(CUBES, 0)
    sent: list[object] = []
    monkeypatch.setattr(backend.arm, "_run", lambda motion, what: sent.append(motion))
    with lyra.use(backend):
        with pytest.raises(UnreachablePoseError, match="out of the arm's reach"):
            api.move_ee(Point(1.2, 0.0, 0.3))
        with pytest.raises(UnreachablePoseError, match=r"joint 7 would reach .* past 2\.966"):
            api.move_ee(Point(0.554, 0.0, 0.5), yaw_deg=-170)
    assert sent == []
    backend.close()


def test_a_motion_stops_where_the_hand_feels_the_force_limit(franky_sim: FrankySim) -> None:
    # franky-sim's force estimate always reads 0 N, so a 0 N limit is met at the first control
    # tick, as a contact would meet 30 N on the arm: franky's reaction, in its control loop,
    # turns the motion into a stop.
    touchy = Limits(max_force=0.0)
    backend = FR3Backend(franky_sim.host, SimPerception(franky_sim.sim, CUBES), limits=touchy)
    backend.reset(CUBES, 0)
    before = joints(backend)
    with lyra.use(backend):
        with pytest.raises(MotionError) as caught:
            api.move_ee(Point(0.5, 0.1, 0.3))
        assert str(caught.value) == (
            "the arm felt 0 N on the hand (x 0, y 0, z 0 N; it stops at 0 N along any axis) on "
            "its way to the point (0.500, 0.100, 0.300), and stopped there. Look at the arm and "
            "the table (the hand against an object or the table, a person), set the objects back "
            "as the scene says, and run the plan again"
        )
        assert np.abs(joints(backend) - before).max() < 1e-3
        # Nothing more moves until the next reset.
        with pytest.raises(StoppedError):
            api.move_ee(Point(0.5, 0.1, 0.3))
    backend.close()


def test_a_speed_factor_above_the_cap_is_clamped(franky_sim: FrankySim) -> None:
    backend = FR3Backend(franky_sim.host, SimPerception(franky_sim.sim, CUBES), speed=0.9)
    backend.reset(CUBES, 0)
    assert backend.arm.robot.relative_dynamics_factor.velocity == pytest.approx(0.3)
    assert backend.arm.set_speed(5.0) == pytest.approx(0.3)
    assert backend.arm.set_speed(0.1) == pytest.approx(0.1)
    backend.close()


def test_connecting_leaves_this_threads_scheduling_as_it_was(franky_sim: FrankySim) -> None:
    # franky.Robot raises the thread that makes it to SCHED_FIFO 99; kept, every test after
    # this one ran at real-time priority, and workers forked later inherited it.
    before = (os.sched_getscheduler(0), os.sched_getparam(0))
    backend = FR3Backend(franky_sim.host, SimPerception(franky_sim.sim, CUBES))
    backend.reset(CUBES, 0)
    try:
        assert (os.sched_getscheduler(0), os.sched_getparam(0)) == before
    finally:
        backend.close()


@pytest.mark.slow
def test_pick_and_place_lands_a_5_cm_cube_within_a_centimetre(robot: FR3Backend) -> None:
    target = Point(0.55, 0.1, 0.025)
    clock, wall = robot.sim_time, time.monotonic()
    with lyra.use(robot):
        api.pick("red")
        assert api.held_object() == "red"
        assert api.object_pose("red").position.z > 0.08
        api.place(Pose(target))
        assert api.held_object() is None
        landed = api.object_pose("red").position
    print(
        f"pick-and-place: {robot.sim_time - clock:.1f} s robot time, "
        f"{time.monotonic() - wall:.1f} s wall, landed {landed.distance_to(target) * 1000:.1f} mm "
        "from the target"
    )
    assert landed.distance_to(target) <= 0.01


@pytest.mark.slow
def test_three_cubes_stack_into_a_column(robot: FR3Backend) -> None:
    with lyra.use(robot):
        api.put_first_on_second("green", "blue")
        # An occupied target: red lands on green, on top of blue.
        api.put_first_on_second("red", "blue")
    verdict = stacked(robot.world_state(), ["blue", "green", "red"])
    assert verdict, verdict.reason


@pytest.mark.slow
def test_an_empty_grasp_is_told_by_the_finger_width(franky_sim: FrankySim, tmp_path: Path) -> None:
    # A poses file that places a cube where franky-sim has none: franky-sim reports the grasp
    # a success, the measured width says it closed on nothing.
    poses = tmp_path / "poses.yaml"
    poses.write_text(
        "ghost: {position: [0.5, -0.3, 0.025], size: [0.05, 0.05, 0.05], color: red}\n"
    )
    backend = FR3Backend(franky_sim.host, poses)
    backend.reset({"objects": [{"name": "ghost", "position": [0.5, -0.3]}]}, 0)
    with (
        lyra.use(backend),
        pytest.raises(GraspError, match=r"closed to \d mm on 'ghost', which is 50 mm wide"),
    ):
        api.pick("ghost")
    assert backend.arm.held_object() is None
    backend.close()


def test_static_perception_reads_a_poses_file_and_keeps_what_the_arm_moved(
    tmp_path: Path,
) -> None:
    poses = tmp_path / "poses.yaml"
    poses.write_text(
        "red_cube: {position: [0.5, 0.1, 0.025], yaw_deg: 90, size: [0.05, 0.05, 0.05], "
        "color: red}\n"
    )
    seen = StaticPerception(poses)
    red = seen.objects()["red_cube"]
    assert (red.kind, red.color, red.pose.position) == ("cube", "red", Point(0.5, 0.1, 0.025))
    assert red.pose.yaw == pytest.approx(math.pi / 2)
    seen.placed("red_cube", Pose(Point(0.6, 0.0, 0.025)))
    assert seen.objects()["red_cube"].pose.position == Point(0.6, 0.0, 0.025)
    poses.write_text(
        "red_cube:\n  size: [0.05, 0.05, 0.05]\nblue_cube:\n  position: [0.5, 0.1, 0.025]\n"
        "  size: [0.05, 0.05]\n  colour: blue\n"
    )
    with pytest.raises(PerceptionFileError) as refused:
        StaticPerception(poses)
    assert refused.value.problems == [
        f"{poses}:1: red_cube.position: Field required",
        f"{poses}:5: blue_cube.size.2: Field required",
        f"{poses}:6: blue_cube.colour: Extra inputs are not permitted",
    ]
