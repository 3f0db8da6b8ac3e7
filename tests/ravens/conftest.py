from collections.abc import Iterator

import pytest

from envs.ravens.scene import load_scene
from envs.ravens.tabletop import Tabletop


@pytest.fixture
def table() -> Iterator[Tabletop]:
    tabletop = Tabletop()
    yield tabletop
    tabletop.close()


@pytest.fixture
def two_blocks(table: Tabletop) -> Tabletop:
    table.reset(
        load_scene(
            {
                "objects": [
                    {"type": "block", "color": "red", "poses": [{"x": 0.45, "y": -0.1}]},
                    {"type": "block", "color": "blue", "poses": [{"x": 0.55, "y": 0.12}]},
                ]
            }
        ),
        seed=0,
    )
    return table
