"""A MetaWorld scene: which task, and how many environment steps an episode may take.

The layout itself is MetaWorld's: the task's own random reset space, sampled from the seed.
"""

from __future__ import annotations

import difflib

from pydantic import BaseModel, ConfigDict, Field, field_validator

from envs.metaworld.tasks import MT50, object_kinds
from lyra.errors import LyraError

# MetaWorld's episodes are 500 steps (6.25 simulated seconds); its scripted experts use them all.
EPISODE_STEPS = 500


class MetaWorldScene(BaseModel):
    """A MetaWorld v3 task laid out by a seed.

    Attributes:
        task: the task's MetaWorld name, with or without its version (``drawer-open``).
        steps: environment steps the plan's motions may take.
    """

    model_config = ConfigDict(extra="forbid")

    task: str
    steps: int = Field(EPISODE_STEPS, gt=0, le=100_000)

    @field_validator("task")
    @classmethod
    def _known(cls, task: str) -> str:
        short = task.removesuffix("-v3")
        if short not in MT50:
            raise ValueError(unknown_task(task))
        return short


def unknown_task(task: str) -> str:
    """The refusal for a name MetaWorld does not have: the nearest of its fifty."""
    close = difflib.get_close_matches(task.removesuffix("-v3"), MT50, n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(name) for name in close)}?" if close else ""
    return (
        f"MetaWorld v3 has no task '{task}'.{hint} Its 50 tasks "
        "(metaworld.env_dict.ALL_V3_ENVIRONMENTS, named with or without '-v3') are listed "
        "in docs/backends.md"
    )


def object_names(scene: MetaWorldScene, seed: int) -> list[str]:
    """The objects a scene has, whatever the seed (MetaWorld moves them, never adds any)."""
    if not isinstance(scene, MetaWorldScene):
        raise LyraError("a MetaWorld scene names its task: `task: drawer-open`")
    return sorted([*(name for name, _ in object_kinds(scene.task)), "goal"])
