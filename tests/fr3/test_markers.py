"""The markers perception on synthetic images of marked cubes at known poses.

No real camera here: each image is drawn from the calibration's own camera model (a RealSense
D435's colour stream at 1920x1080, with lens distortion), so the poses the pipeline recovers
can be compared with the poses the cubes were drawn at.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

pytest.importorskip("cv2", reason="the markers tests need OpenCV: pip install '.[fr3]'")

import cv2

from envs.fr3.markers import (
    Calibration,
    CalibrationError,
    MarkerPerception,
    MarkersNotSeenError,
)
from lyra.errors import LyraError
from lyra.geometry import Point, Pose, quat_from_yaw
from tests.fr3.marker_images import Placed, look_at, render

CAMERAS = {
    # On a tripod in front of the robot and to its right, 0.85 m from the middle of the table.
    "front": look_at((1.1, -0.25, 0.55), (0.5, 0.0, 0.0)),
    # Above the table, 0.8 m up.
    "overhead": look_at((0.5, 0.02, 0.8), (0.5, 0.0, 0.0)),
}
NAMES = ("red", "green", "blue", "yellow", "white")
POSITION_TOLERANCE = 0.005  # metres
YAW_TOLERANCE = 1.0  # degrees


def calibration_data(camera: str = "front", device: Any = None) -> dict[str, Any]:
    """A calibration file's contents: D435-like intrinsics, 4 cm markers on 5 cm cubes."""
    data: dict[str, Any] = {
        "camera": {
            "image_size": [1920, 1080],
            "matrix": [[1380.0, 0.0, 962.5], [0.0, 1378.0, 538.0], [0.0, 0.0, 1.0]],
            "distortion": [0.08, -0.15, 0.001, -0.001, 0.05],
            "T_base_camera": [list(row) for row in CAMERAS[camera]],
        },
        "markers": {"dictionary": "DICT_4X4_50", "length": 0.04},
        "objects": {
            name: {"marker": index, "size": [0.05, 0.05, 0.05], "color": name}
            for index, name in enumerate(NAMES)
        },
    }
    if device is not None:
        data["camera"]["device"] = device
    return data


def scattered(seed: int, names: tuple[str, ...] = NAMES) -> list[Placed]:
    """Cubes on the table at random places and turns, 9 cm apart at least."""
    rng = np.random.default_rng(seed)
    cubes: list[Placed] = []
    while len(cubes) < len(names):
        x, y = rng.uniform(0.35, 0.65), rng.uniform(-0.25, 0.25)
        if all(math.dist((x, y), cube.centre[:2]) > 0.09 for cube in cubes):
            yaw = rng.uniform(-math.pi, math.pi)
            cubes.append(Placed(names[len(cubes)], (x, y, 0.025), yaw))
    return cubes


def errors(seen: dict[str, Pose], cube: Placed) -> tuple[float, float]:
    """Metres and degrees between where a cube was drawn and where it was seen."""
    pose = seen[cube.name]
    distance = float(np.linalg.norm(pose.position.as_array() - np.array(cube.centre)))
    turn = math.degrees(math.remainder(pose.yaw - cube.yaw, 2 * math.pi))
    return distance, abs(turn)


@pytest.mark.parametrize("camera", sorted(CAMERAS))
@pytest.mark.parametrize(("noise", "blur"), [(0.0, 0.0), (4.0, 0.8), (8.0, 1.5)])
def test_the_markers_give_known_poses_within_5_mm_and_1_degree(
    camera: str, noise: float, blur: float
) -> None:
    calibration = Calibration.model_validate(calibration_data(camera))
    measured = []
    for seed in range(5):
        cubes = scattered(seed)
        image = render(calibration, cubes, noise=noise, blur=blur, seed=seed)
        seen = MarkerPerception(calibration, lambda image=image: image).see()
        assert sorted(seen) == sorted(NAMES)
        measured += [errors(seen, cube) for cube in cubes]
    distances, turns = zip(*measured, strict=True)
    assert max(distances) < POSITION_TOLERANCE, f"{max(distances) * 1000:.2f} mm"
    assert max(turns) < YAW_TOLERANCE, f"{max(turns):.2f} degrees"


def test_a_marker_never_seen_is_an_error_naming_the_object_not_a_guess() -> None:
    calibration = Calibration.model_validate(calibration_data())
    image = render(calibration, scattered(0, ("red", "blue", "white")))
    perception = MarkerPerception(calibration, lambda: image)
    with pytest.raises(MarkersNotSeenError) as caught:
        perception.objects()
    assert str(caught.value) == (
        "the camera does not see the DICT_4X4_50 marker of green (id 1), yellow (id 3): put "
        "each in the camera's view with its marker uncovered, or take it out of the "
        "calibration's objects"
    )
    assert caught.value.missing == ["green", "yellow"]


def test_a_hidden_block_keeps_where_it_was_seen_or_set_down_and_the_camera_wins() -> None:
    calibration = Calibration.model_validate(calibration_data())
    table = scattered(1)
    frames = [render(calibration, table)]
    perception = MarkerPerception(calibration, lambda: frames[-1])
    before = perception.objects()
    by_name = {cube.name: cube for cube in table}

    # The arm stacks green on red: red's marker is hidden under it, green's is seen on top.
    red = by_name["red"]
    on_red = Placed("green", (red.centre[0], red.centre[1], 0.075), red.yaw + 0.3)
    said = Pose(Point(*on_red.centre), quat_from_yaw(on_red.yaw))
    perception.placed("green", said)
    # ... and holds white out of the camera's view, setting it down at a place it says.
    put = Pose(Point(0.3, 0.3, 0.025), quat_from_yaw(0.0))
    perception.placed("white", put)
    moved = [c for c in table if c.name not in ("green", "white")] + [on_red]
    frames.append(render(calibration, moved))
    assert sorted(perception.see()) == ["blue", "green", "yellow"]
    now = perception.objects()
    assert now["red"].pose == before["red"].pose  # where the camera last saw it
    assert now["white"].pose == put  # where the arm set it down, unseen since
    assert now["green"].pose != said  # the camera's, not the arm's word
    distance, turn = errors({"green": now["green"].pose}, on_red)
    assert distance < POSITION_TOLERANCE and turn < YAW_TOLERANCE


def test_objects_carry_their_calibrated_kind_colour_and_size() -> None:
    data = calibration_data()
    data["objects"]["red"].update(kind="block", size=[0.05, 0.05, 0.03])
    calibration = Calibration.model_validate(data)
    cubes = [Placed("red", (0.5, 0.1, 0.015), 0.4), *scattered(2, NAMES[1:])]
    image = render(calibration, cubes)
    state = MarkerPerception(calibration, lambda: image).objects()["red"]
    assert (state.kind, state.color, state.size.z) == ("block", "red", 0.03)
    distance, turn = errors({"red": state.pose}, cubes[0])
    assert distance < POSITION_TOLERANCE and turn < YAW_TOLERANCE


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "camera.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def broken(edit: Any) -> dict[str, Any]:
    data = calibration_data()
    edit(data)
    return data


FORMAT = "docs/fr3.md ('The markers perception') shows the calibration file's format"


@pytest.mark.parametrize(
    ("data", "problems"),
    [
        (
            broken(lambda d: d["camera"].pop("T_base_camera")),
            [
                "1: camera.T_base_camera: Field required",
            ],
        ),
        (
            broken(lambda d: d["camera"]["matrix"][0].__setitem__(0, -1380.0)),
            [
                "5: camera.matrix: a camera matrix is [[fx, 0, cx], [0, fy, cy], [0, 0, 1]] with "
                "fx, fy > 0",
            ],
        ),
        (
            broken(lambda d: d["camera"].__setitem__("distortion", [0.1, 0.0, 0.0])),
            [
                "15: camera.distortion: OpenCV takes 4, 5, 8, 12 or 14 distortion coefficients, not 3",
            ],
        ),
        (
            broken(lambda d: d["camera"]["T_base_camera"][0].__setitem__(0, 2.0)),
            [
                "21: camera.T_base_camera: not a rigid transform: its top-left 3x3 must be a "
                "rotation (orthonormal, determinant 1) and its last row [0, 0, 0, 1]",
            ],
        ),
        (
            broken(lambda d: d["markers"].__setitem__("dictionary", "DICT_4X4_5")),
            [
                "39: markers.dictionary: 'DICT_4X4_5' is not an OpenCV ArUco dictionary (did you "
                "mean 'DICT_4X4_50'?); the names are cv2.aruco's DICT_*, as printed on the "
                "markers' sheet",
            ],
        ),
        (
            broken(lambda d: d["markers"].__setitem__("lenght", d["markers"].pop("length"))),
            [
                "38: markers.length: Field required",
                "40: markers.lenght: Extra inputs are not permitted (did you mean 'length'?)",
            ],
        ),
        (
            broken(lambda d: d["objects"]["blue"].__setitem__("marker", 0)),
            [
                "57: objects.blue.marker: marker 0 is also red's: give each object a marker of "
                "its own",
            ],
        ),
        (
            broken(lambda d: d["objects"]["blue"].__setitem__("marker", 50)),
            [
                "57: objects.blue.marker: DICT_4X4_50 has ids 0-49",
            ],
        ),
    ],
)
def test_a_malformed_calibration_names_the_file_line_and_field(
    tmp_path: Path, data: dict[str, Any], problems: list[str]
) -> None:
    path = write(tmp_path, data)
    with pytest.raises(CalibrationError) as caught:
        Calibration.load(path)
    assert str(caught.value) == "\n".join([*(f"{path}:{line}" for line in problems), FORMAT])


def test_a_calibration_file_that_is_not_yaml_or_not_there_is_named(tmp_path: Path) -> None:
    path = tmp_path / "camera.yaml"
    path.write_text("camera:\n  matrix: [[1, 0\n", encoding="utf-8")
    with pytest.raises(CalibrationError) as caught:
        Calibration.load(path)
    assert str(caught.value) == (
        f"{path}:3:1: expected ',' or ']', but got '<stream end>'\n{FORMAT}"
    )
    missing = tmp_path / "nowhere.yaml"
    with pytest.raises(CalibrationError) as caught:
        Calibration.load(missing)
    assert str(caught.value) == f"{missing}: cannot be read: No such file or directory\n{FORMAT}"


def test_a_frame_of_another_size_than_calibrated_is_refused() -> None:
    calibration = Calibration.model_validate(calibration_data())
    perception = MarkerPerception(calibration, lambda: np.zeros((720, 1280, 3), np.uint8))
    with pytest.raises(LyraError) as caught:
        perception.see()
    assert str(caught.value) == (
        "the camera's frame is 720x1280x3 uint8 but the calibration is for 1920x1080 8-bit "
        "images: set the camera to 1920x1080, or calibrate it at the size it gives"
    )


def test_a_marker_seen_twice_is_refused() -> None:
    calibration = Calibration.model_validate(calibration_data())
    twice = [Placed("red", (0.45, 0.1, 0.025), 0.0), Placed("red", (0.55, -0.1, 0.025), 0.5)]
    image = render(calibration, twice)
    with pytest.raises(LyraError) as caught:
        MarkerPerception(calibration, lambda: image).see()
    assert str(caught.value) == (
        "the camera sees marker 0 (red) twice: an object has one marker; take the other print "
        "out of view"
    )


def video(path: Path, frames: list[np.ndarray]) -> Path:
    """A motion-JPEG file of the frames, for ``camera.device`` (OpenCV opens it as a camera)."""
    height, width = frames[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 5, (width, height))
    for frame in frames:
        writer.write(frame)
    writer.release()
    return path


def test_the_backend_reads_a_calibration_file_and_the_camera_it_names(tmp_path: Path) -> None:
    pytest.importorskip("franky_sim", reason="needs franky-sim: pip install '.[fr3]'")
    from envs.fr3.backend import FR3Backend
    from envs.fr3.sim import FrankySim
    from tests.fr3.conftest import CUBES

    data = calibration_data()
    data["objects"] = {
        cube.name: {"marker": index, "size": [cube.size] * 3, "color": cube.color}
        for index, cube in enumerate(CUBES.objects)
    }
    calibration = Calibration.model_validate(data)
    table = [Placed(c.name, c.centre, math.radians(c.yaw_deg)) for c in CUBES.objects]
    # The camera, as OpenCV opens it: a motion-JPEG file of the table stands in for a device.
    data["camera"]["device"] = str(video(tmp_path / "table.avi", [render(calibration, table)] * 3))
    sim = FrankySim(CUBES)
    backend = FR3Backend(host=sim.host, perception=write(tmp_path, data))
    try:
        backend.reset(CUBES, 0)
        seen = {name: state.pose for name, state in backend.world_state().items()}
    finally:
        backend.close()
        sim.close()
    for cube in table:
        distance, turn = errors(seen, cube)
        assert distance < POSITION_TOLERANCE and turn < YAW_TOLERANCE


def test_the_calibration_in_the_docs_loads_its_rotation_rounded_to_3_decimals(
    tmp_path: Path,
) -> None:
    text = (Path(__file__).parents[2] / "docs" / "fr3.md").read_text(encoding="utf-8")
    example = text.split("### The calibration file")[1].split("```yaml\n")[1].split("```")[0]
    path = tmp_path / "camera.yaml"
    path.write_text(example, encoding="utf-8")
    calibration = Calibration.load(path)
    assert sorted(calibration.objects) == ["blue_cube", "red_cube"]
    rotation = np.array(calibration.camera.T_base_camera)[:3, :3]
    # Made exactly orthonormal, a few thousandths from the numbers written.
    assert np.abs(rotation.T @ rotation - np.eye(3)).max() < 1e-12
    assert np.abs(rotation - np.array(CAMERAS["front"])[:3, :3]).max() < 2e-3
