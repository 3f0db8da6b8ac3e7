"""Physics tests: every one steps the pybullet simulation and checks where things ended up."""

import math

import numpy as np
import pybullet
import pytest

import lyra
from envs.ravens.bench import SITE, STAGING
from envs.ravens.predicates import stacked
from envs.ravens.scene import load_scene
from envs.ravens.tabletop import Tabletop
from lyra.api import (
    move_ee,
    object_names,
    object_pose,
    pick,
    place,
    put_first_on_second,
    relative_point,
)
from lyra.errors import GraspError, UnknownObjectError, UnreachablePoseError
from lyra.geometry import Point, Pose


def test_pick_and_place_lands_within_5_mm(two_blocks: Tabletop) -> None:
    target = Point(0.5, 0.05, 0.02)
    with lyra.use(two_blocks):
        pick("red_block")
        place(target, yaw_deg=30.0)
    pose = two_blocks.object_pose("red_block")
    assert pose.position.distance_to(target) < 0.005
    # Boxes look the same after a half turn, so the yaw is compared modulo 180 degrees.
    error = (pose.yaw - math.radians(30.0) + math.pi / 2) % math.pi - math.pi / 2
    assert math.degrees(error) == pytest.approx(0.0, abs=1.0)
    assert two_blocks.held_object() is None


def test_put_on_object_lands_centred_on_its_top(two_blocks: Tabletop) -> None:
    with lyra.use(two_blocks):
        put_first_on_second("red_block", "blue_block")
    red, blue = two_blocks.object_pose("red_block"), two_blocks.object_pose("blue_block")
    assert math.hypot(red.position.x - blue.position.x, red.position.y - blue.position.y) < 0.005
    assert red.position.z == pytest.approx(blue.position.z + 0.04, abs=0.003)


def test_put_on_occupied_target_stacks_on_top(table: Tabletop) -> None:
    table.reset(
        load_scene({"objects": [{"type": "block", "color": c} for c in ("red", "green", "blue")]}),
        3,
    )
    spot = Point(0.5, 0.0, 0.0)
    with lyra.use(table):
        put_first_on_second("blue_block", spot)
        put_first_on_second("green_block", spot)
        put_first_on_second("red_block", "blue_block")
    assert stacked(table.world_state(), ["blue_block", "green_block", "red_block"])
    assert table.object_pose("red_block").position.z == pytest.approx(0.10, abs=0.003)


def test_next_to_with_a_5_mm_gap(two_blocks: Tabletop) -> None:
    with lyra.use(two_blocks):
        target = relative_point("blue_block", 0.045, 90.0)
        put_first_on_second("red_block", target)
    red, blue = two_blocks.object_pose("red_block"), two_blocks.object_pose("blue_block")
    gap = (red.position.y - blue.position.y) - 0.04
    assert gap == pytest.approx(0.005, abs=0.002)
    assert red.position.x == pytest.approx(blue.position.x, abs=0.002)


def test_the_hold_simulates_what_was_asleep(two_blocks: Tabletop) -> None:
    # Asleep in mid-air, a block stays there for as long as nothing wakes it: a hold that let
    # it sleep would find any structure standing.
    sim, uid = two_blocks.sim, two_blocks.bodies["red_block"].uid
    sim.resetBasePositionAndOrientation(uid, [0.45, -0.1, 0.2], [0, 0, 0, 1])
    sim.changeDynamics(uid, -1, activationState=pybullet.ACTIVATION_STATE_SLEEP)
    for _ in range(60):
        two_blocks._step()
    assert two_blocks.object_pose("red_block").position.z > 0.199
    two_blocks.hold(0.5)
    assert two_blocks.object_pose("red_block").position.z == pytest.approx(0.02, abs=0.001)


def test_the_hold_keeps_a_slow_slide_going_past_two_seconds(two_blocks: Tabletop) -> None:
    # Bullet puts a body that moves slowly (here 5 mm/s) to sleep after 2 s: a creeping
    # structure would be frozen part-way through a 5 s hold, and pass.
    sim, uid = two_blocks.sim, two_blocks.bodies["red_block"].uid
    sim.changeDynamics(uid, -1, lateralFriction=0.0)
    sim.resetBaseVelocity(uid, [0.005, 0.0, 0.0])
    start = two_blocks.object_pose("red_block").position.x
    two_blocks.hold(4.0)
    assert two_blocks.object_pose("red_block").position.x - start == pytest.approx(0.02, abs=0.002)


def test_a_closed_table_does_not_reach_the_next_ones_world() -> None:
    # pybullet hands a closed client's id to the next client made.
    first = Tabletop()
    first.sim.getNumBodies()
    first.close()
    second = Tabletop()
    try:
        assert not first.sim.isConnected()
        first.close()  # again is fine
        with pytest.raises(pybullet.error):
            first.sim.getNumBodies()
    finally:
        second.close()


def test_a_block_the_arm_hovers_over_stays_asleep(two_blocks: Tabletop) -> None:
    # Bullet wakes whatever the moving arm's widened bounding boxes overlap; widened by its
    # default 2 cm, they woke every structure the arm worked beside, at several times the cost
    # of a step. Asleep, a body's velocity is exactly zero.
    blue = two_blocks.object_pose("blue_block").position
    with lyra.use(two_blocks):
        move_ee(Pose(blue + Point(0.0, 0.0, 0.035)))  # the tip 15 mm above the block's top
    assert two_blocks.sim.getBaseVelocity(two_blocks.bodies["blue_block"].uid) == (
        (0.0, 0.0, 0.0),
        (0.0, 0.0, 0.0),
    )


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(20))
def test_ten_block_tower_still_stands_5_s_later(table: Tabletop, seed: int) -> None:
    spec = {"objects": [SITE, {"type": "block", "color": "yellow", "count": 10}], "area": STAGING}
    table.reset(load_scene(spec), seed)
    with lyra.use(table):
        below = "site"
        for block in object_names(kind="block"):
            put_first_on_second(block, below)
            below = block
    for _ in range(round(5.0 / table.config.time_step)):
        table.sim.stepSimulation()
    blocks = table.object_names(kind="block")
    base, top = table.object_pose(blocks[0]).position, table.object_pose(blocks[-1]).position
    assert math.hypot(top.x - base.x, top.y - base.y) < 0.01
    assert top.z == pytest.approx(0.38, abs=0.005)
    assert stacked(table.world_state(), blocks)


def test_same_seed_gives_the_same_final_poses() -> None:
    scene = load_scene(
        {
            "objects": [
                {"type": "block", "color": "red"},
                {"type": "block", "color": "blue"},
                {"type": "plate", "color": "brown"},
            ]
        }
    )
    finals = []
    for _ in range(2):
        table = Tabletop()
        table.reset(scene, seed=7)
        with lyra.use(table):
            put_first_on_second("red_block", "blue_block")
            put_first_on_second("brown_plate", Point(0.4, 0.2, 0.0))
        finals.append(
            np.array(
                [
                    [*table.object_pose(n).position.as_array(), *table.object_pose(n).orientation]
                    for n in table.object_names()
                ]
            )
        )
        table.close()
    assert np.max(np.abs(finals[0] - finals[1])) < 1e-6


def test_arm_refuses_to_sweep_through_a_tall_stack(table: Tabletop) -> None:
    # A stack between the robot and the next block: the forearm would pass through it.
    table.reset(
        load_scene(
            {
                "objects": [
                    {
                        "type": "block",
                        "color": "yellow",
                        "count": 8,
                        "name": "tower",
                        "poses": [{"x": 0.55, "y": 0.0, "z": 0.02 + 0.04 * i} for i in range(8)],
                    },
                    {"type": "block", "color": "red", "poses": [{"x": 0.72, "y": 0.0}]},
                ]
            }
        ),
        0,
    )
    with lyra.use(table), pytest.raises(lyra.MotionError) as caught:
        pick("red_block")
    assert str(caught.value) == (
        "the arm touched 'tower_7' (link 4) on its way to (0.720, 0.000, 0.050) and stopped; "
        "the arm reaches over whatever stands between its base at (0, 0, 0) and the target, so "
        "build tall stacks farther from the base than the objects still to move, or to one side"
    )


class TestErrorMessages:
    def test_unknown_object_lists_known_and_closest(self, two_blocks: Tabletop) -> None:
        with lyra.use(two_blocks), pytest.raises(UnknownObjectError) as caught:
            object_pose("red_blok")
        assert str(caught.value) == (
            "unknown object 'red_blok'. Did you mean 'red_block'? Known objects: blue_block, red_block"
        )

    def test_unknown_object_without_close_match(self, two_blocks: Tabletop) -> None:
        with lyra.use(two_blocks), pytest.raises(UnknownObjectError) as caught:
            pick("kettle")
        assert str(caught.value) == "unknown object 'kettle'. Known objects: blue_block, red_block"

    def test_place_outside_the_workspace_names_the_bound(self, two_blocks: Tabletop) -> None:
        with lyra.use(two_blocks):
            pick("red_block")
            with pytest.raises(UnreachablePoseError) as caught:
                place(Point(0.95, 0.0, 0.02))
        assert str(caught.value) == (
            "cannot reach the place pose for 'red_block' at (0.950, 0.000, 0.020): x=0.950 is "
            "150.0 mm beyond the workspace's upper x bound 0.800; targets must lie in "
            "x [0.15, 0.80], y [-0.45, 0.45], z [0.00, 0.60]"
        )
        assert two_blocks.held_object() == "red_block"

    def test_out_of_reach_inside_the_box(self, two_blocks: Tabletop) -> None:
        with lyra.use(two_blocks), pytest.raises(UnreachablePoseError) as caught:
            lyra.api.move_ee(Point(0.78, 0.44, 0.0))
        message = str(caught.value)
        assert message.startswith(
            "cannot reach the tool target (0.780, 0.440, 0.000): out of the arm's reach (the closest it gets is "
        )
        assert message.endswith(" mm away); move the target closer to the robot base at (0, 0, 0)")

    def test_pick_while_holding(self, two_blocks: Tabletop) -> None:
        with lyra.use(two_blocks):
            pick("red_block")
            with pytest.raises(GraspError) as caught:
                pick("blue_block")
        assert (
            str(caught.value) == "already holding 'red_block': place it before picking 'blue_block'"
        )

    def test_place_with_nothing_held(self, two_blocks: Tabletop) -> None:
        with lyra.use(two_blocks), pytest.raises(GraspError) as caught:
            place(Point(0.5, 0.0, 0.02))
        assert str(caught.value) == "nothing is held: pick an object before placing it"

    def test_pick_from_under_a_stack(self, two_blocks: Tabletop) -> None:
        with lyra.use(two_blocks):
            put_first_on_second("red_block", "blue_block")
            with pytest.raises(GraspError) as caught:
                pick("blue_block")
        assert (
            str(caught.value)
            == "cannot pick 'blue_block': 'red_block' lies on top of it; move it first"
        )

    def test_put_on_itself(self, two_blocks: Tabletop) -> None:
        with lyra.use(two_blocks), pytest.raises(GraspError) as caught:
            put_first_on_second("red_block", "red_block")
        assert str(caught.value) == "cannot put 'red_block' on itself: name a different target"

    def test_no_active_embodiment(self) -> None:
        with pytest.raises(lyra.NoEmbodimentError) as caught:
            object_names()
        assert str(caught.value) == (
            "no robot is active: run skills inside `with lyra.use(env):` (or through the sandbox, "
            "which does this for you)"
        )

    def test_pick_a_zone(self, table: Tabletop) -> None:
        table.reset(load_scene({"objects": [SITE]}), 0)
        with lyra.use(table), pytest.raises(GraspError) as caught:
            pick("site")
        assert str(caught.value) == "'site' is a zone marked on the table and cannot be picked"


def test_pose_values_round_trip_through_the_facade(two_blocks: Tabletop) -> None:
    with lyra.use(two_blocks):
        pose = object_pose("blue_block")
        point = relative_point(pose.position, 0.1, 90.0, dz=0.01)
    assert isinstance(pose, Pose)
    assert point.x == pytest.approx(0.55, abs=1e-3)
    assert point.y == pytest.approx(0.22, abs=1e-3)
    assert point.z == pytest.approx(0.03, abs=1e-3)


def test_an_unreachable_destination_is_refused_before_picking(two_blocks: Tabletop) -> None:
    with lyra.use(two_blocks), pytest.raises(UnreachablePoseError) as caught:
        put_first_on_second("red_block", Point(0.5, 0.6, 0.0))
    assert str(caught.value) == (
        "cannot reach the destination of 'red_block' at (0.500, 0.600, 0.000): y=0.600 is "
        "150.0 mm beyond the workspace's upper y bound 0.450; targets must lie in "
        "x [0.15, 0.80], y [-0.45, 0.45], z [0.00, 0.60]"
    )
    assert two_blocks.held_object() is None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_2x2x2_cube_keeps_every_block_in_place(table: Tabletop, seed: int) -> None:
    # Placing a top block beside another top block once clipped it: the arm's lag cut the
    # corner between crossing over and descending.
    scene = {
        "objects": [
            {
                "type": "zone",
                "name": "site",
                "size": [0.16, 0.16, 0.001],
                "poses": [{"x": 0.6, "y": 0.0}],
            },
            {"type": "block", "color": "yellow", "count": 8, "name": "block"},
        ],
        "area": {"x": [0.3, 0.48], "y": [-0.3, 0.3]},
    }
    table.reset(load_scene(scene), seed)
    pitch = 0.045
    spots = [(-1, 1), (-1, -1), (1, 1), (1, -1)] * 2
    with lyra.use(table):
        for i, (sx, sy) in enumerate(spots):
            put_first_on_second(
                f"block_{i}", Point(0.6 + sx * pitch / 2, sy * pitch / 2, 0.0), yaw_deg=0.0
            )
    for i, (sx, sy) in enumerate(spots):
        p = table.object_pose(f"block_{i}").position
        assert math.hypot(p.x - (0.6 + sx * pitch / 2), p.y - sy * pitch / 2) < 0.003, f"block_{i}"
        assert p.z == pytest.approx(0.02 if i < 4 else 0.06, abs=0.002)
