"""What lyra checks before a motion command leaves for the FR3, and refuses with a named limit.

franky-sim refuses nothing (an unreachable target fails later, inside its planner) and the real
arm's reflexes stop it only once it is moving, so each move is checked here first: the tool
point's target against the workspace box, the straight line to it against the arm's reach and
its joint limits (solved along the line from where the joints are now), and the speed factor
against its cap. Speed factors only ever slow the arm down. While it moves, a franky reaction
stops it where it feels more than a force limit on the hand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from envs.mujoco_parts import rotation_error
from lyra.errors import LyraError, UnreachablePoseError
from lyra.geometry import Point

# FR3 joint limits in radians (Franka's datasheet; the FR3 differs from the Panda's).
JOINT_LOW = np.array([-2.7437, -1.7837, -2.9007, -3.0421, -2.8065, 0.5445, -3.0159])
JOINT_HIGH = np.array([2.7437, 1.7837, 2.9007, -0.1518, 2.8065, 4.5169, 3.0159])
WAYPOINT = 0.01  # metres between the line's points whose joint solution is checked
SOLVED = 1e-4  # metres (and radians) within which a waypoint's joint solution counts
ITERATIONS = 100
DAMPING = 0.05  # of the damped least squares: keeps a step near a singularity small


@dataclass(frozen=True)
class Limits:
    """The limits every motion is checked against.

    Attributes:
        low: the workspace box's lowest corner, for the tool point, in the base frame.
        high: its highest corner.
        max_speed: the cap on franky's ``relative_dynamics_factor`` (1 is the arm's full speed).
        joint_margin: radians short of each joint limit a solution must stay.
        max_force: newtons of external force on the hand, along any axis of the base frame, at
            which a motion stops (the arm's own estimate; franky-sim's always reads 0).
    """

    low: Point = field(default_factory=lambda: Point(0.25, -0.40, 0.01))
    high: Point = field(default_factory=lambda: Point(0.75, 0.40, 0.60))
    max_speed: float = 0.3
    joint_margin: float = 0.05
    # Above what setting a cube down or closing the fingers on one presses with (a few newtons).
    # The arm's own collision reflexes (their thresholds set in Desk or by franky) may stop it
    # first, with an error to recover from.
    max_force: float = 30.0


class Kinematics(Protocol):
    """The arm's forward kinematics of the tool point (franky's model of the FR3)."""

    def pose(self, q: np.ndarray) -> np.ndarray:
        """The tool point's 4x4 pose in the base frame at joint positions ``q``."""
        ...

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """Its 6x7 Jacobian in the base frame (linear rows first)."""
        ...


def check_box(limits: Limits, point: Point, what: str) -> None:
    """Refuse a tool-point target outside the workspace box, naming the bound it breaks."""
    for axis in ("x", "y", "z"):
        value, low, high = (getattr(p, axis) for p in (point, limits.low, limits.high))
        if not low <= value <= high:
            side = f"below its lower bound {low:.3f}" if value < low else f"above {high:.3f}"
            raise UnreachablePoseError(
                what,
                f"{axis} = {value:.3f} m is {side}: the FR3's workspace box is "
                f"x {limits.low.x:.2f}-{limits.high.x:.2f}, y {limits.low.y:.2f}-"
                f"{limits.high.y:.2f}, z {limits.low.z:.2f}-{limits.high.z:.2f} m",
            )


def clamp_speed(limits: Limits, factor: float) -> float:
    """The dynamics factor a motion runs at: ``factor``, at most the cap.

    Raises:
        LyraError: the factor is not a positive number.
    """
    if not factor > 0:
        raise LyraError(f"a speed factor is a fraction of full speed in (0, 1], not {factor}")
    return min(factor, limits.max_speed)


def check_path(
    limits: Limits, kinematics: Kinematics, q: np.ndarray, target: np.ndarray, what: str
) -> np.ndarray:
    """Solve the straight line to a target for the joints, point by point; the last solution.

    Args:
        limits: the joint margin.
        kinematics: the arm's model.
        q: the joint positions now.
        target: the tool point's 4x4 target pose.
        what: how the refusal names the target.

    Raises:
        UnreachablePoseError: a point of the line is out of reach, or needs a joint past its
            limit (less the margin); the message names the joint and the limit.
    """
    start = kinematics.pose(q)[:3, 3]
    steps = max(1, math.ceil(float(np.linalg.norm(target[:3, 3] - start)) / WAYPOINT))
    for i in range(1, steps + 1):
        waypoint = target.copy()
        waypoint[:3, 3] = start + (target[:3, 3] - start) * i / steps
        solved = _solve(kinematics, q, waypoint)
        if solved is None:
            raise UnreachablePoseError(
                what, "it is out of the arm's reach with the gripper pointing down"
            )
        q = solved
        low, high = JOINT_LOW + limits.joint_margin, JOINT_HIGH - limits.joint_margin
        for joint in np.flatnonzero((q < low) | (q > high)):
            bound = low[joint] if q[joint] < low[joint] else high[joint]
            raise UnreachablePoseError(
                what,
                f"joint {joint + 1} would reach {q[joint]:.3f} rad, past {bound:.3f} "
                f"(its limit less a {limits.joint_margin} rad margin)",
            )
    return q


def _solve(kinematics: Kinematics, q: np.ndarray, target: np.ndarray) -> np.ndarray | None:
    """Damped least squares from ``q`` to the target pose; None if it does not converge."""
    for _ in range(ITERATIONS):
        pose = kinematics.pose(q)
        turn = rotation_error(target[:3, :3], pose[:3, :3])
        error = np.concatenate([target[:3, 3] - pose[:3, 3], turn])
        if float(np.abs(error).max()) < SOLVED:
            return q
        jacobian = kinematics.jacobian(q)
        step = jacobian.T @ np.linalg.solve(jacobian @ jacobian.T + DAMPING**2 * np.eye(6), error)
        q = q + step
    return None
