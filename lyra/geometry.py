"""Small typed geometry values shared by every backend: points, poses and sizes.

Quaternions are always (x, y, z, w), the order pybullet, franky and MetaWorld use; backends that
read MuJoCo's (w, x, y, z) convert at their edge. Distances are metres, angles radians unless a
name says degrees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Point:
    """A position in the backend's workspace frame, in metres."""

    x: float
    y: float
    z: float

    def __add__(self, other: Point) -> Point:
        return Point(self.x + other.x, self.y + other.y, self.z + other.z)

    def __sub__(self, other: Point) -> Point:
        return Point(self.x - other.x, self.y - other.y, self.z - other.z)

    def as_array(self) -> np.ndarray:
        """Return the point as a float64 array of shape (3,)."""
        return np.array([self.x, self.y, self.z], dtype=float)

    def distance_to(self, other: Point) -> float:
        """Return the Euclidean distance to another point."""
        return math.dist((self.x, self.y, self.z), (other.x, other.y, other.z))

    def with_z(self, z: float) -> Point:
        """Return a copy of this point at height ``z``."""
        return Point(self.x, self.y, z)

    @classmethod
    def of(cls, values: object) -> Point:
        """Build a point from any 3-sequence of numbers."""
        x, y, z = (float(v) for v in values)  # type: ignore[attr-defined]
        return cls(x, y, z)


@dataclass(frozen=True)
class Pose:
    """A position plus an orientation quaternion in (x, y, z, w) order."""

    position: Point
    orientation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)

    @classmethod
    def from_yaw(cls, position: Point, yaw: float = 0.0) -> Pose:
        """Return an upright pose rotated by ``yaw`` radians about the vertical axis."""
        return cls(position, quat_from_yaw(yaw))

    @property
    def yaw(self) -> float:
        """Rotation about the vertical axis, in radians in (-pi, pi]."""
        x, y, z, w = self.orientation
        return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))

    def rotation_matrix(self) -> np.ndarray:
        """Return the 3x3 rotation matrix of the orientation."""
        return quat_to_matrix(self.orientation)


@dataclass(frozen=True)
class Size:
    """Extents of an object's box along its own x, y and z axes, in metres."""

    x: float
    y: float
    z: float


def aligned_box(pose: Pose, size: Size) -> tuple[Point, Point]:
    """The lowest and highest corners of the world-aligned box around a box at ``pose``."""
    half = np.abs(pose.rotation_matrix()) @ (np.array([size.x, size.y, size.z]) / 2)
    centre = pose.position.as_array()
    return Point.of(centre - half), Point.of(centre + half)


def quat_from_yaw(yaw: float) -> tuple[float, float, float, float]:
    """Return the (x, y, z, w) quaternion of a rotation by ``yaw`` about z."""
    return (0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0))


def quat_to_matrix(q: tuple[float, float, float, float]) -> np.ndarray:
    """Return the rotation matrix of an (x, y, z, w) quaternion."""
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def wrap_angle(angle: float) -> float:
    """Wrap an angle in radians to (-pi, pi]."""
    wrapped = math.atan2(math.sin(angle), math.cos(angle))
    return math.pi if wrapped == -math.pi else wrapped
