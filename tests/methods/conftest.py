"""A noisy demonstration, really recorded on the tabletop, with its check."""

from __future__ import annotations

from pathlib import Path

import pytest

from lyra.backend import Backend, load_scene_file
from lyra.demos.format import save
from lyra.demos.record import Recording
from lyra.demos.steps import StepLog
from lyra.embodiment import use
from tests.demos.conftest import SCENE

INSTRUCTION = "stack red on blue"
ON_BLUE = [{"on_top": {"upper": "red_block", "lower": "blue_block"}}]


@pytest.fixture
def demo_file(ravens: Backend, tmp_path: Path) -> Path:
    """A person's demonstration with a mistake: red on green first, then red on blue."""
    scene_file = tmp_path / "scene.yaml"
    scene_file.write_text(SCENE)
    name, scene = load_scene_file(scene_file)
    with use(ravens):
        recording = Recording(
            ravens, name, scene, 0, StepLog(ravens, tmp_path / "stack-frames"), print
        )
        recording.log.run("put_first_on_second", ["red_block", "green_block"], {})
        recording.log.run("object_pose", ["blue_block"], {})
        recording.log.run("put_first_on_second", ["red_block", "blue_block"], {})
    demo = recording.demonstration(INSTRUCTION).model_copy(update={"check": ON_BLUE})
    return save(demo, tmp_path / "stack.json")
