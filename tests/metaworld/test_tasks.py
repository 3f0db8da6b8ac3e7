"""The rule that names and finds every MetaWorld v3 task's things, on MetaWorld's own models."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import lyra
from envs.metaworld.backend import MetaWorldBackend
from envs.metaworld.tasks import MT50, Thing
from lyra import api
from lyra.backend import backend_spec
from lyra.geometry import Point

# The twenty tasks lyra named by hand before the rule (envs/metaworld/tasks.py at b508a6f): each
# object's (name, kind, body, movable) and each joint's MuJoCo source. Recorded sessions saw
# these names and these bodies' boxes, so the rule must find them again.
HAND_NAMED: dict[str, tuple[tuple[str, str, str, bool], dict[str, str]]] = {
    "reach": (("puck", "puck", "obj", True), {}),
    "push": (("puck", "puck", "obj", True), {}),
    "pick-place": (("puck", "puck", "obj", True), {}),
    "sweep-into": (("puck", "puck", "obj", True), {}),
    "shelf-place": (("puck", "puck", "obj", True), {}),
    "door-open": (("door_handle", "handle", "door_link", False), {"door_hinge": "doorjoint"}),
    "door-close": (("door_handle", "handle", "door_link", False), {"door_hinge": "doorjoint"}),
    "drawer-open": (
        ("drawer_handle", "handle", "drawer_link", False),
        {"drawer_slide": "goal_slidey"},
    ),
    "drawer-close": (
        ("drawer_handle", "handle", "drawer_link", False),
        {"drawer_slide": "goal_slidey"},
    ),
    "window-open": (
        ("window_handle", "handle", "windowb_a", False),
        {"window_slide": "window_slide"},
    ),
    "window-close": (
        ("window_handle", "handle", "windowb_a", False),
        {"window_slide": "window_slide"},
    ),
    "faucet-open": (("faucet_handle", "handle", "faucet_link2", False), {"faucet": "knob_Joint_1"}),
    "faucet-close": (
        ("faucet_handle", "handle", "faucet_link2", False),
        {"faucet": "knob_Joint_1"},
    ),
    "button-press-topdown": (("button", "button", "button", False), {"button": "btnbox_joint"}),
    "coffee-button": (("button", "button", "cmbutton", False), {"button": "goal_slidey"}),
    "handle-press": (("handle", "handle", "handle_link", False), {"handle": "body:hdlprs"}),
    "dial-turn": (("dial", "dial", "dial", False), {"dial": "knob_Joint_1"}),
    "plate-slide": (("plate", "plate", "geom:puck", True), {}),
    "basketball": (("ball", "ball", "bsktball", True), {}),
    "peg-insert-side": (("peg", "peg", "peg", True), {}),
}


def _joint_id(backend: MetaWorldBackend, source: str) -> int:
    model = backend.arm.env.model
    if source.startswith("body:"):
        # handle-press's "body:hdlprs" named a body with no joint of its own (-1), which numpy
        # read as the last joint: the handle's slide, the one the rule finds on handle_link.
        return int(model.body_jntadr[model.body(source[5:]).id]) % model.njnt
    return int(model.joint(source).id)


def test_mt50_is_metaworlds_list() -> None:
    from metaworld.env_dict import ALL_V3_ENVIRONMENTS

    assert [f"{task}-v3" for task in MT50] == list(ALL_V3_ENVIRONMENTS)


def test_the_rule_finds_the_twenty_tasks_named_by_hand_as_they_were(
    backend: MetaWorldBackend,
) -> None:
    arm = backend.arm
    for task, ((name, kind, body, movable), joints) in HAND_NAMED.items():
        backend.reset({"task": task}, 0)
        assert arm.task is not None
        (thing, goal) = arm.task.things
        assert (thing.name, thing.kind, thing.where, thing.movable) == (
            name,
            kind,
            "object",
            movable,
        ), task
        assert goal == Thing("goal", "goal", "goal"), task
        assert arm._body_id(thing.body or "") == arm._body_id(body), task
        assert sorted(arm.task.joints) == sorted(joints), task
        for joint, source in joints.items():
            assert _joint_id(backend, arm.task.joints[joint]) == _joint_id(backend, source), task
        assert arm.task.goal_z == (0.3 if task == "basketball" else None), task


# Some of the thirty new tasks: each object's (name, kind, body, movable, box size) and joints.
NEW = {
    "button-press-wall": (
        [("button", "button", "button", False, (0.086, 0.105, 0.086))],
        {"button": "btnbox_joint"},
    ),
    "lever-pull": (
        [("lever", "lever", "lever_link1", False, (0.125, 0.281, 0.102))],
        {"lever": "LeverAxis"},
    ),
    "hammer": (
        [
            ("hammer", "hammer", "hammerbody", True, (0.361, 0.144, 0.080)),
            ("nail", "nail", "nail_link", False, (0.060, 0.127, 0.060)),
        ],
        {"nail": "NailSlideJoint"},
    ),
    "stick-push": (
        [
            ("stick", "stick", "stick", True, (0.100, 0.040, 0.040)),
            ("container", "container", "object", True, (0.124, 0.202, 0.330)),
        ],
        {},
    ),
    "assembly": ([("nut", "nut", "RoundNut", True, (0.247, 0.158, 0.054))], {}),
    "bin-picking": ([("block", "block", "obj", True, (0.040, 0.040, 0.040))], {}),
    "box-close": ([("lid", "lid", "boxbodytop", True, (0.231, 0.231, 0.106))], {}),
    "hand-insert": ([("puck", "puck", "obj", True, (0.040, 0.040, 0.040))], {}),
    "pick-out-of-hole": ([("puck", "puck", "obj", True, (0.040, 0.040, 0.040))], {}),
    "soccer": ([("ball", "ball", "soccer_ball", True, (0.066, 0.052, 0.067))], {}),
    "door-lock": (
        [("lock", "lock", "lock_link", False, (0.100, 0.038, 0.020))],
        {"lock": "body:lock_link"},
    ),
    "coffee-push": (
        [("mug", "mug", "obj", True, (0.084, 0.060, 0.068))],
        {"button": "goal_slidey"},
    ),
}


@pytest.mark.parametrize("task", sorted(NEW))
def test_the_rule_names_and_bounds_new_tasks(backend: MetaWorldBackend, task: str) -> None:
    things, joints = NEW[task]
    backend.reset({"task": task}, 0)
    arm = backend.arm
    assert arm.task is not None
    found = [thing for thing in arm.task.things if thing.kind != "goal"]
    assert [(t.name, t.kind, t.body, t.movable) for t in found] == [t[:4] for t in things]
    for thing, (*_, size) in zip(found, things, strict=True):
        got = arm.object_size(thing.name)
        assert (got.x, got.y, got.z) == pytest.approx(size, abs=0.002), thing.name
    assert arm.task.joints == joints


def test_a_scene_takes_any_of_the_fifty_by_metaworlds_name() -> None:
    spec = backend_spec("metaworld")
    assert spec.load_scene({"task": "button-press-wall"}).task == "button-press-wall"
    assert spec.load_scene({"task": "button-press-wall-v3"}).task == "button-press-wall"
    assert spec.scene_objects(spec.load_scene({"task": "stick-pull"}), 0) == [
        "container",
        "goal",
        "stick",
    ]


def test_a_name_metaworld_does_not_have_is_refused_with_the_nearest() -> None:
    with pytest.raises(ValueError) as caught:
        backend_spec("metaworld").load_scene({"task": "button-press-wal"})
    assert (
        "MetaWorld v3 has no task 'button-press-wal'. Did you mean 'button-press-wall', "
        "'button-press', 'button-press-topdown-wall'? Its 50 tasks "
        "(metaworld.env_dict.ALL_V3_ENVIRONMENTS, named with or without '-v3') are listed in "
        "docs/backends.md"
    ) in str(caught.value)


def _carry_to_goal(thing: str) -> None:
    """Pick the thing and hold its point at the goal."""
    api.pick(thing)
    goal, point, tcp = (
        api.object_pose("goal").position,
        api.object_pose(thing).position,
        api.ee_pose().position,
    )
    api.move_ee(Point(goal.x + tcp.x - point.x, goal.y + tcp.y - point.y, goal.z + tcp.z - point.z))


def _drop_in_bin(thing: str) -> None:
    """Pick the thing and set it down 5 cm above the goal, on the other bin's floor."""
    api.pick(thing)
    goal = api.object_pose("goal").position
    api.place(Point(goal.x, goal.y, goal.z + 0.05))


def _press_button() -> None:
    """Come up to the button's face, fingers closed, and push it in along +y."""
    button = api.object_pose("button").position
    api.close_gripper()
    api.move_ee(Point(button.x, button.y - 0.05, button.z))
    api.push(Point(0.0, 1.0, 0.0), 0.15)


def _press_handle() -> None:
    """Come down onto the handle, fingers closed, and press it down."""
    handle = api.object_pose("handle").position
    api.close_gripper()
    api.move_ee(Point(handle.x, handle.y, handle.z + 0.03))
    api.push(Point(0.0, 0.0, -1.0), 0.12)


@pytest.mark.parametrize(
    ("task", "plan"),
    [
        ("pick-out-of-hole", lambda: _carry_to_goal("puck")),
        ("bin-picking", lambda: _drop_in_bin("block")),
        ("button-press", _press_button),
        ("handle-press-side", _press_handle),
    ],
)
def test_new_tasks_are_done_by_lyras_primitives(
    backend: MetaWorldBackend, task: str, plan: Callable[[], None]
) -> None:
    for seed in (0, 1):
        backend.reset({"task": task}, seed)
        with lyra.use(backend):
            plan()
        # MetaWorld's own info["success"], at the last step physics took.
        assert backend.world_state().signals["success"] == 1.0, (task, seed)
