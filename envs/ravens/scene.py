"""The typed scene spec a curriculum writes in YAML, and seeded placement of its objects.

A scene is a list of object groups (kind, colour, size, how many) placed either at fixed poses or
at random non-overlapping poses inside the placement area, from a seed. Frame: the robot base is
the origin, x points away from the robot, the table top is z = 0.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from lyra.backend import format_validation_error
from lyra.embodiment import ObjectState, WorldState
from lyra.errors import LayoutError, LyraError
from lyra.geometry import Point, Pose, Size

ObjectKind = Literal["block", "plate", "tile", "beam", "plank", "bowl", "zone"]

# Default sizes (x, y, z in metres), after the LYRA scenes; a spec may override any of them.
DEFAULT_SIZES: dict[str, tuple[float, float, float]] = {
    "block": (0.04, 0.04, 0.04),
    "plate": (0.18, 0.14, 0.01),
    "tile": (0.07, 0.06, 0.01),
    "beam": (0.18, 0.025, 0.025),
    "plank": (0.15, 0.05, 0.03),
    "bowl": (0.12, 0.12, 0.05),
    "zone": (0.12, 0.12, 0.001),
}

COLORS: dict[str, tuple[float, float, float]] = {
    "red": (0.84, 0.15, 0.16),
    "green": (0.17, 0.63, 0.17),
    "blue": (0.12, 0.47, 0.71),
    "yellow": (0.95, 0.8, 0.1),
    "orange": (1.0, 0.5, 0.05),
    "purple": (0.58, 0.4, 0.74),
    "pink": (0.89, 0.47, 0.76),
    "brown": (0.55, 0.34, 0.2),
    "gray": (0.5, 0.5, 0.5),
    "white": (0.95, 0.95, 0.95),
    "black": (0.1, 0.1, 0.1),
    "cyan": (0.09, 0.75, 0.81),
    "wood": (0.76, 0.6, 0.42),
}

Color = Literal[
    "red",
    "green",
    "blue",
    "yellow",
    "orange",
    "purple",
    "pink",
    "brown",
    "gray",
    "white",
    "black",
    "cyan",
    "wood",
]


class SceneError(LyraError):
    """A scene spec is malformed or cannot be laid out; the message names the field."""


class NoLayoutError(SceneError, LayoutError):
    """The scene's objects do not fit in its placement area on a seed."""


class FixedPose(BaseModel):
    """A fixed placement: centre x, y on the table and a yaw in degrees."""

    model_config = ConfigDict(extra="forbid")

    x: float
    y: float
    yaw_deg: float = 0.0
    z: float | None = Field(
        default=None, description="centre height; default: resting on the table"
    )


class ObjectGroup(BaseModel):
    """One or more identical objects."""

    model_config = ConfigDict(extra="forbid")

    type: ObjectKind
    color: Color = "gray"
    size: tuple[float, float, float] | None = None
    count: Annotated[int, Field(ge=1, le=100)] = 1
    name: str | None = Field(
        default=None,
        description="name of the object, or prefix of the names of several (default: COLOR_TYPE)",
    )
    mass: Annotated[float, Field(gt=0)] | None = None
    poses: list[FixedPose] | None = Field(
        default=None, description="fixed poses, one per object; default: random from the seed"
    )
    random_yaw: bool = Field(default=False, description="random yaw for randomly placed objects")
    jitter: tuple[Annotated[float, Field(ge=0)], Annotated[float, Field(ge=0)]] | None = Field(
        default=None,
        description="[metres, degrees]: fixed poses move by up to this much in x and y and turn "
        "by up to this much, drawn from the seed (piles and rows that differ from run to run)",
    )

    @field_validator("size")
    @classmethod
    def _positive(
        cls, size: tuple[float, float, float] | None
    ) -> tuple[float, float, float] | None:
        if size is not None and min(size) <= 0:
            raise ValueError(f"every extent must be positive, got {list(size)}")
        return size

    @model_validator(mode="after")
    def _one_pose_each(self) -> ObjectGroup:
        if self.poses is not None and len(self.poses) != self.count:
            raise ValueError(f"poses lists {len(self.poses)} poses for count {self.count}")
        if self.jitter is not None and self.poses is None:
            raise ValueError("jitter moves fixed poses: give the group `poses` too")
        return self

    @property
    def extents(self) -> tuple[float, float, float]:
        """The size, or the kind's default."""
        return self.size or DEFAULT_SIZES[self.type]

    def names(self) -> list[str]:
        """The names of this group's objects."""
        base = self.name or f"{self.color}_{self.type}"
        return [base] if self.count == 1 else [f"{base}_{i}" for i in range(self.count)]


class PlacementArea(BaseModel):
    """The rectangle on the table where random objects are laid out."""

    model_config = ConfigDict(extra="forbid")

    x: tuple[float, float] = (0.3, 0.7)
    y: tuple[float, float] = (-0.3, 0.3)
    margin: Annotated[float, Field(ge=0)] = 0.01


class SceneSpec(BaseModel):
    """A tabletop scene: object groups and where random ones may go."""

    model_config = ConfigDict(extra="forbid")

    objects: list[ObjectGroup] = Field(default_factory=list)
    area: PlacementArea = Field(default_factory=PlacementArea)

    @model_validator(mode="after")
    def _unique_names(self) -> SceneSpec:
        seen: set[str] = set()
        for index, group in enumerate(self.objects):
            for name in group.names():
                if name in seen:
                    raise ValueError(
                        f"objects.{index}: name '{name}' is used twice; give the group a `name`"
                    )
                seen.add(name)
        return self


class PlacedObject(BaseModel):
    """One object of a laid-out scene."""

    name: str
    kind: ObjectKind
    color: Color
    size: tuple[float, float, float]
    mass: float
    x: float
    y: float
    z: float
    yaw: float


def load_scene(source: SceneSpec | dict[str, Any] | str | Path) -> SceneSpec:
    """Return a validated scene from a spec, a dict, or a YAML file path.

    Raises:
        SceneError: naming the file and the field that is wrong.
    """
    if isinstance(source, SceneSpec):
        return source
    where = "scene"
    if isinstance(source, str | Path):
        where = str(source)
        try:
            data = yaml.safe_load(Path(source).read_text(encoding="utf-8"))
        except yaml.YAMLError as error:
            raise SceneError(f"{where}: not valid YAML: {error}") from error
        if isinstance(data, dict) and "scene" in data and "objects" not in data:
            data = data["scene"]
    else:
        data = source
    try:
        return SceneSpec.model_validate(data)
    except ValidationError as error:
        raise SceneError(f"{where}: {format_validation_error(error, SceneSpec)}") from None


def _default_mass(kind: str, size: tuple[float, float, float]) -> float:
    # Wood-like density; bowls and zones are hollow or flat, so they get nominal masses.
    if kind == "zone":
        return 0.0
    return max(0.01, 600.0 * size[0] * size[1] * size[2]) if kind != "bowl" else 0.2


def _half_footprint(size: tuple[float, float, float], yaw: float) -> tuple[float, float]:
    """Half extents of the world-aligned rectangle that holds the footprint at a yaw."""
    c, s = abs(math.cos(yaw)), abs(math.sin(yaw))
    return 0.5 * (c * size[0] + s * size[1]), 0.5 * (s * size[0] + c * size[1])


# Random placement is greedy: early objects can leave no room for a later one. Another draw
# usually fits, so a seed tries this many before the scene is called too full.
LAYOUT_DRAWS = 20


class _NoRoom(Exception):
    """One draw of a layout left no room for an object (its index, group and name)."""


def layout(spec: SceneSpec, seed: int) -> list[PlacedObject]:
    """Place every object of a scene: fixed ones where given, the rest at random without overlap.

    Random placement keeps the world-aligned rectangles around the footprints apart by the
    area's margin (zones too: nothing starts inside a zone); larger objects are placed first so
    that they still find room. A seed's first draw comes from ``default_rng(seed)``; where it
    leaves no room for an object, the seed draws again from ``default_rng((seed, draw))``.

    Raises:
        SceneError: when the objects do not fit in the placement area in any draw, naming the
            group.
    """
    for draw in range(LAYOUT_DRAWS):
        rng = np.random.default_rng(seed if draw == 0 else (seed, draw))
        try:
            return _draw_layout(spec, rng)
        except _NoRoom as no_room:
            index, group, name, placed = no_room.args
    area = spec.area
    raise NoLayoutError(
        f"objects.{index} ({group.type}, {name}): does not fit in the placement area "
        f"x {list(area.x)}, y {list(area.y)} with the {placed} objects already placed, in "
        f"{LAYOUT_DRAWS} draws of seed {seed}; use fewer or smaller objects, or a larger `area`"
    )


def _draw_layout(spec: SceneSpec, rng: np.random.Generator) -> list[PlacedObject]:
    """One random draw of a layout.

    Raises:
        _NoRoom: an object found no free spot.
    """
    area = spec.area
    placed: list[PlacedObject] = []
    rects: list[tuple[float, float, float, float]] = []
    pending: list[tuple[int, ObjectGroup, str]] = []
    for index, group in enumerate(spec.objects):
        size = group.extents
        for i, name in enumerate(group.names()):
            if group.poses is not None:
                pose = group.poses[i]
                x, y, yaw = pose.x, pose.y, math.radians(pose.yaw_deg)
                if group.jitter is not None:
                    shift, turn = group.jitter
                    x += float(rng.uniform(-shift, shift))
                    y += float(rng.uniform(-shift, shift))
                    yaw += math.radians(float(rng.uniform(-turn, turn)))
                z = pose.z if pose.z is not None else size[2] / 2
                placed.append(_placed(group, name, size, x, y, z, yaw))
                rects.append((x, y, *_half_footprint(size, yaw)))
            else:
                pending.append((index, group, name))
    pending.sort(key=lambda item: -item[1].extents[0] * item[1].extents[1])
    for index, group, name in pending:
        size = group.extents
        yaw = float(rng.uniform(-math.pi, math.pi)) if group.random_yaw else 0.0
        half = _half_footprint(size, yaw)
        spot = _free_spot(rng, area, half, rects)
        if spot is None:
            raise _NoRoom(index, group, name, len(placed))
        placed.append(_placed(group, name, size, spot[0], spot[1], size[2] / 2, yaw))
        rects.append((spot[0], spot[1], *half))
    return placed


def _placed(
    group: ObjectGroup,
    name: str,
    size: tuple[float, float, float],
    x: float,
    y: float,
    z: float,
    yaw: float,
) -> PlacedObject:
    return PlacedObject(
        name=name,
        kind=group.type,
        color=group.color,
        size=size,
        mass=group.mass or _default_mass(group.type, size),
        x=x,
        y=y,
        z=z,
        yaw=yaw,
    )


def _free_spot(
    rng: np.random.Generator,
    area: PlacementArea,
    half: tuple[float, float],
    rects: list[tuple[float, float, float, float]],
    tries: int = 1000,
) -> tuple[float, float] | None:
    low_x, high_x = area.x[0] + half[0], area.x[1] - half[0]
    low_y, high_y = area.y[0] + half[1], area.y[1] - half[1]
    if low_x > high_x or low_y > high_y:
        return None
    gap = area.margin
    for _ in range(tries):
        x, y = float(rng.uniform(low_x, high_x)), float(rng.uniform(low_y, high_y))
        if all(
            abs(x - ox) >= half[0] + hx + gap or abs(y - oy) >= half[1] + hy + gap
            for ox, oy, hx, hy in rects
        ):
            return x, y
    return None


def object_names(spec: SceneSpec, seed: int) -> list[str]:
    """The names of the objects a scene lays out on a seed (what a curriculum checks at load).

    Raises:
        SceneError: the objects do not fit in the placement area.
    """
    return [placed.name for placed in layout(spec, seed)]


def start_state(spec: SceneSpec, seed: int) -> WorldState:
    """The objects as a scene lays them out on a seed, before anything moves.

    What the world state reads after a reset, without a simulator: a reset lays every object
    where its pose says, resting, so settling moves it by micrometres at most.

    Raises:
        SceneError: the objects do not fit in the placement area.
    """
    return WorldState(
        {
            p.name: ObjectState(
                p.name, p.kind, p.color, Pose.from_yaw(Point(p.x, p.y, p.z), p.yaw), Size(*p.size)
            )
            for p in layout(spec, seed)
        }
    )
