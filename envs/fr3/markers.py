"""The ``markers`` perception: object poses from ArUco markers a calibrated camera sees.

A calibration file gives the camera's intrinsics, where the camera is in the robot's base
frame, the marker dictionary and side, and which marker id is which object (and where on it).
Frames come from any callable that returns an image, so a real camera plugs in without lyra
depending on its SDK; :class:`VideoFrames` reads a device OpenCV can open (a RealSense's colour
stream is a UVC device).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from envs.fr3.perception import PerceptionFileError
from lyra.curriculum import CurriculumError, Loc, located, read_yaml, schema_message
from lyra.embodiment import ObjectState
from lyra.errors import LyraError, MissingDependencyError
from lyra.geometry import Point, Pose, Size, quat_from_yaw

Frames = Callable[[], np.ndarray]
"""A frame source: each call returns the camera's image now (H x W grey, or H x W x 3)."""

# How far T_base_camera's rotation may be from orthonormal: a rotation written to 3 decimals
# is up to about 2e-3 off; a transposed or scaled one is far more.
RIGID = 0.01
FORMAT = "docs/fr3.md ('The markers perception') shows the calibration file's format"


def _cv2() -> Any:
    try:
        import cv2
    except ImportError:
        raise MissingDependencyError(
            "the markers perception needs OpenCV's ArUco: pip install 'lyra-robot[fr3]' "
            "(opencv-python-headless)"
        ) from None
    return cv2


class CalibrationError(PerceptionFileError):
    """A calibration file that cannot be used; each problem reads ``file:line: field: message``."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(problems, FORMAT)


class MarkersNotSeenError(LyraError):
    """Objects whose markers the camera has not seen: their poses are not guessed."""

    def __init__(self, missing: dict[str, int], dictionary: str) -> None:
        self.missing = sorted(missing)
        which = ", ".join(f"{name} (id {missing[name]})" for name in self.missing)
        super().__init__(
            f"the camera does not see the {dictionary} marker of {which}: put each in the "
            "camera's view with its marker uncovered, or take it out of the calibration's objects"
        )


class Camera(BaseModel):
    """The camera's intrinsics and its pose in the robot's base frame.

    Attributes:
        image_size: width and height, in pixels, of the images the intrinsics are for.
        matrix: the 3x3 camera matrix (fx, 0, cx; 0, fy, cy; 0, 0, 1).
        distortion: OpenCV's distortion coefficients (k1, k2, p1, p2[, k3[, ...]]).
        T_base_camera: the 4x4 pose of the camera (OpenCV's optical frame: x right, y down,
            z forward) in the robot's base frame: base points = T_base_camera @ camera points.
        device: what :class:`VideoFrames` opens (a device index, a /dev/video path or a video
            file) when the perception is made from the file alone.
    """

    model_config = ConfigDict(extra="forbid")

    image_size: tuple[int, int]
    matrix: tuple[
        tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]
    ]
    distortion: list[float]
    T_base_camera: tuple[
        tuple[float, float, float, float],
        tuple[float, float, float, float],
        tuple[float, float, float, float],
        tuple[float, float, float, float],
    ]
    device: int | str | None = None

    @field_validator("matrix")
    @classmethod
    def _intrinsic(cls, matrix: tuple[tuple[float, ...], ...]) -> tuple[tuple[float, ...], ...]:
        (fx, skew, _), (zero, fy, _), last = matrix
        if fx <= 0 or fy <= 0 or skew or zero or last != (0.0, 0.0, 1.0):
            raise ValueError(
                "a camera matrix is [[fx, 0, cx], [0, fy, cy], [0, 0, 1]] with fx, fy > 0"
            )
        return matrix

    @field_validator("distortion")
    @classmethod
    def _coefficients(cls, distortion: list[float]) -> list[float]:
        if len(distortion) not in (4, 5, 8, 12, 14):
            raise ValueError(
                f"OpenCV takes 4, 5, 8, 12 or 14 distortion coefficients, not {len(distortion)}"
            )
        return distortion

    @field_validator("T_base_camera")
    @classmethod
    def _rigid(cls, matrix: tuple[tuple[float, ...], ...]) -> tuple[tuple[float, ...], ...]:
        transform = np.array(matrix)
        rotation = transform[:3, :3]
        orthonormal = np.abs(rotation.T @ rotation - np.eye(3)).max() < RIGID
        if not orthonormal or np.linalg.det(rotation) < 0 or tuple(transform[3]) != (0, 0, 0, 1):
            raise ValueError(
                "not a rigid transform: its top-left 3x3 must be a rotation (orthonormal, "
                "determinant 1) and its last row [0, 0, 0, 1]"
            )
        # The nearest rotation to the one written, so that rounding does not skew the poses.
        left, _, right = np.linalg.svd(rotation)
        transform[:3, :3] = left @ right
        return tuple(tuple(float(v) for v in row) for row in transform)


class Markers(BaseModel):
    """The printed markers.

    Attributes:
        dictionary: OpenCV's name of their dictionary (``DICT_4X4_50``, ``DICT_APRILTAG_36h11``).
        length: the side of a marker's black square, in metres (measure the print).
    """

    model_config = ConfigDict(extra="forbid")

    dictionary: str
    length: float = Field(gt=0)

    @field_validator("dictionary")
    @classmethod
    def _known(cls, name: str) -> str:
        known = [n for n in dir(_cv2().aruco) if n.startswith("DICT_")]
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean '{close[0]}'?" if close else "such as DICT_4X4_50"
            raise ValueError(
                f"'{name}' is not an OpenCV ArUco dictionary ({hint}); the names are "
                "cv2.aruco's DICT_*, as printed on the markers' sheet"
            )
        return name


class Tagged(BaseModel):
    """An object with a marker on it.

    Attributes:
        marker: the marker's id.
        size: its extents along its own x, y and z axes, in metres.
        color: its colour name.
        kind: what it is (``cube``).
        offset: the marker's centre in the object's frame (its centre, x and y along its sides,
            z up); by default the middle of its top face.
        offset_rpy_deg: the marker's turn in the object's frame (roll, pitch, yaw in degrees,
            applied in that order about fixed axes); none: the marker's x along the object's.
    """

    model_config = ConfigDict(extra="forbid")

    marker: int = Field(ge=0)
    size: tuple[float, float, float]
    color: str = ""
    kind: str = "cube"
    offset: tuple[float, float, float] | None = None
    offset_rpy_deg: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def object_marker(self) -> np.ndarray:
        """The marker's 4x4 pose in the object's frame."""
        transform = np.eye(4)
        transform[:3, :3] = _rpy(*(math.radians(a) for a in self.offset_rpy_deg))
        transform[:3, 3] = self.offset or (0.0, 0.0, self.size[2] / 2)
        return transform


class Calibration(BaseModel):
    """A calibration file: the camera, the markers and the objects they are on.

    Attributes:
        camera: the camera's intrinsics and pose.
        markers: the printed markers' dictionary and side.
        objects: each tagged object by the name skills call it.
    """

    model_config = ConfigDict(extra="forbid")

    camera: Camera
    markers: Markers
    objects: dict[str, Tagged] = Field(min_length=1)

    @model_validator(mode="after")
    def _ids(self) -> Calibration:
        count = len(_dictionary(self.markers.dictionary).bytesList)
        owners: dict[int, str] = {}
        for name, tagged in self.objects.items():
            if tagged.marker >= count:
                raise _problem(
                    f"{self.markers.dictionary} has ids 0-{count - 1}", ("objects", name, "marker")
                )
            if tagged.marker in owners:
                raise _problem(
                    f"marker {tagged.marker} is also {owners[tagged.marker]}'s: give each "
                    "object a marker of its own",
                    ("objects", name, "marker"),
                )
            owners[tagged.marker] = name
        return self

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        """Read a calibration file.

        Raises:
            CalibrationError: naming the file, the line and the field of each problem.
        """
        path = Path(path)
        try:
            data, lines = read_yaml(path)
        except CurriculumError as error:  # the YAML reader lyra's hand-edited files share
            raise CalibrationError(error.problems) from None
        try:
            return cls.model_validate(data)
        except ValidationError as invalid:
            problems = []
            for item in invalid.errors():
                loc: Loc = item.get("ctx", {}).get("loc", item["loc"])
                problems.append(located(path, loc, lines, schema_message(item, cls)))
            raise CalibrationError(problems) from None


def _problem(message: str, loc: Loc) -> PydanticCustomError:
    # Reported at the field it is about, not at the model, and without "Value error, ".
    return PydanticCustomError("calibration", "{message}", {"message": message, "loc": loc})


def _dictionary(name: str) -> Any:
    aruco = _cv2().aruco
    return aruco.getPredefinedDictionary(getattr(aruco, name))


def _rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Rz(yaw) @ Ry(pitch) @ Rx(roll)."""
    cr, sr, cp, sp, cy, sy = (f(a) for a in (roll, pitch, yaw) for f in (math.cos, math.sin))
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


class MarkerPerception:
    """Object poses from the markers a calibrated camera sees, in the robot's base frame.

    Each :meth:`objects` call looks at one new frame. An object whose marker it shows is where
    the marker says; one out of sight now keeps the pose it was last seen at, or the pose the
    arm last set it down at if that came later (a block under another, or in the hand, hides
    its marker). An object never seen is not guessed: :class:`MarkersNotSeenError` names it.

    Objects stand upright on the table (or on each other): the orientation is the marker's yaw
    about the vertical, and the centre lies below the marker's centre by its offset turned by
    that yaw, so the marker's tilt (a small square's least certain measure) moves neither.

    Args:
        calibration: the calibration, or the path of its file.
        frames: the frame source; each call returns the camera's image now.
    """

    def __init__(self, calibration: Calibration | str | Path, frames: Frames) -> None:
        cv2 = _cv2()
        if not isinstance(calibration, Calibration):
            calibration = Calibration.load(calibration)
        self.calibration = calibration
        self._frames = frames
        dictionary = _dictionary(calibration.markers.dictionary)
        self._finder = cv2.aruco.ArucoDetector(dictionary, cv2.aruco.DetectorParameters())
        parameters = cv2.aruco.DetectorParameters()
        # Depth comes from the marker's size in pixels, so corners must be right to a tenth of
        # a pixel. On synthetic images of 4 cm markers 37 pixels wide, AprilTag's edge fit put
        # the centres 1.9 mm off on average; SUBPIX 9.8 mm, CONTOUR 28 mm, none 22 mm. It costs
        # about 1 s on a noisy 1920x1080 frame, so it runs only around each marker found.
        parameters.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_APRILTAG
        self._refiner = cv2.aruco.ArucoDetector(dictionary, parameters)
        camera = calibration.camera
        self._matrix = np.array(camera.matrix)
        self._distortion = np.array(camera.distortion)
        self._base_camera = np.array(camera.T_base_camera)
        half = calibration.markers.length / 2
        # The corners in the order ArUco reports them, for SOLVEPNP_IPPE_SQUARE.
        self._square = np.array(
            [[-half, half, 0.0], [half, half, 0.0], [half, -half, 0.0], [-half, -half, 0.0]]
        )
        self._names = {tagged.marker: name for name, tagged in calibration.objects.items()}
        placements = {name: tagged.object_marker() for name, tagged in calibration.objects.items()}
        self._marker_object = {name: np.linalg.inv(pose) for name, pose in placements.items()}
        self._offsets = {name: pose[:3, 3] for name, pose in placements.items()}
        self._known: dict[str, Pose] = {}

    @classmethod
    def open(cls, path: str | Path) -> MarkerPerception:
        """The perception a calibration file describes, reading its ``camera.device``.

        Raises:
            CalibrationError: the file is not a calibration, or names no device.
        """
        calibration = Calibration.load(path)
        camera = calibration.camera
        if camera.device is None:
            raise CalibrationError(
                [
                    f"{path}: camera.device: name the camera to read frames from (an index "
                    "such as 4, a path such as /dev/video4, or a video file), or pass "
                    "MarkerPerception(calibration, frames=your_camera) in Python"
                ]
            )
        return cls(calibration, VideoFrames(camera.device, camera.image_size))

    def see(self) -> dict[str, Pose]:
        """The objects whose markers one new frame shows, at their poses; nothing remembered.

        Raises:
            LyraError: the frame is not the calibrated size, or shows an object's marker twice.
        """
        image = self._frame()
        corners, ids, _ = self._finder.detectMarkers(image)
        seen: dict[str, Pose] = {}
        for quad, marker in zip(corners, [] if ids is None else ids.ravel(), strict=True):
            name = self._names.get(int(marker))
            if name is None:
                continue  # a marker of something lyra is not told about
            if name in seen:
                raise LyraError(
                    f"the camera sees marker {marker} ({name}) twice: an object has one "
                    "marker; take the other print out of view"
                )
            refined = self._refine(image, quad.reshape(4, 2), int(marker))
            if refined is not None:
                seen[name] = self._pose(name, refined)
        return seen

    def _refine(self, image: np.ndarray, quad: np.ndarray, marker: int) -> np.ndarray | None:
        """The marker's corners refined in a window around it; None if it is not found there.

        Unrefined corners put a centre centimetres off: such a marker counts as not seen.
        """
        pad = (quad.max(axis=0) - quad.min(axis=0)).max() / 2
        left, top = np.maximum(np.floor(quad.min(axis=0) - pad), 0).astype(int)
        right, bottom = np.ceil(quad.max(axis=0) + pad).astype(int)
        corners, ids, _ = self._refiner.detectMarkers(image[top:bottom, left:right])
        for found, which in zip(corners, [] if ids is None else ids.ravel(), strict=True):
            if which == marker:
                return found.reshape(4, 2).astype(np.float64) + np.array([left, top])
        return None

    def objects(self) -> dict[str, ObjectState]:
        """Every object of the calibration, where it was last seen or set down.

        Raises:
            MarkersNotSeenError: an object's marker has never been seen.
        """
        self._known.update(self.see())
        objects = self.calibration.objects
        missing = {name: t.marker for name, t in objects.items() if name not in self._known}
        if missing:
            raise MarkersNotSeenError(missing, self.calibration.markers.dictionary)
        return {
            name: ObjectState(name, t.kind, t.color, self._known[name], Size(*t.size))
            for name, t in objects.items()
        }

    def placed(self, name: str, pose: Pose) -> None:
        """Keep where the arm set ``name`` down, until the camera sees it again."""
        self._known[name] = pose

    def _frame(self) -> np.ndarray:
        cv2 = _cv2()
        image = np.asarray(self._frames())
        width, height = self.calibration.camera.image_size
        if (
            image.dtype != np.uint8
            or image.ndim not in (2, 3)
            or image.shape[:2] != (height, width)
        ):
            raise LyraError(
                f"the camera's frame is {'x'.join(map(str, image.shape))} {image.dtype} but the "
                f"calibration is for {width}x{height} 8-bit images: set the camera to "
                f"{width}x{height}, or calibrate it at the size it gives"
            )
        return image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)

    def _pose(self, name: str, corners: np.ndarray) -> Pose:
        cv2 = _cv2()
        _, rotations, translations, _ = cv2.solvePnPGeneric(
            self._square, corners, self._matrix, self._distortion, flags=cv2.SOLVEPNP_IPPE_SQUARE
        )
        candidates = []
        for rotation, translation in zip(rotations, translations, strict=True):
            camera_marker = np.eye(4)
            camera_marker[:3, :3] = cv2.Rodrigues(rotation)[0]
            camera_marker[:3, 3] = translation.ravel()
            candidates.append(self._base_camera @ camera_marker)
        marker_object = self._marker_object[name]
        # A small square seen from afar has two poses that fit it, tilted either way: the one
        # that stands the object most upright is the one a block on a table has.
        base_marker = max(candidates, key=lambda pose: (pose @ marker_object)[2, 2])
        rotation = (base_marker @ marker_object)[:3, :3]
        yaw = math.atan2(rotation[1, 0], rotation[0, 0])
        upright = _rpy(0.0, 0.0, yaw)
        centre = base_marker[:3, 3] - upright @ self._offsets[name]
        return Pose(Point.of(centre), quat_from_yaw(yaw))


class VideoFrames:
    """Frames from a camera OpenCV opens: a device index, a /dev/video path or a video file.

    Args:
        device: what ``cv2.VideoCapture`` opens.
        size: the width and height to ask the camera for (those of the calibration).
    """

    def __init__(self, device: int | str, size: tuple[int, int]) -> None:
        cv2 = _cv2()
        self._device = device
        self._capture = cv2.VideoCapture(device)
        if not self._capture.isOpened():
            raise LyraError(
                f"OpenCV cannot open the camera {device!r}: check that it is plugged in and no "
                "other program holds it (v4l2-ctl --list-devices lists the devices)"
            )
        self._capture.set(cv2.CAP_PROP_FRAME_WIDTH, size[0])
        self._capture.set(cv2.CAP_PROP_FRAME_HEIGHT, size[1])
        # A live camera queues frames: keep one, so that a look sees now, not a second ago.
        self._capture.set(cv2.CAP_PROP_BUFFERSIZE, 1)

    def __call__(self) -> np.ndarray:
        """The camera's next frame.

        Raises:
            LyraError: the camera gave none.
        """
        ok, image = self._capture.read()
        if not ok:
            raise LyraError(
                f"the camera {self._device!r} gave no frame: check its cable and that it streams"
            )
        return np.asarray(image)
