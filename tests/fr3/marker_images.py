"""Synthetic camera images of marked cubes at known poses, for the markers perception's tests.

Each cube is drawn with its side faces shaded and its top face a white square carrying its
ArUco marker (cv2.aruco's own image of it), warped into the image through a pinhole camera at
four times the resolution and averaged down (so edges fall between pixels as a lens's do), then
bent by the lens's distortion, blurred and given sensor noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from envs.fr3.markers import Calibration

SUPERSAMPLE = 4
TABLE_GREY = 120
SIDE_GREYS = (70, 95, 80, 105)  # the four sides, so neighbouring faces differ


@dataclass(frozen=True)
class Placed:
    """A cube of the calibration at a known pose: its centre (base frame) and yaw."""

    name: str
    centre: tuple[float, float, float]
    yaw: float


def look_at(
    eye: tuple[float, float, float], target: tuple[float, float, float]
) -> list[list[float]]:
    """T_base_camera of a camera at ``eye`` looking at ``target`` (OpenCV's optical frame)."""
    forward = np.subtract(target, eye) / np.linalg.norm(np.subtract(target, eye))
    right = np.cross(forward, (0.0, 0.0, 1.0))
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    transform = np.eye(4)
    transform[:3, :3] = np.column_stack([right, down, forward])
    transform[:3, 3] = eye
    return transform.tolist()


def render(
    calibration: Calibration,
    cubes: list[Placed],
    noise: float = 0.0,
    blur: float = 0.0,
    seed: int = 0,
) -> np.ndarray:
    """A BGR image of the cubes on a grey table, as the calibration's camera sees them."""
    camera = calibration.camera
    width, height = camera.image_size
    matrix = np.array(camera.matrix)
    # Pixel centres of the fine image that average down onto the coarse ones.
    fine = matrix * [[SUPERSAMPLE], [SUPERSAMPLE], [1]]
    fine[:2, 2] += (SUPERSAMPLE - 1) / 2
    camera_base = np.linalg.inv(np.array(camera.T_base_camera))
    image = np.full((height * SUPERSAMPLE, width * SUPERSAMPLE), TABLE_GREY, np.uint8)
    eye = np.array(camera.T_base_camera)[:3, 3]
    for cube in sorted(cubes, key=lambda c: -float(np.linalg.norm(np.subtract(c.centre, eye)))):
        _draw_cube(image, calibration, cube, fine, camera_base, eye)
    image = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)
    image = _distort(image, matrix, np.array(camera.distortion))
    if blur:
        image = cv2.GaussianBlur(image, (0, 0), blur)
    if noise:
        grain = np.random.default_rng(seed).normal(0.0, noise, image.shape)
        image = np.clip(image + grain, 0, 255).astype(np.uint8)
    return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)


def _draw_cube(
    image: np.ndarray,
    calibration: Calibration,
    cube: Placed,
    matrix: np.ndarray,
    camera_base: np.ndarray,
    eye: np.ndarray,
) -> None:
    tagged = calibration.objects[cube.name]
    sx, sy, sz = (s / 2 for s in tagged.size)
    c, s = math.cos(cube.yaw), math.sin(cube.yaw)
    rotation = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])

    def corners(local: list[tuple[float, float, float]]) -> np.ndarray:
        return np.array(cube.centre) + np.array(local) @ rotation.T

    def pixels(points: np.ndarray) -> np.ndarray:
        seen = (camera_base[:3, :3] @ points.T).T + camera_base[:3, 3]
        projected = (matrix @ seen.T).T
        return (projected[:, :2] / projected[:, 2:]).astype(np.float32)

    sides = [((sx, -sy), (sx, sy)), ((sx, sy), (-sx, sy)), ((-sx, sy), (-sx, -sy))]
    sides.append(((-sx, -sy), (sx, -sy)))
    for ((ax, ay), (bx, by)), grey in zip(sides, SIDE_GREYS, strict=True):
        face = corners([(ax, ay, sz), (bx, by, sz), (bx, by, -sz), (ax, ay, -sz)])
        outward = rotation @ np.array([(ax + bx) / 2, (ay + by) / 2, 0.0])
        if outward @ (eye - face.mean(axis=0)) > 0:  # facing the camera
            cv2.fillConvexPoly(image, np.round(pixels(face)).astype(np.int32), grey)
    # The top face: white, the marker's black square in its middle at the calibrated length.
    face_px = 400
    marker_px = round(face_px * calibration.markers.length / tagged.size[0])
    texture = np.full((face_px, face_px), 255, np.uint8)
    dictionary = cv2.aruco.getPredefinedDictionary(
        getattr(cv2.aruco, calibration.markers.dictionary)
    )
    start = (face_px - marker_px) // 2
    texture[start : start + marker_px, start : start + marker_px] = cv2.aruco.generateImageMarker(
        dictionary, tagged.marker, marker_px
    )
    # The texture's top-left corner is the face's (-x, +y): the marker's own top-left.
    top = pixels(corners([(-sx, sy, sz), (sx, sy, sz), (sx, -sy, sz), (-sx, -sy, sz)]))
    source = np.array([[0, 0], [face_px, 0], [face_px, face_px], [0, face_px]], np.float32) - 0.5
    # Warped into the face's bounding box only: the whole fine image is 33 million pixels.
    left, upper = np.floor(top.min(axis=0)).astype(int)
    right, lower = np.ceil(top.max(axis=0)).astype(int) + 1
    warp = cv2.getPerspectiveTransform(source, top - np.float32([left, upper]))
    size = (right - left, lower - upper)
    warped = cv2.warpPerspective(texture, warp, size, flags=cv2.INTER_LINEAR)
    mask = cv2.warpPerspective(np.full_like(texture, 255), warp, size, flags=cv2.INTER_NEAREST)
    window = image[upper:lower, left:right]
    window[mask > 0] = warped[mask > 0]


def _distort(image: np.ndarray, matrix: np.ndarray, distortion: np.ndarray) -> np.ndarray:
    """What a lens with ``distortion`` makes of the ideal pinhole image."""
    if not distortion.any():
        return image
    height, width = image.shape
    grid = np.stack(np.meshgrid(np.arange(width), np.arange(height)), axis=-1).astype(np.float32)
    # Each pixel of the lens's image shows what the pinhole saw at its undistorted point.
    ideal = cv2.undistortPoints(grid.reshape(-1, 1, 2), matrix, distortion, P=matrix)
    maps = ideal.reshape(height, width, 2)
    return cv2.remap(image, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR)
