"""lyra: teach a robot arm long-horizon manipulation through an LLM that writes skills as code."""

from lyra.embodiment import Embodiment, ObjectState, WorkspaceBox, use
from lyra.errors import (
    GraspError,
    LyraError,
    MotionError,
    NoEmbodimentError,
    UnknownObjectError,
    UnreachablePoseError,
)
from lyra.geometry import Point, Pose, Size

__all__ = [
    "Embodiment",
    "GraspError",
    "LyraError",
    "MotionError",
    "NoEmbodimentError",
    "ObjectState",
    "Point",
    "Pose",
    "Size",
    "UnknownObjectError",
    "UnreachablePoseError",
    "WorkspaceBox",
    "use",
]
__version__ = "0.1.0"
