"""What lyra calls the things of each MetaWorld task it supports, and where MuJoCo keeps them.

MetaWorld's observation gives one or two anonymous "object" slots and a goal; a skill needs names
and kinds ("drawer_handle", a "handle") to find its way. Each task here names its objects (the
point MetaWorld's own success rule measures, the body whose geoms bound it) and its articulated
joints. Bodies' quaternions are read from ``data.xquat`` (w, x, y, z), since MetaWorld's own
``_get_quat_objects`` mixes both orders and returns zeros for some tasks.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Thing:
    """One named object of a task.

    Attributes:
        name: what skills call it.
        kind: its kind, as ``object_names(kind=...)`` filters.
        where: ``"object"`` (MetaWorld's first object slot: the point its success rule
            measures), ``"goal"`` (the task's target point) or ``"site:NAME"``.
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
        summary: what the task is, in a person's words.
        goal_z: the height MetaWorld's success rule measures the goal at, where that is not its
            target's (basketball's is 0.3 m, above the hoop, not the hoop's 0.25); None: the
            target's own.
    """

    env: str
    things: tuple[Thing, ...]
    joints: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    goal_z: float | None = None


def _puck(summary: str, env: str) -> Task:
    return Task(env, (Thing("puck", "puck", "object", "obj", movable=True), GOAL), {}, summary)


TASKS: dict[str, Task] = {
    "reach": _puck("bring the gripper to the goal", "reach-v3"),
    "push": _puck("push the puck to the goal, along the table", "push-v3"),
    "pick-place": _puck("put the puck at the goal, which may be in the air", "pick-place-v3"),
    "sweep-into": _puck("sweep the puck into the hole", "sweep-into-v3"),
    "door-open": Task(
        "door-open-v3",
        (Thing("door_handle", "handle", "object", "door_link"), GOAL),
        {"door_hinge": "doorjoint"},
        "swing the door open by its handle",
    ),
    "door-close": Task(
        "door-close-v3",
        (Thing("door_handle", "handle", "object", "door_link"), GOAL),
        {"door_hinge": "doorjoint"},
        "swing the open door shut",
    ),
    "drawer-open": Task(
        "drawer-open-v3",
        (Thing("drawer_handle", "handle", "object", "drawer_link"), GOAL),
        {"drawer_slide": "goal_slidey"},
        "pull the drawer open by its handle",
    ),
    "drawer-close": Task(
        "drawer-close-v3",
        (Thing("drawer_handle", "handle", "object", "drawer_link"), GOAL),
        {"drawer_slide": "goal_slidey"},
        "push the open drawer shut",
    ),
    "window-open": Task(
        "window-open-v3",
        (Thing("window_handle", "handle", "object", "windowb_a"), GOAL),
        {"window_slide": "window_slide"},
        "slide the window open by its handle",
    ),
    "window-close": Task(
        "window-close-v3",
        (Thing("window_handle", "handle", "object", "windowb_a"), GOAL),
        {"window_slide": "window_slide"},
        "slide the open window shut",
    ),
    "faucet-open": Task(
        "faucet-open-v3",
        (Thing("faucet_handle", "handle", "object", "faucet_link2"), GOAL),
        {"faucet": "knob_Joint_1"},
        "turn the faucet's handle open",
    ),
    "faucet-close": Task(
        "faucet-close-v3",
        (Thing("faucet_handle", "handle", "object", "faucet_link2"), GOAL),
        {"faucet": "knob_Joint_1"},
        "turn the faucet's handle closed",
    ),
    "button-press-topdown": Task(
        "button-press-topdown-v3",
        (Thing("button", "button", "object", "button"), GOAL),
        {"button": "btnbox_joint"},
        "press the button down from above",
    ),
    "coffee-button": Task(
        "coffee-button-v3",
        (Thing("button", "button", "object", "cmbutton"), GOAL),
        {"button": "goal_slidey"},
        "press the coffee machine's button",
    ),
    "handle-press": Task(
        "handle-press-v3",
        (Thing("handle", "handle", "object", "handle_link"), GOAL),
        {"handle": "body:hdlprs"},
        "press the handle down",
    ),
    "shelf-place": _puck("put the puck on the shelf, at the goal", "shelf-place-v3"),
    "dial-turn": Task(
        "dial-turn-v3",
        (Thing("dial", "dial", "object", "dial"), GOAL),
        {"dial": "knob_Joint_1"},
        "turn the dial",
    ),
    "plate-slide": Task(
        "plate-slide-v3",
        (Thing("plate", "plate", "object", "geom:puck", movable=True), GOAL),
        {},
        "slide the plate into the goal",
    ),
    "basketball": Task(
        "basketball-v3",
        (Thing("ball", "ball", "object", "bsktball", movable=True), GOAL),
        {},
        "hold the ball just above the hoop",
        goal_z=0.3,
    ),
    "peg-insert-side": Task(
        "peg-insert-side-v3",
        (Thing("peg", "peg", "object", "peg", movable=True), GOAL),
        {},
        "push the peg into the hole in the side of the box",
    ),
}
