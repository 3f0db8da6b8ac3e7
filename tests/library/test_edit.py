from __future__ import annotations

import os
from pathlib import Path

import pytest

from lyra.examples import Example, load_example, save_example
from lyra.library.edit import (
    ImportSpec,
    add_imports,
    merge_answer,
    new_module,
    replace_body,
    replace_docstring,
    replace_signature,
    stage_answer,
    stage_new_skill,
    stage_rename,
    upsert_helper,
    write_atomic,
)
from lyra.library.errors import SignatureError, ValidationError
from lyra.workspace import Workspace

MODULE = '''\
"""Grip helpers."""

from lyra.api import pick  # the only primitive so far

# Lift clearance, measured on the real table.
_CLEAR = 0.1


def _lift(x: float) -> float:  # keep me
    return x + _CLEAR


def grab(obj: str) -> None:
    """Grab an object.

    Args:
        obj: what to grab.
    """
    # first, pick it
    pick(obj)
'''


def test_replace_body_keeps_docstring_comments_and_helpers() -> None:
    assert replace_body(MODULE, "grab", "pick(obj)\nplace(ee_pose())") == MODULE.replace(
        "    # first, pick it\n    pick(obj)\n", "    pick(obj)\n    place(ee_pose())\n"
    )


def test_replace_docstring() -> None:
    new = replace_docstring(MODULE, "grab", "Grab firmly.\n\nArgs:\n    obj: the object.")
    assert new == MODULE.replace(
        '    """Grab an object.\n\n    Args:\n        obj: what to grab.\n    """\n',
        '    """Grab firmly.\n\n    Args:\n        obj: the object.\n    """\n',
    )


def test_replace_signature_keeps_body() -> None:
    new = replace_signature(MODULE, "grab", "def grab(obj: str, *, lift: bool = False) -> None:")
    assert new == MODULE.replace(
        "def grab(obj: str) -> None:", "def grab(obj: str, *, lift: bool = False) -> None:"
    )


def test_upsert_helper_replaces_and_adds() -> None:
    replaced = upsert_helper(MODULE, "def _lift(x: float) -> float:\n    return 2 * x\n")
    assert replaced == MODULE.replace("    return x + _CLEAR\n", "    return 2 * x\n").replace(
        "def _lift(x: float) -> float:  # keep me", "def _lift(x: float) -> float:"
    )
    added = upsert_helper(MODULE, "def _drop() -> None:\n    place(ee_pose())\n")
    assert (
        added
        == MODULE.replace(
            "from lyra.api import pick  # the only primitive so far",
            "from lyra.api import ee_pose, pick, place  # the only primitive so far",
        )
        + "\n\ndef _drop() -> None:\n    place(ee_pose())\n"
    )


def test_add_imports_merges_and_never_duplicates() -> None:
    source = "import math\n\nfrom lyra.api import pick\n\n\ndef f():\n    pass\n"
    new = add_imports(
        source,
        [
            ImportSpec("lyra.api", "place"),
            ImportSpec("lyra.api", "pick"),
            ImportSpec(None, "math"),
            ImportSpec(None, "numpy", "np"),
            ImportSpec("skills.stack", "stack"),
        ],
    )
    assert new == (
        "import math\n\nimport numpy as np\n\nfrom lyra.api import pick, place\n"
        "from skills.stack import stack\n\n\ndef f():\n    pass\n"
    )
    assert add_imports(new, [ImportSpec("lyra.api", "place")]) == new


def test_merge_answer_keeps_untouched_code_and_adds_only_needed_imports() -> None:
    answer = (
        "import math\n"
        "import numpy as np\n"
        "from lyra.api import pick, place\n\n"
        "def grab(obj: str, *, lift: bool = False) -> None:\n"
        "    pick(obj)\n"
        "    if lift:\n"
        "        place(relative_point(obj, 0.0, dz=_lift(math.pi)))\n"
    )
    assert merge_answer(MODULE, answer, ["stack"]) == (
        '"""Grip helpers."""\n\n'
        "import math\n\n"
        "from lyra.api import pick, place, relative_point  # the only primitive so far\n\n"
        "# Lift clearance, measured on the real table.\n_CLEAR = 0.1\n\n\n"
        "def _lift(x: float) -> float:  # keep me\n    return x + _CLEAR\n\n\n"
        "def grab(obj: str, *, lift: bool = False) -> None:\n"
        '    """Grab an object.\n\n    Args:\n        obj: what to grab.\n    """\n'
        "    pick(obj)\n    if lift:\n"
        "        place(relative_point(obj, 0.0, dz=_lift(math.pi)))\n"
    )


def test_merge_answer_refuses_top_level_code() -> None:
    with pytest.raises(ValidationError) as caught:
        merge_answer(MODULE, "def grab(obj: str) -> None:\n    pick(obj)\n\ngrab('a')\n")
    assert str(caught.value) == (
        "the answer has statements outside any function; nothing was changed\n"
        "  line 4: only imports, constants and function definitions belong at the top level "
        "of a skill module: move this statement into the skill function"
    )


def test_new_module_from_header_imports_annotation_types() -> None:
    header = (
        'def go(to: Point) -> None:\n    """Go there.\n\n    Args:\n        to: where.\n    """'
    )
    assert new_module(header) == (
        "go",
        "from lyra.api import Point\n\n\n"
        "def go(to: Point) -> None:\n"
        '    """Go there.\n\n    Args:\n        to: where.\n    """\n'
        '    raise NotImplementedError("go is not written yet: teach it a task first")\n',
    )


def test_stage_new_skill_then_answer_writes_the_body(workspace: Workspace) -> None:
    header = (
        'def go(to: Point) -> None:\n    """Go there.\n\n    Args:\n        to: where.\n    """'
    )
    stage_new_skill(workspace, header).apply()
    # A stub's signature is still free: its body was never accepted.
    patch = stage_answer(
        workspace, "go", "def go(to: Point, speed: float) -> None:\n    move_ee(to)\n"
    )
    assert patch.summary == "go: changed go"
    patch.apply()
    assert (workspace.skills_dir / "go.py").read_text() == (
        "from lyra.api import Point, move_ee\n\n\n"
        "def go(to: Point, speed: float) -> None:\n"
        '    """Go there.\n\n    Args:\n        to: where.\n    """\n'
        "    move_ee(to)\n"
    )


def test_unresolved_names_and_policy_are_reported_before_writing(workspace: Workspace) -> None:
    path = workspace.skills_dir / "stack.py"
    before = path.read_text()
    answer = "def stack(blocks: list[str]) -> None:\n    stack_blocks(blocks)\n    eval('1')\n"
    with pytest.raises(ValidationError) as caught:
        stage_answer(workspace, "stack", answer)
    assert str(caught.value) == (
        "skills/stack.py was not changed: fix these problems and answer again\n"
        "  line 9: name 'stack_blocks' is not defined: import it from skills.<module> or "
        "lyra.api, or define it\n"
        "  line 10: 'eval' is not allowed in skills: write the expression directly in the skill"
    )
    assert path.read_text() == before


def test_extension_with_keyword_only_default_is_accepted(workspace: Workspace) -> None:
    answer = (
        "def stack(blocks: list[str], *, gap: float = 0.0) -> None:\n"
        "    for lower, upper in zip(blocks, blocks[1:]):\n"
        "        pick_onto(upper, lower)\n"
    )
    patch = stage_answer(workspace, "stack", answer)
    assert patch.summary == "stack: changed stack"
    assert "def stack(blocks: list[str], *, gap: float = 0.0) -> None:" in patch.changes[0].after


def test_extension_that_breaks_call_sites_is_refused(workspace: Workspace) -> None:
    answer = "def stack(blocks: list[str], height: float) -> None:\n    pick_onto(blocks[0], 'x')\n"
    with pytest.raises(SignatureError) as caught:
        stage_answer(workspace, "stack", answer)
    assert str(caught.value) == (
        "the new signature of 'stack' would break earlier uses; skills/stack.py was not "
        "changed: extend the skill so every earlier call still works\n"
        "  new parameter 'height' must be keyword-only with a default that reproduces the old "
        "behaviour: `def stack(..., *, height=<old value>)`\n"
        "  examples/tower.yaml:6: `stack(['a', 'b'])` would fail: missing a required argument: "
        "'height'"
    )


def test_removed_parameter_names_the_skill_call_site(workspace: Workspace) -> None:
    answer = "def pick_onto(obj: str) -> None:\n    pick(obj)\n"
    with pytest.raises(SignatureError) as caught:
        stage_answer(workspace, "pick_onto", answer)
    assert caught.value.problems == (
        "skills/stack.py:11: `pick_onto(upper, lower)` would fail: too many positional arguments",
    )


def test_rename_updates_module_call_sites_and_examples(workspace: Workspace) -> None:
    patch = stage_rename(workspace, "pick_onto", "put_on")
    patch.apply()
    skills = workspace.skills_dir
    assert not (skills / "pick_onto.py").exists()
    assert (
        (skills / "put_on.py")
        .read_text()
        .startswith(
            "from lyra.api import pick, place, relative_point\n\n\n"
            "def put_on(obj: str, target: str) -> None:\n"
        )
    )
    assert (skills / "stack.py").read_text().splitlines()[0] == "from skills.put_on import put_on"
    assert "        put_on(upper, lower)\n" in (skills / "stack.py").read_text()
    patch = stage_rename(workspace, "stack", "tower")
    patch.apply()
    example = load_example(workspace.examples_dir / "tower.yaml")
    assert example.code == "from skills.tower import tower\n\ntower(['a', 'b'])\n"
    assert example.skills == ["tower"]


def test_rename_of_bare_calls_in_plans_that_list_the_skill(workspace: Workspace) -> None:
    save_example(
        Example(
            id="bare", instruction="i", code="for b in ['x']:\n    stack([b])\n", skills=["stack"]
        ),
        workspace.examples_dir,
    )
    with pytest.raises(ValidationError):
        stage_rename(workspace, "stack", "pick_onto")
    stage_rename(workspace, "stack", "tower").apply()
    assert load_example(workspace.examples_dir / "bare.yaml").code == (
        "for b in ['x']:\n    tower([b])\n"
    )


def test_crash_between_temp_write_and_rename_keeps_old_module(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = workspace.skills_dir / "stack.py"
    before = path.read_text()

    def crash(src: str, dst: str) -> None:
        raise OSError("power cut")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="power cut"):
        write_atomic(path, "garbage\n")
    assert path.read_text() == before
    assert sorted(p.name for p in Path(workspace.skills_dir).iterdir()) == [
        "__init__.py",
        "pick_onto.py",
        "stack.py",
    ]


def test_a_new_module_ends_with_a_newline() -> None:
    from lyra.library.edit import merge_answer

    text = merge_answer(None, 'def f(x: int) -> None:\n    """Do nothing."""\n    return None')
    assert text == 'def f(x: int) -> None:\n    """Do nothing."""\n    return None\n'


TOWER_MODULE = '''\
import math

from skills.put_on import put_on
from skills.lift import lift, lower
from lyra.api import object_pose, put_first_on_second


def tower(names: list[str]) -> None:
    """Stack objects.

    Args:
        names: bottom first.
    """
    for above, below in zip(names[1:], names):
        put_on(above, below)
        lift(math.pi)
'''


def test_an_edit_drops_the_skill_imports_its_code_no_longer_uses() -> None:
    answer = (
        "def tower(names: list[str]) -> None:\n"
        '    """Stack objects.\n\n    Args:\n        names: bottom first.\n    """\n'
        "    for above, below in zip(names[1:], names):\n"
        "        put_first_on_second(above, below)\n"
        "        lower(object_pose(below).position.z)\n"
    )
    merged = merge_answer(TOWER_MODULE, answer, skills=["put_on", "lift"])
    # put_on is no longer called: its import goes, its blank line stays; of lift's module only
    # the name still used stays; lyra.api imports are not touched.
    assert merged == (
        "import math\n"
        "\n"
        "from skills.lift import lower\n"
        "from lyra.api import object_pose, put_first_on_second\n"
        "\n"
        "\n" + answer
    )
