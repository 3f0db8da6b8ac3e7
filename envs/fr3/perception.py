"""Where the objects are: one small interface, read from the simulator, a file or a camera.

The arm never looks at a simulator itself: on the real FR3 the same calls are answered by a
file a person measured (``static``) or by markers a calibrated camera sees (``markers``, in
:mod:`envs.fr3.markers`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Protocol

import yaml

from envs.fr3.scene import Cube, FR3Scene
from lyra.embodiment import ObjectState
from lyra.errors import LyraError
from lyra.geometry import Point, Pose, Size, quat_from_yaw


class Perception(Protocol):
    """Every object's state now; told where the arm put an object it cannot see move."""

    def objects(self) -> dict[str, ObjectState]:
        """Every object's state, by name."""
        ...

    def placed(self, name: str, pose: Pose) -> None:
        """The arm set ``name`` down at ``pose``."""
        ...


class SimPerception:
    """Object poses read from franky-sim's MuJoCo state (``sim.data``)."""

    def __init__(self, sim: Any, scene: FR3Scene) -> None:
        self._sim = sim
        self._cubes = scene.objects

    def objects(self) -> dict[str, ObjectState]:
        """Each cube's body pose as MuJoCo has it now."""
        data = self._sim.data
        states = {}
        for cube in self._cubes:
            body = data.body(cube.name)
            w, x, y, z = (float(v) for v in body.xquat)  # MuJoCo's order is w, x, y, z
            pose = Pose(Point.of(body.xpos), (x, y, z, w))
            states[cube.name] = ObjectState(
                cube.name, "cube", cube.color, pose, Size(cube.size, cube.size, cube.size)
            )
        return states

    def placed(self, name: str, pose: Pose) -> None:
        """Nothing to note: the simulator shows where it landed."""


class StaticPerception:
    """Object poses from a YAML file, or a scene, updated with where the arm sets each down.

    The file maps names to ``{position: [x, y, z], yaw_deg: 0, size: [x, y, z], color: red}``
    in the robot's base frame (``kind`` defaults to ``cube``). A scene gives its cubes where it
    lays them out: a person set the table up as the scene says.
    """

    def __init__(self, path: str | Path | FR3Scene) -> None:
        if isinstance(path, FR3Scene):
            self._states = {cube.name: _cube_state(cube) for cube in path.objects}
            return
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
            self._states = {name: _state(name, entry) for name, entry in data.items()}
        except (OSError, yaml.YAMLError, AttributeError, KeyError, TypeError, ValueError) as error:
            raise LyraError(
                f"{path}: cannot be read as object poses ({error}); write one entry a name: "
                "`red_cube: {position: [0.5, 0.1, 0.025], size: [0.05, 0.05, 0.05]}`"
            ) from None

    def objects(self) -> dict[str, ObjectState]:
        """The poses the file gave, and where the arm put what it moved."""
        return dict(self._states)

    def placed(self, name: str, pose: Pose) -> None:
        """Keep where ``name`` was set down."""
        state = self._states[name]
        self._states[name] = ObjectState(name, state.kind, state.color, pose, state.size)


def perception_from(path: str | Path) -> Perception:
    """The perception a file describes: ``markers`` for a calibration file, else ``static``.

    A calibration file is the YAML mapping with a ``camera`` section; any other file is read
    as object poses (and :class:`StaticPerception` says what is wrong with it).
    """
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        data = None
    if isinstance(data, dict) and "camera" in data:
        from envs.fr3.markers import MarkerPerception  # OpenCV, imported only when used

        return MarkerPerception.open(path)
    return StaticPerception(path)


def _state(name: str, entry: dict[str, Any]) -> ObjectState:
    yaw = math.radians(float(entry.get("yaw_deg", 0.0)))
    return ObjectState(
        name,
        str(entry.get("kind", "cube")),
        str(entry.get("color", "")),
        Pose(Point.of(entry["position"]), quat_from_yaw(yaw)),
        Size(*(float(v) for v in entry["size"])),
    )


def _cube_state(cube: Cube) -> ObjectState:
    yaw = math.radians(cube.yaw_deg)
    pose = Pose(Point(*cube.centre), quat_from_yaw(yaw))
    return ObjectState(cube.name, "cube", cube.color, pose, Size(cube.size, cube.size, cube.size))
