"""A tabletop scene of three blocks, as a file, and a demonstration really recorded on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lyra.backend import Backend, load_scene_file
from lyra.demos.format import Demonstration, save
from lyra.demos.record import Recording
from lyra.demos.steps import StepLog
from lyra.embodiment import use
from lyra.geometry import Point

SCENE = (
    "objects:\n"
    "  - {type: block, color: red, poses: [{x: 0.45, y: -0.1}]}\n"
    "  - {type: block, color: blue, poses: [{x: 0.55, y: 0.12}]}\n"
    "  - {type: block, color: green, poses: [{x: 0.4, y: 0.15}]}\n"
)


@pytest.fixture
def scene_file(tmp_path: Path) -> Path:
    path = tmp_path / "scene.yaml"
    path.write_text(SCENE)
    return path


def record(backend: Backend, scene_file: Path, frames: Path | None = None) -> Recording:
    """A person's three steps: a stack, a pick, a place on the table."""
    name, scene = load_scene_file(scene_file)
    with use(backend):
        recording = Recording(backend, name, scene, 0, StepLog(backend, frames), print)
        recording.log.run("put_first_on_second", ["red_block", "blue_block"], {})
        recording.log.run("object_pose", ["red_block"], {})
        recording.log.run("pick", ["green_block"], {})
        recording.log.run("place", [Point(0.5, -0.2, 0.02)], {"yaw_deg": 30.0})
    return recording


@pytest.fixture
def demo_file(ravens: Backend, scene_file: Path) -> Path:
    """A demonstration recorded on the tabletop, as a file."""
    demo: Demonstration = record(ravens, scene_file).demonstration("stack red on blue")
    return save(demo, scene_file.parent / "demo.json")


def edit(path: Path, change: Any) -> Path:
    """The demonstration file with its JSON changed by ``change(data)``."""
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    return path
