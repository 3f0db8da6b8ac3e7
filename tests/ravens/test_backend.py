"""The tabletop behind the Backend protocol: snapshots, their tolerances, the scene text."""

from collections.abc import Iterator

import pytest

from envs.ravens.backend import RavensBackend
from lyra.backend import Backend, backend_spec, make


@pytest.fixture
def ravens() -> Iterator[Backend]:
    backend = make("ravens")
    yield backend
    backend.close()


def test_ravens_is_registered_through_its_entry_point() -> None:
    spec = backend_spec("ravens")
    assert spec.factory == "envs.ravens.backend:RavensBackend"
    assert "put_first_on_second" in spec.capabilities
    backend = spec.make()
    try:
        assert isinstance(backend, RavensBackend) and isinstance(backend, Backend)
    finally:
        backend.close()


def test_snapshots_differ_by_position_or_turn(ravens: Backend) -> None:
    upright = {"a": [0.5, 0.0, 0.02, 0.0, 0.0, 0.0, 1.0]}
    half_turn = {"a": [0.5, 0.0, 0.02, 0.0, 0.0, 1.0, 0.0]}
    quarter_turn = {"a": [0.5, 0.0, 0.02, 0.0, 0.0, 0.7071068, 0.7071068]}
    moved = {"a": [0.506, 0.0, 0.02, 0.0, 0.0, 0.0, 1.0]}
    assert ravens.compare(upright, half_turn) == ""
    assert (
        ravens.compare(upright, quarter_turn)
        == "'a' ended turned 90 degrees from how the accepted run left it"
    )
    assert ravens.compare(upright, moved) == "'a' ended 6.0 mm from where the accepted run left it"
    assert ravens.compare(upright, {}) == "'a' is missing"


def test_describe_lists_each_object_as_the_prompts_show_it(ravens: Backend) -> None:
    ravens.reset(
        {"objects": [{"type": "block", "color": "red", "poses": [{"x": 0.5, "y": 0.1}]}]}, 0
    )
    assert ravens.describe() == (
        "red_block: block, red, centre (0.500, 0.100, 0.020), size (0.040, 0.040, 0.040), yaw 0"
    )
    snapshot = ravens.snapshot()
    assert list(snapshot) == ["red_block"] and snapshot["red_block"][:3] == pytest.approx(
        [0.5, 0.1, 0.02], abs=1e-4
    )
