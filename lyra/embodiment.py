"""The protocol every backend implements, and the context variable that makes one active.

Skills never see an embodiment object: they call the functions of :mod:`lyra.api`, which forward
to whichever embodiment ``with lyra.use(env):`` made active in the current thread or task.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from lyra.errors import NoEmbodimentError, UnsupportedPrimitiveError
from lyra.geometry import Point, Pose, Size


@dataclass(frozen=True)
class ObjectState:
    """What a predicate or a regression snapshot needs to know about one object."""

    name: str
    kind: str
    color: str
    pose: Pose
    size: Size


@dataclass(frozen=True, eq=False)
class WorldState(Mapping[str, ObjectState]):
    """What a backend reports of its world: every object by name, joints and its own signals.

    It reads as the mapping of objects, so predicates over objects take it as it is.

    Attributes:
        objects: every object's state, by name.
        joints: articulated objects' joint values (radians or metres), by joint name.
        signals: the environment's own judgements, such as ``success`` (1.0 or 0.0) now and
            ``success_any`` (it held at some step of the episode).
    """

    objects: Mapping[str, ObjectState]
    joints: Mapping[str, float] = field(default_factory=dict)
    signals: Mapping[str, float] = field(default_factory=dict)

    def __getitem__(self, name: str) -> ObjectState:
        return self.objects[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.objects)

    def __len__(self) -> int:
        return len(self.objects)


@dataclass(frozen=True)
class WorkspaceBox:
    """The box the end effector may move in, and the height of the surface objects rest on."""

    low: Point
    high: Point
    table_z: float


@runtime_checkable
class Embodiment(Protocol):
    """A robot with objects around it; one per backend (Ravens, Kitchen, MetaWorld, FR3)."""

    def object_names(self, kind: str | None = None, color: str | None = None) -> list[str]:
        """Names of the objects in the scene, optionally only those of a kind and colour."""
        ...

    def object_pose(self, name: str) -> Pose:
        """Pose of an object's centre."""
        ...

    def object_size(self, name: str) -> Size:
        """Extents of an object along its own axes."""
        ...

    def bounding_box(self, name: str) -> tuple[Point, Point]:
        """World-aligned bounding box (lowest corner, highest corner) of an object."""
        ...

    def ee_pose(self) -> Pose:
        """Pose of the tool point."""
        ...

    def move_ee(self, pose: Pose) -> None:
        """Move the tool point along a straight line to a pose."""
        ...

    def pick(self, name: str) -> None:
        """Grasp an object from above and lift it."""
        ...

    def place(self, pose: Pose) -> None:
        """Put the held object's centre at a pose, release it and retreat."""
        ...

    def put_first_on_second(self, obj: str, target: str | Pose, yaw: float | None) -> None:
        """Pick an object and set it down on another object or at a pose, on whatever is there."""
        ...

    def held_object(self) -> str | None:
        """Name of the object in the gripper, if any."""
        ...

    def workspace(self) -> WorkspaceBox:
        """The reachable box and the table height."""
        ...

    def world_state(self) -> dict[str, ObjectState]:
        """Every object's state, for predicates and regression snapshots."""
        ...


@runtime_checkable
class Articulated(Embodiment, Protocol):
    """An embodiment with a two-finger gripper and articulated objects (drawers, doors, knobs)."""

    def grasp(self, name: str) -> None:
        """Close the gripper on an object where it is, without lifting it."""
        ...

    def release(self) -> None:
        """Open the gripper and draw back from what it held."""
        ...

    def close_gripper(self) -> None:
        """Close the empty gripper where it is."""
        ...

    def push(self, direction: Point, distance: float) -> float:
        """Move the tool point along a direction, up to a distance; how far it got along it."""
        ...

    def turn(self, angle_deg: float) -> float:
        """Turn the gripper about where it points; the degrees it turned."""
        ...

    def joint_names(self) -> list[str]:
        """The articulated objects' joints, sorted."""
        ...

    def joint_axis(self, name: str) -> tuple[Point, Point]:
        """A point on a joint's axis and the axis's unit direction."""
        ...

    def joint_value(self, name: str) -> float:
        """A joint's value: radians for a hinge, metres for a slide."""
        ...


@runtime_checkable
class _Spec(Protocol):
    """What the facade needs of a backend's spec (:class:`lyra.backend.BackendSpec`)."""

    name: str
    capabilities: Collection[str]

    def others_with(self, primitive: str) -> list[str]: ...


@dataclass
class _Active:
    embodiment: Embodiment
    on_call: Callable[[str], None] | None
    # The backend's spec, when the target was a backend: its primitives are checked.
    spec: _Spec | None = None


_ACTIVE: contextvars.ContextVar[_Active | None] = contextvars.ContextVar(
    "lyra_embodiment", default=None
)


def _as_embodiment(target: object) -> Embodiment:
    # A Gymnasium env (wrapped or not) carries its embodiment on the unwrapped env.
    for candidate in (target, getattr(target, "unwrapped", None)):
        if isinstance(candidate, Embodiment):
            return candidate
        inner = getattr(candidate, "embodiment", None)
        if isinstance(inner, Embodiment):
            return inner
    raise TypeError(
        f"{type(target).__name__} is not an embodiment: pass a backend env such as "
        "gymnasium.make('lyra/RavensTabletop-v0') or an object implementing lyra.Embodiment"
    )


@contextlib.contextmanager
def use(target: object, on_call: Callable[[str], None] | None = None) -> Iterator[Embodiment]:
    """Make an embodiment active for the primitives of :mod:`lyra.api` inside the block.

    Args:
        target: an embodiment, a backend (whose primitives are then checked against what it
            provides), or a Gymnasium env whose unwrapped env has an ``embodiment``.
        on_call: called with each primitive's name before it runs.

    Yields:
        The embodiment that is now active.
    """
    embodiment = _as_embodiment(target)
    # A Gymnasium env has a `spec` too (its EnvSpec): only a backend's is checked against.
    spec = getattr(target, "spec", None)
    token = _ACTIVE.set(_Active(embodiment, on_call, spec if isinstance(spec, _Spec) else None))
    try:
        yield embodiment
    finally:
        _ACTIVE.reset(token)


def active(primitive: str) -> Embodiment:
    """Return the active embodiment, telling the call hook which primitive is about to run.

    Raises:
        NoEmbodimentError: nothing is active.
        UnsupportedPrimitiveError: the active backend does not provide the primitive.
    """
    current = _ACTIVE.get()
    if current is None:
        raise NoEmbodimentError()
    spec = current.spec
    if spec is not None and primitive not in spec.capabilities:
        raise UnsupportedPrimitiveError(primitive, spec.name, spec.others_with(primitive))
    if current.on_call is not None:
        current.on_call(primitive)
    return current.embodiment
