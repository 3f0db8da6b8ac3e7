"""The Kitchen's primitives on gymnasium-robotics' real FrankaKitchen-v1: every test steps MuJoCo."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import lyra
from envs.kitchen.backend import KitchenBackend
from envs.kitchen.predicates import done
from envs.mujoco_parts import StepBudgetError
from lyra import api
from lyra.backend import backend_spec
from lyra.episode import run_episode
from lyra.errors import GraspError, MotionError, UnknownJointError, UnreachablePoseError
from lyra.geometry import Point

REPO = Path(__file__).resolve().parents[2]


def test_move_ee_brings_the_fingertips_within_2_mm_pointing_forward(
    backend: KitchenBackend,
) -> None:
    backend.reset({"tasks": ["microwave"]}, 0)
    with lyra.use(backend):
        for target in (Point(-0.3, 0.5, 2.1), Point(-0.45, 0.55, 2.3), Point(-0.2, 0.6, 2.45)):
            api.move_ee(target)
            pose = api.ee_pose()
            assert pose.position.distance_to(target) <= 0.002
            # The gripper points along +y: its z axis, the third column of its rotation.
            assert pose.rotation_matrix()[:, 2] == pytest.approx([0.0, 1.0, 0.0], abs=0.01)


def test_the_light_switch_pushed_left_counts_as_done_now_and_at_any_step(
    backend: KitchenBackend,
) -> None:
    backend.reset({"tasks": ["light switch"]}, 0)
    assert backend.world_state().signals == {
        "success": 0.0,
        "success_any": 0.0,
        "done:light switch": 0.0,
    }
    with lyra.use(backend):
        tip = api.object_pose("light_switch").position
        api.close_gripper()
        api.move_ee(Point(tip.x + 0.04, tip.y - 0.1, tip.z))
        api.move_ee(Point(tip.x + 0.04, tip.y, tip.z))
        api.push(Point(-1.0, 0.0, 0.0), 0.1)
        # The switch turns about an upright axis from 0 to its stop at -0.7 rad.
        assert api.joint_value("light_switch") == pytest.approx(-0.7, abs=0.02)
    assert backend.world_state().signals["success"] == 1.0
    assert backend.world_state().signals["success_any"] == 1.0


def test_pick_lifts_the_kettle_and_place_sets_it_on_the_far_burner(
    backend: KitchenBackend,
) -> None:
    backend.reset({"tasks": ["kettle"]}, 0)
    with lyra.use(backend):
        start = api.object_pose("kettle").position
        api.pick("kettle")
        assert api.held_object() == "kettle"
        assert api.object_pose("kettle").position.z > start.z + 0.08
        burner = api.object_pose("top_left_burner").position
        spot = Point(burner.x, burner.y, start.z)
        api.place(spot)
        assert api.held_object() is None
        assert api.object_pose("kettle").position.distance_to(spot) <= 0.01
    assert backend.world_state().signals["success"] == 1.0


def test_a_grasped_knob_turns_with_the_gripper_and_lights_its_burner(
    backend: KitchenBackend,
) -> None:
    backend.reset({"tasks": ["bottom burner"]}, 0)
    with lyra.use(backend):
        api.grasp("bottom_left_knob")
        turned = api.turn(60.0)
        assert turned == pytest.approx(60.0, abs=1.0)
        # The knob's damping makes it slip a little in the fingers: it turns by less.
        knob = api.joint_value("bottom_left_knob")
        assert -math.radians(60.0) < knob < -0.58
        api.release()
        assert api.joint_value("bottom_left_knob") == pytest.approx(knob, abs=0.01)
    assert backend.world_state().signals["success"] == 1.0


def test_a_push_against_the_slide_cabinets_end_stop_reports_how_far_it_got(
    backend: KitchenBackend,
) -> None:
    backend.reset({"tasks": ["slide cabinet"]}, 0)
    with lyra.use(backend):
        bar = api.object_pose("slide_handle").position
        api.move_ee(Point(bar.x, bar.y - 0.1, bar.z))
        api.move_ee(bar)
        got = api.push(Point(1.0, 0.0, 0.0), 0.55)
        # The door slides 44 cm at most: the push stops there instead of failing.
        assert 0.4 < got < 0.5
        assert api.joint_value("slide_cabinet") == pytest.approx(0.44, abs=0.005)


def test_joint_axes_are_the_models(backend: KitchenBackend) -> None:
    backend.reset({"tasks": ["microwave"]}, 0)
    with lyra.use(backend):
        anchor, axis = api.joint_axis("microwave")
        assert (axis.x, axis.y, axis.z) == pytest.approx((0.0, 0.0, 1.0), abs=1e-6)
        assert (anchor.x, anchor.y) == pytest.approx((-1.128, 0.455), abs=0.001)
        _, knob = api.joint_axis("top_left_knob")
        assert (knob.x, knob.y, knob.z) == pytest.approx((0.0, -1.0, 0.0), abs=0.002)
        assert api.joint_names() == [
            "bottom_left_knob",
            "bottom_right_knob",
            "left_hinge_cabinet",
            "light_switch",
            "microwave",
            "right_hinge_cabinet",
            "slide_cabinet",
            "top_left_knob",
            "top_right_knob",
        ]


def test_refusals_say_what_to_do(backend: KitchenBackend) -> None:
    backend.reset({"tasks": ["microwave"]}, 0)
    with lyra.use(backend):
        with pytest.raises(GraspError) as fixed:
            api.pick("microwave_handle")
        with pytest.raises(GraspError) as plate:
            api.grasp("top_left_burner")
        with pytest.raises(UnreachablePoseError) as outside:
            api.move_ee(Point(0.0, 0.6, 3.0))
        with pytest.raises(UnreachablePoseError) as behind:
            api.move_ee(Point(0.45, 0.1, 2.8))
        with pytest.raises(UnknownJointError) as joint:
            api.joint_value("microwave_door")
    assert str(fixed.value) == (
        "'microwave_handle' is a handle, fixed in the kitchen: use grasp() and push() to move it"
    )
    assert (
        str(plate.value) == "'top_left_burner' is a burner's plate: there is nothing on it to hold"
    )
    assert str(outside.value) == "cannot reach (0.000, 0.600, 3.000): z must lie in [1.550, 2.850]"
    assert str(behind.value) == (
        "cannot reach (0.450, 0.100, 2.800): the arm cannot reach it with the gripper pointing "
        "that way"
    )
    assert str(joint.value).startswith("unknown joint 'microwave_door'. Did you mean 'microwave'?")


def test_a_motion_stopped_short_says_what_is_in_the_way(backend: KitchenBackend) -> None:
    backend.reset({"tasks": ["kettle"]}, 0)
    with lyra.use(backend), pytest.raises(MotionError) as caught:
        # Straight down through the kettle's handle.
        api.move_ee(Point(-0.27, 0.45, 1.8))
    assert str(caught.value).endswith("the arm touches kettle")


def test_the_step_budget_is_the_scenes(backend: KitchenBackend) -> None:
    backend.reset({"tasks": ["microwave"], "steps": 5}, 0)
    with lyra.use(backend), pytest.raises(StepBudgetError) as caught:
        api.move_ee(Point(-0.3, 0.6, 2.3))
    assert backend.arm.steps == 5
    assert str(caught.value) == (
        "the episode's 5 environment steps are used up (0.4 simulated seconds): "
        "take fewer or shorter motions"
    )


def test_jitter_moves_the_kettle_by_the_seed(backend: KitchenBackend) -> None:
    places = {}
    for seed in (0, 1, 0):
        backend.reset({"tasks": ["kettle"], "jitter": 0.03}, seed)
        places.setdefault(seed, []).append(backend.arm.object_pose("kettle").position)
    assert places[0][0] == places[0][1]
    assert 0.005 < places[0][0].distance_to(places[1][0]) <= 0.03 * math.sqrt(2)
    backend.reset({"tasks": ["kettle"]}, 1)
    home = backend.arm.object_pose("kettle").position
    assert (home.x, home.y) == pytest.approx((-0.2694, 0.3504), abs=0.001)


def test_a_misspelt_task_gets_the_closest_name() -> None:
    with pytest.raises(ValueError, match="Did you mean 'microwave'"):
        backend_spec("kitchen").load_scene({"tasks": ["microwav"]})


def test_done_says_where_each_undone_task_is(backend: KitchenBackend) -> None:
    backend.reset({"tasks": ["microwave", "kettle"]}, 0)
    verdict = done(backend.world_state())
    assert not verdict.ok
    assert verdict.reason == (
        "the Kitchen does not count it done: kettle: the kettle is at (-0.269, 0.350, 1.619), "
        "its goal is (-0.23, 0.75, 1.62) (done within 0.3, its tilt counted too); microwave: "
        "the joint 'microwave' is at 0.000, its goal is -0.75 (done within 0.3)"
    )


def test_a_seed_reset_lays_out_the_same_world_on_a_reused_environment(
    backend: KitchenBackend,
) -> None:
    shots = []
    for _ in range(2):
        backend.reset({"tasks": ["light switch"]}, 4)
        with lyra.use(backend):
            api.move_ee(Point(-0.35, 0.5, 2.2))
        shots.append((backend.snapshot(), np.asarray(backend.arm.env.data.qpos).copy()))
    assert shots[0][0] == shots[1][0]
    assert np.array_equal(shots[0][1], shots[1][1])


def test_metaworlds_drawer_skill_opens_the_slide_cabinet_unchanged(
    backend: KitchenBackend,
) -> None:
    # open_articulated was written for MetaWorld's drawer; here it runs, confined as any
    # plan does, on the Kitchen's slide cabinet, whose door slides to the right.
    code = (
        "from lyra.api import Point\n"
        "from skills.open_articulated import open_articulated\n"
        "print(open_articulated('slide_handle', 'slide_cabinet', Point(1, 0, 0), 0.37))\n"
    )
    run = run_episode(
        backend,
        {"tasks": ["slide cabinet"]},
        0,
        code,
        skills_root=REPO / "skills",
        success=[{"done": {}}],
        hold_seconds=0.5,
    )
    assert run.ok, run.describe()
    assert backend.arm.joint_value("slide_cabinet") == pytest.approx(0.36, abs=0.02)
