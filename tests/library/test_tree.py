from __future__ import annotations

from collections.abc import Callable

import pytest

from lyra.library.errors import UnknownSkillError
from lyra.library.parse import parse_library
from lyra.library.tree import SkillTree, runnable
from lyra.workspace import Workspace

TWO_TOWERS = '''\
from skills.pick_onto import pick_onto
from skills.stack import stack


def two_towers(left: list[str], right: list[str]) -> None:
    """Build two towers.

    Args:
        left: first tower.
        right: second tower.
    """
    stack(left)
    stack(right)
    pick_onto(right[-1], left[-1])
'''


@pytest.fixture
def tree(make_workspace: Callable[..., Workspace], sources: dict[str, str]) -> SkillTree:
    ws = make_workspace({**sources, "two_towers": TWO_TOWERS})
    return SkillTree.of(parse_library(ws.skills_dir))


def test_callers_callees_and_layers(tree: SkillTree) -> None:
    assert tree.callees["two_towers"] == ("pick_onto", "stack")
    assert tree.callers["pick_onto"] == ("stack", "two_towers")
    assert tree.roots() == ["two_towers"]
    assert tree.layers() == [["two_towers"], ["stack"], ["pick_onto"]]


def test_text_tree(tree: SkillTree) -> None:
    assert tree.render_text() == (
        "two_towers\n"
        "├── pick_onto  [pick, place, relative_point]\n"
        "└── stack\n"
        "    └── pick_onto  [pick, place, relative_point]\n"
    )
    assert tree.render_text("stack") == (
        "stack\n└── pick_onto  [pick, place, relative_point]\nused by: two_towers\n"
    )
    with pytest.raises(UnknownSkillError, match="Did you mean 'stack'"):
        tree.render_text("stak")


def test_svg_and_html(tree: SkillTree) -> None:
    svg = tree.to_svg()
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    assert svg.count("<rect") == 3
    assert svg.count("<line") == 3
    assert "<title>Build two towers.</title>" in svg
    html = tree.to_html()
    assert html.startswith("<!DOCTYPE html>")
    assert svg in html
    assert "<li><b>stack</b>: Stack blocks into a tower, first block at the bottom.</li>" in html


def test_runnable_drops_skills_that_reach_a_missing_primitive_through_others() -> None:
    calls = {
        "put_on": (["put_first_on_second"], []),
        "stack_tower": (["object_pose"], ["put_on"]),
        "reach": (["move_ee", "Point"], []),
        "carry_to": (["pick", "move_ee"], ["reach"]),
        "orphan": (["move_ee"], ["gone"]),
    }
    assert runnable(calls, {"put_first_on_second"}) == {"reach", "carry_to"}
    assert runnable(calls, set()) == {"put_on", "stack_tower", "reach", "carry_to"}
