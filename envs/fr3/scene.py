"""An FR3 scene: cubes on the table the robot stands on, in the robot's base frame.

The layout is the scene's own, the same on every seed, as a real table's is: the seed moves
nothing. A tabletop scene (the ``ravens`` backend's) is laid out here as it is there, seed and
all (:func:`from_tabletop`): both put the robot's base at the origin with the table at z = 0, so
the skills see the same frame and the tabletop's curricula run on the FR3. The prompt pack and
the sample scene live here too, since they only describe it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from lyra.backend import Sample
from lyra.errors import LayoutError, LyraError
from lyra.prompts import PromptPack

if TYPE_CHECKING:
    from envs.ravens.scene import SceneSpec

MAX_CUBE = 0.075  # metres: the FR3's hand opens 8 cm
ZONE_THICKNESS = 0.001


class Cube(BaseModel):
    """One cube, resting on the table (or at ``z`` on another).

    Attributes:
        name: what skills call it.
        color: its colour name.
        kind: what ``object_names(kind=...)`` finds it as (a tabletop scene's are blocks).
        position: x, y of its centre (and z; by default it rests on the table).
        yaw_deg: its turn about the vertical axis.
        size: its edge, in metres.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    color: str = "red"
    kind: str = "cube"
    position: tuple[float, float] | tuple[float, float, float]
    yaw_deg: float = 0.0
    size: float = Field(0.05, gt=0.01, le=MAX_CUBE)

    @property
    def centre(self) -> tuple[float, float, float]:
        """Where its centre starts."""
        x, y, *z = self.position
        return (x, y, z[0] if z else self.size / 2)


class Zone(BaseModel):
    """A flat mark on the table (tape, a printed square): a place to build on, not a thing to move.

    Attributes:
        name: what skills call it.
        color: its colour name.
        position: x, y of its centre on the table.
        yaw_deg: its turn about the vertical axis.
        size: its extents along its own x and y, in metres.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    color: str = "green"
    position: tuple[float, float]
    yaw_deg: float = 0.0
    size: tuple[float, float] = (0.12, 0.12)


class FR3Scene(BaseModel):
    """Cubes on the table in front of an FR3, and marks on the table.

    Attributes:
        objects: the cubes.
        zones: the marks.
    """

    model_config = ConfigDict(extra="forbid")

    objects: list[Cube] = Field(min_length=1)
    zones: list[Zone] = Field(default_factory=list)


def from_tabletop(spec: SceneSpec, seed: int) -> FR3Scene:
    """The FR3 scene of a tabletop scene laid out on a seed: its blocks as cubes, its zones.

    The frames agree (base at the origin, x away from the robot, table at z = 0), so every
    object stands where the tabletop puts it on that seed.

    Raises:
        LayoutError: an object has no FR3 counterpart (a plate, a beam, a block that is not a
            cube or is too wide for the hand), or the objects do not fit (the tabletop's error).
    """
    from envs.ravens.scene import layout

    cubes, zones = [], []
    for placed in layout(spec, seed):
        yaw_deg = math.degrees(placed.yaw)
        edge = placed.size[0]
        if placed.kind == "zone":
            zones.append(
                Zone(
                    name=placed.name,
                    color=placed.color,
                    position=(placed.x, placed.y),
                    yaw_deg=yaw_deg,
                    size=(placed.size[0], placed.size[1]),
                )
            )
        elif placed.kind == "block" and len(set(placed.size)) == 1 and edge <= MAX_CUBE:
            cubes.append(
                Cube(
                    name=placed.name,
                    color=placed.color,
                    kind=placed.kind,
                    position=(placed.x, placed.y, placed.z),
                    yaw_deg=yaw_deg,
                    size=edge,
                )
            )
        else:
            raise LayoutError(
                f"{placed.name}: the fr3 backend lays out cubes up to {MAX_CUBE * 100:.1f} cm "
                f"(blocks with equal sides) and zones, not a {placed.kind} of "
                f"{' x '.join(f'{v * 100:g}' for v in placed.size)} cm"
            )
    return FR3Scene(objects=cubes, zones=zones)


def fr3_scene(scene: Any, seed: int) -> FR3Scene:
    """The FR3 scene to lay out.

    One as it is, a tabletop scene as it lies on the seed, or a mapping of an FR3 scene's fields.
    """
    from envs.ravens.scene import SceneSpec

    if isinstance(scene, FR3Scene):
        return scene
    if isinstance(scene, SceneSpec):
        return from_tabletop(scene, seed)
    return FR3Scene.model_validate(scene)


def object_names(scene: FR3Scene, seed: int) -> list[str]:
    """The cubes and zones of a scene (the seed moves none)."""
    if not isinstance(scene, FR3Scene):
        raise LyraError("an FR3 scene lists its cubes: `objects: [{name: red, position: [x, y]}]`")
    return sorted([cube.name for cube in scene.objects] + [zone.name for zone in scene.zones])


SAMPLE = Sample(
    scene={
        "objects": [
            {"name": "red_cube", "color": "red", "position": [0.45, 0.12]},
            {"name": "blue_cube", "color": "blue", "position": [0.55, -0.12]},
        ]
    },
    objects=("red_cube", "blue_cube"),
    free=(0.5, 0.0, 0.025),
)

PACK = PromptPack(
    frame=(
        "The robot's base is at the origin on the table (z = 0), x points away from it, y to\n"
        "  its left. The tool point is between the fingertips, 0.1034 m below the flange; the\n"
        "  gripper points down and turns about the vertical. The arm moves only inside\n"
        "  x 0.25-0.75, y -0.40-0.40, z 0.01-0.60 m."
    ),
    scene_legend="name, kind, colour, the centre x/y/z in metres, size x/y/z",
)
