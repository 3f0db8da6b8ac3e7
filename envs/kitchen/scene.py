"""A Franka Kitchen scene: which of the Kitchen's tasks an episode is judged on, and its steps.

The layout itself is the Kitchen's one fixed scene; a seed draws the noise the Kitchen adds to
its joint readings (lyra's controller aims from that reading, so the noise moves the arm only
where a command meets the Kitchen's bound on its action) and, where a scene asks for it, moves
the kettle a little from its place.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from envs.kitchen.tasks import TASKS, THINGS
from lyra.errors import LyraError, unknown_name

# The Kitchen's own episodes are 280 steps of 80 ms, for a policy that acts at every step;
# lyra's budget is a bound on a plan's motions (80 simulated seconds), not a pace to keep.
EPISODE_STEPS = 1000


class KitchenScene(BaseModel):
    """The Kitchen with the tasks an episode is judged on.

    Attributes:
        tasks: the Kitchen's task names (``microwave``, ``kettle``, ``light switch``, ``slide
            cabinet``, ``hinge cabinet``, ``bottom burner``, ``top burner``).
        steps: environment steps the plan's motions may take.
        jitter: how far, at most, the seed moves the kettle from its place along x and y, in
            metres (the Kitchen itself always starts it in the same place).
    """

    model_config = ConfigDict(extra="forbid")

    tasks: list[str] = Field(min_length=1)
    steps: int = Field(EPISODE_STEPS, gt=0, le=100_000)
    jitter: float = Field(0.0, ge=0.0, le=0.05)

    @field_validator("tasks")
    @classmethod
    def _known(cls, tasks: list[str]) -> list[str]:
        for task in tasks:
            if task not in TASKS:
                raise ValueError(unknown_name("no Kitchen task", "tasks", task, TASKS))
        return tasks


def object_names(scene: KitchenScene, seed: int) -> list[str]:
    """The Kitchen's things: the same in every scene and on every seed."""
    if not isinstance(scene, KitchenScene):
        raise LyraError("a Kitchen scene names the tasks it is judged on: `tasks: [microwave]`")
    return sorted(thing.name for thing in THINGS)
