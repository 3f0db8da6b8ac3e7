"""Pictures of the tabletop, taken only when someone will look.

A frame (two views) costs about 0.3 s with pybullet's software renderer, more than a whole
pick-and-place, so nothing renders unless a recording or a picture is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.ravens._pybullet import pybullet
from envs.ravens.predicates import on_top
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

    def framing(self, low: np.ndarray, high: np.ndarray, width: int, height: int) -> Camera:
        """A camera looking the same way as this one, close enough that a box fills its view."""
        target = (low + high) / 2
        radius = max(float(np.linalg.norm(high - low)) / 2, 0.06)
        direction = np.subtract(self.eye, self.target)
        direction /= np.linalg.norm(direction)
        # The box's bounding sphere touches the narrower side of the view, with a margin.
        half = np.radians(self.fov_deg) / 2 * min(1.0, width / height)
        eye = target + direction * 1.15 * radius / np.sin(half)
        return Camera(tuple(eye), tuple(target), self.up, self.fov_deg, width, height)

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


def render(table: Tabletop) -> np.ndarray:
    """Return an RGB image (height x width x 3, uint8) of the scene as it is now.

    Two views side by side: the whole work area with its axes, and a close view of what has
    been built (objects resting on others, and what they rest on), or of all the objects when
    nothing is; framing the whole work area leaves a house 110 pixels wide.
    """
    whole = Camera()
    low, high = _built_box(table)
    close = whole.framing(low, high, CLOSE_SIZE, whole.height)
    return np.hstack([label_axes(_view(table, whole), whole), _view(table, close)])


CLOSE_SIZE = 400


def _built_box(table: Tabletop) -> tuple[np.ndarray, np.ndarray]:
    state = table.world_state()
    solid = [name for name, s in state.items() if s.kind != "zone"] or list(state)
    built = {
        name
        for upper in solid
        for lower in solid
        if upper != lower and on_top(state, upper, lower)
        for name in (upper, lower)
    }
    boxes = [table.bounding_box(name) for name in sorted(built or solid)]
    if not boxes:
        return np.array([0.4, -0.2, 0.0]), np.array([0.6, 0.2, 0.1])
    return (
        np.min([low.as_array() for low, _ in boxes], axis=0),
        np.max([high.as_array() for _, high in boxes], axis=0),
    )


def _view(table: Tabletop, camera: Camera) -> np.ndarray:
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
    return image[:, :, :3].copy()


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
