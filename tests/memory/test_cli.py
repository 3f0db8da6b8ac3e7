"""``lyra memory rebuild`` and ``lyra memory search`` on a workspace with real skill modules."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from lyra.examples import Example, save_example
from lyra.memory import cli
from lyra.workspace import Workspace

pytest.importorskip("lyra.library.parse", reason="the skill parser is not in this checkout yet")

STACK = '''"""Stacking."""

from lyra.api import pick_place


def stack_two(top: str, base: str) -> None:
    """Stack one block on top of another block.

    Args:
        top: the block to move.
        base: the block it goes on.
    """
    pick_place(top, base)
'''


def run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="lyra")
    cli.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return int(args.func(args))


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    # Full-text only: the command path is under test here, not the embedder.
    monkeypatch.setenv("LYRA_EMBEDDER", "none")
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "stack_two.py").write_text(STACK)
    save_example(
        Example(
            id="stack_rb",
            instruction="stack the red block on the blue block",
            code="stack_two('red', 'blue')",
            skills=["stack_two"],
        ),
        tmp_path / "examples",
    )
    return Workspace(tmp_path)


def test_rebuild_then_search_prints_hits_and_reasons(
    workspace: Workspace, capsys: pytest.CaptureFixture[str]
):
    root = str(workspace.root)
    assert run(["memory", "--workspace", root, "rebuild"]) == 0
    assert capsys.readouterr().out == (
        f"indexed 1 skills and 1 examples in {workspace.root / '.lyra' / 'memory'} "
        "(embedder: none)\n"
    )
    assert run(["memory", "--workspace", root, "search", "stack red on blue", "--hint", "x"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == ["queries:", "  instruction: stack red on blue", "  hint 1: x"]
    assert lines[3:5] == [
        "examples (1):",
        "  1. stack_rb  rrf 0.0164  'stack the red block on the blue block'",
    ]
    assert lines[5].startswith("       found by instruction/text #1 (")
    assert lines[6:8] == [
        "skills (1):",
        "  1. stack_two  rrf 0.0164  via similar, called by example stack_rb",
    ]
    assert lines[8].startswith("       found by instruction/text #1 (")
    assert len(lines) == 9


def test_search_builds_a_missing_or_stale_index_and_says_so(
    workspace: Workspace, capsys: pytest.CaptureFixture[str]
):
    root = str(workspace.root)
    folder = workspace.root / ".lyra" / "memory"
    assert run(["memory", "--workspace", root, "search", "stack red on blue"]) == 0
    out, err = capsys.readouterr()
    bar = (
        "[##########          ] 1/2 memory indexed: 1 ok, 1 of 1 skills, about N s left\n"
        "[####################] 2/2 memory indexed: 2 ok, 1 of 1 examples\n"
    )
    assert re.sub(r"about \d+ s", "about N s", err) == bar + (
        f"lyra: memory: indexed 1 skills and 1 examples in {folder} (there was no index yet; "
        "embedder: none)\n"
    )
    assert "  1. stack_rb  rrf 0.0164  'stack the red block on the blue block'" in out
    # Current: nothing to say.
    assert run(["memory", "--workspace", root, "search", "stack red on blue"]) == 0
    assert capsys.readouterr().err == ""
    # A skill edited by hand (or changed by a git pull) is re-indexed before it is searched.
    skill = workspace.skills_dir / "stack_two.py"
    skill.write_text(skill.read_text().replace("Stack one block on top", "Pile one block onto"))
    assert run(["memory", "--workspace", root, "search", "pile a block onto another"]) == 0
    out, err = capsys.readouterr()
    assert re.sub(r"about \d+ s", "about N s", err) == bar + (
        f"lyra: memory: indexed 1 skills and 1 examples in {folder} (skills/ or examples/ "
        "changed since it was built; embedder: none)\n"
    )
    assert "  1. stack_two  rrf" in out
