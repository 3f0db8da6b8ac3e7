"""docs/first-skill.md, followed command by command, with a recorded session answering."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from lyra.errors import LyraError
from lyra.init import init_workspace

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "first-skill.md"
# The walkthrough's model, answered here by the basics curriculum's recorded first task.
LIVE = "--llm openai:gpt-4o"
REPLAY = f"--llm replay:{ROOT / 'curricula/ravens/sessions/basics.jsonl'}"


def doc_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


@pytest.mark.slow
def test_the_walkthrough_runs_as_written(tmp_path: Path) -> None:
    commands = doc_commands()
    assert LIVE in "\n".join(commands)
    # A machine with no git identity still gets its commits (CI has none).
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "a person",
        "GIT_AUTHOR_EMAIL": "person@example.com",
        "GIT_COMMITTER_NAME": "a person",
        "GIT_COMMITTER_EMAIL": "person@example.com",
        "LYRA_WORKSPACE": "",
    }
    cwd = tmp_path
    outputs: dict[str, str] = {}
    for command in commands:
        words = shlex.split(command.replace(LIVE, REPLAY))
        if words[0] == "cd":
            cwd = cwd / words[1]
            continue
        argv = [sys.executable, "-m", "lyra.cli", *words[1:]] if words[0] == "lyra" else words
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{command}:\n{done.stdout}\n{done.stderr}"
        outputs[" ".join(words[:2])] = done.stdout
    assert outputs["lyra init"].splitlines()[:2] == [
        "made an empty workspace in my-robot",
        "a git repository with a first commit: every accepted step will be one more",
    ]
    shown = outputs["lyra scene"].splitlines()
    assert [line.split()[0] for line in shown] == ["object", "blue_block", "red_block"]
    assert "accepted after 1 round(s); put_on kept" in outputs["lyra learn"]
    assert "def put_on(obj: str, target: str" in outputs["lyra skills"]
    assert "1 passed, 0 failed" in outputs["lyra check"]
    assert [line.split(" ", 1)[1] for line in outputs["git log"].splitlines()] == [
        "lyra: first/red-on-blue: put_on: added put_on",
        "lyra init: an empty workspace",
    ]
    assert "  1. first_red_on_blue  rrf" in outputs["lyra memory"]
    assert "  1. put_on  rrf" in outputs["lyra memory"]
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.split()
    assert tracked == [
        ".gitignore",
        "curricula/first.yaml",
        "examples/first_red_on_blue.yaml",
        "lyra.toml",
        "skills/__init__.py",
        "skills/put_on.py",
    ]


def test_init_refuses_a_folder_with_files_and_copies_the_reference(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(LyraError) as error:
        init_workspace(tmp_path / "mine")
    assert str(error.value) == (
        f"{tmp_path / 'mine'} is not an empty folder: give a new or empty one (nothing was changed)"
    )
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]
    copy = tmp_path / "reference"
    init_workspace(copy, from_reference=True)
    for folder in ("skills", "curricula", "examples"):
        shipped = sorted(
            str(p.relative_to(ROOT / folder))
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        )
        assert (
            sorted(
                str(p.relative_to(copy / folder)) for p in (copy / folder).rglob("*") if p.is_file()
            )
            == shipped
        )
