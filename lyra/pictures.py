"""Pictures of a backend's scene, taken only when someone will look: GIFs of runs and PNGs.

A frame costs a tenth of a second or more on a CPU renderer, more than a whole pick-and-place,
so nothing renders unless a recording or a picture is asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lyra.api import ACTIONS
from lyra.backend import Backend


def save_png(image: np.ndarray, path: Path) -> Path:
    """Write an RGB image as a PNG, making its folder."""
    import imageio.v3 as iio

    path.parent.mkdir(parents=True, exist_ok=True)
    iio.imwrite(path, image)
    return path


@dataclass
class Recorder:
    """Frames of an episode: the start, one after each primitive that moves the robot, the end.

    Attributes:
        backend: what renders the frames.
        frames: the frames taken so far.
        listener: shown each frame as it is taken (a browser watching the run live).
    """

    backend: Backend
    frames: list[np.ndarray] = field(default_factory=list)
    listener: Callable[[np.ndarray], None] | None = None

    def capture(self) -> None:
        """Take one frame now."""
        frame = self.backend.render()
        self.frames.append(frame)
        if self.listener is not None:
            self.listener(frame)

    def after(self, primitive: str) -> None:
        """The runner's hook: a frame after each motion."""
        if primitive in ACTIONS:
            self.capture()

    def save(self, path: Path, fps: float = 3.0) -> Path:
        """Write the frames as a GIF (or MP4 when the path ends in .mp4 and ffmpeg is there)."""
        import imageio.v3 as iio

        if not self.frames:
            raise ValueError("no frames were recorded: record an episode first")
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix.lower() == ".mp4":
            iio.imwrite(path, np.stack(self.frames), fps=fps)
        else:
            # Hold the last frame so the finished scene stays on screen before the loop restarts.
            frames = [*self.frames, *[self.frames[-1]] * 3]
            iio.imwrite(path, np.stack(frames), duration=1000 / fps, loop=0)
        return path
