from __future__ import annotations

import os
from pathlib import Path

import libcst as cst
import pytest

from lyra.library.edit import (
    ImportSpec,
    add_import_specs,
    drop_unused_skill_imports,
    merge_and_validate,
    new_module,
    stage_answer,
    stage_new_skill,
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


def test_a_helper_is_replaced_in_place_or_added_at_the_end() -> None:
    replaced = merge_and_validate(
        MODULE, "def _lift(x: float) -> float:\n    return 2 * x\n", "grab"
    )
    assert replaced == MODULE.replace("    return x + _CLEAR\n", "    return 2 * x\n").replace(
        "def _lift(x: float) -> float:  # keep me", "def _lift(x: float) -> float:"
    )
    added = merge_and_validate(MODULE, "def _drop() -> None:\n    place(ee_pose())\n", "grab")
    assert (
        added
        == MODULE.replace(
            "from lyra.api import pick  # the only primitive so far",
            "from lyra.api import ee_pose, pick, place  # the only primitive so far",
        )
        + "\n\ndef _drop() -> None:\n    place(ee_pose())\n"
    )


def test_added_imports_are_merged_sorted_into_sections_and_never_duplicated() -> None:
    source = "import math\n\nfrom lyra.api import pick\n\n\ndef f():\n    pass\n"
    specs = [
        ImportSpec("lyra.api", "place"),
        ImportSpec("lyra.api", "pick"),
        ImportSpec(None, "math"),
        ImportSpec(None, "numpy", "np"),
        ImportSpec("skills.stack", "stack"),
    ]
    new = add_import_specs(cst.parse_module(source), specs).code
    assert new == (
        "import math\n\nimport numpy as np\n\nfrom lyra.api import pick, place\n"
        "from skills.stack import stack\n\n\ndef f():\n    pass\n"
    )
    assert add_import_specs(cst.parse_module(new), [ImportSpec("lyra.api", "place")]).code == new


def test_merge_keeps_untouched_code_and_adds_only_needed_imports() -> None:
    answer = (
        "import math\n"
        "import numpy as np\n"
        "from lyra.api import pick, place\n\n"
        "def grab(obj: str, *, lift: bool = False) -> None:\n"
        "    pick(obj)\n"
        "    if lift:\n"
        "        place(relative_point(obj, 0.0, dz=_lift(math.pi)))\n"
    )
    assert merge_and_validate(MODULE, answer, "grab", ["stack"]) == (
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


def test_merge_refuses_top_level_code() -> None:
    with pytest.raises(ValidationError) as caught:
        merge_and_validate(
            MODULE, "def grab(obj: str) -> None:\n    pick(obj)\n\ngrab('a')\n", "grab"
        )
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
    text = merge_and_validate(None, 'def f() -> None:\n    """Do nothing."""\n    return None', "f")
    assert text == 'def f() -> None:\n    """Do nothing."""\n    return None\n'


TOWER_MODULE = '''\
import math

from skills.put_on import put_on
from skills.lift import lift
from skills.lower import lower
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
    merged = merge_and_validate(TOWER_MODULE, answer, "tower", skills=["put_on", "lift", "lower"])
    # put_on and lift are no longer called: their imports go, the blank line above them stays;
    # lyra.api imports are not touched.
    assert merged == (
        "import math\n"
        "\n"
        "from skills.lower import lower\n"
        "from lyra.api import object_pose, put_first_on_second\n"
        "\n"
        "\n" + answer
    )


def test_of_a_skill_import_only_the_names_still_used_stay() -> None:
    # The policy allows one name per skill import, but a hand-edited module may hold more.
    text = "from skills.lift import lift, lower\n\nlower(1.0)\n"
    assert drop_unused_skill_imports(cst.parse_module(text), text)[1] == (
        "from skills.lift import lower\n\nlower(1.0)\n"
    )
