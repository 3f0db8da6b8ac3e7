"""The Kitchen's predicate: its own task-completion rule, with a reason to act on.

The Kitchen counts a task done when its joints are within 0.3 (a norm over the task's joint
values) of the goal: the microwave's door at -0.75 rad, the slide cabinet at 0.37 m, the right
hinge door at 1.45 rad, the light switch at -0.69, a burner's knob at -0.88 or -0.92 rad, the
kettle at the far left burner. A failing verdict says where each undone task's part is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from lyra.predicates import PASS, State, Verdict

# Each task's part as the scene lists it (its main joint, or the kettle) and the Kitchen's goal
# for it (``OBS_ELEMENT_GOALS``; the burners' and the light's second joints follow the first).
GOALS: dict[str, tuple[str, float | tuple[float, float, float]]] = {
    "microwave": ("microwave", -0.75),
    "slide cabinet": ("slide_cabinet", 0.37),
    "hinge cabinet": ("right_hinge_cabinet", 1.45),
    "light switch": ("light_switch", -0.69),
    "bottom burner": ("bottom_left_knob", -0.88),
    "top burner": ("top_left_knob", -0.92),
    "kettle": ("kettle", (-0.23, 0.75, 1.62)),
}
THRESHOLD = 0.3


def _where(state: State, task: str) -> str:
    part, goal = GOALS[task]
    if isinstance(goal, tuple):
        p = state[part].pose.position
        return (
            f"{task}: the {part} is at ({p.x:.3f}, {p.y:.3f}, {p.z:.3f}), its goal is "
            f"({goal[0]:.2f}, {goal[1]:.2f}, {goal[2]:.2f}) (done within {THRESHOLD}, "
            "its tilt counted too)"
        )
    value = getattr(state, "joints", {}).get(part, float("nan"))
    return (
        f"{task}: the joint '{part}' is at {value:.3f}, its goal is {goal:.2f} "
        f"(done within {THRESHOLD})"
    )


def done(state: State) -> Verdict:
    """The Kitchen counts the scene's tasks done at the last step."""
    signals: Mapping[str, float] = getattr(state, "signals", {})
    if signals.get("success", 0.0) >= 1.0:
        return PASS
    undone = [
        _where(state, key[len("done:") :])
        for key, value in sorted(signals.items())
        if key.startswith("done:") and value < 1.0
    ]
    again = (
        "; each was done at some step, then undone"
        if signals.get("success_any", 0.0) >= 1.0
        else ""
    )
    return Verdict(False, f"the Kitchen does not count it done: {'; '.join(undone)}{again}")


PREDICATES: dict[str, Callable[..., Verdict]] = {"done": done}
