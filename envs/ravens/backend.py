"""The tabletop as a lyra backend: what the episode runner and the learning loop drive.

Snapshots are every object's pose as (x, y, z, qx, qy, qz, qw), rounded to a micrometre; a later
run ends "the same" when each object is within 5 mm and 5 degrees of yaw of where it was (yaws
folded by the box's symmetry), widened by the spread the same run shows when its start is
nudged: contacts in a tall structure are chaotic, and another CPU ends them differently.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from envs.ravens import SPEC
from envs.ravens.render import render
from envs.ravens.scene import SceneSpec
from envs.ravens.tabletop import Tabletop, TabletopConfig
from lyra.backend import Snapshot
from lyra.embodiment import WorldState
from lyra.errors import LyraError
from lyra.geometry import Point, Pose

SNAPSHOT_TOLERANCE = 0.005
SNAPSHOT_TURN_DEG = 5.0
# How many times its measured spread an object may be off: four runs see less than the
# envelope of all the ways rounding can go.
SPREAD_FACTOR = 2.0


class RavensBackend:
    """The :class:`~envs.ravens.tabletop.Tabletop` behind the lyra Backend protocol."""

    spec = SPEC

    def __init__(self, config: TabletopConfig | None = None) -> None:
        self.table = Tabletop(config)

    @property
    def embodiment(self) -> Tabletop:
        """The tabletop itself: it implements every primitive."""
        return self.table

    @property
    def sim_time(self) -> float:
        """Simulated seconds since the last reset."""
        return self.table.sim_time

    def reset(self, scene: Any, seed: int, perturb: int = 0) -> None:
        """Lay a scene spec (or the mapping its YAML reads as) out from a seed.

        ``perturb`` k > 0 nudges every start by at most a micrometre (see Tabletop.reset).
        """
        spec = scene if isinstance(scene, SceneSpec) else SceneSpec.model_validate(scene)
        self.table.reset(spec, seed, perturb)

    def settle(self) -> None:
        """Step until every object is still, then let them sleep."""
        self.table.settle()

    def hold(self, seconds: float) -> None:
        """Simulate ``seconds`` with the arm where it is."""
        self.table.hold(seconds)

    def world_state(self) -> WorldState:
        """Every object's state; the tabletop has no joints and no signals of its own."""
        return WorldState(self.table.world_state())

    def snapshot(self) -> Snapshot:
        """Every object's pose as (x, y, z, qx, qy, qz, qw), rounded to a micrometre."""
        return {
            # numpy's rounding, as the examples were recorded with, then plain floats for YAML.
            name: [
                float(round(v, 6))
                for v in (*state.pose.position.as_array(), *state.pose.orientation)
            ]
            for name, state in sorted(self.table.world_state().items())
        }

    def compare(
        self, expected: Snapshot, actual: Snapshot, ensemble: Sequence[Snapshot] = ()
    ) -> str:
        """Why two snapshots differ by more than the tolerances ("" when they agree).

        An object may be 5 mm and 5 degrees of yaw off, plus twice the spread the ensemble
        shows for it. Yaws fold by the object's symmetry in the scene now (a half turn for a
        box, a quarter turn for a square one), since a turned box looks the same.
        """
        for name, pose in expected.items():
            if name not in actual:
                return f"'{name}' is missing"
            period = self._period(name)
            spread_pos, spread_turn = _spread(
                name, [actual[name], *(s[name] for s in ensemble if name in s)], period
            )
            moved = (
                sum((a - b) ** 2 for a, b in zip(pose[:3], actual[name][:3], strict=True)) ** 0.5
            )
            allowed = SNAPSHOT_TOLERANCE + SPREAD_FACTOR * spread_pos
            if moved > allowed:
                return (
                    f"'{name}' ended {moved * 1000:.1f} mm from where the accepted run left it"
                    + _beyond(allowed, spread_pos, "mm", 1000)
                )
            turn = _turn(actual[name], pose, period)
            allowed = SNAPSHOT_TURN_DEG + SPREAD_FACTOR * spread_turn
            if turn > allowed:
                return (
                    f"'{name}' ended turned {turn:.0f} degrees from how the accepted run left it"
                    + _beyond(allowed, spread_turn, "degrees", 1)
                )
        return ""

    def _period(self, name: str) -> float:
        body = self.table.bodies.get(name)
        square = body is not None and abs(body.placed.size[0] - body.placed.size[1]) < 1e-9
        return 90.0 if square else 180.0

    def describe(self) -> str:
        """One line per object: name, kind, colour, centre, size and yaw in degrees."""
        lines = []
        for name, state in sorted(self.table.world_state().items()):
            s = state.size
            # A settled block a micrometre off an axis is at 0.000, not -0.000.
            p = Point.of(
                [0.0 if f"{v:.3f}" == "-0.000" else v for v in state.pose.position.as_array()]
            )
            lines.append(
                f"{name}: {state.kind}, {state.color}, centre ({p.x:.3f}, {p.y:.3f}, {p.z:.3f}), "
                f"size ({s.x:.3f}, {s.y:.3f}, {s.z:.3f}), yaw {round(state.pose.yaw * 57.2958):d}"
            )
        return "\n".join(lines)

    def render(self) -> np.ndarray:
        """An RGB frame from the camera in front of the table."""
        return render(self.table)

    def park(self) -> None:
        """Move the arm home; where it cannot go (it is touching something), it stays."""
        with contextlib.suppress(LyraError):
            self.table.home()

    def stop(self) -> None:
        """Preempt the running motion at its next physics step."""
        self.table.stop()

    def close(self) -> None:
        """Disconnect the physics clients."""
        self.table.close()


def _yaw(pose: list[float]) -> float:
    return Pose(Point.of(pose[:3]), (pose[3], pose[4], pose[5], pose[6])).yaw


def _turn(a: list[float], b: list[float], period: float) -> float:
    """Degrees between two poses' yaws, folded by the object's symmetry."""
    turn = math.degrees(_yaw(a) - _yaw(b)) % period
    return min(turn, period - turn)


def _spread(name: str, poses: list[list[float]], period: float) -> tuple[float, float]:
    """How far apart runs of one object ended: metres and degrees, the widest pair."""
    if len(poses) < 2:
        return 0.0, 0.0
    return (
        max(math.dist(a[:3], b[:3]) for a in poses for b in poses),
        max(_turn(a, b, period) for a in poses for b in poses),
    )


def _beyond(allowed: float, spread: float, unit: str, scale: float) -> str:
    if spread == 0:
        return ""
    return (
        f", beyond the {allowed * scale:.1f} {unit} allowed with the {spread * scale:.1f} {unit} "
        "the simulation spreads when its start is nudged by a micrometre"
    )
