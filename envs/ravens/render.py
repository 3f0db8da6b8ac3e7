"""Pictures of the tabletop, taken only when someone will look.

A frame costs 130-170 ms with pybullet's software renderer, more than a whole pick-and-place, so
nothing renders unless a recording or a picture is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.ravens._pybullet import pybullet
from envs.ravens.tabletop import Tabletop


@dataclass(frozen=True)
class Camera:
    """A fixed pinhole camera looking at the workspace from the front, above the table."""

    eye: tuple[float, float, float] = (1.15, 0.0, 0.75)
    target: tuple[float, float, float] = (0.45, 0.0, 0.05)
    up: tuple[float, float, float] = (0.0, 0.0, 1.0)
    fov_deg: float = 50.0
    width: int = 640
    height: int = 480


def render(table: Tabletop, camera: Camera | None = None) -> np.ndarray:
    """Return an RGB image (height x width x 3, uint8) of the scene as it is now."""
    camera = camera or Camera()
    view = pybullet.computeViewMatrix(camera.eye, camera.target, camera.up)
    projection = pybullet.computeProjectionMatrixFOV(
        camera.fov_deg, camera.width / camera.height, 0.05, 5.0
    )
    _, _, rgba, _, _ = table.sim.getCameraImage(
        camera.width,
        camera.height,
        view,
        projection,
        renderer=pybullet.ER_TINY_RENDERER,
        shadow=0,
    )
    image = np.asarray(rgba, dtype=np.uint8).reshape(camera.height, camera.width, 4)
    return image[:, :, :3].copy()
