"""An FR3 scene: cubes on the table the robot stands on, in the robot's base frame.

The layout is the scene's own, the same on every seed, as a real table's is: the seed moves
nothing. The prompt pack and the sample scene live here too, since they only describe it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from lyra.backend import Sample
from lyra.errors import LyraError
from lyra.prompts import PromptPack


class Cube(BaseModel):
    """One cube, resting on the table (or at ``z`` on another).

    Attributes:
        name: what skills call it.
        color: its colour name.
        position: x, y of its centre (and z; by default it rests on the table).
        yaw_deg: its turn about the vertical axis.
        size: its edge, in metres.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    color: str = "red"
    position: tuple[float, float] | tuple[float, float, float]
    yaw_deg: float = 0.0
    size: float = Field(0.05, gt=0.01, le=0.075)  # the FR3's hand opens 8 cm

    @property
    def centre(self) -> tuple[float, float, float]:
        """Where its centre starts."""
        x, y, *z = self.position
        return (x, y, z[0] if z else self.size / 2)


class FR3Scene(BaseModel):
    """Cubes on the table in front of an FR3.

    Attributes:
        objects: the cubes.
    """

    model_config = ConfigDict(extra="forbid")

    objects: list[Cube] = Field(min_length=1)


def object_names(scene: FR3Scene, seed: int) -> list[str]:
    """The cubes of a scene (the seed moves none)."""
    if not isinstance(scene, FR3Scene):
        raise LyraError("an FR3 scene lists its cubes: `objects: [{name: red, position: [x, y]}]`")
    return sorted(cube.name for cube in scene.objects)


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
