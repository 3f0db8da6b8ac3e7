"""``lyra demo record``: typed calls parsed, never run as Python; steps run, undone and written."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pytest

from lyra.api import PRIMITIVES
from lyra.backend import Backend
from lyra.cli import main
from lyra.demos.format import load_demo, observe
from lyra.demos.record import LineError, parse_call
from lyra.embodiment import use
from lyra.geometry import Point, Pose
from tests.demos.conftest import record

NOT_A_VALUE = (
    'is not a value: give arguments as literals, e.g. "red_block", 0.05, Point(0.5, 0.1, 0.02); '
    "names, expressions and other calls are not evaluated here"
)


def test_a_typed_call_is_read_as_its_literal_arguments() -> None:
    assert parse_call("place(Point(0.5, 0.1, 0.02), yaw_deg=90)", PRIMITIVES) == (
        "place",
        [Point(0.5, 0.1, 0.02)],
        {"yaw_deg": 90},
    )
    assert parse_call("  move_ee(Pose(Point(0.4, 0, 0.3), (0, 0, 0, 1)))  ", PRIMITIVES) == (
        "move_ee",
        [Pose(Point(0.4, 0.0, 0.3), (0.0, 0.0, 0.0, 1.0))],
        {},
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '__import__("os").system("x")',
            "`__import__('os').system('x')` is not a primitive call: type one, e.g. "
            'put_first_on_second("red_block", "blue_block"), or one of help, state, undo, done; '
            "nothing else runs here",
        ),
        ("pick(x)", f"`x` {NOT_A_VALUE}"),
        ('pick(name="a" + "b")', f"`'a' + 'b'` {NOT_A_VALUE}"),
        ('pick(open("/etc/passwd").read())', f"`open('/etc/passwd').read()` {NOT_A_VALUE}"),
        ("place(Point(*xs))", f"`Point(*xs)` {NOT_A_VALUE}"),
        ("pick(**names)", "`**` unpacks a name, not a value: name each argument"),
        (
            'place(Point("a", 1, 2))',
            "`Point('a', 1, 2)`: a Point needs numbers, got str",
        ),
        (
            'pick("red_block"); pick("blue_block")',
            "not a call (invalid syntax): type one primitive call, e.g. "
            'put_first_on_second("red_block", "blue_block"), or one of help, state, undo, done',
        ),
        ('pick("a", "b")', "pick(name: str): too many positional arguments"),
        (
            'grasp("red_block")',
            "no primitive 'grasp'. Known primitives: pick, place (`help` shows their arguments)",
        ),
    ],
)
def test_anything_but_one_literal_call_is_refused(line: str, message: str) -> None:
    with pytest.raises(LineError) as caught:
        parse_call(line, ["pick", "place"])
    assert str(caught.value) == message


def test_undo_leaves_the_world_as_it_was_before_the_undone_step(
    ravens: Backend, scene_file: Path
) -> None:
    recording = record(ravens, scene_file)
    before = recording.log.steps[2].after  # after the pick, before the place
    with use(ravens):
        recording.undo()
    now = observe(ravens)
    assert [step.primitive for step in recording.log.steps] == [
        "put_first_on_second",
        "object_pose",
        "pick",
    ]
    assert now.held == "green_block"
    for name, pose in before.objects.items():
        assert math.dist(pose[:3], now.objects[name][:3]) < 0.001, name
    assert math.dist(before.ee[:3], now.ee[:3]) < 0.001


SESSION = (
    "stack the red block on the blue one\n"
    'put_first_on_second("red_block", "blue_block")\n'
    'pick("green_block")\n'
    "place(Point(0.5, -0.2, 0.02))\n"
    "undo\n"
    "world_state()\n"
    '__import__("os").system("touch {marker}")\n'
    "pick(x)\n"
    'pick("purple_block")\n'
    "state\n"
)


def test_a_piped_session_runs_undoes_and_writes_the_demonstration(
    scene_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    marker = tmp_path / "ran"
    out = tmp_path / "demo.json"
    # No `done`: the end of the input writes the file.
    monkeypatch.setattr("sys.stdin", io.StringIO(SESSION.format(marker=marker)))
    assert main(["demo", "record", "--scene", str(scene_file), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert not marker.exists()  # the typed text never ran
    assert "demo> undo\nundid step 2 (place); 2 left\n" in printed
    assert "demo> pick(x)\nrefused, nothing ran: `x` is not a value" in printed
    assert (
        "demo> pick(\"purple_block\")\nstep 3: UnknownObjectError: unknown object 'purple_block'. "
        "Did you mean 'red_block'? Known objects: blue_block, green_block, red_block (recorded; `undo` removes it)\n"
    ) in printed
    assert "holding: green_block\n" in printed
    assert printed.endswith(f"wrote {out} (4 steps)\n")
    demo = load_demo(out)
    assert demo.instruction == "stack the red block on the blue one"
    assert [(step.primitive, step.args) for step in demo.steps] == [
        ("put_first_on_second", ["red_block", "blue_block"]),
        ("pick", ["green_block"]),
        ("world_state", []),
        ("pick", ["purple_block"]),
    ]
    # The world after the undo, as world_state() returned it, is the world after the pick.
    after_pick = demo.steps[1].after
    returned = demo.steps[2].result["v"]
    for name, pose in after_pick.objects.items():
        position = returned[name]["pose"]["p"]["v"]
        assert math.dist(pose[:3], position) < 0.001, name
    assert demo.steps[3].error.type == "UnknownObjectError"


def test_a_session_with_no_steps_writes_nothing(
    scene_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("help\ndone\n"))
    out = tmp_path / "demo.json"
    command = ["demo", "record", "--scene", str(scene_file), "--instruction", "x", "-o", str(out)]
    assert main(command) == 1
    captured = capsys.readouterr()
    assert (
        "  put_first_on_second(first: str, second: str | Point | Pose, yaw_deg: float | None = None)\n"
        in captured.out
    )
    assert "grasp(" not in captured.out  # only the tabletop's primitives
    assert captured.err == "lyra: nothing was demonstrated; nothing written\n"
    assert not out.exists()


def test_a_scene_that_does_not_load_is_said_before_anything_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scene = tmp_path / "bad.yaml"
    scene.write_text("backend: ravns\nobjects: []\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("stack\npick('red_block')\n"))
    assert main(["demo", "record", "--scene", str(scene), "-o", str(tmp_path / "d.json")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("lyra: no backend named 'ravns'. Did you mean 'ravens'?")
