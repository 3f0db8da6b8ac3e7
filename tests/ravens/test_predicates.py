"""The tabletop's predicates on hand-built world states: no physics needed to pin them down."""

import math

import pytest

from envs.ravens.predicates import (
    PREDICATES,
    aligned,
    area_clear,
    fills,
    inside,
    next_to,
    on_table,
    on_top,
    rotated_by,
    stacked,
)
from lyra.embodiment import ObjectState
from lyra.geometry import Point, Pose, Size
from lyra.predicates import PredicateError, from_spec, offset, within_distance


def box(
    name: str,
    x: float,
    y: float,
    z: float,
    size=(0.04, 0.04, 0.04),
    yaw_deg: float = 0.0,
    kind: str = "block",
) -> ObjectState:
    return ObjectState(
        name, kind, "red", Pose.from_yaw(Point(x, y, z), math.radians(yaw_deg)), Size(*size)
    )


def state(*objects: ObjectState) -> dict[str, ObjectState]:
    return {o.name: o for o in objects}


def test_stacked_in_order() -> None:
    s = state(box("a", 0.5, 0, 0.02), box("b", 0.502, 0, 0.06), box("c", 0.5, 0.003, 0.1))
    assert stacked(s, ["a", "b", "c"])
    verdict = stacked(s, ["a", "c", "b"])
    assert not verdict
    assert verdict.reason == "'c' is 40.0 mm above the top of 'a'"


def test_stacked_reports_the_offset() -> None:
    s = state(box("a", 0.5, 0, 0.02), box("b", 0.515, 0, 0.06))
    assert stacked(s, ["a", "b"]).reason == "'b' is 15.0 mm off the centre of 'a' (at most 10.0 mm)"


def test_stacked_bottom_must_be_on_the_table() -> None:
    s = state(box("a", 0.5, 0, 0.06), box("b", 0.5, 0, 0.1))
    assert stacked(s, ["a", "b"]).reason == "the bottom object 'a' is not on the table"


def test_on_top_accepts_a_bridge_over_two_blocks() -> None:
    s = state(box("l", 0.5, -0.0225, 0.02), box("r", 0.5, 0.0225, 0.02), box("top", 0.5, 0, 0.06))
    assert on_top(s, "top", "l") and on_top(s, "top", "r")
    assert on_top(s, "l", "r").reason == "'l' is not over 'r'"


def test_next_to_with_gap_and_overlap() -> None:
    s = state(box("a", 0.5, 0, 0.02), box("b", 0.5, 0.045, 0.02), box("c", 0.5, 0.03, 0.02))
    assert next_to(s, "b", "a", gap=0.005)
    assert (
        next_to(s, "b", "a", gap=0.0).reason == "the gap between 'b' and 'a' is 5.0 mm, not 0.0 mm"
    )
    assert next_to(s, "c", "a").reason == "'c' overlaps 'a' by 10.0 mm"


def test_next_to_needs_the_same_level() -> None:
    s = state(box("a", 0.5, 0, 0.02), box("b", 0.5, 0.04, 0.06))
    assert next_to(s, "b", "a").reason == "'b' and 'a' are not at the same level"


def test_aligned_edges_corners_centres() -> None:
    s = state(
        box("a", 0.5, 0, 0.02),
        box("edge", 0.5, 0.04, 0.02),
        box("corner", 0.54, 0.04, 0.02),
        box("skew", 0.52, 0.04, 0.02),
    )
    assert aligned(s, "edge", "a", "edges")
    assert aligned(s, "corner", "a", "corners")
    assert aligned(s, "edge", "a", "centres")
    assert (
        aligned(s, "skew", "a", "edges").reason == "no edge of 'skew' is flush with an edge of 'a'"
    )
    assert aligned(s, "edge", "a", "corners").reason == "'edge' does not touch 'a' corner to corner"


def test_rotated_by_respects_box_symmetry() -> None:
    s = state(
        box("plank", 0.5, 0, 0.015, size=(0.15, 0.05, 0.03), yaw_deg=-90),
        box("cube", 0.4, 0, 0.02, yaw_deg=45),
    )
    assert rotated_by(s, "plank", 90)
    assert rotated_by(s, "plank", 0).reason == "'plank' is 90.0 degrees off the asked rotation"
    assert rotated_by(s, "cube", -45)
    assert rotated_by(s, "plank", 45, reference="cube")


def test_inside_and_within_distance_and_on_table() -> None:
    s = state(
        box("zone", 0.5, 0, 0.0005, size=(0.12, 0.12, 0.001), kind="zone"),
        box("a", 0.52, 0.02, 0.021),
        box("b", 0.58, 0, 0.02),
    )
    assert inside(s, "a", "zone")
    assert inside(s, "b", "zone").reason == "'b' sticks 40.0 mm out of 'zone'"
    assert within_distance(s, "a", "b", 0.07)
    assert within_distance(s, "a", "b", 0.05).reason == "'a' is 63.2 mm from 'b', more than 50.0 mm"
    assert on_table(s, "a") and on_table(s, "b")


def test_offset_along_world_axes() -> None:
    s = state(box("a", 0.5, 0, 0.02), box("b", 0.505, 0, 0.06))
    assert offset(s, "b", "a", 0.005, 0.0)
    assert (
        offset(s, "b", "a", 0.0, 0.0).reason
        == "'b' is offset (5.0 mm, 0.0 mm) from 'a', not (0.0 mm, 0.0 mm)"
    )


def test_from_spec_builds_and_checks_all() -> None:
    s = state(box("a", 0.5, 0, 0.02), box("b", 0.5, 0, 0.06))
    check = from_spec([{"stacked": ["a", "b"]}, {"on_table": "a"}], PREDICATES)
    assert check(s)
    assert check.objects == frozenset({"a", "b"})
    assert (
        from_spec({"on_top": {"upper": "a", "lower": "b"}}, PREDICATES)(s).reason
        == "'a' is 80.0 mm into the top of 'b'"
    )


def test_fills_matches_spots_in_any_order() -> None:
    s = state(box("a", 0.5, 0.0, 0.02), box("b", 0.545, 0.0, 0.02), box("c", 0.5, 0.0, 0.06))
    spots = [[0.545, 0.0, 0.02], [0.5, 0.0, 0.06], [0.503, 0.002, 0.02]]
    assert fills(s, ["a", "b", "c"], spots)
    assert fills(s, ["a", "b", "c"], spots, yaw_deg=90)
    assert (
        fills(s, ["a", "b", "c"], [[0.5, 0.0, 0.02], [0.5, 0.0, 0.02], [0.5, 0.0, 0.06]]).reason
        == "nothing of a, b, c is at (0.500, 0.000, 0.020); the nearest free one, 'c', is at "
        "(0.500, 0.000, 0.060), 40.0 mm away"
    )
    plank = state(box("p", 0.5, 0.0, 0.015, size=(0.15, 0.05, 0.03), yaw_deg=90))
    assert fills(plank, ["p"], [[0.5, 0.0, 0.015]], yaw_deg=-90)
    assert (
        fills(plank, ["p"], [[0.5, 0.0, 0.015]], yaw_deg=0).reason
        == "'p' is 90.0 degrees off the asked rotation"
    )
    with pytest.raises(PredicateError, match="as many names as points, got 1 and 2"):
        fills(plank, ["p"], [[0.5, 0.0, 0.015], [0.6, 0.0, 0.015]])
    with pytest.raises(PredicateError, match="fills names an object twice: p, p"):
        fills(plank, ["p", "p"], [[0.5, 0.0, 0.015], [0.6, 0.0, 0.015]])
    with pytest.raises(PredicateError, match=r"each point as \[x, y, z\]"):
        fills(plank, ["p"], [[0.5, 0.0]])


def test_area_clear_uses_turned_footprints() -> None:
    s = state(
        box("zone", 0.6, 0.0, 0.0005, size=(0.3, 0.3, 0.001), kind="zone"),
        box("plank", 0.5, 0.3, 0.015, size=(0.15, 0.05, 0.03), yaw_deg=90),
    )
    assert area_clear(s, x=[0.45, 0.7], y=[-0.2, 0.2])
    s["plank"] = box("plank", 0.5, 0.3, 0.015, size=(0.15, 0.05, 0.03), yaw_deg=0)
    assert area_clear(s, x=[0.45, 0.7], y=[-0.2, 0.2])
    s["plank"] = box("plank", 0.5, 0.26, 0.015, size=(0.15, 0.05, 0.03), yaw_deg=90)
    assert (
        area_clear(s, x=[0.45, 0.7], y=[-0.2, 0.2]).reason
        == "'plank' at (0.500, 0.260) reaches into the area x [0.45, 0.70], y [-0.20, 0.20] "
        "that should be clear"
    )
    with pytest.raises(
        PredicateError, match=r"area_clear needs x as \[low, high\], got \[0.7, 0.45\]"
    ):
        area_clear(s, x=[0.7, 0.45], y=[-0.2, 0.2])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            [{"stacked_up": ["a"]}],
            "unknown predicate 'stacked_up': use one of aligned, area_clear, at_closest, at_point, between, eventually, fills, inside, inside_closest, joint_value, next_to, offset, on_table, on_top, rotated_by, side_of, signal, stacked, within_distance",
        ),
        (
            [{"next_to": {"a": "a", "c": "b"}}],
            "predicate 'next_to': missing a required argument: 'b'; it takes a, b, gap, tolerance",
        ),
        (["stacked"], "each predicate is one `name: arguments` pair, got 'stacked'"),
    ],
)
def test_from_spec_errors(spec: list, message: str) -> None:
    with pytest.raises(PredicateError) as caught:
        from_spec(spec, PREDICATES)
    assert str(caught.value) == message


def test_unknown_object_in_a_predicate() -> None:
    with pytest.raises(PredicateError) as caught:
        on_table(state(box("a", 0.5, 0, 0.02)), "zz")
    assert str(caught.value) == "the predicate names 'zz', which is not in the scene (objects: a)"
