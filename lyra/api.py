"""The primitives skills are written in: ``from lyra.api import pick, place, ...``.

Every function forwards to the embodiment made active by ``with lyra.use(env):``, so the same skill
runs on every backend; a backend that lacks one raises
:class:`~lyra.errors.UnsupportedPrimitiveError` naming those that have it. Positions are metres
in the backend's workspace frame (documented per backend in ``docs/backends.md``); angles given
to these functions are degrees; quaternions are (x, y, z, w). Generated code runs in another
process and reaches these functions through a pipe, so every argument and result is a value.
"""

from __future__ import annotations

import math

from lyra.embodiment import Articulated, ObjectState, WorkspaceBox, active
from lyra.errors import UnsupportedPrimitiveError
from lyra.geometry import Point, Pose, Size, quat_from_yaw

__all__ = [
    "ObjectState",
    "Point",
    "Pose",
    "Size",
    "WorkspaceBox",
    "bounding_box",
    "close_gripper",
    "ee_pose",
    "grasp",
    "held_object",
    "joint_axis",
    "joint_names",
    "joint_value",
    "move_ee",
    "object_names",
    "object_pose",
    "object_size",
    "pick",
    "place",
    "push",
    "put_first_on_second",
    "relative_point",
    "release",
    "turn",
    "workspace",
    "world_state",
]


def object_names(kind: str | None = None, color: str | None = None) -> list[str]:
    """List the objects in the scene, sorted by name.

    Args:
        kind: keep only objects of this kind, as the scene listing names kinds; None keeps all.
        color: keep only objects of this colour name ("red", "blue", ...); None keeps all.
    """
    return active("object_names").object_names(kind, color)


def object_pose(name: str) -> Pose:
    """Return the pose of an object's centre.

    Args:
        name: the object's name, as listed by object_names().
    """
    return active("object_pose").object_pose(name)


def object_size(name: str) -> Size:
    """Return an object's extents along its own x, y and z axes, in metres.

    Args:
        name: the object's name, as listed by object_names().
    """
    return active("object_size").object_size(name)


def bounding_box(name: str) -> tuple[Point, Point]:
    """Return the world-aligned bounding box of an object as (lowest corner, highest corner).

    Args:
        name: the object's name, as listed by object_names().
    """
    return active("bounding_box").bounding_box(name)


def ee_pose() -> Pose:
    """Return the pose of the end effector's tool point."""
    return active("ee_pose").ee_pose()


def move_ee(target: Pose | Point, yaw_deg: float | None = None) -> None:
    """Move the end effector in a straight line to a target.

    Args:
        target: where the tool point goes; a Point keeps the current yaw unless yaw_deg is given.
        yaw_deg: rotation of the gripper about the vertical axis, in degrees.
    """
    embodiment = active("move_ee")
    if isinstance(target, Point):
        yaw = embodiment.ee_pose().yaw if yaw_deg is None else math.radians(yaw_deg)
        target = Pose(target, quat_from_yaw(yaw))
    elif yaw_deg is not None:
        target = Pose(target.position, quat_from_yaw(math.radians(yaw_deg)))
    embodiment.move_ee(target)


def pick(name: str) -> None:
    """Grasp an object from above and lift it clear of the scene.

    Args:
        name: the object to pick; the gripper must be empty.
    """
    active("pick").pick(name)


def place(target: Pose | Point, yaw_deg: float | None = None) -> None:
    """Put the held object's centre at a target, release it there and retreat upwards.

    Args:
        target: where the object's centre goes (its z is the centre's height, not the surface's).
        yaw_deg: the object's rotation about the vertical axis, in degrees; None keeps the
            target Pose's yaw, or for a Point the object's current yaw.
    """
    embodiment = active("place")
    if isinstance(target, Point):
        held = embodiment.held_object()
        yaw = (
            math.radians(yaw_deg)
            if yaw_deg is not None
            else (embodiment.object_pose(held).yaw if held else 0.0)
        )
        target = Pose(target, quat_from_yaw(yaw))
    elif yaw_deg is not None:
        target = Pose(target.position, quat_from_yaw(math.radians(yaw_deg)))
    embodiment.place(target)


def put_first_on_second(
    first: str, second: str | Point | Pose, yaw_deg: float | None = None
) -> None:
    """Pick the first object and set it down on the second, stacking on whatever is already there.

    Args:
        first: the object to move.
        second: an object name (land centred on top of it), or a Point/Pose whose x and y say
            where; the object comes to rest on the highest surface under it there (the table, or
            the top of a stack), so z is ignored.
        yaw_deg: the object's final rotation about the vertical axis, in degrees; None aligns it
            with the second object, or keeps the Pose's yaw, or for a Point keeps its own yaw.
    """
    embodiment = active("put_first_on_second")
    if isinstance(second, Point):
        second = Pose(second, quat_from_yaw(embodiment.object_pose(first).yaw))
    yaw = None if yaw_deg is None else math.radians(yaw_deg)
    embodiment.put_first_on_second(first, second, yaw)


def relative_point(
    reference: str | Point, distance: float, angle_deg: float = 0.0, dz: float = 0.0
) -> Point:
    """Return the point at a distance and direction from a reference point or object's centre.

    The direction is measured in the horizontal plane, counter-clockwise from the reference
    object's own x axis (from the world x axis for a Point), so "next to it along its long side"
    stays true when the object is rotated.

    Args:
        reference: an object name or a Point.
        distance: how far, in metres, in the horizontal plane.
        angle_deg: direction in degrees: 0 along +x, 90 along +y of the reference.
        dz: vertical offset in metres.
    """
    embodiment = active("relative_point")
    if isinstance(reference, str):
        pose = embodiment.object_pose(reference)
        origin, heading = pose.position, pose.yaw
    else:
        origin, heading = reference, 0.0
    angle = heading + math.radians(angle_deg)
    return Point(
        origin.x + distance * math.cos(angle), origin.y + distance * math.sin(angle), origin.z + dz
    )


def held_object() -> str | None:
    """Return the name of the object in the gripper, or None when it is empty."""
    return active("held_object").held_object()


def workspace() -> WorkspaceBox:
    """Return the box the end effector can reach (low and high corners) and the table height."""
    return active("workspace").workspace()


def world_state() -> dict[str, ObjectState]:
    """Return every object's name, kind, colour, pose and size."""
    return active("world_state").world_state()


def grasp(name: str) -> None:
    """Close the gripper on an object where it is (a handle, a lever, a puck), without lifting it.

    The fingertips come from above onto the object's point, as object_pose() gives it; what is
    grasped can then be pulled or pushed with push() and let go with release().

    Args:
        name: the object to grasp; the gripper must be empty.
    """
    _articulated("grasp").grasp(name)


def close_gripper() -> None:
    """Close the empty gripper where it is: its closed fingers make a narrow tip to push with."""
    _articulated("close_gripper").close_gripper()


def release() -> None:
    """Open the gripper and draw the fingertips up 5 cm (less where something is in the way)."""
    _articulated("release").release()


def push(direction: Point, distance: float) -> float:
    """Move the fingertips in a straight line along a direction, pushing or pulling what they meet.

    Unlike move_ee it does not fail when blocked: a drawer at its end stop, a pressed button.

    Args:
        direction: the direction as a vector (it need not be of unit length): Point(0, -1, 0)
            pulls towards the robot on MetaWorld.
        distance: how far to go, in metres.

    Returns:
        How far the fingertips got along the direction, in metres.
    """
    return _articulated("push").push(direction, distance)


def turn(angle_deg: float) -> float:
    """Turn the gripper about the direction it points, the fingertips staying where they are.

    What the fingers hold turns with them: a knob taken with grasp() turns about its own axis
    (a stiff knob may slip in the fingers: read its joint_value() to see how far it went).

    Args:
        angle_deg: how far, in degrees; positive turns clockwise as seen from behind the
            gripper, looking where it points.

    Returns:
        How far the gripper turned, in degrees.
    """
    return _articulated("turn").turn(angle_deg)


def joint_names() -> list[str]:
    """List the articulated objects' joints (a drawer's slide, a door's hinge), sorted by name."""
    return _articulated("joint_names").joint_names()


def joint_axis(name: str) -> tuple[Point, Point]:
    """Return a joint's axis as (a point on it, its unit direction): a door turns about it.

    Args:
        name: the joint's name, as listed by joint_names().
    """
    return _articulated("joint_axis").joint_axis(name)


def joint_value(name: str) -> float:
    """Return a joint's value: radians for a hinge, metres for a slide.

    Args:
        name: the joint's name, as listed by joint_names().
    """
    return _articulated("joint_value").joint_value(name)


def _articulated(primitive: str) -> Articulated:
    embodiment = active(primitive)
    if not isinstance(embodiment, Articulated):
        # An embodiment made active without its backend's spec: say the same as the spec would.
        from lyra.backend import backends_with

        raise UnsupportedPrimitiveError(
            primitive, type(embodiment).__name__, backends_with(primitive)
        )
    return embodiment


# The primitives, in the order the prompts list them; the value types above are not primitives.
PRIMITIVES = tuple(name for name in __all__ if name[0].islower())
# The primitives of articulated objects and a two-finger gripper, which the tabletop lacks.
ARTICULATION = frozenset(
    {
        "close_gripper",
        "grasp",
        "release",
        "push",
        "turn",
        "joint_axis",
        "joint_names",
        "joint_value",
    }
)
# The primitives that move the robot (a recording takes a frame after each).
ACTIONS = frozenset(
    {
        "move_ee",
        "pick",
        "place",
        "put_first_on_second",
        "close_gripper",
        "grasp",
        "release",
        "push",
        "turn",
    }
)
