from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from lyra.examples import Example, save_example
from lyra.workspace import Workspace

PICK_ONTO = '''\
from lyra.api import pick, place, relative_point


def pick_onto(obj: str, target: str) -> None:
    """Put one object on top of another.

    Args:
        obj: the object to move.
        target: the object to put it on.
    """
    pick(obj)
    place(relative_point(target, 0.0, dz=0.05))
'''

STACK = '''\
from skills.pick_onto import pick_onto


def stack(blocks: list[str]) -> None:
    """Stack blocks into a tower, first block at the bottom.

    Args:
        blocks: block names, bottom first.
    """
    for lower, upper in zip(blocks, blocks[1:]):
        pick_onto(upper, lower)
'''


MakeWorkspace = Callable[[dict[str, str]], Workspace]


@pytest.fixture
def make_workspace(tmp_path: Path) -> MakeWorkspace:
    """Return a builder of a workspace in tmp_path holding the given skill modules."""

    def make(modules: dict[str, str]) -> Workspace:
        skills = tmp_path / "skills"
        skills.mkdir(parents=True)
        (skills / "__init__.py").write_text('"""Skills."""\n')
        for name, text in modules.items():
            (skills / f"{name}.py").write_text(textwrap.dedent(text))
        return Workspace(tmp_path)

    return make


@pytest.fixture
def sources() -> dict[str, str]:
    return {"pick_onto": PICK_ONTO, "stack": STACK}


@pytest.fixture
def workspace(make_workspace: MakeWorkspace, sources: dict[str, str]) -> Workspace:
    ws = make_workspace(sources)
    save_example(
        Example(
            id="tower",
            instruction="stack the red blocks",
            code="from skills.stack import stack\n\nstack(['a', 'b'])\n",
            skills=["stack"],
            created="2024-01-01T00:00:00+00:00",
        ),
        ws.examples_dir,
    )
    return ws
