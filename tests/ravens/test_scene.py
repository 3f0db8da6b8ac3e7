import math
from pathlib import Path

import numpy as np
import pytest

from envs.ravens.scene import SceneError, _draw_layout, _NoRoom, layout, load_scene, start_state
from envs.ravens.tabletop import Tabletop
from lyra.curriculum import load_curriculum

REPO = Path(__file__).resolve().parents[2]

HOUSE = {
    "objects": [
        {"type": "block", "color": "yellow", "count": 14},
        {"type": "plate", "color": "brown", "size": [0.18, 0.14, 0.01]},
        {"type": "beam", "color": "brown", "size": [0.18, 0.025, 0.025]},
        {"type": "tile", "color": "red", "count": 6, "size": [0.07, 0.06, 0.01]},
    ]
}
JENGA = {"objects": [{"type": "plank", "color": "wood", "count": 9, "size": [0.15, 0.05, 0.03]}]}


@pytest.mark.parametrize("spec", [HOUSE, JENGA], ids=["house", "jenga"])
def test_lyra_scenes_lay_out_without_overlap_on_20_seeds(spec: dict) -> None:
    scene = load_scene(spec)
    for seed in range(20):
        placed = layout(scene, seed)
        assert len(placed) == sum(g.get("count", 1) for g in spec["objects"])
        for i, a in enumerate(placed):
            for b in placed[i + 1 :]:
                apart_x = abs(a.x - b.x) >= (a.size[0] + b.size[0]) / 2
                apart_y = abs(a.y - b.y) >= (a.size[1] + b.size[1]) / 2
                assert apart_x or apart_y, (seed, a.name, b.name)
            assert a.x - a.size[0] / 2 >= 0.3 and a.x + a.size[0] / 2 <= 0.7
            assert a.y - a.size[1] / 2 >= -0.3 and a.y + a.size[1] / 2 <= 0.3


def test_same_seed_same_layout_and_names() -> None:
    scene = load_scene(HOUSE)
    assert layout(scene, 3) == layout(scene, 3)
    assert layout(scene, 3) != layout(scene, 4)
    names = [p.name for p in layout(scene, 0)]
    assert "brown_plate" in names and "yellow_block_13" in names and "red_tile_5" in names


def test_fixed_poses_are_kept() -> None:
    scene = load_scene(
        {
            "objects": [
                {"type": "block", "name": "a", "poses": [{"x": 0.5, "y": 0.1, "yaw_deg": 90}]}
            ]
        }
    )
    (placed,) = layout(scene, 0)
    assert (placed.x, placed.y, placed.z) == (0.5, 0.1, 0.02)
    assert placed.yaw == pytest.approx(1.5707963)


def test_jitter_moves_fixed_poses_within_bounds_by_seed() -> None:
    pile = [{"x": 0.4, "y": 0.2, "z": 0.015 + 0.03 * k} for k in range(3)]
    spec = {"objects": [{"type": "plank", "count": 3, "poses": pile, "jitter": [0.004, 5]}]}
    scene = load_scene(spec)
    runs = [layout(scene, seed) for seed in range(10)]
    assert layout(scene, 3) == runs[3] and runs[3] != runs[4]
    for placed in runs:
        for plank, pose in zip(placed, pile, strict=True):
            assert abs(plank.x - 0.4) <= 0.004 and abs(plank.y - 0.2) <= 0.004
            assert abs(plank.yaw) <= math.radians(5) and plank.z == pose["z"]
    assert max(abs(p.x - 0.4) for placed in runs for p in placed) > 0.003


def test_unknown_object_type_names_the_field() -> None:
    with pytest.raises(SceneError) as caught:
        load_scene({"objects": [{"type": "block"}, {"type": "cube"}]})
    assert str(caught.value) == (
        "scene: objects.1.type: Input should be 'block', 'plate', 'tile', 'beam', 'plank', "
        "'bowl' or 'zone' (got 'cube')"
    )


def test_negative_size_names_the_field() -> None:
    with pytest.raises(SceneError) as caught:
        load_scene({"objects": [{"type": "block", "size": [0.04, -0.01, 0.04]}]})
    assert str(caught.value) == (
        "scene: objects.0.size: Value error, every extent must be positive, got [0.04, -0.01, 0.04]"
    )


def test_jitter_needs_fixed_poses() -> None:
    with pytest.raises(SceneError) as caught:
        load_scene({"objects": [{"type": "plank", "count": 2, "jitter": [0.004, 5]}]})
    assert str(caught.value) == (
        "scene: objects.0: Value error, jitter moves fixed poses: give the group `poses` too"
    )


def test_too_many_objects_names_the_group() -> None:
    scene = load_scene(
        {"objects": [{"type": "plate"}, {"type": "block", "count": 60, "size": [0.06, 0.06, 0.06]}]}
    )
    with pytest.raises(SceneError) as caught:
        layout(scene, 0)
    assert str(caught.value) == (
        "objects.1 (block, gray_block_23): does not fit in the placement area x [0.3, 0.7], "
        "y [-0.3, 0.3] with the 24 objects already placed, in 20 draws of seed 0; use fewer or "
        "smaller objects, or a larger `area`"
    )


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(SceneError) as caught:
        load_scene(
            {"objects": [{"type": "block", "color": "red"}, {"type": "block", "color": "red"}]}
        )
    assert str(caught.value) == (
        "scene: (top level): Value error, objects.1: name 'red_block' is used twice; give the "
        "group a `name`"
    )


def test_yaml_file_with_a_scene_key(tmp_path: Path) -> None:
    path = tmp_path / "scene.yaml"
    path.write_text("scene:\n  objects:\n    - {type: bowl, color: green}\n")
    assert load_scene(path).objects[0].type == "bowl"


def test_malformed_yaml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("objects: [\n")
    with pytest.raises(SceneError) as caught:
        load_scene(path)
    assert str(caught.value).startswith(f"{path}: not valid YAML: ")


def test_the_start_state_is_what_a_reset_leaves(table: Tabletop) -> None:
    scene = load_scene(
        {
            "objects": [
                {"type": "bowl", "color": "gray"},
                {"type": "block", "color": "red", "count": 3, "random_yaw": True},
                {"type": "plank", "color": "wood", "poses": [{"x": 0.5, "y": 0.2, "yaw_deg": 30}]},
            ]
        }
    )
    start = start_state(scene, 7)
    table.reset(scene, 7)
    after = table.world_state()
    assert sorted(start) == sorted(after)
    for name, state in after.items():
        assert state.pose.position.distance_to(start[name].pose.position) < 1e-4
        assert abs(math.remainder(state.pose.yaw - start[name].pose.yaw, math.pi / 2)) < 1e-3
        assert (state.kind, state.color, state.size) == (
            start[name].kind,
            start[name].color,
            start[name].size,
        )


@pytest.mark.slow
def test_the_house_lays_out_on_every_seed_from_0_to_999() -> None:
    """Greedy placement leaves no room for a part on 63 of these seeds' first draws (seed 101
    among them); such a seed draws again until it fits, and a seed that fitted keeps its draw."""
    curriculum = load_curriculum(REPO / "curricula" / "ravens" / "house.yaml")
    for task in curriculum.tasks:
        if task.id not in ("stage-house-parts", "house"):
            continue
        scene = task.scene
        assert scene is not None
        objects = len(layout(scene, 0))
        assert all(len(layout(scene, seed)) == objects for seed in range(1000))
        with pytest.raises(_NoRoom):
            _draw_layout(scene, np.random.default_rng(101))
        assert layout(scene, 0) == _draw_layout(scene, np.random.default_rng(0))
