from __future__ import annotations

import pytest

from lyra import cli
from lyra.library.edit import stage_answer
from lyra.library.history import record
from lyra.workspace import Workspace


@pytest.fixture(autouse=True)
def in_workspace(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LYRA_WORKSPACE", str(workspace.root))
    # Only this area's commands: the other areas are built and tested on their own.
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("lyra.library.cli",))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(["skills", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_list(capsys: pytest.CaptureFixture[str], workspace: Workspace) -> None:
    (workspace.skills_dir / "broken.py").write_text("def broken(:\n")
    assert run(capsys, "list") == (
        0,
        "pick_onto  Put one object on top of another.\n"
        "stack      Stack blocks into a tower, first block at the bottom.\n"
        "not a valid skill: skills/broken.py:1: syntax error: invalid syntax\n",
        "",
    )


def test_show(capsys: pytest.CaptureFixture[str], workspace: Workspace) -> None:
    status, out, _ = run(capsys, "show", "pick_onto")
    assert status == 0
    assert out == (
        "pick_onto  (skills/pick_onto.py)\n\n"
        "def pick_onto(obj: str, target: str) -> None:\n"
        '    """Put one object on top of another.\n\n'
        "    Args:\n        obj: the object to move.\n        target: the object to put it on.\n"
        '    """\n\n'
        "uses skills: (none)\n"
        "uses primitives: pick, place, relative_point\n"
        "used by: stack\n"
        "examples: (none)\n"
        "(the module: lyra skills show pick_onto --source)\n"
    )
    assert run(capsys, "show", "stack")[1].endswith(
        "used by: (none)\nexamples: tower\n(the module: lyra skills show stack --source)\n"
    )
    status, out, _ = run(capsys, "show", "stack", "--source")
    module = (workspace.skills_dir / "stack.py").read_text()
    assert status == 0 and out.endswith("examples: tower\n\n" + module)


def test_show_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "show", "stak") == (
        1,
        "",
        "lyra: no skill named 'stak'. Did you mean 'stack'? Known skills: pick_onto, stack\n",
    )


def test_tree_with_svg_and_html(capsys: pytest.CaptureFixture[str], workspace: Workspace) -> None:
    svg, html = workspace.root / "t.svg", workspace.root / "t.html"
    status, out, _ = run(capsys, "tree", "--svg", str(svg), "--html", str(html))
    assert (status, out) == (
        0,
        f"stack\n└── pick_onto  [pick, place, relative_point]\nwrote {svg}\nwrote {html}\n",
    )
    assert svg.read_text().startswith("<svg")
    assert html.read_text().startswith("<!DOCTYPE html>")


def test_history_and_revert(capsys: pytest.CaptureFixture[str], workspace: Workspace) -> None:
    assert run(capsys, "history", "stack")[1] == (
        "no recorded versions of 'stack': only edits made through lyra are recorded (here, or as lyra's commits in git)\n"
    )
    patch = stage_answer(workspace, "stack", "def stack(blocks: list[str]) -> None:\n    pass\n")
    patch.apply()
    record(workspace, patch, task="t1", feedback="do less")
    lines = run(capsys, "history", "stack")[1].splitlines()
    assert [line.split("  ", 2)[0::2] for line in lines] == [
        ["v1", "as found before lyra's first edit"],
        ["v2", 'stack: changed stack  task t1  feedback "do less"'],
    ]
    assert run(capsys, "revert", "stack", "--to", "1") == (
        0,
        "stack: reverted to version 1 (recorded as version 3)\n",
        "",
    )
    assert "pick_onto(upper, lower)" in (workspace.skills_dir / "stack.py").read_text()
