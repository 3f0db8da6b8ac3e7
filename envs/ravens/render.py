"""Pictures of the tabletop, taken only when someone will look: frames, GIFs and PNGs.

A frame costs 130-170 ms with pybullet's software renderer, more than a whole pick-and-place, so
nothing renders unless a :class:`Recorder` is attached or a picture is asked for.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pybullet

from envs.ravens.scene import SceneSpec
from envs.ravens.tabletop import Tabletop
from lyra.errors import LyraError


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


def save_png(table: Tabletop, path: str | Path, camera: Camera | None = None) -> Path:
    """Render the scene now and write it as a PNG."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    iio.imwrite(path, render(table, camera))
    return path


@dataclass
class Recorder:
    """Collects a frame after each primitive that matters (every pick and place).

    Attach it with :meth:`attach`; the tabletop calls it back with a label for each event.
    """

    table: Tabletop
    camera: Camera = field(default_factory=Camera)
    frames: list[np.ndarray] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)

    def attach(self) -> Recorder:
        """Start recording: take a first frame of the scene as it is."""
        self.table.frame_hook = self.capture
        self.capture("start")
        return self

    def detach(self) -> None:
        """Stop recording."""
        self.table.frame_hook = None

    def capture(self, label: str) -> None:
        """Take one frame now."""
        self.frames.append(render(self.table, self.camera))
        self.labels.append(label)

    def save(self, path: str | Path, fps: float = 3.0) -> Path:
        """Write the frames as a GIF (or MP4 when the path ends in .mp4 and ffmpeg is there)."""
        if not self.frames:
            raise ValueError("no frames were recorded: attach the recorder before acting")
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix.lower() == ".mp4":
            iio.imwrite(path, np.stack(self.frames), fps=fps)
        else:
            # Hold the last frame so the finished scene stays on screen before the loop restarts.
            frames = [*self.frames, *[self.frames[-1]] * 3]
            iio.imwrite(path, np.stack(frames), duration=1000 / fps, loop=0)
        return path


def clear_view(table: Tabletop) -> None:
    """Move the arm home for a picture; where it cannot go (it is touching something), stay."""
    with contextlib.suppress(LyraError):
        table.home()


def record_run(
    table: Tabletop, scene: SceneSpec, seed: int, act: Callable[[], object], path: Path
) -> Path:
    """Lay a scene out, record ``act`` with the camera on, and write the frames as a GIF."""
    table.reset(scene, seed)
    recorder = Recorder(table).attach()
    try:
        act()
        clear_view(table)
        recorder.capture("done")
        return recorder.save(path)
    finally:
        recorder.detach()
