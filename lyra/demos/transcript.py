"""A demonstration as an LLM reads it: a console transcript, the state changes, the frames.

Learning from a demonstration (the method ``ical``) shows the steps as a person would have seen
them typed at a console, what each motion changed in the world, and where the provider takes
images, the frames. What was injected on purpose (``lyra demo from-plan --noise``) is never
said: the learner is to find the mistakes, as it would in a person's demonstration. A call that
was skipped did not happen, so it is not shown either.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lyra import api
from lyra.demos.format import Demonstration, ObservedWorld, Step
from lyra.demos.record import show
from lyra.geometry import Point, Pose
from lyra.sandbox import wire

# An object that moved less than this between two steps did not move (settling, contact jitter).
MOVED_M = 0.005


def literal(value: Any) -> str:
    """A value as task code writes it: ``Point(0.5, -0.2, 0.02)``, ``'red_block'``, ``0.05``."""
    if isinstance(value, Point):
        return f"Point({_number(value.x)}, {_number(value.y)}, {_number(value.z)})"
    if isinstance(value, Pose):
        quaternion = ", ".join(_number(q) for q in value.orientation)
        return f"Pose({literal(value.position)}, ({quaternion}))"
    if isinstance(value, list):
        return f"[{', '.join(literal(item) for item in value)}]"
    if isinstance(value, tuple):
        return f"({', '.join(literal(item) for item in value)}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {literal(item)}" for key, item in value.items()) + "}"
    return _number(value) if isinstance(value, float) else repr(value)


def _number(value: float) -> str:
    # To a tenth of a millimetre: the file's micrometres would read as false precision.
    return repr(round(float(value), 4) + 0.0)


def call_text(step: Step) -> str:
    """The step's call as it would be typed: ``place(Point(0.5, -0.15, 0.02), yaw_deg=30.0)``."""
    args, kwargs = step.call()
    parts = [literal(arg) for arg in args] + [f"{k}={literal(v)}" for k, v in kwargs.items()]
    return f"{step.primitive}({', '.join(parts)})"


def shown_steps(demo: Demonstration) -> list[Step]:
    """The steps that happened: a skipped call (an injected missing step) did not."""
    return [step for step in demo.steps if step.ran]


def console_transcript(demo: Demonstration) -> str:
    """The steps as a console shows them: each call typed, then its value or its error."""
    lines = []
    for step in shown_steps(demo):
        lines.append(f">>> {call_text(step)}")
        if step.error is not None:
            lines.append(f"{step.error.type}: {step.error.message}")
        elif step.result is not None:
            lines.append(show(wire.decode(step.result)))
    return "\n".join(lines) or "(no steps)"


def state_changes(demo: Demonstration) -> str:
    """What each motion changed: the objects that moved, from where to where, and the gripper."""
    lines = []
    before = demo.start
    for step in shown_steps(demo):
        if step.after is None:
            continue
        changes = _changes(before, step.after)
        lines.append(f"after `{call_text(step)}`: {'; '.join(changes) or 'nothing moved'}")
        before = step.after
    return "\n".join(lines) or "(nothing moved)"


def _changes(before: ObservedWorld, after: ObservedWorld) -> list[str]:
    changes = []
    for name, pose in sorted(after.objects.items()):
        old = before.objects.get(name)
        if old is not None and math.dist(old[:3], pose[:3]) >= MOVED_M:
            changes.append(f"{name} moved from {_at(old)} to {_at(pose)}")
    for name, value in sorted(after.joints.items()):
        if abs(value - before.joints.get(name, value)) >= MOVED_M:
            changes.append(f"joint {name} from {before.joints[name]:.3f} to {value:.3f}")
    if after.held != before.held:
        changes.append(
            f"the gripper holds {after.held or 'nothing'} (was {before.held or 'nothing'})"
        )
    return changes


def _at(pose: Sequence[float]) -> str:
    return f"({pose[0]:.3f}, {pose[1]:.3f}, {pose[2]:.3f})"


def world_text(world: ObservedWorld) -> str:
    """Where every object is, and what the gripper holds: the state in words."""
    lines = [f"{name} at {_at(pose)}" for name, pose in sorted(world.objects.items())]
    lines += [f"joint {name}: {value:.3f}" for name, value in sorted(world.joints.items())]
    lines.append(f"the gripper holds {world.held or 'nothing'}")
    return "\n".join(lines)


def calls_plan(demo: Demonstration) -> str:
    """The demonstration as it was, as task code: the calls made, in order, mistakes and all.

    A call that raised is kept as a comment saying so, so that the plan runs as far as the
    demonstration did; this is the raw example of the ablation ``ical-no-abstraction``.
    """
    steps = shown_steps(demo)
    used = sorted({step.primitive for step in steps}, key=api.PRIMITIVES.index)
    values = [name for name in ("Point", "Pose") if any(f"{name}(" in call_text(s) for s in steps)]
    lines = ["# task"]
    if used or values:
        lines.append(f"from lyra.api import {', '.join([*used, *values])}")
    for step in steps:
        if step.error is not None:
            lines.append(f"# {call_text(step)}  raised {step.error.type}: {step.error.message}")
        else:
            lines.append(call_text(step))
    return "\n".join(lines) + "\n"


def frame_paths(demo: Demonstration, path: Path) -> list[Path]:
    """The demonstration's pictures that exist beside its file, in step order."""
    found = [path.parent / step.frame for step in shown_steps(demo) if step.frame is not None]
    return [frame for frame in found if frame.is_file()]
