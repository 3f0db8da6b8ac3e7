"""The backend-neutral predicates: points, joints, the environment's signals, and eventually."""

import pytest

from lyra.embodiment import ObjectState, WorldState
from lyra.geometry import Point, Pose, Size
from lyra.predicates import (
    PredicateError,
    State,
    Verdict,
    at_point,
    from_spec,
    joint_value,
    list_argument,
    signal,
)


def world(x: float, *, door: float = 0.0, success: float = 0.0) -> WorldState:
    block = ObjectState("cube", "block", "red", Pose(Point(x, 0.0, 0.02)), Size(0.04, 0.04, 0.04))
    return WorldState({"cube": block}, joints={"door_hinge": door}, signals={"success": success})


def test_at_point_is_a_distance_in_three_dimensions() -> None:
    assert at_point(world(0.5), "cube", [0.5, 0.0, 0.025])
    assert at_point(world(0.5), "cube", [0.5, 0.0, 0.05]).reason == (
        "'cube' is at (0.500, 0.000, 0.020), 30.0 mm from (0.500, 0.000, 0.050) (at most 10.0 mm)"
    )
    with pytest.raises(PredicateError, match=r"at_point needs the point as \[x, y, z\]"):
        at_point(world(0.5), "cube", [0.5, 0.0])


def test_joint_value_bounds_and_unknown_joints() -> None:
    assert joint_value(world(0.5, door=1.2), "door_hinge", at_least=1.0)
    assert joint_value(world(0.5, door=1.2), "door_hinge", at_most=1.0).reason == (
        "the joint 'door_hinge' is at 1.200, above 1.000"
    )
    with pytest.raises(PredicateError) as caught:
        joint_value(world(0.5), "drawer", at_least=0.1)
    assert str(caught.value) == (
        "the predicate names the joint 'drawer', which this scene does not have "
        "(joints: door_hinge)"
    )
    with pytest.raises(PredicateError, match="needs at_least, at_most or both"):
        joint_value(world(0.5), "door_hinge")


def test_signal_reads_the_environments_own_judgement() -> None:
    assert signal(world(0.5, success=1.0), "success")
    assert signal(world(0.5), "success").reason == "the environment's 'success' is 0, not 1"
    with pytest.raises(PredicateError, match=r"no signal 'reward' \(signals: success\)"):
        signal(world(0.5), "reward")


def test_eventually_holds_once_it_held_in_an_observed_state() -> None:
    check = from_spec([{"eventually": [{"signal": {"name": "success"}}]}])
    assert check.watches
    check.observe(world(0.5))
    assert check(world(0.5)).reason == (
        "it did not hold at any point of the run: the environment's 'success' is 0, not 1"
    )
    check.observe(world(0.5, success=1.0))
    assert check(world(0.5))  # held at some step, though not at the end
    # Without `eventually`, the final state decides, and nothing is watched.
    final = from_spec([{"signal": {"name": "success"}}])
    assert not final.watches and not final(world(0.5))


def test_a_check_is_fresh_for_each_run() -> None:
    spec = [{"eventually": [{"at_point": {"name": "cube", "point": [0.6, 0.0, 0.02]}}]}]
    first = from_spec(spec)
    first.observe(world(0.6))
    assert first(world(0.5))
    assert not from_spec(spec)(world(0.5))


def test_a_yaml_list_fills_the_declared_parameter_else_the_parameters_in_order() -> None:
    def in_order(state: State, first: object, second: object = None) -> Verdict:
        return Verdict(False, f"{first!r} {second!r}")

    @list_argument("first")
    def whole(state: State, first: object, second: object = None) -> Verdict:
        return Verdict(False, f"{first!r} {second!r}")

    functions = {"in_order": in_order, "whole": whole}
    assert from_spec({"in_order": ["a", "b"]}, functions)(world(0.5)).reason == "'a' 'b'"
    assert from_spec({"whole": ["a", "b"]}, functions)(world(0.5)).reason == "['a', 'b'] None"
    assert from_spec({"whole": "a"}, functions)(world(0.5)).reason == "'a' None"
