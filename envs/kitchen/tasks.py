"""What lyra calls the Franka Kitchen's things, and the Kitchen's own tasks and their goals.

The Kitchen (gymnasium-robotics' ``FrankaKitchen-v1``) lays out one fixed scene: a kettle on a
stove with four burners and their knobs, a light switch, a slide cabinet, a two-door hinge
cabinet and a microwave. Its observation is joint values; a skill needs names and kinds
("microwave_handle", a "handle") to find its way, and the point to take each part by.
"""

from __future__ import annotations

from dataclasses import dataclass

# MuJoCo's geom types that the Kitchen's handles are made of (its doors are boxes).
CAPSULE, CYLINDER = 3, 5


@dataclass(frozen=True)
class Thing:
    """One named part of the kitchen.

    Attributes:
        name: what skills call it.
        kind: its kind, as ``object_names(kind=...)`` filters.
        body: the MuJoCo body whose subtree bounds it.
        site: where ``object_pose`` puts it and ``grasp`` takes it (a handle's bar); None: the
            body's own origin (the kettle's base, a burner's plate).
        grip: the site ``grasp`` and ``pick`` close the fingers on, where not ``site``.
        bars: bound it by the body's geoms of these types only (a door's handle, not its door).
        movable: whether ``pick`` may lift it.
        across: whether its bar runs left to right (the kettle's handle): the fingers then open
            up and down to close on it; otherwise they open left and right.
        short: how far in front of its point the fingertips' centre stops when taking it (a
            knob's fin stands in front of a plate the fingertips must not meet).
    """

    name: str
    kind: str
    body: str
    site: str | None = None
    grip: str | None = None
    bars: tuple[int, ...] = ()
    movable: bool = False
    across: bool = False
    short: float = 0.0


def _knob(place: str, number: int) -> Thing:
    return Thing(f"{place}_knob", "knob", f"knob {number}", f"knob{number}_site", short=0.012)


def _burner(place: str, number: int) -> Thing:
    return Thing(f"{place}_burner", "burner", f"Burner {number}")


THINGS: tuple[Thing, ...] = (
    Thing("kettle", "kettle", "kettle", grip="kettle_site", movable=True, across=True),
    Thing("microwave_handle", "handle", "microdoorroot", "microhandle_site", bars=(CAPSULE,)),
    Thing("slide_handle", "handle", "slidelink", "slide_site", bars=(CYLINDER,)),
    Thing("left_door_handle", "handle", "hingeleftdoor", "hinge_site1", bars=(CYLINDER,)),
    Thing("right_door_handle", "handle", "hingerightdoor", "hinge_site2", bars=(CYLINDER,)),
    Thing("light_switch", "switch", "lightswitchroot", "light_site"),
    # The stove's knobs and burners: "bottom" is the row nearer the robot, "top" the far one.
    _knob("bottom_right", 1),
    _knob("bottom_left", 2),
    _knob("top_right", 3),
    _knob("top_left", 4),
    _burner("bottom_right", 1),
    _burner("bottom_left", 2),
    _burner("top_right", 3),
    _burner("top_left", 4),
)

# The articulated joints, by lyra's name: the MuJoCo joint each is.
JOINTS: dict[str, str] = {
    "microwave": "microwave",
    "slide_cabinet": "slide_cabinet",
    "left_hinge_cabinet": "left_hinge_cabinet",
    "right_hinge_cabinet": "right_hinge_cabinet",
    "light_switch": "light_switch",
    "bottom_right_knob": "knob_Joint_1",
    "bottom_left_knob": "knob_Joint_2",
    "top_right_knob": "knob_Joint_3",
    "top_left_knob": "knob_Joint_4",
}

# The Kitchen's own tasks, in a person's words (the goals are the Kitchen's: see
# ``gymnasium_robotics.envs.franka_kitchen.kitchen_env.OBS_ELEMENT_GOALS``).
TASKS: dict[str, str] = {
    "microwave": "open the microwave's door",
    "kettle": "move the kettle from the bottom left burner to the top left one",
    "light switch": "switch the light on (its switch slides to the left)",
    "slide cabinet": "slide the cabinet's door open (to the right)",
    "hinge cabinet": "swing the hinge cabinet's right door open",
    "bottom burner": "turn on the bottom left burner (its knob)",
    "top burner": "turn on the top left burner (its knob)",
}
