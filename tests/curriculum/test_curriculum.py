from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from envs.ravens.scene import layout
from lyra.curriculum import (
    CurriculumError,
    Progress,
    Task,
    load_curricula,
    load_curriculum,
    next_task,
)
from lyra.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]

VALID = """\
name: demo
backend: ravens
description: Two small tasks.
tasks:
  - id: red-on-blue
    instruction: Put the red block on the blue block.
    scene:
      objects:
        - {type: block, color: red}
        - {type: block, color: blue}
    skill: {name: put_on, new: true}
    seeds: [0, 1]
    success:
      - on_top: {upper: red_block, lower: blue_block}
  - id: tower
    instruction: Stack the blocks.
    setup: Three blocks, red, green and blue, lie apart on the table.
    skill: {name: stack_tower, extend: true}
    success:
      - stacked: [red_block, green_block, blue_block]
    hold_seconds: 1.5
    feedback: [Start from the bottom.]
    hints: [put_on]
"""


def write(tmp_path: Path, text: str, name: str = "demo.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def error_of(path: Path) -> str:
    with pytest.raises(CurriculumError) as caught:
        load_curriculum(path)
    return str(caught.value)


def test_valid_curriculum_loads_with_defaults(tmp_path: Path) -> None:
    curriculum = load_curriculum(write(tmp_path, VALID))
    assert (curriculum.name, curriculum.backend) == ("demo", "ravens")
    first, second = curriculum.tasks
    assert first.seeds == [0, 1]
    assert (first.hold_seconds, first.feedback, first.hints, first.setup) == (0.0, [], [], None)
    assert first.skill.name == "put_on" and first.skill.new and not first.skill.extend
    assert first.scene is not None and [g.color for g in first.scene.objects] == ["red", "blue"]
    assert second.scene is None and second.setup is not None
    assert (second.seeds, second.hold_seconds, second.skill.extend) == ([0], 1.5, True)
    assert (second.feedback, second.hints) == (["Start from the bottom."], ["put_on"])
    assert curriculum.task("tower") is second


def test_task_predicate_judges_a_world_state(tmp_path: Path) -> None:
    from lyra.embodiment import ObjectState
    from lyra.geometry import Point, Pose, Size

    task = load_curriculum(write(tmp_path, VALID)).tasks[0]
    size = Size(0.04, 0.04, 0.04)
    state = {
        "blue_block": ObjectState(
            "blue_block", "block", "blue", Pose.from_yaw(Point(0.5, 0, 0.02)), size
        ),
        "red_block": ObjectState(
            "red_block", "block", "red", Pose.from_yaw(Point(0.5, 0, 0.06)), size
        ),
    }
    assert task.predicate()(state).ok
    state["red_block"] = ObjectState(
        "red_block", "block", "red", Pose.from_yaw(Point(0.4, 0, 0.02)), size
    )
    assert task.predicate()(state).reason == "'red_block' is not over 'blue_block'"


def test_unknown_field(tmp_path: Path) -> None:
    path = write(tmp_path, VALID.replace("    hold_seconds: 1.5", "    hold_secs: 1.5"))
    assert error_of(path) == f"{path}:21: tasks.1.hold_secs: Extra inputs are not permitted"


def test_wrong_type_names_the_line_of_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, VALID.replace("seeds: [0, 1]", "seeds: zero"))
    assert error_of(path) == f"{path}:12: tasks.0.seeds: Input should be a valid list"


def test_error_inside_the_scene_names_the_nested_field(tmp_path: Path) -> None:
    path = write(tmp_path, VALID.replace("{type: block, color: blue}", "{type: cube, color: blue}"))
    assert error_of(path) == (
        f"{path}:10: tasks.0.scene.objects.1.type: Input should be 'block', 'plate', 'tile', "
        "'beam', 'plank', 'bowl' or 'zone'"
    )


def test_missing_field_points_at_its_task(tmp_path: Path) -> None:
    path = write(tmp_path, VALID.replace("    instruction: Stack the blocks.\n", ""))
    assert error_of(path) == f"{path}:15: tasks.1.instruction: Field required"


def test_unknown_predicate(tmp_path: Path) -> None:
    path = write(tmp_path, VALID.replace("on_top: {upper", "over: {upper"))
    assert error_of(path) == (
        f"{path}:13: tasks.0.success: unknown predicate 'over': use one of aligned, area_clear, "
        "at_point, eventually, fills, inside, joint_value, next_to, offset, on_table, on_top, "
        "rotated_by, signal, stacked, within_distance"
    )


def test_predicate_with_wrong_arguments(tmp_path: Path) -> None:
    path = write(tmp_path, VALID.replace("{upper: red_block, lower", "{top: red_block, lower"))
    assert error_of(path) == (
        f"{path}:13: tasks.0.success: predicate 'on_top': missing a required argument: "
        "'upper'; it takes upper, lower, tolerance"
    )


def test_duplicate_task_id(tmp_path: Path) -> None:
    path = write(tmp_path, VALID.replace("id: tower", "id: red-on-blue"))
    assert error_of(path) == (
        f"{path}:15: tasks.1.id: task id 'red-on-blue' is already used by tasks.0"
    )


def test_both_scene_and_setup(tmp_path: Path) -> None:
    text = VALID.replace("    scene:\n", "    setup: Two blocks.\n    scene:\n", 1)
    path = write(tmp_path, text)
    assert error_of(path) == (
        f"{path}:5: tasks.0: give the scene either inline (`scene`) or in words (`setup`), not both"
    )


def test_neither_scene_nor_setup(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        VALID.replace(
            "    setup: Three blocks, red, green and blue, lie apart on the table.\n", ""
        ),
    )
    assert error_of(path) == (
        f"{path}:15: tasks.1: give the scene either inline (`scene`) or in words (`setup`), "
        "not both"
    )


def test_new_and_extend_together(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        VALID.replace("{name: put_on, new: true}", "{name: put_on, new: true, extend: true}"),
    )
    assert error_of(path) == (
        f"{path}:11: tasks.0.skill: a skill is either `new: true` or `extend: true`, not both"
    )


def test_every_problem_is_reported(tmp_path: Path) -> None:
    text = VALID.replace("backend: ravens", "backend: mujoco").replace(
        "seeds: [0, 1]", "seeds: [a]"
    )
    path = write(tmp_path, text)
    assert error_of(path).splitlines() == [
        f"{path}:2: backend: no backend named 'mujoco'; registered backends: ravens",
        f"{path}:12: tasks.0.seeds.0: Input should be a valid integer, unable to parse string "
        "as an integer",
    ]


def test_bad_yaml_names_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, VALID.replace("seeds: [0, 1]", "seeds: [0, 1"))
    assert error_of(path) == f"{path}:13:12: expected ',' or ']', but got ':'"


def test_yaml_that_is_not_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "- just\n- a list\n")
    assert error_of(path) == (
        f"{path}:1: a curriculum is a mapping with name, backend, description and tasks"
    )


def test_load_curricula_reads_a_folder_recursively(tmp_path: Path) -> None:
    (tmp_path / "ravens").mkdir()
    write(tmp_path, VALID, "ravens/b.yaml")
    write(tmp_path, VALID.replace("name: demo", "name: other"), "a.yaml")
    assert [c.name for c in load_curricula(tmp_path)] == ["other", "demo"]


def test_load_curricula_refuses_two_files_with_one_name(tmp_path: Path) -> None:
    first = write(tmp_path, VALID, "a.yaml")
    second = write(tmp_path, VALID, "b.yaml")
    with pytest.raises(CurriculumError) as caught:
        load_curricula(tmp_path)
    assert str(caught.value) == f"{second}:1: name: 'demo' is also the name of {first}"


def test_progress_round_trip_and_next_task(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    curriculum = load_curriculum(write(tmp_path, VALID))
    progress = Progress.load(workspace, "demo")
    assert (progress.accepted, next_task(curriculum, progress)) == ({}, curriculum.tasks[0])
    progress.accept("red-on-blue", "put_the_red_block_on_the_blue_block")
    path = progress.save(workspace)
    assert path == tmp_path / ".lyra" / "progress" / "demo.json"
    assert json.loads(path.read_text()) == {
        "curriculum": "demo",
        "accepted": {"red-on-blue": "put_the_red_block_on_the_blue_block"},
    }
    assert [p.name for p in path.parent.iterdir()] == ["demo.json"]
    reloaded = Progress.load(workspace, "demo")
    assert reloaded == progress
    assert next_task(curriculum, reloaded) is curriculum.tasks[1]
    reloaded.accept("tower", "stack_the_blocks")
    assert next_task(curriculum, reloaded) is None


def test_next_task_skips_only_accepted_tasks(tmp_path: Path) -> None:
    curriculum = load_curriculum(write(tmp_path, VALID))
    progress = Progress(curriculum="demo", accepted={"tower": "x"})
    assert next_task(curriculum, progress) is curriculum.tasks[0]


def test_shipped_curricula_load_and_lay_out_for_every_seed() -> None:
    curricula = load_curricula(REPO / "curricula")
    assert {c.name for c in curricula} >= {"ravens-basics", "ravens-variations"}
    basics = next(c for c in curricula if c.name == "ravens-basics")
    assert [t.id for t in basics.tasks] == [
        "red-on-blue",
        "red-next-to-blue",
        "three-block-tower",
        "shifted-tower",
    ]
    tasks: list[Task] = [t for c in curricula for t in c.tasks]
    for task in tasks:
        assert task.predicate() is not None
        if task.scene is None:
            continue
        for seed in task.seeds:
            names = {placed.name for placed in layout(task.scene, seed)}
            assert names >= _named_objects(task.success), task.id


def _named_objects(success: list[dict[str, object]]) -> set[str]:
    """Object names a success spec mentions (values ending in _block, _zone, or block_N)."""
    names: set[str] = set()
    for item in success:
        for args in item.values():
            values = (
                args.values()
                if isinstance(args, dict)
                else args
                if isinstance(args, list)
                else [args]
            )
            names.update(v for v in values if isinstance(v, str))
    return names
