"""The tabletop's relational predicates (sides, between, closest) on hand-built world states."""

import pytest

from envs.ravens.predicates import PREDICATES, at_closest, between, inside_closest, side_of
from lyra.predicates import PredicateError, from_spec
from tests.ravens.test_predicates import box, state

BOWL = (0.12, 0.12, 0.05)
CORNERS = [[0.7, 0.3, 0.02], [0.7, -0.3, 0.02], [0.3, 0.3, 0.02], [0.3, -0.3, 0.02]]


def bowl(name: str, x: float, y: float) -> object:
    return box(name, x, y, 0.025, size=BOWL, kind="bowl")


@pytest.mark.parametrize(
    ("side", "x", "y"),
    [("left", 0.5, 0.1), ("right", 0.5, -0.1), ("front", 0.42, 0.0), ("behind", 0.58, 0.0)],
)
def test_side_of_each_side_as_the_robot_sees_it(side: str, x: float, y: float) -> None:
    s = state(bowl("bowl", 0.5, 0.0), box("a", x, y, 0.02))
    assert side_of(s, "a", "bowl", side)
    opposite = {"left": "right", "right": "left", "front": "behind", "behind": "front"}[side]
    assert not side_of(s, "a", "bowl", opposite)


def test_side_of_says_what_is_wrong() -> None:
    s = state(
        bowl("bowl", 0.5, 0.0),
        box("short", 0.5, 0.07, 0.02),
        box("far", 0.5, 0.2, 0.02),
        box("corner", 0.58, 0.1, 0.02),
        box("up", 0.5, 0.1, 0.06),
    )
    assert side_of(s, "short", "bowl", "left").reason == (
        "'short' is not to the left of 'bowl' (+y, the robot's left): it is 10.0 mm short of "
        "clearing that side of it"
    )
    assert side_of(s, "far", "bowl", "left").reason == (
        "'far' is to the left of 'bowl' but 120.0 mm from it, more than 100.0 mm"
    )
    assert side_of(s, "corner", "bowl", "left").reason == (
        "'corner' is 80.0 mm off the centre line of 'bowl', beyond its half-width of 60.0 mm: "
        "it is off a corner, not to the left of it"
    )
    assert side_of(s, "up", "bowl", "left").reason == "'up' and 'bowl' are not at the same level"
    with pytest.raises(PredicateError, match="side_of takes side = left, right, front, behind"):
        side_of(s, "far", "bowl", "above")


def test_side_of_refuses_a_negative_distance_when_built() -> None:
    with pytest.raises(PredicateError, match="distance must be 0 or more"):
        from_spec(
            [{"side_of": {"name": "a", "reference": "b", "side": "left", "distance": -1}}],
            PREDICATES,
        )


def test_between_on_the_line_clear_of_both() -> None:
    s = state(
        box("a", 0.4, -0.2, 0.02),
        box("b", 0.4, 0.2, 0.02),
        box("mid", 0.41, 0.05, 0.02),
        box("off", 0.45, 0.0, 0.02),
        box("past", 0.4, 0.3, 0.02),
        box("touching", 0.4, 0.17, 0.02),
    )
    assert between(s, "mid", "a", "b")
    assert between(s, "mid", "b", "a")
    assert between(s, "off", "a", "b").reason == (
        "'off' is 50.0 mm off the line from 'a' to 'b' (at most 20.0 mm)"
    )
    assert (
        between(s, "past", "a", "b").reason
        == "'past' is not between 'a' and 'b': it lies beyond 'b'"
    )
    assert between(s, "touching", "a", "b").reason == "'touching' overlaps 'b' by 10.0 mm"
    s["b"] = box("b", 0.4, -0.2, 0.06)
    assert between(s, "mid", "a", "b").reason == (
        "'a' and 'b' stand at one spot: nothing fits between them"
    )


def test_inside_closest_and_farthest() -> None:
    s = state(
        bowl("near", 0.4, 0.0),
        bowl("far", 0.6, 0.2),
        box("ref", 0.4, -0.15, 0.02),
        box("a", 0.4, 0.0, 0.025),
    )
    assert inside_closest(s, "a", "ref")
    assert inside_closest(s, "a", "ref", farthest=True).reason == (
        "'a' is not inside 'far', the bowl farthest from 'ref' (403.1 mm away): 'a' sticks "
        "160.0 mm out of 'far'"
    )
    assert inside_closest(s, "a", [0.7, 0.3, 0.02]).reason == (
        "'a' is not inside 'far', the bowl closest to (0.700, 0.300, 0.020) (141.4 mm away): "
        "'a' sticks 160.0 mm out of 'far'"
    )


def test_inside_closest_takes_either_of_two_equally_close_bowls() -> None:
    s = state(
        bowl("left", 0.5, 0.2),
        bowl("right", 0.505, -0.2),
        box("ref", 0.5, 0.0, 0.02),
        box("a", 0.505, -0.2, 0.025),
    )
    assert inside_closest(s, "a", "ref")
    with pytest.raises(PredicateError, match="the scene has no zone besides 'a'"):
        inside_closest(s, "a", "ref", kind="zone")


def test_at_closest_spot() -> None:
    s = state(bowl("bowl", 0.6, 0.2), box("a", 0.68, 0.29, 0.02), box("b", 0.3, -0.3, 0.02))
    assert at_closest(s, "a", CORNERS, "bowl")
    assert at_closest(s, "b", CORNERS, "bowl", farthest=True)
    assert at_closest(s, "b", CORNERS, "bowl").reason == (
        "'b' is at (0.300, -0.300), 721.1 mm from (0.700, 0.300), the spot closest to 'bowl' "
        "(at most 40.0 mm)"
    )
    # A bowl on the centre line is as close to both far corners: either will do.
    s["bowl"] = bowl("bowl", 0.6, 0.0)
    s["a"] = box("a", 0.7, -0.3, 0.02)
    assert at_closest(s, "a", CORNERS, "bowl")
    with pytest.raises(PredicateError, match=r"at_closest needs points as a list of \[x, y, z\]"):
        at_closest(s, "a", [[0.7, 0.3]], "bowl")
