from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from lyra.curriculum import (
    CurriculumError,
    Progress,
    Task,
    load_curricula,
    load_curriculum,
    pending_tasks,
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
    assert error_of(path) == (
        f"{path}:21: tasks.1.hold_secs: Extra inputs are not permitted (did you mean "
        "'hold_seconds'?)"
    )


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
        "at_closest, at_point, between, eventually, fills, inside, inside_closest, joint_value, "
        "next_to, offset, on_table, on_top, rotated_by, side_of, signal, stacked, within_distance"
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
        f"{path}:2: backend: no backend named 'mujoco'; registered backends: fr3, kitchen, metaworld, ravens",
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


def test_progress_round_trip_and_pending_tasks(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    curriculum = load_curriculum(write(tmp_path, VALID))
    progress = Progress.load(workspace, "demo")
    assert (progress.accepted, pending_tasks(curriculum, progress)) == ({}, curriculum.tasks)
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
    assert pending_tasks(curriculum, reloaded) == curriculum.tasks[1:]
    reloaded.accept("tower", "stack_the_blocks")
    assert pending_tasks(curriculum, reloaded) == []


def test_pending_tasks_skip_only_accepted_tasks(tmp_path: Path) -> None:
    curriculum = load_curriculum(write(tmp_path, VALID))
    progress = Progress(curriculum="demo", accepted={"tower": "x"})
    assert pending_tasks(curriculum, progress) == curriculum.tasks[:1]


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
            names = set(task.spec().scene_objects(task.scene, seed) or [])
            # The objects its predicates name (a joint, as joint_value's, is not one).
            assert names >= task.predicate().objects, task.id


# -- malformed curricula: each refused at load, naming file, line and field ----------------

# (what the person wrote instead, what lyra says), as replacements in VALID.
MALFORMED = {
    "duplicate_success_key": (
        "    success:\n      - on_top: {upper: red_block, lower: blue_block}\n",
        "    success:\n      - on_top: {upper: red_block, lower: blue_block}\n    success:\n      - on_table: red_block\n",
        "{path}:15: tasks.0.success: the key 'success' is given twice (also on line 13); keep one, or the first would be silently dropped",
    ),
    "an_anchor": (
        "    seeds: [0, 1]",
        "    seeds: &both [0, 1]",
        "{path}:12: YAML anchors and aliases (&name, *name) are not allowed: write each value out",
    ),
    "an_alias": (
        "    hold_seconds: 1.5",
        "    hold_seconds: 1.5\n    seeds: *both",
        "{path}:22: YAML anchors and aliases (&name, *name) are not allowed: write each value out",
    ),
    "alias_bomb": (
        "tasks:\n",
        "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ntasks:\n",
        "{path}:4: YAML anchors and aliases (&name, *name) are not allowed: write each value out",
    ),
    "negative_seed": (
        "seeds: [0, 1]",
        "seeds: [0, -1]",
        "{path}:12: tasks.0.seeds.1: Input should be greater than or equal to 0",
    ),
    "seed_too_large": (
        "seeds: [0, 1]",
        "seeds: [4294967296]",
        "{path}:12: tasks.0.seeds.0: Input should be less than or equal to 4294967295",
    ),
    "no_seeds": (
        "seeds: [0, 1]",
        "seeds: []",
        "{path}:12: tasks.0.seeds: List should have at least 1 item after validation, not 0",
    ),
    "a_million_second_hold": (
        "    hold_seconds: 1.5",
        "    hold_seconds: 1000000",
        "{path}:21: tasks.1.hold_seconds: Input should be less than or equal to 60",
    ),
    "negative_hold": (
        "    hold_seconds: 1.5",
        "    hold_seconds: -1",
        "{path}:21: tasks.1.hold_seconds: Input should be greater than or equal to 0",
    ),
    "negative_tolerance": (
        "on_top: {upper: red_block, lower: blue_block}",
        "on_top: {upper: red_block, lower: blue_block, tolerance: -1}",
        "{path}:13: tasks.0.success: predicate 'on_top': tolerance must be 0 or more, got -1: a negative one can never be met",
    ),
    "negative_gap": (
        "on_top: {upper: red_block, lower: blue_block}",
        "next_to: {a: red_block, b: blue_block, gap: -0.01}",
        "{path}:13: tasks.0.success: predicate 'next_to': gap must be 0 or more, got -0.01: a negative one can never be met",
    ),
    "unregistered_backend": (
        "backend: ravens",
        "backend: ur5",
        "{path}:2: backend: no backend named 'ur5'; registered backends: fr3, kitchen, metaworld, ravens",
    ),
    "unregistered_task_backend": (
        "  - id: tower\n",
        "  - id: tower\n    backend: ur5\n",
        "{path}:16: tasks.1.backend: no backend named 'ur5'; registered backends: fr3, kitchen, metaworld, ravens",
    ),
    "scene_that_cannot_be_laid_out": (
        "        - {type: block, color: blue}",
        "        - {type: block, color: blue, count: 100, size: [0.2, 0.2, 0.04]}",
        "{path}:7: tasks.0.scene: on seed 0: objects.1 (block, blue_block_2): does not fit in the placement area x [0.3, 0.7], y [-0.3, 0.3] with the 2 objects already placed, in 20 draws of seed 0; use fewer or smaller objects, or a larger `area`",
    ),
    "predicate_names_a_missing_object": (
        "{upper: red_block, lower: blue_block}",
        "{upper: green_block, lower: blue_block}",
        "{path}:13: tasks.0.success: the predicate names 'green_block', which the scene does not have (on seed 0 it has blue_block, red_block)",
    ),
    "eventually_names_a_missing_object": (
        "      - on_top: {upper: red_block, lower: blue_block}",
        "      - eventually: [{on_top: {upper: red_block, lower: blue_cube}}]",
        "{path}:13: tasks.0.success: the predicate names 'blue_cube', which the scene does not have (on seed 0 it has blue_block, red_block)",
    ),
    "unknown_key_in_a_scene_object": (
        "{type: block, color: red}",
        "{type: block, colour: red}",
        "{path}:9: tasks.0.scene.objects.0.colour: Extra inputs are not permitted (did you mean 'color'?)",
    ),
    "unknown_colour": (
        "{type: block, color: red}",
        "{type: block, color: mauve}",
        "{path}:9: tasks.0.scene.objects.0.color: Input should be 'red', 'green', 'blue', 'yellow', 'orange', 'purple', 'pink', 'brown', 'gray', 'white', 'black', 'cyan' or 'wood'",
    ),
    "zero_count": (
        "{type: block, color: red}",
        "{type: block, color: red, count: 0}",
        "{path}:9: tasks.0.scene.objects.0.count: Input should be greater than or equal to 1",
    ),
    "negative_size": (
        "{type: block, color: red}",
        "{type: block, color: red, size: [0.04, -0.04, 0.04]}",
        "{path}:9: tasks.0.scene.objects.0.size: every extent must be positive, got [0.04, -0.04, 0.04]",
    ),
    "jitter_without_poses": (
        "{type: block, color: red}",
        "{type: block, color: red, jitter: [0.01, 5]}",
        "{path}:9: tasks.0.scene.objects.0: jitter moves fixed poses: give the group `poses` too",
    ),
    "poses_for_the_wrong_count": (
        "{type: block, color: red}",
        "{type: block, color: red, count: 2, poses: [{x: 0.5, y: 0.0}]}",
        "{path}:9: tasks.0.scene.objects.0: poses lists 1 poses for count 2",
    ),
    "two_objects_with_one_name": (
        "{type: block, color: blue}",
        "{type: block, color: red}",
        "{path}:7: tasks.0.scene: objects.1: name 'red_block' is used twice; give the group a `name`",
    ),
    "id_not_a_slug": (
        "id: red-on-blue",
        "id: Red on Blue",
        "{path}:5: tasks.0.id: String should match pattern '^[a-z0-9][a-z0-9_\\-]*$'",
    ),
    "skill_name_not_an_identifier": (
        "{name: put_on, new: true}",
        "{name: Put-On, new: true}",
        "{path}:11: tasks.0.skill.name: String should match pattern '^[a-z_][a-z0-9_]*$'",
    ),
    "no_tasks": (
        "tasks:\n",
        "tasks: []\nold_tasks:\n",
        "{path}:4: tasks: List should have at least 1 item after validation, not 0\n{path}:5: old_tasks: Extra inputs are not permitted (did you mean 'tasks'?)",
    ),
    "a_skill_task_without_success": (
        "    success:\n      - on_top: {upper: red_block, lower: blue_block}\n",
        "",
        "{path}:5: tasks.0.success: a task that teaches a skill needs a success predicate: the regression check re-runs it after every later edit",
    ),
    "unknown_task_key": (
        "    hold_seconds: 1.5",
        "    hold_seconds: 1.5\n    colour: red",
        "{path}:22: tasks.1.colour: Extra inputs are not permitted",
    ),
    "revises_not_a_task_key": (
        "    hints: [put_on]",
        "    hints: [put_on]\n    revises: red-on-blue",
        "{path}:24: tasks.1.revises: 'red-on-blue' is not a task: name it as `curriculum/task-id`, its curriculum's `name` and the task's `id` (e.g. metaworld-doors/door-open)",
    ),
    "revises_a_later_task": (
        "    seeds: [0, 1]",
        "    seeds: [0, 1]\n    revises: demo/tower",
        "{path}:13: tasks.0.revises: 'demo/tower' is not an earlier task of this curriculum: a task revises one taught before it",
    ),
    "description_missing": (
        "description: Two small tasks.\n",
        "",
        "{path}:1: description: Field required",
    ),
    "success_not_a_list_of_pairs": (
        "      - on_top: {upper: red_block, lower: blue_block}",
        "      - on_top: {upper: red_block, lower: blue_block}\n        on_table: red_block",
        "{path}:13: tasks.0.success: each predicate is one `name: arguments` pair, got {'on_top': {'upper': 'red_block', 'lower': 'blue_block'}, 'on_table': 'red_block'}",
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_curriculum_is_refused_at_load(tmp_path: Path, case: str) -> None:
    old, new, message = MALFORMED[case]
    assert old in VALID
    path = write(tmp_path, VALID.replace(old, new, 1))
    with pytest.raises(CurriculumError) as caught:
        load_curriculum(path, skills=["stack_tower"])
    assert str(caught.value) == message.replace("{path}", str(path))


def test_extending_a_skill_that_neither_exists_nor_is_created_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, VALID)
    with pytest.raises(CurriculumError) as caught:
        load_curriculum(path, skills=["put_on"])
    assert str(caught.value) == (
        f"{path}:18: tasks.1.skill.extend: 'stack_tower' is not a skill of this workspace and no "
        "earlier task creates it: extend an existing skill (put_on) or make it `new: true`"
    )
    # An earlier task that creates it is enough.
    created = VALID.replace("{name: put_on, new: true}", "{name: stack_tower, new: true}")
    assert load_curriculum(write(tmp_path, created), skills=[]).tasks[1].skill.extend


def test_a_file_that_is_not_utf8_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(VALID.replace("Two small tasks.", "Deux tâches.").encode("latin-1"))
    assert error_of(path) == (f"{path}:3: the file is not UTF-8 text (byte 0xe2): save it as UTF-8")


def test_an_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    import time

    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n" + VALID)
    started = time.monotonic()
    assert error_of(path) == (
        f"{path}:1: YAML anchors and aliases (&name, *name) are not allowed: write each value out"
    )
    assert time.monotonic() - started < 5
