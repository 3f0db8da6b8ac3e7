"""What lyra calls the things of each MetaWorld v3 task, and where MuJoCo keeps them.

MetaWorld's observation gives one or two anonymous "object" slots and a goal; a skill needs names
and kinds ("drawer_handle", a "handle") to find its way. One rule serves all fifty tasks: names
and kinds come from the task's name (so a scene is laid out without a simulator), bodies and
joints from MetaWorld's own model (:func:`find_task`); a small hand table covers what the rule
cannot tell, each entry saying why. Bodies' quaternions are read from ``data.xquat`` (w, x, y, z),
since MetaWorld's own ``_get_quat_objects`` mixes both orders and returns zeros for some tasks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

# MetaWorld v3's fifty tasks (MT50), as ``metaworld.env_dict.ALL_V3_ENVIRONMENTS`` names them
# less their "-v3": spelt out here so that a scene is checked without importing MetaWorld.
MT50: tuple[str, ...] = (
    "assembly", "basketball", "bin-picking", "box-close", "button-press-topdown",
    "button-press-topdown-wall", "button-press", "button-press-wall", "coffee-button",
    "coffee-pull", "coffee-push", "dial-turn", "disassemble", "door-close", "door-lock",
    "door-open", "door-unlock", "hand-insert", "drawer-close", "drawer-open", "faucet-open",
    "faucet-close", "hammer", "handle-press-side", "handle-press", "handle-pull-side",
    "handle-pull", "lever-pull", "pick-place-wall", "pick-out-of-hole", "pick-place",
    "plate-slide", "plate-slide-side", "plate-slide-back", "plate-slide-back-side",
    "peg-insert-side", "peg-unplug-side", "soccer", "stick-push", "stick-pull", "push",
    "push-wall", "push-back", "reach", "reach-wall", "shelf-place", "sweep-into", "sweep",
    "window-open", "window-close",
)  # fmt: skip

# Words of a task's name that name its object, and the object's kind.
KIND_WORDS = {
    "button": "button",
    "dial": "dial",
    "handle": "handle",
    "lever": "lever",
    "lock": "lock",
    "unlock": "lock",
    "plate": "plate",
    "peg": "peg",
    "basketball": "ball",
    "soccer": "ball",
    "hammer": "hammer",
    "stick": "stick",
}
# Parts a task moves by a handle: its object is that handle, named after the part.
HANDLED = ("door", "drawer", "window", "faucet")
# A name with neither means MetaWorld's generic object, a puck (reach, push, sweep, ...).
DEFAULT_KIND = "puck"

# The hand table: objects whose task's name does not name them, or names only the first of two.
NAMED: dict[str, tuple[str, ...]] = {
    # A round nut, taken by its wrench-like handle, onto or off a peg.
    "assembly": ("nut",),
    "disassemble": ("nut",),
    # A cube, not a puck (its geom is a box).
    "bin-picking": ("block",),
    # The box's lid, put onto the box.
    "box-close": ("lid",),
    # A mug, pushed under the coffee machine's spout or pulled out from under it.
    "coffee-pull": ("mug",),
    "coffee-push": ("mug",),
    # A second slot: the nail the hammer drives (MetaWorld's success is the nail's joint).
    "hammer": ("hammer", "nail"),
    # A second slot: the container the stick moves (MetaWorld's success measures it).
    "stick-push": ("stick", "container"),
    "stick-pull": ("stick", "container"),
}
# Joints whose name the rule cannot tell: recorded sessions named faucet's before the rule
# (which says "faucet_hinge"), and the coffee machine's button is no object of these tasks.
JOINT_NAMES: dict[tuple[str, str], str] = {
    ("faucet-open", "faucet_hinge"): "faucet",
    ("faucet-close", "faucet_hinge"): "faucet",
    ("coffee-pull", "goal_slidey"): "button",
    ("coffee-push", "goal_slidey"): "button",
}
# Where the success rule measures a goal elsewhere than MetaWorld's target: basketball's is
# 0.3 m up, above the hoop, not the hoop's 0.25.
GOAL_Z: dict[str, float] = {"basketball": 0.3}

# The Sawyer (pedestal, arm, gripper) hangs below this body: its bodies are no task's.
ROBOT = "base"
# MuJoCo's joint types (``mujoco.mjtJoint``).
FREE, SLIDE, HINGE = 0, 2, 3


@dataclass(frozen=True)
class Thing:
    """One named object of a task.

    Attributes:
        name: what skills call it.
        kind: its kind, as ``object_names(kind=...)`` filters.
        where: ``"object"`` (MetaWorld's first object slot: the point its success rule
            measures), ``"object2"`` (the second slot, where a task has one) or ``"goal"``
            (the task's target point).
        body: the MuJoCo body whose subtree bounds it (``geom:NAME``: the body holding that
            geom); None: a marker with no extent.
        movable: whether ``pick`` may lift it (handles and buttons are fixed to their parts).
    """

    name: str
    kind: str
    where: str
    body: str | None = None
    movable: bool = False


GOAL = Thing("goal", "goal", "goal")


@dataclass(frozen=True)
class Task:
    """A MetaWorld task as lyra sees it.

    Attributes:
        env: MetaWorld's environment name (``ALL_V3_ENVIRONMENTS``).
        things: its objects, the goal among them.
        joints: articulated joints by lyra's name: MuJoCo joint names, or ``body:NAME`` for a
            body whose only joint has no name.
        goal_z: the height MetaWorld's success rule measures the goal at, where that is not its
            target's; None: the target's own.
    """

    env: str
    things: tuple[Thing, ...]
    joints: dict[str, str] = field(default_factory=dict)
    goal_z: float | None = None


def env_name(task: str) -> str:
    """MetaWorld's name for a task's environment (``drawer-open`` -> ``drawer-open-v3``)."""
    return f"{task}-v3"


def object_kinds(task: str) -> tuple[tuple[str, str], ...]:
    """The task's objects as (name, kind), one per object slot, from its name alone."""
    if task in NAMED:
        return tuple((name, name) for name in NAMED[task])
    words = task.split("-")
    kind = next((KIND_WORDS[word] for word in words if word in KIND_WORDS), None)
    if kind is not None:
        return ((kind, kind),)
    if words[0] in HANDLED:
        return ((f"{words[0]}_handle", "handle"),)
    return ((DEFAULT_KIND, DEFAULT_KIND),)


def find_task(task: str, env: Any) -> Task:
    """The task's things and joints, found in its MetaWorld environment after a reset.

    Each object slot's point lies in (or nearest) a geom of a body that moves: the part that
    carries that body's joint is the object's, and bounds it. An object is movable when that
    part has a free joint or slides across the table (two slides); every other joint outside
    the robot is an articulation, named after the object it moves: a handle's part and how it
    moves (``door_hinge``, ``drawer_slide``), else the object itself (``button``, ``dial``).
    """
    model, data = env.model, env.data
    slots = np.asarray(env._get_pos_objects(), dtype=float).reshape(-1, 3)
    things, parts = [], {}
    for slot, (name, kind) in enumerate(object_kinds(task)):
        part = _part(model, data, slots[slot])
        types = _joint_types(model, part)
        movable = FREE in types or types.count(SLIDE) >= 2
        where = "object" if slot == 0 else f"object{slot + 1}"
        things.append(Thing(name, kind, where, _body_name(model, part), movable))
        if not movable:
            parts[part] = name
    joints = {}
    for joint in _articulations(model):
        body = int(model.jnt_bodyid[joint])
        source = model.joint(joint).name or f"body:{model.body(body).name}"
        name = _joint_name(task, parts.get(body, source), int(model.jnt_type[joint]))
        joints[JOINT_NAMES.get((task, name), name)] = source
    return Task(env_name(task), (*things, GOAL), joints, GOAL_Z.get(task))


def _joint_name(task: str, thing: str, kind: int) -> str:
    part = task.split("-")[0]
    if thing == f"{part}_handle":
        return f"{part}_{'hinge' if kind == HINGE else 'slide'}"
    return thing


def is_robot(model: Any, body: int) -> bool:
    """Whether a body is part of the Sawyer: its pedestal, arm or gripper."""
    root = model.body(ROBOT).id
    while body not in (root, 0):
        body = int(model.body_parentid[body])
    return body == root


def _mover(model: Any, body: int) -> int:
    """The body that carries the joint moving this one (itself, or its nearest such parent)."""
    while body != 0 and model.body_jntnum[body] == 0:
        body = int(model.body_parentid[body])
    return body


def _part(model: Any, data: Any, point: np.ndarray) -> int:
    """The moving part (not the robot's) with a geom containing, or nearest, a point."""
    best, part = np.inf, 0
    for geom in range(model.ngeom):
        body = int(model.geom_bodyid[geom])
        mover = _mover(model, body)
        if mover == 0 or is_robot(model, body):
            continue
        # The point in the geom's frame, measured to its local box (0 inside it).
        rotation = data.geom_xmat[geom].reshape(3, 3)
        local = rotation.T @ (point - data.geom_xpos[geom]) - model.geom_aabb[geom][:3]
        gap = float(np.linalg.norm(np.maximum(np.abs(local) - model.geom_aabb[geom][3:], 0)))
        if gap < best:
            best, part = gap, mover
    return part


def _joint_types(model: Any, body: int) -> list[int]:
    first = int(model.body_jntadr[body])
    return [int(model.jnt_type[j]) for j in range(first, first + int(model.body_jntnum[body]))]


def _articulations(model: Any) -> list[int]:
    """Joints outside the robot that are not a free object's (free, or sliding across the table)."""
    return [
        joint
        for joint in range(model.njnt)
        if not is_robot(model, int(model.jnt_bodyid[joint]))
        and model.jnt_type[joint] != FREE
        and _joint_types(model, int(model.jnt_bodyid[joint])).count(SLIDE) < 2
    ]


def _body_name(model: Any, body: int) -> str:
    """How a table names a body: its own name, its one named geom's, or its nearest named parent's.

    MetaWorld leaves some moving bodies unnamed (the plate's, the dial's knob); a named parent
    of theirs bounds them as they do, a named geom of their own names them exactly.
    """
    while True:
        if model.body(body).name:
            return str(model.body(body).name)
        named = [
            model.geom(g).name
            for g in range(model.ngeom)
            if model.geom_bodyid[g] == body and model.geom(g).name
        ]
        if len(named) == 1:
            return f"geom:{named[0]}"
        body = int(model.body_parentid[body])
