"""A MetaWorld scene: which task, and how many environment steps an episode may take.

The layout itself is MetaWorld's: the task's own random reset space, sampled from the seed.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from envs.metaworld.tasks import TASKS
from lyra.errors import LyraError, unknown_name

# MetaWorld's episodes are 500 steps (6.25 simulated seconds); its scripted experts use them all.
EPISODE_STEPS = 500


class MetaWorldScene(BaseModel):
    """A MetaWorld v3 task laid out by a seed.

    Attributes:
        task: the task's MetaWorld name without its version (``drawer-open``).
        steps: environment steps the plan's motions may take.
    """

    model_config = ConfigDict(extra="forbid")

    task: str
    steps: int = Field(EPISODE_STEPS, gt=0, le=100_000)

    @field_validator("task")
    @classmethod
    def _known(cls, task: str) -> str:
        if task not in TASKS:
            raise ValueError(unknown_name("no MetaWorld task", "tasks", task, TASKS))
        return task


def object_names(scene: MetaWorldScene, seed: int) -> list[str]:
    """The objects a scene has, whatever the seed (MetaWorld moves them, never adds any)."""
    if not isinstance(scene, MetaWorldScene):
        raise LyraError("a MetaWorld scene names its task: `task: drawer-open`")
    return sorted(thing.name for thing in TASKS[scene.task].things)
