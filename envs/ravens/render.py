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
    """A fixed pinhole camera: by default, where a person standing at the robot's right stands.

    From there the robot is on the left of the picture, "away from the robot" (+x) runs to the
    right, the robot's left (+y) runs into the picture, and a face turned towards the robot (a
    house's door) is in view; the whole work area, both staging edges included, is in frame.
    """

    eye: tuple[float, float, float] = (0.08, -0.95, 0.8)
    target: tuple[float, float, float] = (0.5, -0.02, 0.0)
    up: tuple[float, float, float] = (0.0, 0.0, 1.0)
    fov_deg: float = 42.0
    width: int = 640
    height: int = 480

    def matrices(self) -> tuple[np.ndarray, np.ndarray]:
        """The view and projection matrices, as 4 x 4 arrays acting on column vectors."""
        view = pybullet.computeViewMatrix(self.eye, self.target, self.up)
        projection = pybullet.computeProjectionMatrixFOV(
            self.fov_deg, self.width / self.height, NEAR, FAR
        )
        # pybullet lists them column by column.
        return (
            np.asarray(view, dtype=float).reshape(4, 4).T,
            np.asarray(projection, dtype=float).reshape(4, 4).T,
        )

    def project(self, point: tuple[float, float, float]) -> tuple[float, float]:
        """Where a point of the world appears in the picture: (column, row) in pixels."""
        view, projection = self.matrices()
        clip = projection @ view @ np.array([*point, 1.0])
        x, y = clip[:2] / clip[3]
        return (x + 1) / 2 * self.width, (1 - y) / 2 * self.height


NEAR, FAR = 0.05, 5.0
# Where the axis arrows start on the table (the near corner of the work area), and their length.
AXES_ORIGIN = (0.28, -0.45, 0.0)
AXIS_LENGTH = 0.1


def render(table: Tabletop, camera: Camera | None = None) -> np.ndarray:
    """Return an RGB image (height x width x 3, uint8) of the scene as it is now."""
    camera = camera or Camera()
    view, projection = camera.matrices()
    _, _, rgba, _, _ = table.sim.getCameraImage(
        camera.width,
        camera.height,
        view.T.ravel().tolist(),
        projection.T.ravel().tolist(),
        renderer=pybullet.ER_TINY_RENDERER,
        shadow=0,
    )
    image = np.asarray(rgba, dtype=np.uint8).reshape(camera.height, camera.width, 4)
    return label_axes(image[:, :, :3].copy(), camera)


def label_axes(image: np.ndarray, camera: Camera) -> np.ndarray:
    """Draw the frame's x and y axes on the table, named as the prompts name them."""
    from PIL import Image, ImageDraw

    picture = Image.fromarray(image)
    draw = ImageDraw.Draw(picture)
    x0, y0, z0 = AXES_ORIGIN
    start = camera.project(AXES_ORIGIN)
    for tip, name in (
        ((x0 + AXIS_LENGTH, y0, z0), "x: away from the robot"),
        ((x0, y0 + AXIS_LENGTH, z0), "y: the robot's left"),
    ):
        end = camera.project(tip)
        draw.line([start, end], fill=(20, 20, 20), width=3)
        draw.text((end[0] + 4, end[1] - 12), name, fill=(20, 20, 20))
    return np.asarray(picture)
