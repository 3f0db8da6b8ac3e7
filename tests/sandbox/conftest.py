from __future__ import annotations

from pathlib import Path

import pytest

from lyra.embodiment import ObjectState, WorkspaceBox
from lyra.geometry import Point, Pose, Size, quat_from_yaw

BLOCK = Size(0.04, 0.04, 0.04)


class FakeTable:
    """A kinematic stand-in for a backend: objects jump where they are put, nothing else moves."""

    def __init__(self) -> None:
        self.poses = {
            "red_block": Pose(Point(0.4, 0.1, 0.02), quat_from_yaw(0.0)),
            "blue_block": Pose(Point(0.5, -0.1, 0.02), quat_from_yaw(0.0)),
        }
        self.held: str | None = None
        self.calls: list[str] = []

    def object_names(self, kind: str | None = None, color: str | None = None) -> list[str]:
        return sorted(self.poses)

    def object_pose(self, name: str) -> Pose:
        return self.poses[name]

    def object_size(self, name: str) -> Size:
        return BLOCK

    def bounding_box(self, name: str) -> tuple[Point, Point]:
        c = self.poses[name].position
        return Point(c.x - 0.02, c.y - 0.02, c.z - 0.02), Point(c.x + 0.02, c.y + 0.02, c.z + 0.02)

    def ee_pose(self) -> Pose:
        return Pose(Point(0.3, 0.0, 0.3), quat_from_yaw(0.0))

    def move_ee(self, pose: Pose) -> None:
        self.calls.append("move_ee")

    def pick(self, name: str) -> None:
        self.calls.append(f"pick {name}")
        self.held = name

    def place(self, pose: Pose) -> None:
        self.calls.append("place")
        if self.held is not None:
            self.poses[self.held] = pose
        self.held = None

    def put_first_on_second(self, obj: str, target: str | Pose, yaw: float | None) -> None:
        self.calls.append(f"put {obj}")
        where = self.poses[target] if isinstance(target, str) else target
        top = where.position.z + 0.04 if isinstance(target, str) else 0.02
        self.poses[obj] = Pose(where.position.with_z(top), where.orientation)

    def held_object(self) -> str | None:
        return self.held

    def workspace(self) -> WorkspaceBox:
        return WorkspaceBox(Point(0.15, -0.45, 0.0), Point(0.8, 0.45, 0.6), 0.0)

    def world_state(self) -> dict[str, ObjectState]:
        return {
            name: ObjectState(name, "block", name.split("_")[0], pose, BLOCK)
            for name, pose in self.poses.items()
        }


@pytest.fixture
def table() -> FakeTable:
    return FakeTable()


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    """A skills folder with one good skill, one that divides by zero and one that breaks policy."""
    folder = tmp_path / "skills"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "put_on.py").write_text(
        "from lyra.api import put_first_on_second\n"
        "\n"
        "\n"
        "def put_on(obj: str, target: str) -> None:\n"
        '    """Put one object on another."""\n'
        "    put_first_on_second(obj, target)\n"
    )
    (folder / "count_per.py").write_text(
        "from lyra.api import object_names\n"
        "\n"
        "\n"
        "def count_per(groups: int) -> float:\n"
        '    """Objects per group."""\n'
        "    names = object_names()\n"
        "    return len(names) / groups\n"
    )
    (folder / "shell.py").write_text(
        "from skills.put_on import put_on\n"
        "import os\n"
        "\n"
        "\n"
        "def shell(obj: str) -> None:\n"
        '    """Run a shell command."""\n'
        "    os.system('true')\n"
    )
    (folder / "uses_shell.py").write_text(
        "from skills.shell import shell\n"
        "\n"
        "\n"
        "def uses_shell() -> None:\n"
        '    """Call a skill that breaks the rules."""\n'
        "    shell('x')\n"
    )
    return folder


@pytest.fixture
def toy_registered_spec(monkeypatch: pytest.MonkeyPatch):
    """The tests' toy backend, registered for one test, requiring a layer no machine has."""
    import dataclasses

    import lyra.backend
    from tests.backends.toy import SPEC

    spec = dataclasses.replace(SPEC, confinement=("tpm",))
    monkeypatch.setitem(lyra.backend._REGISTRY.items, spec.name, spec)
    return spec
