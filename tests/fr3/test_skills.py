"""The tabletop's skills on the FR3 in franky-sim: the same ``skills/`` files, unchanged.

Each plan runs through the episode runner (confined, as a learnt plan runs) against franky-sim,
and the tabletop's predicates judge the cubes where franky-sim has them at the end.
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("franky", reason="the fr3 tests need franky: pip install '.[fr3]'")
pytest.importorskip("franky_sim", reason="the fr3 tests need franky-sim: pip install '.[fr3]'")

from envs.fr3.backend import FR3Backend
from envs.fr3.scene import FR3Scene, from_tabletop
from envs.ravens.scene import load_scene, start_state
from lyra.curriculum import load_curriculum
from lyra.episode import run_episode
from lyra.errors import LayoutError
from lyra.examples import load_example
from tests.fr3.conftest import REPO

EDGE = 0.05  # the FR3 tests' cubes
GAP = 0.025  # a finger (16 mm thick, opened 4 mm clear) fits between neighbours; 5 mm would not


def staged(count: int, zones: list[dict[str, object]] | None = None) -> FR3Scene:
    """``count`` 5 cm cubes waiting in two rows near the robot, 4 cm apart."""
    spots = [(x, y) for x in (0.33, 0.42) for y in (0.27, 0.18, 0.09, 0.0, -0.09, -0.18, -0.27)]
    cubes = [
        {"name": f"block_{i}", "color": "yellow", "kind": "block", "position": spots[i]}
        for i in range(count)
    ]
    return FR3Scene.model_validate({"objects": cubes, "zones": zones or []})


@pytest.mark.slow
def test_stack_tower_runs_unchanged_and_the_tower_stands(fr3: FR3Backend) -> None:
    names = [f"block_{i}" for i in range(4)]
    plan = f"from skills.stack_tower import stack_tower\n\nstack_tower({names})\n"
    run = run_episode(
        fr3, staged(4), 0, plan, skills_root=REPO / "skills", success=[{"stacked": names}]
    )
    assert run.ok, run.describe()
    state = fr3.world_state()
    # The base stayed where it waited; each cube rests 5 cm over the one below.
    assert state["block_0"].pose.position.as_array() == pytest.approx(
        (0.33, 0.27, 0.025), abs=0.005
    )
    for level, name in enumerate(names):
        assert state[name].pose.position.z == pytest.approx(EDGE * (level + 0.5), abs=0.004)


@pytest.mark.slow
def test_build_pyramid_runs_unchanged_on_a_site_and_passes_its_predicate(fr3: FR3Backend) -> None:
    site = {"name": "site", "position": (0.58, 0.0), "size": (0.24, 0.18)}
    plan = (
        "from skills.build_pyramid import build_pyramid\n\n"
        "build_pyramid(\n"
        "    [['block_0', 'block_1', 'block_2'], ['block_3', 'block_4', 'block_5']],\n"
        "    [('block_6', 'block_0', 'block_1'), ('block_7', 'block_4', 'block_5')],\n"
        f"    'site',\n    {GAP},\n)\n"
    )
    pitch = EDGE + GAP
    grid = {1: (0, -1), 2: (0, -2), 3: (1, 0), 4: (1, -1), 5: (1, -2)}
    success = [
        {"within_distance": {"name": "block_1", "other": "site", "distance": 0.04}},
        *(
            {
                "offset": {
                    "name": f"block_{i}",
                    "reference": "block_0",
                    "dx": row * pitch,
                    "dy": column * pitch,
                    "tolerance": 0.005,
                }
            }
            for i, (row, column) in grid.items()
        ),
        *(
            {"on_top": {"upper": upper, "lower": lower}}
            for upper, lower in (
                ("block_6", "block_0"),
                ("block_6", "block_1"),
                ("block_7", "block_4"),
                ("block_7", "block_5"),
            )
        ),
    ]
    run = run_episode(fr3, staged(8, [site]), 0, plan, skills_root=REPO / "skills", success=success)
    assert run.ok, run.describe()
    # The bottom layer is centred on the site, within a few millimetres.
    state = fr3.world_state()
    bottom = [state[f"block_{i}"].pose.position for i in range(6)]
    assert sum(p.x for p in bottom) / 6 == pytest.approx(0.58, abs=0.005)
    assert sum(p.y for p in bottom) / 6 == pytest.approx(0.0, abs=0.005)


def test_a_tabletop_scene_lies_on_the_fr3_as_the_tabletop_lays_it_out(fr3: FR3Backend) -> None:
    # The first structure task's: a site zone and four 4 cm blocks at random in the staging area.
    scene = load_curriculum(REPO / "curricula/ravens/structures.yaml").tasks[0].scene
    fr3.reset(scene, 3)
    expected, state = start_state(scene, 3), fr3.world_state()
    assert sorted(state) == sorted(expected) == ["block_0", "block_1", "block_2", "block_3", "site"]
    for name, want in expected.items():
        got = state[name]
        assert (got.kind, got.color, got.size) == (want.kind, want.color, want.size)
        assert got.pose.position.distance_to(want.pose.position) < 0.002
        turn = (got.pose.yaw - want.pose.yaw + math.pi / 4) % (math.pi / 2) - math.pi / 4
        assert abs(turn) < 0.01


def test_a_tabletop_object_with_no_fr3_counterpart_is_refused_by_name() -> None:
    scene = load_scene({"objects": [{"type": "plate", "name": "plate", "color": "white"}]})
    with pytest.raises(LayoutError) as refused:
        from_tabletop(scene, 0)
    assert str(refused.value) == (
        "plate: the fr3 backend lays out cubes up to 7.5 cm (blocks with equal sides) and "
        "zones, not a plate of 18 x 14 x 1 cm"
    )


@pytest.mark.slow
def test_the_pyramid_taught_for_the_fr3_builds_in_franky_sim_on_a_seed_it_never_saw(
    fr3: FR3Backend,
) -> None:
    # curricula/fr3/structures.yaml's last plan, as taught on the tabletop: rows 25 mm apart
    # for the fingers, blocks within a row 5 mm apart so the top blocks rest on both below.
    task = load_curriculum(REPO / "curricula/fr3/structures.yaml").tasks[3]
    example = load_example(REPO / "examples/fr3_structures_three_by_two_pyramid_close_rows.yaml")
    assert example.task == f"fr3-structures/{task.id}"
    run = run_episode(
        fr3, task.scene, 101, example.code, skills_root=REPO / "skills", success=task.success
    )
    assert run.ok, run.describe()
    state = fr3.world_state()
    for upper, lower in (("block_6", "block_0"), ("block_7", "block_4")):
        top, below = state[upper].pose.position, state[lower].pose.position
        # Each top block bridges the 5 mm gap beside the block it starts from, one level up.
        assert top.z - below.z == pytest.approx(0.04, abs=0.003)
        assert abs(top.y - below.y) == pytest.approx(0.0225, abs=0.005)
