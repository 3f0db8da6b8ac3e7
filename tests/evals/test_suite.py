"""The suite loader: items, splits, the draw, the filling of placeholders, and every error."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from envs.ravens.scene import SceneSpec, start_state
from lyra.evals.suite import SPLITS, EvalItem, SuiteError, load_suite
from lyra.predicates import within_distance

VALID = """\
name: demo
backend: ravens
description: A small suite.
instructions_per_split: 2
oracle_helpers: |
  from lyra.api import put_first_on_second
scene:
  objects:
    - {type: block, color: red}
    - {type: block, color: green}
    - {type: block, color: blue}
    - {type: block, color: yellow}
    - {type: bowl, color: gray}
    - {type: bowl, color: white}
attributes:
  block:
    seen:
      - {words: red block, value: red_block}
      - {words: green block, value: green_block}
      - {words: blue block, value: blue_block}
    held_out:
      - {words: yellow block, value: yellow_block}
  bowl:
    seen:
      - {words: gray bowl, value: gray_bowl}
    held_out:
      - {words: white bowl, value: white_bowl}
  spot:
    seen:
      - {words: top left corner, value: [0.7, 0.3, 0.02]}
templates:
  - id: on-block
    instruction: put the <block> on the <block2>
    success:
      - on_top: {upper: <block>, lower: <block2>}
    corrections:
      - The <block> rests on the <block2>.
    oracle: put_first_on_second(<block>, <block2>)
  - id: to-spot
    instruction: put the <block> on the <spot>
    success:
      - at_point: {name: <block>, point: <spot>, tolerance: 0.04}
  - id: in-bowl
    held_out: true
    instruction: put the <block> in the <bowl>
    hold_seconds: 1.0
    success:
      - inside: {name: <block>, zone: <bowl>}
"""


def write(tmp_path: Path, text: str = VALID) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def changed(tmp_path: Path, old: str, new: str) -> Path:
    """The valid suite with one change, written; the text to change must be there."""
    assert old in VALID
    return write(tmp_path, VALID.replace(old, new))


def error_of(path: Path) -> str:
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    return str(caught.value)


def held_out(item: EvalItem) -> set[str]:
    held = {"yellow block", "white bowl"}
    return {value.words for value in item.values.values()} & held


def test_a_folder_or_its_file_loads(tmp_path: Path) -> None:
    path = write(tmp_path)
    suite = load_suite(tmp_path)
    assert (suite.name, suite.backend, suite.path, suite.runs) == ("demo", "ravens", path, 3)
    assert load_suite(path).items() == suite.items()


def test_an_item_is_a_plan_task_with_its_placeholders_filled(tmp_path: Path) -> None:
    item = load_suite(write(tmp_path)).items()[0]
    task = item.task
    assert (item.template, item.split) == ("on-block", "seen")
    assert item.instruction == task.instruction == "put the green block on the red block"
    assert task.id == "on-block-seen-0"
    assert task.success == [{"on_top": {"upper": "green_block", "lower": "red_block"}}]
    assert task.feedback == ["The green block rests on the red block."]
    assert (task.skill, task.review, task.hold_seconds, task.backend) == (None, [], 0.0, "ravens")
    assert task.seeds == [3766]
    assert isinstance(task.scene, SceneSpec) and len(task.scene.objects) == 6
    assert item.praise == "Well done, learn that for next time."
    assert {name: value.words for name, value in item.values.items()} == {
        "block": "green block",
        "block2": "red block",
    }


def test_points_fill_the_predicate_and_the_oracle_gets_python_literals(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path))
    spot = next(i for i in suite.items() if i.template == "to-spot")
    assert spot.task.success[0]["at_point"]["point"] == [0.7, 0.3, 0.02]
    on_block = suite.items()[0]
    assert suite.oracle(on_block) == (
        "from lyra.api import put_first_on_second\n\n"
        "put_first_on_second('green_block', 'red_block')"
    )
    assert suite.oracle(spot) is None


def test_splits_follow_what_was_held_out(tmp_path: Path) -> None:
    items = load_suite(write(tmp_path)).items()
    assert [(i.template, i.split) for i in items] == [
        ("on-block", "seen"),
        ("on-block", "seen"),
        ("on-block", "unseen_attributes"),
        ("on-block", "unseen_attributes"),
        ("to-spot", "seen"),
        ("to-spot", "seen"),
        # Only one filling of <block> <spot> has a held-out value.
        ("to-spot", "unseen_attributes"),
        ("in-bowl", "unseen_instructions"),
        ("in-bowl", "unseen_instructions"),
    ]
    for item in items:
        assert bool(held_out(item)) == (item.split != "seen")
    assert [i.task.id for i in items[:4]] == [
        "on-block-seen-0",
        "on-block-seen-1",
        "on-block-unseen-attributes-0",
        "on-block-unseen-attributes-1",
    ]
    assert items[-1].task.hold_seconds == 1.0


def test_two_placeholders_of_one_attribute_take_different_values(tmp_path: Path) -> None:
    suite = load_suite(changed(tmp_path, "instructions_per_split: 2", "instructions_per_split: 9"))
    on_block = [i for i in suite.items() if i.template == "on-block"]
    # Every filling there is: 3 x 2 seen, and 4 x 3 - 3 x 2 with the held-out yellow block.
    assert [i.split for i in on_block].count("seen") == 6
    assert [i.split for i in on_block].count("unseen_attributes") == 6
    pairs = [(i.values["block"].words, i.values["block2"].words) for i in on_block]
    assert len(set(pairs)) == 12 and all(a != b for a, b in pairs)


def test_the_draw_is_the_same_every_time_and_for_any_choice_of_splits(tmp_path: Path) -> None:
    path = write(tmp_path)
    first, again = load_suite(path).items(), load_suite(path).items()
    assert [(i.task.id, i.instruction, i.task.seeds) for i in first] == [
        (i.task.id, i.instruction, i.task.seeds) for i in again
    ]
    suite = load_suite(path)
    for split in SPLITS:
        assert suite.items([split]) == [i for i in first if i.split == split]
    assert suite.items([]) == []
    reseeded = load_suite(changed(tmp_path, "description:", "seed: 7\ndescription:"))
    assert [(i.template, i.split) for i in reseeded.items()] == [
        (i.template, i.split) for i in first
    ]
    assert [i.task.seeds for i in reseeded.items()] != [i.task.seeds for i in first]


def test_an_unknown_split_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SuiteError) as caught:
        load_suite(write(tmp_path)).items(["unseen"])
    assert str(caught.value) == (
        "no split named 'unseen'. Did you mean 'seen'? Known splits: seen, unseen_attributes, "
        "unseen_instructions"
    )


def test_the_items_tasks_are_fresh_each_time(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path))
    first = suite.items()[0]
    first.task.seeds.append(1)
    assert suite.items()[0].task.seeds == [3766]


# -- errors ------------------------------------------------------------------------------------


def test_unknown_field(tmp_path: Path) -> None:
    path = changed(tmp_path, "    hold_seconds: 1.0", "    hold_secs: 1.0")
    assert error_of(path) == (
        f"{path}:46: templates.2.hold_secs: Extra inputs are not permitted (did you mean "
        "'hold_seconds'?)"
    )


def test_wrong_type_names_the_line_of_the_field(tmp_path: Path) -> None:
    path = changed(tmp_path, "instructions_per_split: 2", "instructions_per_split: two")
    assert error_of(path) == (
        f"{path}:4: instructions_per_split: Input should be a valid integer, unable to parse "
        "string as an integer"
    )


def test_missing_field_points_at_its_template(tmp_path: Path) -> None:
    path = changed(tmp_path, "    instruction: put the <block> on the <spot>\n", "")
    assert error_of(path) == f"{path}:39: templates.1.instruction: Field required"


def test_a_value_needs_words_and_a_value(tmp_path: Path) -> None:
    path = changed(tmp_path, "{words: gray bowl, value: gray_bowl}", "{words: gray bowl}")
    assert error_of(path) == f"{path}:25: attributes.bowl.seen.0.value: Field required"


def test_an_attribute_name_is_lower_case_letters(tmp_path: Path) -> None:
    path = changed(tmp_path, "  spot:\n", "  spot2:\n")
    assert error_of(path) == (
        f"{path}:28: attributes.spot2.[key]: String should match pattern '^[a-z][a-z_]*$'"
    )


def test_a_placeholder_naming_no_attribute(tmp_path: Path) -> None:
    path = changed(tmp_path, "put the <block> on the <spot>", "put the <block> on the <place>")
    assert error_of(path) == (
        f"{path}:40: templates.1.instruction: <place>: no attribute named 'place'. Known "
        "attributes: block, bowl, spot\n"
        f"{path}:42: templates.1.success.0.at_point.point: <spot> is not in the instruction, so "
        "no value fills it (it has <block>, <place>)"
    )


def test_a_placeholder_in_the_success_naming_no_attribute(tmp_path: Path) -> None:
    path = changed(tmp_path, "lower: <block2>", "lower: <blok2>")
    assert error_of(path) == (
        f"{path}:35: templates.0.success.0.on_top.lower: <blok2>: no attribute named 'blok'. "
        "Did you mean 'block'? Known attributes: block, bowl, spot"
    )


def test_a_placeholder_the_instruction_lacks(tmp_path: Path) -> None:
    path = changed(tmp_path, "The <block> rests on the <block2>.", "The <block3> rests.")
    assert error_of(path) == (
        f"{path}:37: templates.0.corrections.0: <block3> is not in the instruction, so no value "
        "fills it (it has <block>, <block2>)"
    )


def test_a_placeholder_in_the_success_is_a_whole_value(tmp_path: Path) -> None:
    path = changed(tmp_path, "zone: <bowl>}", "zone: my_<bowl>}")
    assert error_of(path) == (
        f"{path}:48: templates.2.success.0.inside.zone: 'my_<bowl>': a placeholder in `success` is "
        "a whole value (an object name, a point), not part of one"
    )


def test_a_template_id_given_twice(tmp_path: Path) -> None:
    path = changed(tmp_path, "  - id: to-spot", "  - id: on-block")
    assert error_of(path) == (
        f"{path}:39: templates.1.id: template id 'on-block' is already used by templates.0"
    )


def test_words_given_to_two_values(tmp_path: Path) -> None:
    path = changed(tmp_path, "{words: yellow block,", "{words: red block,")
    assert error_of(path) == (
        f"{path}:22: attributes.block.held_out.0.words: 'red block' is also the words of "
        "attributes.block.seen.0: an instruction could not tell them apart"
    )


def test_a_held_out_template_needs_a_held_out_value(tmp_path: Path) -> None:
    text = VALID.replace("    held_out:\n      - {words: white bowl, value: white_bowl}\n", "")
    text = text.replace("put the <block> in the <bowl>", "put the red block in the <bowl>")
    path = write(
        tmp_path, text.replace("{name: <block>, zone: <bowl>}", "{name: red_block, zone: <bowl>}")
    )
    assert error_of(path) == (
        f"{path}:42: templates.2.held_out: a held-out template needs a placeholder whose attribute "
        "has held-out values: otherwise none of its instructions is unseen"
    )


def test_a_template_needs_enough_values(tmp_path: Path) -> None:
    path = changed(
        tmp_path,
        "put the <block> on the <block2>",
        "put the <block> on the <block2> and <block3> on <block4>",
    )
    assert error_of(path) == (
        f"{path}:33: templates.0.instruction: it needs 4 different block values and the suite "
        "has 3 seen values"
    )


def test_an_unknown_predicate(tmp_path: Path) -> None:
    path = changed(tmp_path, "on_top: {upper", "over: {upper")
    message = error_of(path)
    assert message.startswith(
        f"{path}:34: templates.0.success: unknown predicate 'over': use one of aligned, "
    )
    assert "\n" not in message  # one line, however many items share the template


def test_a_value_naming_an_object_the_scene_lacks(tmp_path: Path) -> None:
    path = changed(
        tmp_path, "{words: white bowl, value: white_bowl}", "{words: white bowl, value: whit_bowl}"
    )
    assert error_of(path) == (
        f"{path}:47: templates.2.success: the predicate names 'whit_bowl', which the scene does not "
        "have (on seed 3420 it has blue_block, gray_bowl, green_block, red_block, white_bowl, "
        "yellow_block)"
    )


def test_a_scene_the_backend_refuses(tmp_path: Path) -> None:
    path = changed(tmp_path, "{type: bowl, color: gray}", "{type: bowl, color: grey}")
    assert error_of(path).startswith(
        f"{path}:13: scene.objects.4.color: Input should be 'red', 'green', "
    )


def test_a_scene_that_cannot_be_laid_out(tmp_path: Path) -> None:
    path = changed(
        tmp_path, "    - {type: bowl, color: white}", "    - {type: bowl, color: white, count: 40}"
    )
    assert error_of(path).startswith(f"{path}:7: scene: on seed ")


def test_malformed_yaml_and_duplicate_keys_and_anchors(tmp_path: Path) -> None:
    path = changed(tmp_path, "name: demo", "name: [demo")
    assert error_of(path).startswith(f"{path}:2:8: ")
    path = changed(tmp_path, "backend: ravens", "backend: ravens\nname: again")
    assert error_of(path) == (
        f"{path}:3: name: the key 'name' is given twice (also on line 1); keep one, or the first "
        "would be silently dropped"
    )
    path = changed(
        tmp_path, "seen:\n      - {words: red block", "seen: &blocks\n      - {words: red block"
    )
    assert error_of(path) == (
        f"{path}:17: YAML anchors and aliases (&name, *name) are not allowed: write each value out"
    )


def test_a_file_that_is_not_a_suite(tmp_path: Path) -> None:
    path = write(tmp_path, "- just\n- a list\n")
    assert error_of(path) == (
        f"{path}:1: a suite is a mapping with name, backend, description, scene, attributes and "
        "templates"
    )
    missing = tmp_path / "nowhere"
    assert error_of(missing) == (f"{missing}: cannot be read: No such file or directory")


def test_a_layout_where_the_task_is_already_done_is_drawn_again(tmp_path: Path) -> None:
    near = VALID.replace("instructions_per_split: 2", "instructions_per_split: 9").replace(
        "      - on_top: {upper: <block>, lower: <block2>}",
        "      - within_distance: {name: <block>, other: <block2>, distance: 0.25}",
    )
    suite = load_suite(write(tmp_path, near))
    items = [i for i in suite.items() if i.template == "on-block"]
    assert len(items) == 12
    for item in items:
        start = start_state(item.task.scene, item.task.seeds[0])
        assert not item.task.predicate()(start), item.task.id
    # The same predicate holds on a good share of the layouts the draw passed over.
    blocks = [("red_block", "green_block"), ("blue_block", "yellow_block")]
    near_ones = [
        seed
        for seed in range(1000, 1040)
        for a, b in blocks
        if within_distance(start_state(items[0].task.scene, seed), a, b, 0.25)
    ]
    assert len(near_ones) > 20


def test_a_predicate_that_holds_before_anything_moves(tmp_path: Path) -> None:
    path = changed(
        tmp_path,
        "      - at_point: {name: <block>, point: <spot>, tolerance: 0.04}",
        "      - on_table: <block>",
    )
    assert error_of(path) == (
        f"{path}:41: templates.1.success: 'put the green block on the top left corner' is done as "
        "laid out, before anything moves, on each of the 20 layouts drawn for it: the predicate "
        "cannot tell doing it from doing nothing"
    )
