from __future__ import annotations

from collections.abc import Callable

from lyra.library.errors import SkillShapeError, SkillSyntaxError
from lyra.library.parse import ParseCache, brief_header, parse_library
from lyra.workspace import Workspace

MakeWorkspace = Callable[[dict[str, str]], Workspace]


def test_records_hold_signature_header_and_imports(workspace: Workspace) -> None:
    library = parse_library(workspace.skills_dir)
    record = library.get("stack")
    assert record.signature == "def stack(blocks: list[str]) -> None:"
    assert record.docstring == (
        "Stack blocks into a tower, first block at the bottom.\n\nArgs:\n"
        "    blocks: block names, bottom first."
    )
    assert record.header == (
        "def stack(blocks: list[str]) -> None:\n"
        '    """Stack blocks into a tower, first block at the bottom.\n\n'
        "    Args:\n        blocks: block names, bottom first.\n"
        '    """'
    )
    assert record.summary == "Stack blocks into a tower, first block at the bottom."
    assert record.calls_skills == ("pick_onto",)
    assert library.get("pick_onto").calls_primitives == ("pick", "place", "relative_point")
    assert library.problems == ()


def test_broken_modules_are_reported_and_the_rest_parse(make_workspace: MakeWorkspace) -> None:
    ws = make_workspace(
        {
            "ok": 'def ok() -> None:\n    """Do nothing."""\n',
            "broken": 'def broken() -> None:\n    """Oops."""\n    x = (1,\n',
            "crowded": 'def crowded() -> None:\n    """One."""\n\n\ndef extra() -> None:\n'
            '    """Two."""\n',
            "nameless": 'def other() -> None:\n    """Wrong name."""\n',
        },
    )
    library = parse_library(ws.skills_dir)
    assert list(library.records) == ["ok"]
    assert [(type(p), p.path.name, p.line, p.problem) for p in library.problems] == [
        (SkillSyntaxError, "broken.py", 3, "syntax error: '(' was never closed"),
        (
            SkillShapeError,
            "crowded.py",
            5,
            "public function 'extra' beside the skill 'crowded': make it a private helper "
            "('_extra') or move it to skills/extra.py",
        ),
        (
            SkillShapeError,
            "nameless.py",
            1,
            "no function named 'nameless': a skill module defines one public function named "
            "like its file; rename the function or the file",
        ),
    ]
    assert str(library.problems[0]) == (
        f"{ws.skills_dir / 'broken.py'}:3: syntax error: '(' was never closed"
    )


def test_missing_args_section_is_reported(make_workspace: MakeWorkspace) -> None:
    ws = make_workspace({"go": 'def go(x: int) -> None:\n    """Go there."""\n'})
    (problem,) = parse_library(ws.skills_dir).problems
    assert problem.problem == (
        "the docstring of 'go' has no Args: section: describe each parameter under 'Args:'"
    )


def test_cache_reparses_only_changed_modules(workspace: Workspace) -> None:
    cache = ParseCache()
    first = parse_library(workspace.skills_dir, cache)
    path = workspace.skills_dir / "stack.py"
    path.write_text(path.read_text().replace("into a tower", "into one tower"))
    second = parse_library(workspace.skills_dir, cache)
    assert second.get("pick_onto") is first.get("pick_onto")
    assert second.get("stack").summary == "Stack blocks into one tower, first block at the bottom."
    assert len(cache.outcomes) == 2


def test_a_brief_header_keeps_the_signature_and_the_summary() -> None:
    docstring = (
        "Press a button, straight down,\n"
        "and hold it.\n\n"
        "The gripper closes first, so the button cannot slip between the fingers.\n\n"
        "Args:\n"
        "    button: name of the button, as listed by object_names().\n"
        "    depth: how far in metres it goes down.\n\n"
        "Returns:\n"
        "    How far it went down, in metres."
    )
    assert brief_header("def press(button: str, depth: float) -> float:", docstring) == (
        "def press(button: str, depth: float) -> float:\n"
        '    """Press a button, straight down,\n'
        "    and hold it.\n"
        '    """'
    )
    one_line = brief_header("def wave() -> None:", "Wave the gripper.")
    assert one_line == 'def wave() -> None:\n    """Wave the gripper."""'
