"""A small kinematic backend, registered only inside tests: boxes on a plane and a gripper.

It implements the whole Backend protocol without physics, so the conformance suite has a
second backend to hold to the contract; it lacks put_first_on_second, so the typed error for a
missing primitive has something to name. Motions advance simulated time in 10 ms steps, each
taking a millisecond of real time, as a robot would, so that stop() can catch one.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from lyra.api import ARTICULATION, PRIMITIVES
from lyra.backend import BackendSpec, Sample
from lyra.embodiment import ObjectState, WorkspaceBox, WorldState
from lyra.errors import GraspError, StoppedError, UnknownObjectError, UnreachablePoseError
from lyra.geometry import Point, Pose, Size
from lyra.prompts import PromptPack

STEP_S = 0.01
SPEED = 0.5  # metres per simulated second


class ToyBox(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    x: float
    y: float
    size: float = 0.04


class ToyScene(BaseModel):
    model_config = ConfigDict(extra="forbid")

    boxes: list[ToyBox]
    jitter: float = 0.0


class Toy:
    """The embodiment: every primitive but put_first_on_second."""

    def __init__(self) -> None:
        self.poses: dict[str, Pose] = {}
        self.sizes: dict[str, float] = {}
        self.held: str | None = None
        self.ee = Point(0.3, 0.0, 0.3)
        self.steps = 0
        self.stopped = False

    def _move(self, target: Point) -> None:
        if not (0.0 <= target.z <= 0.5 and math.hypot(target.x, target.y) <= 0.8):
            raise UnreachablePoseError(f"({target.x:.3f}, {target.y:.3f})", "out of reach")
        start = self.ee
        count = max(1, math.ceil(start.distance_to(target) / (SPEED * STEP_S)))
        for i in range(1, count + 1):
            if self.stopped:
                raise StoppedError("the motion was stopped")
            time.sleep(0.001)
            f = i / count
            self.ee = Point.of(start.as_array() + (target.as_array() - start.as_array()) * f)
            self.steps += 1
            if self.held is not None:
                size = self.sizes[self.held]
                self.poses[self.held] = Pose(self.ee - Point(0, 0, size / 2))

    def _name(self, name: str) -> str:
        if name not in self.poses:
            raise UnknownObjectError(name, self.poses)
        return name

    def object_names(self, kind: str | None = None, color: str | None = None) -> list[str]:
        return sorted(n for n in self.poses if kind in (None, "box") and color in (None, "gray"))

    def object_pose(self, name: str) -> Pose:
        return self.poses[self._name(name)]

    def object_size(self, name: str) -> Size:
        s = self.sizes[self._name(name)]
        return Size(s, s, s)

    def bounding_box(self, name: str) -> tuple[Point, Point]:
        c, h = self.object_pose(name).position, self.sizes[name] / 2
        return Point(c.x - h, c.y - h, c.z - h), Point(c.x + h, c.y + h, c.z + h)

    def ee_pose(self) -> Pose:
        return Pose(self.ee)

    def move_ee(self, pose: Pose) -> None:
        self._move(pose.position)

    def pick(self, name: str) -> None:
        if self.held is not None:
            raise GraspError(f"already holding '{self.held}'")
        top = self.bounding_box(name)[1]
        self._move(top.with_z(top.z + 0.1))
        self._move(top)
        self.held = name
        self._move(top.with_z(top.z + 0.1))

    def place(self, pose: Pose) -> None:
        if self.held is None:
            raise GraspError("nothing is held")
        size = self.sizes[self.held]
        tip = pose.position + Point(0, 0, size / 2)
        self._move(tip.with_z(tip.z + 0.1))
        self._move(tip)
        self.poses[self.held] = Pose(pose.position, pose.orientation)
        self.held = None
        self._move(tip.with_z(tip.z + 0.1))

    def put_first_on_second(self, obj: str, target: str | Pose, yaw: float | None) -> None:
        raise AssertionError("the facade refuses this primitive before it gets here")

    def held_object(self) -> str | None:
        return self.held

    def workspace(self) -> WorkspaceBox:
        return WorkspaceBox(Point(-0.8, -0.8, 0.0), Point(0.8, 0.8, 0.5), 0.0)

    def world_state(self) -> dict[str, ObjectState]:
        return {
            n: ObjectState(n, "box", "gray", p, self.object_size(n)) for n, p in self.poses.items()
        }


class ToyBackend:
    """The toy world behind the Backend protocol."""

    def __init__(self) -> None:
        self.toy = Toy()
        self.spec = SPEC

    @property
    def embodiment(self) -> Toy:
        return self.toy

    @property
    def sim_time(self) -> float:
        return self.toy.steps * STEP_S

    def reset(self, scene: Any, seed: int, perturb: int = 0) -> None:
        spec = scene if isinstance(scene, ToyScene) else ToyScene.model_validate(scene)
        rng = np.random.default_rng(seed)
        nudge = np.random.default_rng([seed, perturb])
        self.toy = Toy()
        for box in spec.boxes:
            dx, dy = rng.uniform(-spec.jitter, spec.jitter, 2)
            if perturb:
                dx, dy = (
                    d + e for d, e in zip((dx, dy), nudge.uniform(-1e-6, 1e-6, 2), strict=True)
                )
            self.toy.poses[box.name] = Pose(Point(box.x + dx, box.y + dy, box.size / 2))
            self.toy.sizes[box.name] = box.size

    def settle(self) -> None:
        """Nothing moves by itself here."""

    def hold(self, seconds: float) -> None:
        self.toy.steps += round(seconds / STEP_S)

    def world_state(self) -> WorldState:
        return WorldState(self.toy.world_state(), signals={"holding": float(bool(self.toy.held))})

    def snapshot(self) -> dict[str, list[float]]:
        return {
            n: [round(float(v), 6) for v in (p.position.x, p.position.y, p.position.z)]
            for n, p in sorted(self.toy.poses.items())
        }

    def compare(
        self,
        expected: dict[str, list[float]],
        actual: dict[str, list[float]],
        ensemble: Any = (),
    ) -> str:
        for name, where in expected.items():
            if name not in actual:
                return f"'{name}' is missing"
            if math.dist(where, actual[name]) > 0.001:
                return f"'{name}' moved"
        return ""

    def describe(self) -> str:
        return "\n".join(
            f"{n}: box at ({p.position.x:.3f}, {p.position.y:.3f}, {p.position.z:.3f})"
            for n, p in sorted(self.toy.poses.items())
        )

    def render(self) -> np.ndarray:
        image = np.full((48, 64, 3), 255, dtype=np.uint8)
        for pose in self.toy.poses.values():
            col, row = int(32 + pose.position.y * 40), int(24 + pose.position.x * 40)
            image[max(0, row - 2) : row + 2, max(0, col - 2) : col + 2] = 0
        return image

    def park(self) -> None:
        self.toy._move(Point(0.3, 0.0, 0.3))

    def stop(self) -> None:
        self.toy.stopped = True

    def close(self) -> None:
        """Nothing to release."""


SPEC = BackendSpec(
    name="toy",
    summary="kinematic boxes on a plane, for the conformance suite",
    capabilities=frozenset(PRIMITIVES) - {"put_first_on_second"} - ARTICULATION,
    factory="tests.backends.toy:ToyBackend",
    scene="tests.backends.toy:ToyScene",
    predicates="tests.backends.toy:PREDICATES",
    prompts="tests.backends.toy:PACK",
    sample="tests.backends.toy:SAMPLE",
    tolerance=0.001,
)
PREDICATES: dict[str, Any] = {}
PACK = PromptPack(frame="The plane is z = 0.", scene_legend="name, centre")
SAMPLE = Sample(
    scene={
        "boxes": [{"name": "a", "x": 0.4, "y": -0.1}, {"name": "b", "x": 0.5, "y": 0.1}],
        "jitter": 0.02,
    },
    objects=("a", "b"),
    free=(0.45, 0.25, 0.02),
)
