"""``lyra demo from-plan``: a plan run confined, mistakes put into its calls where they arrive."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lyra.backend import Backend, load_scene_file
from lyra.cli import main
from lyra.demos.format import Demonstration, load_demo
from lyra.demos.plan import OFFSET_M, Kind, Noise, record_plan
from lyra.sandbox import RunResult

STACK = (
    "from lyra.api import put_first_on_second, relative_point\n"
    "put_first_on_second('red_block', 'blue_block')\n"
    "put_first_on_second('green_block', relative_point('blue_block', 0.12, 90))\n"
)


def run_plan(
    ravens: Backend, scene_file: Path, code: str, kinds: tuple[Kind, ...], count: int, seed: int
) -> tuple[Demonstration, RunResult]:
    plan = scene_file.with_name("plan.py")
    plan.write_text(code)
    name, scene = load_scene_file(scene_file)
    noise = Noise(kinds, seed, count)
    return record_plan(ravens, name, scene, 0, plan, instruction="stack", noise=noise)


def test_the_same_noise_seed_makes_the_same_mistakes(ravens: Backend, scene_file: Path) -> None:
    kinds: tuple[Kind, ...] = ("wrong-object", "offset", "missing-step")
    first, run = run_plan(ravens, scene_file, STACK, kinds, 2, seed=3)
    again, _ = run_plan(ravens, scene_file, STACK, kinds, 2, seed=3)
    assert run.ok and first.source.ok
    marked = [(s.index, s.injected.kind, s.injected.detail) for s in first.mistakes]
    assert len(marked) == 2 and first.source.mistakes == 2
    assert marked == [(s.index, s.injected.kind, s.injected.detail) for s in again.mistakes]
    for step, other in zip(first.steps, again.steps, strict=True):
        assert (step.primitive, step.args) == (other.primitive, other.args)
        if step.after is not None:
            for name, pose in step.after.objects.items():
                assert math.dist(pose[:3], other.after.objects[name][:3]) < 0.001
    # Every call the plan made is there, its query included, mistakes or not.
    assert [step.primitive for step in first.steps] == [
        "put_first_on_second",
        "relative_point",
        "put_first_on_second",
    ]


def test_the_plan_runs_confined_in_a_worker(ravens: Backend, scene_file: Path) -> None:
    demo, run = run_plan(ravens, scene_file, STACK, (), 0, seed=0)
    assert demo.source.confined == list(run.confined) and "rlimits" in run.confined
    assert demo.mistakes == []
    hostile = "open('/tmp/lyra-demo-was-here', 'w').write('x')\n"
    demo, run = run_plan(ravens, scene_file, hostile, ("offset",), 1, seed=0)
    assert (run.ok, run.error, demo.source.ok, demo.steps) == (False, "policy", False, [])
    assert "open" in demo.source.feedback
    assert not Path("/tmp/lyra-demo-was-here").exists()


def test_a_wrong_object_moves_another_object_than_the_plan_named(
    ravens: Backend, scene_file: Path
) -> None:
    code = (
        "from lyra.api import put_first_on_second\nput_first_on_second('red_block', 'blue_block')\n"
    )
    demo, _ = run_plan(ravens, scene_file, code, ("wrong-object",), 1, seed=0)
    (step,) = demo.steps
    assert step.injected.kind == "wrong-object"
    assert step.injected.args == ["red_block", "blue_block"]
    upper, lower = step.args
    assert step.args != step.injected.args and "green_block" in step.args
    assert (
        step.injected.detail
        == f"'{({'red_block', 'blue_block'} - set(step.args)).pop()}' replaced by 'green_block'"
    )
    # What ran is what the world shows: the objects the executed call named are stacked.
    top, bottom = step.after.objects[upper], step.after.objects[lower]
    assert math.dist(top[:3], [bottom[0], bottom[1], bottom[2] + 0.04]) < 0.005


def test_an_offset_moves_the_target_a_few_centimetres(ravens: Backend, scene_file: Path) -> None:
    code = (
        "from lyra.api import put_first_on_second, Point\n"
        "put_first_on_second('red_block', Point(0.5, 0.0, 0.0))\n"
    )
    demo, _ = run_plan(ravens, scene_file, code, ("offset",), 1, seed=5)
    (step,) = demo.steps
    assert step.injected.kind == "offset"
    asked, ran = step.injected.args[1]["v"], step.args[1]["v"]
    assert math.dist(asked[:2], ran[:2]) == pytest.approx(OFFSET_M)
    red = step.after.objects["red_block"]
    assert math.dist(red[:2], ran[:2]) < 0.005
    assert math.dist(red[:2], asked[:2]) == pytest.approx(OFFSET_M, abs=0.005)


def test_a_missing_step_is_marked_and_nothing_moves(ravens: Backend, scene_file: Path) -> None:
    code = (
        "from lyra.api import put_first_on_second, object_pose\n"
        "put_first_on_second('red_block', 'blue_block')\n"
        "print(object_pose('red_block').position.z)\n"
    )
    demo, run = run_plan(ravens, scene_file, code, ("missing-step",), 1, seed=0)
    skipped, query = demo.steps
    assert (skipped.injected.kind, skipped.ran, skipped.result, skipped.after) == (
        "missing-step",
        False,
        None,
        None,
    )
    assert skipped.injected.detail == (
        "put_first_on_second was not run; the plan went on as if it had"
    )
    # The plan went on: red is still on the table where it started.
    assert query.result["p"]["v"][2] == pytest.approx(0.02, abs=0.002)
    assert float(run.output) == pytest.approx(0.02, abs=0.002)


def test_a_plan_with_fewer_calls_than_mistakes_gets_what_it_can(
    ravens: Backend, scene_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.py"
    plan.write_text(STACK)
    out = tmp_path / "weak.json"
    command = ["demo", "from-plan", str(plan), "--scene", str(scene_file), "-o", str(out)]
    assert main([*command, "--noise", "missing-step", "--mistakes", "5"]) == 0
    printed = capsys.readouterr().out
    assert printed.endswith(f"wrote {out} (3 steps, 2 of 5 mistakes)\n")
    assert "step 0 (put_first_on_second): missing-step: put_first_on_second was not run" in printed
    assert [step.ran for step in load_demo(out).steps] == [False, True, False]


def test_mistakes_without_a_kind_are_refused(
    scene_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.py"
    plan.write_text(STACK)
    command = ["demo", "from-plan", str(plan), "--scene", str(scene_file), "-o", "x.json"]
    assert main([*command, "--mistakes", "2"]) == 1
    assert capsys.readouterr().err == (
        "lyra: --mistakes 2: give 0 or more, and with it the kinds to make "
        "(--noise wrong-object,offset,missing-step)\n"
    )
    with pytest.raises(SystemExit):
        main([*command, "--noise", "typo"])
    assert (
        "no kind of mistake typo: use wrong-object, offset, missing-step" in capsys.readouterr().err
    )


def test_the_check_is_written_into_the_file_and_judged_on_the_end(
    scene_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.py"
    plan.write_text(STACK)
    out = tmp_path / "weak.json"
    check = "[{on_top: {upper: red_block, lower: blue_block}}]"
    command = ["demo", "from-plan", str(plan), "--scene", str(scene_file), "-o", str(out)]
    assert main([*command, "--check", check]) == 0
    assert capsys.readouterr().out.endswith(
        f"wrote {out} (3 steps, 0 of 0 mistakes); its check holds at the end\n"
    )
    assert load_demo(out).check == [{"on_top": {"upper": "red_block", "lower": "blue_block"}}]
    # The first call skipped: red never reaches blue.
    assert main([*command, "--check", check, "--noise", "missing-step", "--noise-seed", "1"]) == 0
    assert capsys.readouterr().out.endswith(
        f"wrote {out} (3 steps, 1 of 1 mistakes); its check fails at the end: "
        "'red_block' is not over 'blue_block'\n"
    )


@pytest.mark.parametrize(
    ("check", "message"),
    [
        ("[{on_top: [", "lyra: --check is not valid YAML: "),
        ("[{on_topp: {upper: red_block, lower: blue_block}}]", "lyra: --check: unknown predicate"),
        ("red_block", 'lyra: --check: give a list of predicates, e.g. "[{done: {}}]"'),
    ],
)
def test_a_check_that_cannot_judge_is_refused_before_the_plan_runs(
    scene_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], check: str, message: str
) -> None:
    plan = tmp_path / "plan.py"
    plan.write_text(STACK)
    out = tmp_path / "weak.json"
    command = ["demo", "from-plan", str(plan), "--scene", str(scene_file), "-o", str(out)]
    assert main([*command, "--check", check]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(message), captured.err
    assert not out.exists()
