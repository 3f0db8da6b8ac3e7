"""The MetaWorld primitives on real MetaWorld v3 environments: every test steps MuJoCo."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import lyra
from envs.metaworld.arm import GRIP_LEAD
from envs.metaworld.backend import MetaWorldBackend
from envs.mujoco_parts import StepBudgetError, norm3
from lyra import api
from lyra.backend import backend_spec
from lyra.errors import GraspError, MotionError, UnknownJointError, UnreachablePoseError
from lyra.geometry import Point


def test_move_ee_brings_the_fingertips_within_4_mm_on_every_seed(
    backend: MetaWorldBackend,
) -> None:
    for seed in range(4):
        backend.reset({"task": "reach"}, seed)
        with lyra.use(backend):
            goal = api.object_pose("goal").position
            api.move_ee(goal)
            assert api.ee_pose().position.distance_to(goal) <= 0.004


def test_success_is_kept_now_and_at_any_step(backend: MetaWorldBackend) -> None:
    backend.reset({"task": "reach"}, 0)
    assert backend.world_state().signals == {"success": 0.0, "success_any": 0.0}
    with lyra.use(backend):
        goal = api.object_pose("goal").position
        api.move_ee(goal)
        assert backend.world_state().signals == {"success": 1.0, "success_any": 1.0}
        api.move_ee(Point(goal.x - 0.1, goal.y - 0.1, goal.z + 0.1))
    # MetaWorld's success is per step: it is gone now, but it held at some step.
    assert backend.world_state().signals == {"success": 0.0, "success_any": 1.0}


def test_seeds_lay_the_task_out_differently(backend: MetaWorldBackend) -> None:
    places = []
    for seed in (0, 1):
        backend.reset({"task": "pick-place"}, seed)
        places.append(backend.arm.object_pose("puck").position)
    assert places[0].distance_to(places[1]) > 0.01


def test_pick_lifts_the_puck_and_place_sets_it_down_where_asked(
    backend: MetaWorldBackend,
) -> None:
    backend.reset({"task": "pick-place"}, 2)
    with lyra.use(backend):
        start = api.object_pose("puck").position
        api.pick("puck")
        assert api.held_object() == "puck"
        assert api.object_pose("puck").position.z > start.z + 0.08
        spot = Point(start.x + 0.08, start.y + 0.05, start.z)
        api.place(spot)
        assert api.held_object() is None
        assert api.object_pose("puck").position.distance_to(spot) <= 0.01


def test_a_push_against_the_drawers_end_stop_reports_how_far_it_got(
    backend: MetaWorldBackend,
) -> None:
    backend.reset({"task": "drawer-open"}, 0)
    with lyra.use(backend):
        handle = api.object_pose("drawer_handle").position
        api.move_ee(Point(handle.x, handle.y, handle.z + 0.1))
        api.move_ee(handle)
        assert api.joint_value("drawer_slide") == pytest.approx(0.0, abs=1e-6)
        got = api.push(Point(0.0, -1.0, 0.0), 0.3)
        # The drawer slides 20 cm at most: the push stops there instead of failing.
        assert 0.17 < got < 0.26
        assert api.joint_value("drawer_slide") == pytest.approx(-got, abs=0.035)
        assert backend.world_state().signals["success_any"] == 1.0


def test_joint_axes_are_the_models(backend: MetaWorldBackend) -> None:
    backend.reset({"task": "door-open"}, 0)
    with lyra.use(backend):
        assert api.joint_names() == ["door_hinge"]
        point, direction = api.joint_axis("door_hinge")
        handle = api.object_pose("door_handle").position
    assert (direction.x, direction.y, direction.z) == pytest.approx((0.0, 0.0, 1.0))
    # The hinge is at the door's far edge, 38 cm from its handle.
    assert math.hypot(handle.x - point.x, handle.y - point.y) == pytest.approx(0.38, abs=0.02)


def test_close_gripper_closes_the_empty_fingers_and_release_opens_them(
    backend: MetaWorldBackend,
) -> None:
    backend.reset({"task": "reach"}, 0)
    opening = backend.arm.env._get_obs()[3]
    with lyra.use(backend):
        api.close_gripper()
        closed = backend.arm.env._get_obs()[3]
        api.release()
    assert closed < opening - 0.5
    assert backend.arm.env._get_obs()[3] > closed + 0.5


def test_refusals_say_what_to_do(backend: MetaWorldBackend) -> None:
    backend.reset({"task": "drawer-open"}, 0)
    with lyra.use(backend):
        with pytest.raises(GraspError) as fixed:
            api.pick("drawer_handle")
        with pytest.raises(GraspError) as marker:
            api.grasp("goal")
        with pytest.raises(UnreachablePoseError) as high:
            api.move_ee(Point(0.0, 0.6, 0.9))
        with pytest.raises(UnknownJointError) as joint:
            api.joint_value("drawer")
    assert str(fixed.value) == (
        "'drawer_handle' is a handle, fixed to its part: use grasp() and push() to move it"
    )
    assert str(marker.value) == "'goal' marks where to go: it is not a thing to hold"
    assert str(high.value) == (
        "cannot reach (0.000, 0.600, 0.900): z must lie in [0.005, 0.455], the box the "
        "fingertips reach"
    )
    assert str(joint.value) == (
        "unknown joint 'drawer'. Did you mean 'drawer_slide'? Known joints: drawer_slide"
    )


def test_the_step_budget_is_the_scenes(backend: MetaWorldBackend) -> None:
    backend.reset({"task": "reach", "steps": 30}, 0)
    with lyra.use(backend), pytest.raises(StepBudgetError) as caught:
        api.move_ee(api.object_pose("goal").position)
    assert backend.arm.steps == 30
    assert str(caught.value) == (
        "the episode's 30 environment steps are used up (0.38 simulated seconds): "
        "take fewer or shorter motions"
    )


def test_a_misspelt_task_gets_the_closest_name() -> None:
    with pytest.raises(ValueError, match="Did you mean 'drawer-open'"):
        backend_spec("metaworld").load_scene({"task": "drawer-opn"})


def test_metaworlds_experts_run_on_lyras_seeds() -> None:
    spec = backend_spec("metaworld")
    # reach's expert reads the goal from the observation: it fails if the goal is clipped away.
    runs = [spec.run_peer(spec.load_scene({"task": "reach"}), seed) for seed in (0, 1)]
    assert [(run.held, run.any_step) for run in runs if run is not None] == [(True, True)] * 2
    # handle-press's expert presses on past the goal: done at some step, not at the end.
    run = spec.run_peer(spec.load_scene({"task": "handle-press"}), 0)
    assert run is not None and (run.held, run.any_step) == (False, True)


def test_done_says_how_far_the_task_is_from_counting_as_done(backend: MetaWorldBackend) -> None:
    from envs.metaworld.predicates import done

    backend.reset({"task": "drawer-open"}, 0)
    verdict = done(backend.world_state())
    assert not verdict.ok
    assert verdict.reason == (
        "MetaWorld does not count the task as done: 'drawer_handle' is at (-0.097, 0.730, "
        "0.090), 190.0 mm from the goal (-0.097, 0.540, 0.090)"
    )


def test_a_motion_right_after_a_blocked_push_moves(backend: MetaWorldBackend) -> None:
    backend.reset({"task": "drawer-close"}, 0)
    with lyra.use(backend):
        handle = api.object_pose("drawer_handle").position
        api.close_gripper()
        api.move_ee(Point(handle.x, handle.y - 0.05, handle.z + 0.1))
        api.move_ee(Point(handle.x, handle.y - 0.05, handle.z))
        # The drawer closes 15 cm and stops the fingers; they keep pressing on it.
        assert api.push(Point(0.0, 1.0, 0.0), 0.3) < 0.27
        assert backend.world_state().signals["success"] == 1.0
        back = api.ee_pose().position.y - 0.05
        api.move_ee(Point(handle.x, back, handle.z))
        assert api.ee_pose().position.y == pytest.approx(back, abs=0.004)


def test_the_arms_dot_product_rounds_each_multiply_add_once() -> None:
    """The kernel-free dot the arm steers by: fused, as the recordings' BLAS kernel summed it."""
    from envs.mujoco_parts import dot3

    a, b = np.array([0.428, 0.842, -0.21]), np.array([0.602, -0.111, 0.871])
    first = Fraction(0.428 * 0.602) + Fraction(0.842) * Fraction(-0.111)
    fused = float(Fraction(float(first)) + Fraction(-0.21) * Fraction(0.871))
    # Rounded once per multiply-add, and so not what separate multiplies and adds give here.
    assert dot3(a, b) == fused == -0.018715999999999986
    assert (0.428 * 0.602 + 0.842 * -0.111) + -0.21 * 0.871 == -0.018715999999999983
    assert norm3(np.array([3.0, 4.0, 12.0])) == 13.0


def test_a_moved_object_is_reported_with_where_it_ended_and_where_it_was(
    backend: MetaWorldBackend,
) -> None:
    accepted = {"door_handle": [0.192233, 0.723694, 0.150036, 0.0, 0.0, 0.0, 1.0]}
    now = {"door_handle": [0.19662, 0.740384, 0.150036, 0.0, 0.0, 0.0, 1.0]}
    assert backend.compare(accepted, now) == (
        "'door_handle' ended at (0.197, 0.740, 0.150), 17.3 mm from (0.192, 0.724, 0.150), "
        "where the accepted run left it (at most 10.0 mm)"
    )
    assert backend.compare(accepted, {"door_handle": [0.2, 0.725, 0.15, 0, 0, 0, 1]}) == ""


def test_a_hold_keeps_the_fingertips_where_the_last_motion_left_them(
    backend: MetaWorldBackend,
) -> None:
    # Short pushes in a row end with the hand still moving and its target ahead of it; the
    # hold must stop it there (holding the target where it was carried the hand 15 mm on).
    backend.reset({"task": "reach"}, 0)
    with lyra.use(backend):
        for _ in range(20):
            api.push(Point(0.0, 0.0, -1.0), 0.003)
        end = api.ee_pose().position
        backend.hold(0.5)
        assert api.ee_pose().position.distance_to(end) <= 0.004


def test_a_motion_stopped_short_says_what_holds_the_arm_back(backend: MetaWorldBackend) -> None:
    # reach-wall's seed 25 sets the goal high at the back: the arm cannot stretch 45 cm up there.
    backend.reset({"task": "reach-wall"}, 25)
    with lyra.use(backend), pytest.raises(MotionError) as stretched:
        start, goal = api.ee_pose().position, api.object_pose("goal").position
        api.move_ee(Point(start.x, start.y, 0.445))
        api.move_ee(Point(goal.x, goal.y, 0.445))
    assert str(stretched.value) == (
        "the gripper stopped 46 mm short of (-0.027, 0.888, 0.445): the arm cannot follow the "
        "line there (its joints are at their limits)"
    )
    # Fingertips pushed in under the plate's goal cabinet catch on it as they rise; the
    # cabinet is no task object, so MetaWorld's own name for it says which it is.
    backend.reset({"task": "plate-slide-side"}, 21)
    with lyra.use(backend), pytest.raises(MotionError) as caught:
        plate = api.object_pose("plate").position
        api.close_gripper()
        api.move_ee(Point(plate.x + 0.11, plate.y, 0.1))
        api.move_ee(Point(plate.x + 0.11, plate.y, plate.z))
        api.push(Point(-1, 0, 0), 0.3)
        end = api.ee_pose().position
        api.move_ee(Point(end.x, end.y, 0.08))
    assert str(caught.value).endswith(": the arm touches the scene's fixed 'puck_goal'")


def test_a_finger_on_a_bins_wall_does_not_wind_the_hands_target_aside(
    backend: MetaWorldBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # bin-picking's seed 20 lays the cube by its bin's wall, and a finger closes on the wall:
    # the target steered onto the fingertips ran 13 cm aside of the hand, and the lift then tore
    # the hand 9 cm off its line ("the gripper stopped 90 mm short").
    arm = backend.arm
    step, leads = arm.step, []

    def watched(move: np.ndarray, *, budgeted: bool = True) -> None:
        step(move, budgeted=budgeted)
        lead = arm._mocap() - arm._hand()
        leads.append(math.hypot(lead[0], lead[1]))

    monkeypatch.setattr(arm, "step", watched)
    backend.reset({"task": "bin-picking"}, 20)
    with lyra.use(backend):
        api.grasp("block")
    assert max(leads) <= GRIP_LEAD
    # Closed, the target is brought back onto the hand.
    assert norm3(arm._mocap() - arm._hand()) <= 0.001
    # The lift then rises straight; only the cube, held by its edge, slips out.
    backend.reset({"task": "bin-picking"}, 20)
    with lyra.use(backend), pytest.raises(GraspError) as slipped:
        api.pick("block")
    assert str(slipped.value) == "the grasp on 'block' slipped: it did not rise with the gripper"
