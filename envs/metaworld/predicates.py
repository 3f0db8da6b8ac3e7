"""MetaWorld's predicate: its own success, with a reason a person or an LLM can act on.

MetaWorld says only whether a task is done (``info["success"]``); most of its tasks count done
when the task's object (a puck, a handle's grip, a button's top) is near the goal, so a failing
verdict says how far it is, and whether the task was done at some step and then undone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from lyra.predicates import PASS, State, Verdict, fmt_mm


def done(state: State) -> Verdict:
    """MetaWorld counts the task done at the last step."""
    signals: Mapping[str, float] = getattr(state, "signals", {})
    if signals.get("success", 0.0) >= 1.0:
        return PASS
    goal = state["goal"].pose.position
    where = [
        f"'{name}' is at ({p.x:.3f}, {p.y:.3f}, {p.z:.3f}), {fmt_mm(p.distance_to(goal))} "
        "from the goal"
        for name, obj in sorted(state.items())
        if obj.kind != "goal"
        for p in [obj.pose.position]
    ]
    undone = (
        "; it was done at some step, then undone" if signals.get("success_any", 0.0) >= 1.0 else ""
    )
    return Verdict(
        False,
        f"MetaWorld does not count the task as done: {', '.join(where)} "
        f"({goal.x:.3f}, {goal.y:.3f}, {goal.z:.3f}){undone}",
    )


PREDICATES: dict[str, Callable[..., Verdict]] = {"done": done}
