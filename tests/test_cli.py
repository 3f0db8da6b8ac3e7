import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio

from envs.ravens.render import CLOSE_SIZE
from lyra.cli import main
from tests.conftest import as_from_a_terminal


def test_help_lists_the_commands() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "lyra.cli", "--help"], capture_output=True, text=True, check=True
    )
    for command in ("scene", "skills", "memory", "bench"):
        assert f"    {command} " in result.stdout
    # --help must not pay for the physics or the database.
    probe = "import sys, lyra.cli; lyra.cli.build_parser(); print(sorted(m for m in ('pybullet', 'lancedb', 'libcst', 'gymnasium') if m in sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"


def test_scene_show_lists_objects_and_writes_a_png(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "scene.yaml"
    spec.write_text(
        "objects:\n  - {type: block, color: red, poses: [{x: 0.5, y: 0.1}]}\n  - {type: tile, color: blue, count: 2}\n"
    )
    png = tmp_path / "out.png"
    assert main(["scene", "show", str(spec), "--seed", "2", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "red_block              block  red       0.500   0.100   0.020    0.0" in out
    assert "blue_tile_0" in out and "blue_tile_1" in out
    assert iio.imread(png).shape == (480, 640 + CLOSE_SIZE, 3)  # the work area and a close view


def test_scene_show_bad_spec_exits_with_the_field(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("objects:\n  - {type: block, size: [0.04, 0, 0.04]}\n")
    assert main(["scene", "show", str(spec)]) == 1
    assert capsys.readouterr().err == (
        f"lyra: {spec}: objects.0.size: Value error, every extent must be positive, got [0.04, 0.0, 0.04]\n"
    )


def test_commands_print_only_what_a_user_can_act_on(tmp_path: Path) -> None:
    """No pybullet build-time line on stdout, no lancedb warnings for tables it creates."""
    spec = tmp_path / "scene.yaml"
    spec.write_text("objects:\n  - {type: block, color: red, poses: [{x: 0.5, y: 0.1}]}\n")
    shown = subprocess.run(
        [sys.executable, "-m", "lyra.cli", "scene", "show", str(spec)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "pybullet build time" not in shown.stdout + shown.stderr
    assert shown.stdout.splitlines()[0].split() == [
        "object",
        "kind",
        "colour",
        "x",
        "y",
        "z",
        "yaw",
    ]
    (tmp_path / "skills").mkdir()
    searched = subprocess.run(
        [sys.executable, "-m", "lyra.cli", "memory", "--workspace", str(tmp_path), "search", "x"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "LYRA_EMBEDDER": "none"},
    )
    # The rebuild's progress, then the one line that says why it was rebuilt.
    assert re.sub(r"about \d+ s", "about N s", searched.stderr) == (
        "[##########          ] 1/2 memory indexed: 1 ok, 0 of 0 skills, about N s left\n"
        "[####################] 2/2 memory indexed: 2 ok, 0 of 0 examples\n"
        f"lyra: memory: indexed 0 skills and 0 examples in {tmp_path / '.lyra' / 'memory'} "
        "(there was no index yet; embedder: none)\n"
    )


def test_scene_show_takes_a_curriculum_task_and_lists_objects_in_natural_order(capsys) -> None:
    house = "curricula/ravens/house.yaml"
    assert main(["scene", "show", house]) == 1
    assert capsys.readouterr().err == (
        f"lyra: {house} is a curriculum: name the task whose scene to show (--task ID: "
        "line-up-blocks, stage-house-parts, house-walls, house-roof, house)\n"
    )
    assert main(["scene", "show", house, "--task", "roof"]) == 1
    assert capsys.readouterr().err.startswith(f"lyra: {house} has no task 'roof'; its tasks are ")
    assert main(["scene", "show", house, "--task", "house"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert names[:16] == ["beam", *(f"block_{i}" for i in range(14)), "roof_base"]
    assert names[16:] == [f"tile_{i}" for i in range(6)]


def test_one_off_tasks_get_short_ids_or_the_one_given(capsys) -> None:
    from lyra.curriculum import short_id

    temple = "Build a temple centred at (0.58, 0): four pillars of two blocks, a roof on top."
    assert (
        short_id(temple)
        == "build_a_temple-" + __import__("hashlib").sha1(temple.encode()).hexdigest()[:6]
    )
    assert short_id("!!!") == "task-" + __import__("hashlib").sha1(b"!!!").hexdigest()[:6]
    scene = "tests/data/plan/scene.yaml"
    assert (
        main(
            [
                "teach",
                temple,
                "--skill",
                "temple",
                "--scene",
                scene,
                "--success",
                "[]",
                "--id",
                "Temple 1",
            ]
        )
        == 1
    )
    assert (
        capsys.readouterr().err
        == "lyra: --id: String should match pattern '^[a-z0-9][a-z0-9_\\-]*$'\n"
    )


def test_ctrl_c_while_waiting_for_a_manual_answer_says_how_to_resume(tmp_path: Path) -> None:
    import signal
    import time

    (tmp_path / "skills").mkdir()
    answers = tmp_path / "answers"
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lyra.cli",
            "learn",
            str(Path(__file__).resolve().parents[1] / "curricula/ravens/basics.yaml"),
            "--workspace",
            str(tmp_path),
            "--llm",
            f"manual:{answers}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LYRA_EMBEDDER": "none"},
        preexec_fn=as_from_a_terminal,
    )
    deadline = time.monotonic() + 120
    # The prompt is written to a .partial file first and renamed: wait for the renamed one,
    # which lyra writes just before it starts waiting for the answer.
    while not list(answers.glob("*.prompt.md")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert list(answers.glob("*.prompt.md")), "no prompt was written"
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130
    assert "Traceback" not in err
    assert err.endswith(
        "lyra: interrupted; what was accepted is kept, and the same command resumes from there\n"
    )


def test_every_command_takes_the_workspace_option(tmp_path: Path, monkeypatch, capsys) -> None:
    from lyra.cli import build_parser

    def lacking(name: str, parser: argparse.ArgumentParser) -> list[str]:
        """The commands and their actions (``demo learn``) without the option."""
        found = [] if any("--workspace" in a.option_strings for a in parser._actions) else [name]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub, subparser in action.choices.items():
                    found += lacking(f"{name} {sub}".strip(), subparser)
        return found

    assert lacking("", build_parser()) == [""]  # only `lyra` itself, which runs nothing
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "wave.py").write_text(
        'from lyra.api import move_ee\n\n\ndef wave() -> None:\n    """Wave once."""\n'
        "    move_ee((0.4, 0.0, 0.3))\n"
    )
    monkeypatch.chdir(tmp_path.parent)
    # Recorded, so that what the option sets is taken back after the test.
    monkeypatch.setenv("LYRA_WORKSPACE", "")
    for where in (["--workspace", str(tmp_path), "list"], ["list", "--workspace", str(tmp_path)]):
        assert main(["skills", *where]) == 0
        assert capsys.readouterr().out.split() == ["wave", "Wave", "once."]


def test_progress_says_parts_done_successes_and_time_left() -> None:
    import io
    import re

    from lyra.progress import Bar

    stream = io.StringIO()
    bar = Bar(4, "house", stream)
    for ok in (True, False, True, True):
        bar.step(ok)
    lines = stream.getvalue().splitlines()
    assert [re.sub(r"about \d+ s left", "about N s left", line) for line in lines] == [
        "[#####               ] 1/4 house: 1 ok, about N s left",
        "[##########          ] 2/4 house: 1 ok, about N s left",
        "[###############     ] 3/4 house: 2 ok, about N s left",
        "[####################] 4/4 house: 3 ok",
    ]
