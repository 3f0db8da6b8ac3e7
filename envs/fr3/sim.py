"""franky-sim in this process, with a scene's cubes on the table, served on a loopback address.

franky-sim speaks the libfranka protocol: franky connects to it as to the arm, so everything the
backend sends the simulated FR3 it would send the real one.
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from typing import Any

from envs.fr3.scene import ZONE_THICKNESS, Cube, FR3Scene, Zone
from lyra.errors import MissingDependencyError

# MuJoCo picks its GL backend when franky-sim first imports it: EGL renders with no display.
os.environ.setdefault("MUJOCO_GL", "egl")

CUBE_MASS = 0.1  # kilograms
RGBA = {
    "red": "0.8 0.2 0.2 1",
    "green": "0.2 0.7 0.3 1",
    "blue": "0.2 0.3 0.8 1",
    "yellow": "0.9 0.8 0.2 1",
}
INSTALL = "pip install 'lyra-robot[fr3]' (franky-control and franky-sim)"


def require_franky() -> Any:
    """The franky module, or an error saying what to install."""
    try:
        import franky
    except ImportError:
        raise MissingDependencyError(f"the fr3 backend needs franky: {INSTALL}") from None
    return franky


class FrankySim:
    """A running franky-sim: the MuJoCo simulator, its server thread and the address it serves.

    Attributes:
        host: the address to give ``franky.Robot`` and ``franky.Gripper``.
        sim: franky-sim's ``MujocoSimulator`` (``sim.model``, ``sim.data`` once started).
    """

    def __init__(self, scene: FR3Scene, host: str | None = None) -> None:
        try:
            from franky_sim import LocalHostnames, SimulationServer
            from franky_sim.mujoco_simulator import MujocoSimulator
        except ImportError:
            raise MissingDependencyError(
                f"starting franky-sim needs it installed: {INSTALL}"
            ) from None
        self.sim = MujocoSimulator()
        self.sim.init()
        self.sim.add_robot()
        for cube in scene.objects:
            _add_cube(self.sim.worldbody, cube)
        for zone in scene.zones:
            _add_zone(self.sim.worldbody, zone)
        # franky-sim binds the libfranka ports on one address: a franky-sim already holding
        # 127.0.0.1 (one standing in for the arm) leaves this one the next loopback address.
        candidates = LocalHostnames() if host is None else [host]
        self._server = SimulationServer(self.sim, hostname_candidates=candidates)
        self._server.init()
        self.host: str = self._server.robot_servers[0].hostname
        self._server.run_async()

    def close(self) -> None:
        """Stop the server thread and free the simulator."""
        self._server.cleanup()
        self.sim.cleanup()


def _add_cube(worldbody: ET.Element, cube: Cube) -> None:
    body = ET.SubElement(
        worldbody,
        "body",
        name=cube.name,
        pos=" ".join(str(v) for v in cube.centre),
        # franky-sim's compiler reads angles in radians
        euler=f"0 0 {math.radians(cube.yaw_deg)}",
    )
    ET.SubElement(body, "freejoint", name=f"{cube.name}_joint")
    half = cube.size / 2
    ET.SubElement(
        body,
        "geom",
        type="box",
        size=f"{half} {half} {half}",
        mass=str(CUBE_MASS),
        rgba=RGBA.get(cube.color, "0.6 0.6 0.6 1"),
    )


def _add_zone(worldbody: ET.Element, zone: Zone) -> None:
    # Fixed to the table and touching nothing: a mark that cubes rest through onto the table.
    half = ZONE_THICKNESS / 2
    ET.SubElement(
        worldbody,
        "geom",
        name=zone.name,
        type="box",
        pos=f"{zone.position[0]} {zone.position[1]} {half}",
        euler=f"0 0 {math.radians(zone.yaw_deg)}",
        size=f"{zone.size[0] / 2} {zone.size[1] / 2} {half}",
        contype="0",
        conaffinity="0",
        rgba=RGBA.get(zone.color, "0.6 0.6 0.6 1"),
    )
