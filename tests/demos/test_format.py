"""The demonstration file: saved and read back whole; anything malformed refused by file, step, field."""

from __future__ import annotations

import math
from pathlib import Path

import imageio.v3 as iio
import pytest

from lyra.backend import Backend
from lyra.demos.format import DemoError, load_demo, save
from lyra.geometry import Point, Pose
from tests.demos.conftest import edit, record

FIELDS = "(every field is described in docs/demonstrations.md)"


def refused(path: Path) -> str:
    with pytest.raises(DemoError) as caught:
        load_demo(path)
    return str(caught.value)


def test_a_recorded_demonstration_reads_back_as_it_was_written(demo_file: Path) -> None:
    demo = load_demo(demo_file)
    assert load_demo(save(demo, demo_file.with_name("again.json"))) == demo
    assert (demo.format, demo.backend, demo.seed, demo.source.kind) == (
        "lyra-demo/1",
        "ravens",
        0,
        "person",
    )
    assert [step.primitive for step in demo.steps] == [
        "put_first_on_second",
        "object_pose",
        "pick",
        "place",
    ]
    stack, pose, pick, place = demo.steps
    # The stack really happened: red sits one block (4 cm) above blue.
    red, blue = stack.after.objects["red_block"], stack.after.objects["blue_block"]
    assert math.dist(red[:3], [blue[0], blue[1], blue[2] + 0.04]) < 0.005
    # A query moves nothing and records no world; its result is the pose, as the wire writes it.
    assert pose.after is None and pose.result["~"] == "Pose"
    assert pose.call() == (["red_block"], {})
    assert pick.after.held == "green_block" and place.after.held is None
    # The place's arguments come back as the values that ran, keyword included.
    assert place.call() == ([Point(0.5, -0.2, 0.02)], {"yaw_deg": 30.0})
    green = place.after.objects["green_block"]
    assert math.dist(green[:3], [0.5, -0.2, 0.02]) < 0.005
    assert abs(math.degrees(Pose(Point(0, 0, 0), tuple(green[3:])).yaw) - 30.0) < 2.0
    assert demo.start.objects["green_block"][:2] == pytest.approx([0.4, 0.15], abs=0.002)


def test_frames_are_pngs_beside_the_file_named_in_the_steps(
    ravens: Backend, scene_file: Path
) -> None:
    frames = scene_file.parent / "shown-frames"
    demo = record(ravens, scene_file, frames).demonstration("stack")
    path = save(demo, scene_file.parent / "shown.json")
    assert [step.frame for step in load_demo(path).steps] == [
        "shown-frames/000-put_first_on_second.png",
        None,  # a query moves nothing: no picture
        "shown-frames/002-pick.png",
        "shown-frames/003-place.png",
    ]
    assert iio.imread(frames / "003-place.png").ndim == 3
    (frames / "002-pick.png").unlink()
    assert refused(path) == (
        f"{path}: step 2, field 'frame': no picture shown-frames/002-pick.png beside the "
        f"demonstration: copy the frames with it, or remove the field\n{FIELDS}"
    )


def test_a_missing_field_is_named_with_its_step(demo_file: Path) -> None:
    edit(demo_file, lambda data: data["steps"][2].pop("primitive"))
    assert refused(demo_file) == f"{demo_file}: step 2, field 'primitive': Field required\n{FIELDS}"


def test_an_unknown_primitive_is_named_with_the_one_meant(demo_file: Path) -> None:
    edit(demo_file, lambda data: data["steps"][2].update(primitive="pik"))
    assert refused(demo_file).startswith(
        f"{demo_file}: step 2, field 'primitive': unknown primitive 'pik'. Did you mean 'pick'? "
        "Known primitives: bounding_box, close_gripper, ee_pose,"
    )


def test_a_step_index_that_is_not_a_number_is_refused(demo_file: Path) -> None:
    edit(demo_file, lambda data: data["steps"][1].update(index="1"))
    assert refused(demo_file) == (
        f"{demo_file}: step 1, field 'index': Input should be a valid integer\n{FIELDS}"
    )


def test_steps_out_of_order_are_refused(demo_file: Path) -> None:
    edit(demo_file, lambda data: data["steps"][3].update(index=7))
    assert refused(demo_file) == (
        f"{demo_file}: step 3, field 'index': is 7 at place 3 of the list: number the steps "
        f"0, 1, 2 ... in order\n{FIELDS}"
    )


def test_arguments_that_do_not_fit_the_primitive_are_refused(demo_file: Path) -> None:
    edit(demo_file, lambda data: data["steps"][2].update(args=["green_block", "red_block"]))
    assert refused(demo_file) == (
        f"{demo_file}: step 2: the arguments do not fit pick(): too many positional arguments"
        f"\n{FIELDS}"
    )


def test_an_argument_that_is_not_a_value_is_refused(demo_file: Path) -> None:
    edit(demo_file, lambda data: data["steps"][3].update(args=[{"~": "Point", "v": [1, 2]}]))
    assert refused(demo_file) == (
        f"{demo_file}: step 3, field 'args': not a value lyra.api passes: a malformed Point: "
        f"not enough values to unpack (expected 3, got 2)\n{FIELDS}"
    )


def test_a_misspelt_key_gets_the_field_it_was_meant_as(demo_file: Path) -> None:
    edit(demo_file, lambda data: data["steps"][0].update(reslt=None))
    assert refused(demo_file) == (
        f"{demo_file}: step 0, field 'reslt': Extra inputs are not permitted (did you mean "
        f"'result'?)\n{FIELDS}"
    )


def test_a_primitive_the_backend_lacks_is_refused(demo_file: Path) -> None:
    edit(demo_file, lambda data: data["steps"][2].update(primitive="grasp"))
    assert refused(demo_file) == (
        f"{demo_file}: step 2, field 'primitive': the ravens backend has no primitive 'grasp'"
        f"\n{FIELDS}"
    )


def test_a_file_of_another_format_is_refused(demo_file: Path) -> None:
    edit(demo_file, lambda data: data.update(format="lyra-demo/9"))
    assert refused(demo_file) == (
        f"{demo_file}: not a demonstration this lyra reads (format 'lyra-demo/9', expected "
        "'lyra-demo/1'): write it with `lyra demo record` or `lyra demo from-plan`"
    )
    demo_file.write_text("{not json")
    assert refused(demo_file).startswith(f"{demo_file}: not JSON (Expecting property name")


def test_a_scene_for_an_unknown_backend_does_not_load(demo_file: Path) -> None:
    edit(demo_file, lambda data: data.update(backend="ravns"))
    assert refused(demo_file).startswith(
        f"{demo_file}: its scene does not load: no backend named 'ravns'. Did you mean 'ravens'?"
    )


def test_a_scene_that_does_not_fit_the_backend_does_not_load(demo_file: Path) -> None:
    edit(demo_file, lambda data: data["scene"]["objects"][0].update(size=[0.04, 0, 0.04]))
    assert refused(demo_file) == (
        f"{demo_file}: its scene does not load on the ravens backend: objects.0.size: Value "
        "error, every extent must be positive, got [0.04, 0.0, 0.04]"
    )


def test_a_scene_that_cannot_be_laid_out_on_its_seed_does_not_load(demo_file: Path) -> None:
    edit(
        demo_file,
        lambda data: data.update(
            scene={"objects": [{"type": "plank", "color": "red", "count": 40}]}
        ),
    )
    assert refused(demo_file).startswith(
        f"{demo_file}: its scene does not load: objects.0 (plank, red_plank_13): does not fit in "
        "the placement area"
    )
