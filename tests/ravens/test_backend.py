"""The tabletop behind the Backend protocol: snapshots, their tolerances, the scene text."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from envs.ravens.backend import RavensBackend
from lyra.backend import (
    DEFAULT_BACKEND,
    Backend,
    backend_spec,
    load_scene_file,
    make,
    resolve_alias,
)
from lyra.examples import load_example


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


def test_the_tabletop_answers_to_its_alias() -> None:
    assert resolve_alias("tabletop") == "ravens"
    assert resolve_alias("ravens") == "ravens"
    assert resolve_alias("table") == "table"  # backend_spec reports it, with the known names


def test_files_that_name_no_backend_are_the_tabletops(tmp_path: Path) -> None:
    # Written before there were other backends; they must read as they always did.
    assert DEFAULT_BACKEND == "ravens"
    scene = tmp_path / "scene.yaml"
    scene.write_text("objects:\n  - {type: block, color: red}\n")
    assert load_scene_file(scene)[0] == "ravens"
    example = tmp_path / "old.yaml"
    example.write_text("id: old\ninstruction: Do nothing.\ncode: pass\n")
    assert load_example(example).backend == "ravens"


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
