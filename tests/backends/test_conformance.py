"""The contract every backend keeps, as Gymnasium's check_env is for environments.

Each test runs against every registered backend (and the toy one), on the sample scene the
backend ships; simulators really step. A new backend passes this suite before anything else.
"""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
import yaml

import lyra
from lyra import api
from lyra.backend import Backend, Sample, backends_with
from lyra.episode import run_episode
from lyra.errors import StoppedError, UnsupportedPrimitiveError
from lyra.geometry import Point, Pose, Size
from lyra.sandbox import run_code, wire

# Backends whose runs agree within their tolerance but not to the micrometre, and why.
NOT_BIT_EXACT = {
    "fr3": "franky-sim steps on its own thread in real time, so franky's commands meet its "
    "physics steps a little differently on every run (and a real arm never repeats exactly)",
}


def sample_of(backend: Backend) -> Sample:
    sample = backend.spec.sample_scene()
    assert sample is not None, f"the {backend.spec.name} backend ships no sample scene"
    return sample


def place_plan(sample: Sample) -> str:
    first = sample.objects[0]
    x, y, z = sample.free
    return (
        "from lyra.api import Point, Pose, pick, place\n"
        f"pick({first!r})\n"
        f"place(Pose(Point({x}, {y}, {z})))\n"
    )


def test_reset_is_deterministic_by_seed(backend: Backend) -> None:
    sample = sample_of(backend)
    backend.reset(sample.scene, 3)
    first = backend.snapshot()
    backend.reset(sample.scene, 7)
    backend.reset(sample.scene, 3)
    assert backend.snapshot() == first
    assert backend.sim_time == pytest.approx(first_time(backend, sample), abs=1e-9)


def first_time(backend: Backend, sample: Sample) -> float:
    backend.reset(sample.scene, 3)
    return backend.sim_time


@pytest.mark.slow
def test_the_same_plan_on_the_same_seed_ends_the_same(backend: Backend) -> None:
    sample = sample_of(backend)
    success = [{"at_point": {"name": sample.objects[0], "point": list(sample.free)}}]
    runs = [
        run_episode(backend, sample.scene, 5, place_plan(sample), skills_root=None, success=success)
        for _ in range(2)
    ]
    assert [run.ok for run in runs] == [True, True], [run.describe() for run in runs]
    if backend.spec.name not in NOT_BIT_EXACT:
        assert runs[0].snapshot == runs[1].snapshot
    assert backend.compare(runs[0].snapshot, runs[1].snapshot) == ""
    assert runs[0].calls == {"pick": 1, "place": 1}
    assert runs[0].sim_seconds > 0


def test_each_primitive_it_provides_does_what_it_says(backend: Backend) -> None:
    sample = sample_of(backend)
    first, second = sample.objects
    tolerance = backend.spec.tolerance
    has = backend.spec.capabilities
    backend.reset(sample.scene, 0)
    free = Point(*sample.free)
    with lyra.use(backend):
        if "object_names" in has:
            assert {first, second} <= set(api.object_names())
        if "object_pose" in has:
            assert isinstance(api.object_pose(first), Pose)
        if "object_size" in has:
            size = api.object_size(first)
            assert isinstance(size, Size) and min(size.x, size.y, size.z) > 0
        if "bounding_box" in has:
            low, high = api.bounding_box(first)
            centre = api.object_pose(first).position
            assert low.x < centre.x < high.x and low.z < centre.z < high.z
        if "workspace" in has:
            box = api.workspace()
            assert box.low.x < box.high.x and box.low.z < box.high.z
        if "move_ee" in has:
            above = Point(*sample.clear) if sample.clear else free.with_z(free.z + 0.1)
            api.move_ee(above)
            assert api.ee_pose().position.distance_to(above) <= tolerance
        if {"pick", "place", "held_object"} <= has:
            start = api.object_pose(first).position
            api.pick(first)
            assert api.held_object() == first
            assert api.object_pose(first).position.z > start.z + 0.01
            api.place(Pose(free))
            assert api.held_object() is None
            assert api.object_pose(first).position.distance_to(free) <= tolerance
        if "put_first_on_second" in has:
            api.put_first_on_second(first, second)
            low = api.bounding_box(first)[0]
            top = api.bounding_box(second)[1]
            assert abs(low.z - top.z) <= tolerance
        if "relative_point" in has:
            centre = api.object_pose(second).position
            point = api.relative_point(centre, 0.1, 90.0)
            assert (point.x, point.y) == pytest.approx((centre.x, centre.y + 0.1), abs=1e-9)
        if "world_state" in has:
            state = api.world_state()
            assert state[second].pose == api.object_pose(second)


def test_a_missing_primitive_is_a_typed_error_naming_the_backends_with_it(
    backend: Backend,
) -> None:
    missing = [p for p in api.PRIMITIVES if p not in backend.spec.capabilities]
    if not missing:
        pytest.skip(f"the {backend.spec.name} backend provides every primitive")
    sample = sample_of(backend)
    backend.reset(sample.scene, 0)
    for primitive in missing:
        elsewhere = backends_with(primitive)
        with lyra.use(backend), pytest.raises(UnsupportedPrimitiveError) as caught:
            getattr(api, primitive)(*_arguments(primitive, sample))
        assert caught.value.elsewhere == elsewhere
        assert str(caught.value) == (
            f"the {backend.spec.name} backend has no primitive '{primitive}' (backends that "
            f"have it: {', '.join(elsewhere)}); do the task with the primitives this backend lists"
        )
    # Generated code gets the same words as feedback.
    code = f"from lyra.api import {missing[0]}\n{missing[0]}(*{_arguments(missing[0], sample)!r})\n"
    result = run_code(code, backend)
    assert result.error == "exception"
    assert result.feedback.startswith(
        f"UnsupportedPrimitiveError: the {backend.spec.name} backend has no primitive"
    )


def _arguments(primitive: str, sample: Sample) -> tuple[object, ...]:
    if primitive == "put_first_on_second":
        return sample.objects
    if primitive in ("grasp", "joint_axis", "joint_value"):
        return (sample.objects[0],)
    if primitive == "push":
        return (Point(0.0, 0.0, 1.0), 0.01)
    if primitive == "turn":
        return (10.0,)
    return ()


def test_stop_halts_a_running_motion_within_a_step(backend: Backend) -> None:
    sample = sample_of(backend)
    backend.reset(sample.scene, 0)
    stopped_at: list[float] = []
    start = backend.sim_time

    def stopper() -> None:
        while backend.sim_time < start + 0.05:
            time.sleep(0.0005)
        stopped_at.append(backend.sim_time)
        backend.stop()

    thread = threading.Thread(target=stopper)
    thread.start()
    free = (
        Point(*sample.clear) if sample.clear else Point(*sample.free).with_z(sample.free[2] + 0.05)
    )
    near, far = free, free.with_z(free.z + 0.2)
    with lyra.use(backend), pytest.raises(StoppedError):
        for _ in range(100):  # back and forth until the stop lands in a motion
            api.move_ee(far)
            api.move_ee(near)
    thread.join()
    # Simulated time ran on for at most a couple of control steps after the stop.
    assert backend.sim_time - stopped_at[0] <= 2 * backend.spec.control_step
    with lyra.use(backend), pytest.raises(StoppedError):
        api.move_ee(near)  # and nothing moves until the next reset
    backend.reset(sample.scene, 0)
    with lyra.use(backend):
        api.move_ee(near)


def test_render_from_the_thread_that_owns_it(backend: Backend) -> None:
    backend.reset(sample_of(backend).scene, 0)
    image = backend.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert image.shape[0] > 0 and image.shape[1] > 0 and image.std() > 0


def test_world_state_and_snapshot_round_trip(backend: Backend) -> None:
    sample = sample_of(backend)
    backend.reset(sample.scene, 0)
    objects = dict(backend.world_state().objects)
    assert set(sample.objects) <= set(objects)
    sent = json.loads(json.dumps(wire.encode(objects)))
    assert wire.decode(sent) == objects
    snapshot = backend.snapshot()
    assert yaml.safe_load(yaml.safe_dump(snapshot)) == snapshot
    assert backend.compare(snapshot, snapshot) == ""
    assert backend.compare(snapshot, {}) == f"'{sorted(snapshot)[0]}' is missing"
    described = backend.describe()
    assert all(name in described for name in objects)


def test_hold_advances_simulated_time(backend: Backend) -> None:
    backend.reset(sample_of(backend).scene, 0)
    before = backend.sim_time
    backend.hold(0.5)
    # to the nearest control step
    assert backend.sim_time - before == pytest.approx(
        0.5, abs=max(0.01, backend.spec.control_step / 2)
    )
