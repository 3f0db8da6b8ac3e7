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
from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, RootModel, ValidationError

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
        self._states = {
            name: _state(name, entry) for name, entry in load_poses(Path(path)).root.items()
        }

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


class PerceptionFileError(LyraError):
    """A perception file that cannot be used; each problem reads ``file:line: field: message``.

    Attributes:
        problems: one line per problem.
    """

    def __init__(self, problems: list[str], how: str) -> None:
        self.problems = problems
        super().__init__("\n".join([*problems, how]))


class MeasuredObject(BaseModel):
    """One object of a poses file, where a person measured it in the robot's base frame."""

    model_config = ConfigDict(extra="forbid")

    position: tuple[float, float, float] = Field(description="its centre, x y z in metres")
    size: tuple[PositiveFloat, PositiveFloat, PositiveFloat] = Field(
        description="its extents along its own axes, in metres"
    )
    yaw_deg: float = 0.0
    color: str = ""
    kind: str = "cube"


class MeasuredPoses(RootModel[dict[str, MeasuredObject]]):
    """A poses file: each object by the name skills call it."""

    root: dict[str, MeasuredObject] = Field(min_length=1)


POSES_FORMAT = (
    "a poses file maps each object to where it is: `red_cube: {position: [0.5, 0.1, 0.025], "
    "size: [0.05, 0.05, 0.05], yaw_deg: 0, color: red}` (docs/fr3.md)"
)


def load_poses(path: Path) -> MeasuredPoses:
    """Read a poses file.

    Raises:
        PerceptionFileError: naming the file, the line and the field of each problem.
    """
    from lyra.curriculum import CurriculumError, located, read_yaml, schema_message

    try:
        data, lines = read_yaml(path)
    except CurriculumError as error:  # the YAML reader lyra's hand-edited files share
        raise PerceptionFileError(error.problems, POSES_FORMAT) from None
    try:
        return MeasuredPoses.model_validate(data)
    except ValidationError as invalid:
        problems = [
            located(path, item["loc"], lines, schema_message(item, MeasuredPoses))
            for item in invalid.errors()
        ]
        raise PerceptionFileError(problems, POSES_FORMAT) from None


def _state(name: str, entry: MeasuredObject) -> ObjectState:
    yaw = math.radians(entry.yaw_deg)
    return ObjectState(
        name,
        entry.kind,
        entry.color,
        Pose(Point(*entry.position), quat_from_yaw(yaw)),
        Size(*entry.size),
    )


def _cube_state(cube: Cube) -> ObjectState:
    yaw = math.radians(cube.yaw_deg)
    pose = Pose(Point(*cube.centre), quat_from_yaw(yaw))
    return ObjectState(cube.name, "cube", cube.color, pose, Size(cube.size, cube.size, cube.size))
